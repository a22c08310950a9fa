#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CMicroHTTPD
import POSIXSockets
import Synchronization

/// A request as the server read it: whole, its body up to the server's limit.
public struct HTTPRequest: Sendable {
    public let method: String
    public let path: String
    /// The query, `name=value&…`, each part percent-encoded (`""` when none; QueryText).
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
    public enum ContentType: UInt32, Sendable { case none = 0, json = 1, problem = 2, text = 3, eventStream = 4, javascript = 5, xml = 6, html = 7 }

    public var status: Int
    public var contentType: ContentType
    public var body: [UInt8]
    /// More headers (`Allow`, `WWW-Authenticate`, `Location`), written as ResponseHeaders says.
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
/// makes room (ConnectionWatch). Each request is read whole and handed to `handle` on one of the
/// pool's threads. The C core only calls libmicrohttpd and is called back by it; each callback
/// comes here, where the rules are.
public final class HTTPServer: Sendable {
    /// What libmicrohttpd's callbacks reach: the handler and the watch over connections.
    final class Core: Sendable {
        let handle: @Sendable (HTTPRequest) -> HTTPResponse
        let bodyLimit: Int
        let watch: ConnectionWatch
        init(_ handle: @escaping @Sendable (HTTPRequest) -> HTTPResponse, bodyLimit: Int, watch: ConnectionWatch) {
            self.handle = handle
            self.bodyLimit = bodyLimit
            self.watch = watch
        }
    }

    /// Each connection's memory for its request line, headers and arguments (libmicrohttpd's
    /// default is 32 KiB, which a query of some 460 arguments exhausts, and then it answers nothing).
    static let connectionMemory = 128 * 1024

    /// The C server while it runs; held (and the callbacks' context with it) until ``stop()``.
    private let running: Mutex<OpaquePointer?>
    private let core: Core
    /// The port it listens on (the one the system chose, for port 0).
    public let port: UInt16

    /// On IPv4 `address`:`port`, or on a Unix socket when `address` is an absolute path (UnixSocket).
    public init(address: String, port: UInt16, threads: Int, bodyLimit: Int, timeoutSeconds: Int, headerTimeoutSeconds: Int,
                connectionLimit: Int, handle: @escaping @Sendable (HTTPRequest) -> HTTPResponse) throws(HTTPServerError) {
        let watch = ConnectionWatch(limit: connectionLimit, headerTimeout: UInt64(max(headerTimeoutSeconds, 1)) * 1000)
        core = Core(handle, bodyLimit: bodyLimit, watch: watch)
        guard authctl_http_load() != 0 else { throw HTTPServerError(message: String(cString: authctl_http_load_error())) }
        let listening: Int32
        do { listening = address.hasPrefix("/") ? try UnixSocket.listen(at: address) : -1 } catch { throw HTTPServerError(message: error.message) }
        var callbacks = authctl_http_callbacks(
            context: Unmanaged.passUnretained(core).toOpaque(), head_check: checkHead, handle: serveRequest,
            unescape: { text in text.map { QueryText.decode(UnsafeMutableRawPointer($0).assumingMemoryBound(to: UInt8.self)) } ?? 0 },
            connection_opened: { context, fd in HTTPServer.core(context).watch.opened(fd: fd, now: ConnectionWatch.now()) },
            connection_progress: { context, token, progress in
                HTTPServer.core(context).watch.progress(token, ConnectionWatch.Progress(rawValue: progress) ?? .awaiting, now: ConnectionWatch.now())
            },
            connection_closed: { context, token in HTTPServer.core(context).watch.closed(token) },
            stream_pull: { stream, connection, buffer, capacity in
                guard let stream, let connection, let buffer else { return -1 }
                return Unmanaged<HTTPStream>.fromOpaque(stream).takeUnretainedValue().pull(into: buffer, capacity: capacity, connection: connection)
            },
            stream_release: { stream in
                guard let stream else { return }
                let held = Unmanaged<HTTPStream>.fromOpaque(stream)
                held.takeUnretainedValue().release()
                held.release()
            },
            deferred_answer: { deferred, connection, response in
                guard let deferred, let connection, let response else { return 0 }
                return Unmanaged<HTTPDeferred>.fromOpaque(deferred).takeUnretainedValue().answer(into: response, connection: connection) ? 1 : 0
            },
            deferred_release: { deferred in
                guard let deferred else { return }
                let held = Unmanaged<HTTPDeferred>.fromOpaque(deferred)
                held.takeUnretainedValue().requestEnded()
                held.release()
            })
        var bound: UInt16 = 0
        var error = [CChar](repeating: 0, count: 512)
        guard let started = authctl_http_start(address, port, listening, UInt32(max(threads, 1)), bodyLimit, UInt32(timeoutSeconds),
                                               UInt32(connectionLimit + ConnectionWatch.reserve), Self.connectionMemory, &callbacks,
                                               &bound, &error, error.count) else {
            if listening >= 0 {
                unlink(address)
                close(listening)
            }
            throw HTTPServerError(message: String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        watch.startReaping()
        running = Mutex(started)
        self.port = bound
    }

    fileprivate static func core(_ context: UnsafeMutableRawPointer?) -> Core { Unmanaged<Core>.fromOpaque(context!).takeUnretainedValue() }

    /// Stops accepting new connections; those open are still served.
    public func quiesce() {
        running.withLock { server in
            if let server { authctl_http_quiesce(server) }
        }
    }

    /// Stops accepting; the requests being handled finish first.
    public func stop() {
        running.withLock { server in
            guard let started = server else { return }
            authctl_http_quiesce(started)
            core.watch.stopReaping()
            authctl_http_stop(started)  // each connection's closing notice, each stream's and answer's release
            server = nil
        }
    }

    deinit { stop() }
}

/// libmicrohttpd's callback when a request's head has come, before its body is read: a request
/// whose body's end is ambiguous, or declared larger than the limit, is answered at once (and its
/// connection closed after the answer, nothing after it read as another request).
private func checkHead(_ context: UnsafeMutableRawPointer?, _ head: UnsafePointer<authctl_http_head>?,
                       _ response: UnsafeMutablePointer<authctl_http_response>?) -> Int32 {
    guard let context, let head, let response else { return 0 }
    let core = Unmanaged<HTTPServer.Core>.fromOpaque(context).takeUnretainedValue()
    let h = head.pointee
    func fields(_ list: UnsafePointer<UnsafePointer<CChar>?>?, _ count: Int) -> [String] {
        (0..<count).map { i in list?[i].map { String(cString: $0) } ?? "" }
    }
    guard let problem = RequestFraming.problem(version: h.version.map { String(cString: $0) } ?? "",
                                               contentLengths: fields(h.content_lengths, h.content_length_count),
                                               transferEncodings: fields(h.transfer_encodings, h.transfer_encoding_count),
                                               bodyLimit: core.bodyLimit) else { return 0 }
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
    let core = Unmanaged<HTTPServer.Core>.fromOpaque(context).takeUnretainedValue()
    let r = request.pointee
    let body = r.body.map { Array(UnsafeBufferPointer(start: $0, count: r.body_length)) } ?? []
    let asked = HTTPRequest(method: r.method.map { String(cString: $0) } ?? "", path: r.path.map { String(cString: $0) } ?? "/",
                            query: query(r), authorization: r.authorization.map { String(cString: $0) },
                            origin: r.origin.map { String(cString: $0) }, host: r.host.map { String(cString: $0) }, body: body,
                            bodyTooLarge: r.body_too_large != 0)
    if let preflight = CrossOrigin.preflight(asked) { return fill(response, with: preflight) }
    var answer = core.handle(asked)
    if let origin = CrossOrigin.answered(asked.origin) {
        answer.headers += CrossOrigin.headers(origin: origin)
        answer.deferred?.origin = origin
    }
    fill(response, with: answer)
}

/// The request's query, from its arguments as libmicrohttpd split and decoded them.
private func query(_ request: authctl_http_request) -> String {
    guard request.argument_count > 0, let names = request.argument_names, let values = request.argument_values else { return "" }
    func bytes(_ text: UnsafePointer<CChar>) -> [UInt8] {
        Array(UnsafeRawBufferPointer(start: text, count: strlen(text)))
    }
    return QueryText.encoded((0..<request.argument_count).map { i in
        QueryText.Argument(name: names[i].map(bytes) ?? [], value: values[i].map(bytes))
    })
}

/// A C response from `answer`: its body and headers in memory the server frees; its stream or
/// deferred answer held for the server (released by its callbacks).
func fill(_ response: UnsafeMutablePointer<authctl_http_response>, with answer: HTTPResponse) {
    response.pointee.status = UInt32(answer.status)
    response.pointee.content_kind = answer.contentType.rawValue
    let headers = ResponseHeaders.packed(answer.headers)
    if headers.count > 0, let memory = malloc(headers.bytes.count) {
        headers.bytes.withUnsafeBytes { memory.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
        response.pointee.headers = memory.assumingMemoryBound(to: CChar.self)
        response.pointee.header_count = headers.count
    }
    if let deferred = answer.deferred {
        response.pointee.deferred = Unmanaged.passRetained(deferred).toOpaque()
        return
    }
    if let stream = answer.stream {
        response.pointee.stream = Unmanaged.passRetained(stream).toOpaque()
        return
    }
    guard !answer.body.isEmpty, let memory = malloc(answer.body.count) else { return }
    answer.body.withUnsafeBytes { memory.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
    response.pointee.body = memory.assumingMemoryBound(to: UInt8.self)
    response.pointee.body_length = answer.body.count
}
