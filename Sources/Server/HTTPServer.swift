#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CMicroHTTPD

/// A request as the server read it: whole, its body up to the server's limit.
public struct HTTPRequest: Sendable {
    public let method: String
    public let path: String
    public let authorization: String?
    public let body: [UInt8]
    /// The body went past the limit (and was dropped).
    public let bodyTooLarge: Bool
}

/// What a handler answers.
public struct HTTPResponse: Sendable {
    public enum ContentType: UInt32, Sendable { case none = 0, json = 1, problem = 2, text = 3 }

    public var status: Int
    public var contentType: ContentType
    public var body: [UInt8]

    public init(status: Int, contentType: ContentType, body: [UInt8]) {
        self.status = status
        self.contentType = contentType
        self.body = body
    }

    public static func json(_ status: Int, _ text: String) -> HTTPResponse { HTTPResponse(status: status, contentType: .json, body: Array(text.utf8)) }
}

public struct HTTPServerError: Error, Sendable {
    public let message: String
}

/// HTTP/1.1 on libmicrohttpd (CMicroHTTPD, loaded when first used): keep-alive, a pool of
/// threads, a body limit, idle connections timed out, a cap on connections. Each request is
/// read whole and handed to `handle` on one of the pool's threads.
public final class HTTPServer: @unchecked Sendable {
    final class Handler {
        let handle: @Sendable (HTTPRequest) -> HTTPResponse
        init(_ handle: @escaping @Sendable (HTTPRequest) -> HTTPResponse) { self.handle = handle }
    }

    private var server: OpaquePointer?
    private let handler: Unmanaged<Handler>
    /// The port it listens on (the one the system chose, for port 0).
    public let port: UInt16

    public init(address: String, port: UInt16, threads: Int, bodyLimit: Int, timeoutSeconds: Int, connectionLimit: Int,
                handle: @escaping @Sendable (HTTPRequest) -> HTTPResponse) throws(HTTPServerError) {
        handler = Unmanaged.passRetained(Handler(handle))
        var bound: UInt16 = 0
        var error = [CChar](repeating: 0, count: 512)
        guard let started = authctl_http_start(address, port, UInt32(max(threads, 1)), bodyLimit, UInt32(timeoutSeconds),
                                               UInt32(connectionLimit), serveRequest, handler.toOpaque(), &bound, &error, error.count) else {
            handler.release()
            throw HTTPServerError(message: String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        server = started
        self.port = bound
    }

    /// Stops accepting; the requests being handled finish first.
    public func stop() {
        guard let server else { return }
        authctl_http_stop(server)
        self.server = nil
        handler.release()
    }

    deinit { stop() }
}

/// libmicrohttpd's callback, on one of its threads: the request to the handler, its answer back
/// (the body in memory the server frees).
private func serveRequest(_ context: UnsafeMutableRawPointer?, _ request: UnsafePointer<authctl_http_request>?,
                          _ response: UnsafeMutablePointer<authctl_http_response>?) {
    guard let context, let request, let response else { return }
    let handler = Unmanaged<HTTPServer.Handler>.fromOpaque(context).takeUnretainedValue()
    let r = request.pointee
    let body = r.body.map { Array(UnsafeBufferPointer(start: $0, count: r.body_length)) } ?? []
    let answer = handler.handle(HTTPRequest(method: r.method.map { String(cString: $0) } ?? "", path: r.path.map { String(cString: $0) } ?? "/",
                                            authorization: r.authorization.map { String(cString: $0) }, body: body,
                                            bodyTooLarge: r.body_too_large != 0))
    response.pointee.status = UInt32(answer.status)
    response.pointee.content_kind = answer.contentType.rawValue
    guard !answer.body.isEmpty, let memory = malloc(answer.body.count) else { return }
    answer.body.withUnsafeBytes { memory.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
    response.pointee.body = memory.assumingMemoryBound(to: UInt8.self)
    response.pointee.body_length = answer.body.count
}
