#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CMicroHTTPD
import Synchronization

/// A request as the server read it: whole, its body up to the server's limit.
public struct HTTPRequest: Sendable {
    public let method: String
    public let path: String
    /// The query, `name=value&…`, each part percent-encoded (`""` when none).
    public let query: String
    public let authorization: String?
    /// The `Origin` header: a page's cross-origin request (docs/browser.md).
    public let origin: String?
    /// The `Host` header: how the client reached the server.
    public let host: String?
    public let body: [UInt8]
    /// The body went past the limit (and was dropped).
    public let bodyTooLarge: Bool

    public init(method: String, path: String, query: String = "", authorization: String?, origin: String? = nil, host: String? = nil,
                body: [UInt8], bodyTooLarge: Bool = false) {
        self.method = method
        self.path = path
        self.query = query
        self.authorization = authorization
        self.origin = origin
        self.host = host
        self.body = body
        self.bodyTooLarge = bodyTooLarge
    }
}

/// What a handler answers.
public struct HTTPResponse: Sendable {
    public enum ContentType: UInt32, Sendable { case none = 0, json = 1, problem = 2, text = 3, eventStream = 4, javascript = 5 }

    public var status: Int
    public var contentType: ContentType
    public var body: [UInt8]
    /// More headers (`Allow`, `WWW-Authenticate`, `Location`).
    public var headers: [(String, String)] = []
    /// A body sent as it comes, instead of `body`.
    public var stream: HTTPStream?
    /// The answer comes later, through this (the rest of this response is not sent).
    public var deferred: HTTPDeferred?
    /// Warnings the answer was made with (a ceremony's: what the browser accepts but the RP should
    /// fix), the first of its `warnings` member when the account's are added.
    public var warnings: [String] = []

    public init(status: Int, contentType: ContentType, body: [UInt8], headers: [(String, String)] = [], stream: HTTPStream? = nil,
                deferred: HTTPDeferred? = nil) {
        self.status = status
        self.contentType = contentType
        self.body = body
        self.headers = headers
        self.stream = stream
        self.deferred = deferred
    }

    public static func json(_ status: Int, _ text: String) -> HTTPResponse { HTTPResponse(status: status, contentType: .json, body: Array(text.utf8)) }
}

public struct HTTPServerError: Error, Sendable {
    public let message: String
}

/// HTTP/1.1 on libmicrohttpd (CMicroHTTPD, loaded when first used): keep-alive, a pool of
/// threads, a body limit, idle connections timed out, a deadline for each request's line and
/// headers, a cap on connections past which the one that has waited longest for its request
/// makes room. Each request is read whole and handed to `handle` on one of the pool's threads.
public final class HTTPServer: @unchecked Sendable {
    final class Handler {
        let handle: @Sendable (HTTPRequest) -> HTTPResponse
        let bodyLimit: Int
        init(_ handle: @escaping @Sendable (HTTPRequest) -> HTTPResponse, bodyLimit: Int) {
            self.handle = handle
            self.bodyLimit = bodyLimit
        }
    }

    private var server: OpaquePointer?
    private let handler: Unmanaged<Handler>
    /// The port it listens on (the one the system chose, for port 0).
    public let port: UInt16

    /// On IPv4 `address`:`port`, or on a Unix socket when `address` is an absolute path.
    public init(address: String, port: UInt16, threads: Int, bodyLimit: Int, timeoutSeconds: Int, headerTimeoutSeconds: Int,
                connectionLimit: Int, handle: @escaping @Sendable (HTTPRequest) -> HTTPResponse) throws(HTTPServerError) {
        handler = Unmanaged.passRetained(Handler(handle, bodyLimit: bodyLimit))
        var bound: UInt16 = 0
        var error = [CChar](repeating: 0, count: 512)
        guard let started = authctl_http_start(address, port, UInt32(max(threads, 1)), bodyLimit, UInt32(timeoutSeconds),
                                               UInt32(headerTimeoutSeconds), UInt32(connectionLimit), checkHead, serveRequest, handler.toOpaque(),
                                               &bound, &error, error.count) else {
            handler.release()
            throw HTTPServerError(message: String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        server = started
        self.port = bound
    }

    /// Stops accepting new connections; those open are still served.
    public func quiesce() {
        guard let server else { return }
        authctl_http_quiesce(server)
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

/// libmicrohttpd's callback when a request's head has come, before its body is read: a request
/// whose body's end is ambiguous, or declared larger than the limit, is answered at once (and its
/// connection closed after the answer, nothing after it read as another request).
private func checkHead(_ context: UnsafeMutableRawPointer?, _ head: UnsafePointer<authctl_http_head>?,
                       _ response: UnsafeMutablePointer<authctl_http_response>?) -> Int32 {
    guard let context, let head, let response else { return 0 }
    let handler = Unmanaged<HTTPServer.Handler>.fromOpaque(context).takeUnretainedValue()
    let h = head.pointee
    func fields(_ list: UnsafePointer<UnsafePointer<CChar>?>?, _ count: Int) -> [String] {
        (0..<count).map { i in list?[i].map { String(cString: $0) } ?? "" }
    }
    guard let problem = RequestFraming.problem(version: h.version.map { String(cString: $0) } ?? "",
                                               contentLengths: fields(h.content_lengths, h.content_length_count),
                                               transferEncodings: fields(h.transfer_encodings, h.transfer_encoding_count),
                                               bodyLimit: handler.bodyLimit) else { return 0 }
    var answer = problem.response
    answer.headers = [("Connection", "close")]
    fill(response, with: answer)
    return 1
}

/// libmicrohttpd's callback, on one of its threads: the request to the handler, its answer back
/// (the body in memory the server frees).
private func serveRequest(_ context: UnsafeMutableRawPointer?, _ request: UnsafePointer<authctl_http_request>?,
                          _ response: UnsafeMutablePointer<authctl_http_response>?) {
    guard let context, let request, let response else { return }
    let handler = Unmanaged<HTTPServer.Handler>.fromOpaque(context).takeUnretainedValue()
    let r = request.pointee
    let body = r.body.map { Array(UnsafeBufferPointer(start: $0, count: r.body_length)) } ?? []
    let asked = HTTPRequest(method: r.method.map { String(cString: $0) } ?? "", path: r.path.map { String(cString: $0) } ?? "/",
                              query: r.query.map { String(cString: $0) } ?? "",
                              authorization: r.authorization.map { String(cString: $0) }, origin: r.origin.map { String(cString: $0) },
                              host: r.host.map { String(cString: $0) }, body: body, bodyTooLarge: r.body_too_large != 0)
    if let preflight = CrossOrigin.preflight(asked) { return fill(response, with: preflight) }
    var answer = handler.handle(asked)
    if let origin = asked.origin {
        answer.headers += CrossOrigin.headers(origin: origin)
        answer.deferred?.origin = origin
    }
    fill(response, with: answer)
}

/// A C response from `answer`: its body and headers in memory the server frees.
private func fill(_ response: UnsafeMutablePointer<authctl_http_response>, with answer: HTTPResponse) {
    response.pointee.status = UInt32(answer.status)
    response.pointee.content_kind = answer.contentType.rawValue
    if !answer.headers.isEmpty {
        // Names and values as the server writes them: no line breaks can reach the wire.
        let lines = answer.headers.map { "\($0.0): \($0.1)\n" }.joined().filter { $0 != "\r" }
        response.pointee.headers = strdup(lines)
    }
    if let deferred = answer.deferred {
        response.pointee.deferred = deferred.handle
        return
    }
    if let stream = answer.stream {
        response.pointee.stream = stream.handle
        return
    }
    guard !answer.body.isEmpty, let memory = malloc(answer.body.count) else { return }
    answer.body.withUnsafeBytes { memory.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
    response.pointee.body = memory.assumingMemoryBound(to: UInt8.self)
    response.pointee.body_length = answer.body.count
}

/// A body sent as it comes (Server-Sent Events): ``send(_:)`` queues bytes and wakes the
/// connection, which waits without a thread while there are none; ``end()`` finishes it. When
/// the connection is gone — the client left, or the server stops — `released` is called once.
/// At most ``limit`` bytes wait for a client that does not read: past that the stream ends.
public final class HTTPStream: @unchecked Sendable {
    private struct State {
        var pending = [UInt8]()
        var ended = false
        var released = false
    }

    public static let limit = 1 << 20
    private let state = Mutex(State())
    private let released: @Sendable () -> Void
    /// The C side's stream; one reference is this object's, one the response's.
    fileprivate private(set) var handle: OpaquePointer?

    public init(released: @escaping @Sendable () -> Void) {
        self.released = released
        // The response's reference to this object: dropped when the C side releases the stream.
        let context = Unmanaged.passRetained(self).toOpaque()
        handle = authctl_http_stream_new(pullStream, releaseStream, context)
        if handle == nil { Unmanaged<HTTPStream>.fromOpaque(context).release() }
    }

    deinit { authctl_http_stream_unref(handle) }

    /// Whether the connection is gone.
    public var isReleased: Bool { state.withLock { $0.released } }

    public func send(_ bytes: [UInt8]) {
        state.withLock { s in
            guard !s.ended else { return }
            if s.pending.count + bytes.count > Self.limit { s.ended = true } else { s.pending += bytes }
        }
        authctl_http_stream_wake(handle)
    }

    public func end() {
        state.withLock { $0.ended = true }
        authctl_http_stream_wake(handle)
    }

    fileprivate func pull(into buffer: UnsafeMutablePointer<UInt8>, capacity: Int) -> Int {
        state.withLock { s in
            guard !s.pending.isEmpty else { return s.ended ? -1 : 0 }
            let count = min(capacity, s.pending.count)
            s.pending.withUnsafeBufferPointer { buffer.update(from: $0.baseAddress!, count: count) }
            s.pending.removeFirst(count)
            return count
        }
    }

    fileprivate func release() {
        state.withLock { $0.released = true; $0.ended = true; $0.pending = [] }
        released()
    }
}

private func pullStream(_ context: UnsafeMutableRawPointer?, _ buffer: UnsafeMutablePointer<UInt8>?, _ capacity: Int) -> Int {
    guard let context, let buffer else { return -1 }
    return Unmanaged<HTTPStream>.fromOpaque(context).takeUnretainedValue().pull(into: buffer, capacity: capacity)
}

private func releaseStream(_ context: UnsafeMutableRawPointer?) {
    guard let context else { return }
    let stream = Unmanaged<HTTPStream>.fromOpaque(context)
    stream.takeUnretainedValue().release()
    stream.release()
}

/// An answer given later, from any thread (a conditional sign-in answered when the person picks a
/// passkey): the connection waits without holding a thread. ``complete(_:)`` answers once; a
/// second answer is dropped.
public final class HTTPDeferred: @unchecked Sendable {
    fileprivate let handle: OpaquePointer?
    /// The request's `Origin`: the answer, whenever it comes, carries the cross-origin headers.
    private let requestOrigin = Mutex<String?>(nil)

    public init() { handle = authctl_http_deferred_new() }

    deinit { authctl_http_deferred_unref(handle) }

    fileprivate var origin: String? {
        get { requestOrigin.withLock { $0 } }
        set { requestOrigin.withLock { $0 = newValue } }
    }

    public func complete(_ answer: HTTPResponse) {
        var response = authctl_http_response()
        let cross = origin.map { CrossOrigin.headers(origin: $0) } ?? []
        fill(&response, with: HTTPResponse(status: answer.status, contentType: answer.contentType, body: answer.body, headers: answer.headers + cross))
        authctl_http_deferred_complete(handle, &response)
    }
}
