import CCurl
#if canImport(Glibc)
import Glibc
#endif

/// HTTP requests through libcurl's easy interface: one handle, so cookies set by one reply go with
/// the next request (libcurl's cookie engine), as a browser session keeps them. For a scenario's
/// steps that talk to a relying party.
package final class HTTPClient {
    package struct Response: Sendable {
        package let status: Int
        package let body: [UInt8]
        /// The values of the reply's `Set-Cookie` headers, as sent (the cookie engine keeps them
        /// besides): what a caller asks of "did this reply set a cookie".
        package var setCookies: [String] = []
    }

    package struct Failure: Error, Sendable {
        package let message: String
        /// What went wrong, without the request: ``message`` names the method and URL besides, for
        /// a caller that names the URL itself (cut, as its errors echo a caller's value).
        package let reason: String

        init(message: String, reason: String? = nil) {
            self.message = message
            self.reason = reason ?? message
        }
    }

    private let handle: UnsafeMutableRawPointer
    /// The most a reply may hold; anything longer is refused.
    package static let replyLimit = 4 << 20

    /// Whether the requests sent inside `HTTPClient.$isCanceled.withValue(…)` are to stop: asked
    /// before each, and about once a second while one waits for its answer, which then fails as
    /// ``stopped`` — so that a caller told to stop (an audit deleted, a server ending) does not
    /// wait for an answer that may take the whole timeout.
    @TaskLocal package static var isCanceled: (@Sendable () -> Bool)?

    /// A request's ``Failure/reason`` when ``isCanceled`` stopped it.
    package static let stopped = "stopped before the answer came"

    /// libcurl's global set-up, once per process (it is not safe to repeat alongside other threads):
    /// ``HTTPSFetch`` shares it.
    static let globalInit: CURLcode = authctl_curl_global_init(Int(CURL_GLOBAL_DEFAULT))

    /// Hosts never reached through a proxy: loopback, where a test RP runs; plus `$NO_PROXY`.
    static var noProxy: String {
        let names: [String] = ["NO_PROXY", "no_proxy"]
        let extra = names.compactMap { (name: String) -> String? in getenv(name).map { String(cString: $0) } }.filter { !$0.isEmpty }
        return (["localhost", "127.0.0.1", "::1"] + extra).joined(separator: ",")
    }

    package init() throws(Failure) {
        guard authctl_curl_load() == 1 else {
            throw Failure(message: "libcurl could not be loaded: " + (authctl_curl_load_error().map { String(cString: $0) } ?? "unknown"))
        }
        guard Self.globalInit == CURLE_OK else { throw Failure(message: "libcurl could not be initialised") }
        guard let handle = authctl_curl_easy_init() else { throw Failure(message: "libcurl could not start a session") }
        self.handle = handle
    }

    deinit { authctl_curl_easy_cleanup(handle) }

    /// Sends `method` to `url` with `body` (of `contentType`, JSON by default) and `extraHeaders`
    /// (names and values the caller checked: no line breaks), and returns the status and reply.
    /// `replyLimit`: the most the reply may hold (longer is refused).
    package func send(method: String, url: String, body: [UInt8]?, contentType: String = "application/json",
                      extraHeaders: [(String, String)] = [], timeoutSeconds: Int = 30, replyLimit: Int = HTTPClient.replyLimit) throws(Failure) -> Response {
        let isCanceled = Self.isCanceled
        if isCanceled?() == true { throw Failure(message: "\(method) \(url): \(Self.stopped)", reason: Self.stopped) }
        authctl_curl_easy_reset(handle)  // options only: the cookie jar stays
        let reply = ReplyBuffer()
        reply.isCanceled = isCanceled
        reply.limit = replyLimit
        var headers: UnsafeMutablePointer<curl_slist>? = nil
        defer { authctl_curl_slist_free_all(headers) }
        let codes: [CURLcode] = [
            authctl_curl_setopt_string(handle, CURLOPT_COOKIEFILE, ""),  // the cookie engine, in memory
            authctl_curl_setopt_string(handle, CURLOPT_URL, url),
            authctl_curl_setopt_string(handle, CURLOPT_PROTOCOLS_STR, "http,https"),
            authctl_curl_setopt_string(handle, CURLOPT_CUSTOMREQUEST, method),
            authctl_curl_setopt_long(handle, CURLOPT_TIMEOUT, timeoutSeconds),
            authctl_curl_setopt_long(handle, CURLOPT_NOSIGNAL, 1),
            authctl_curl_setopt_string(handle, CURLOPT_NOPROXY, Self.noProxy),
            authctl_curl_setopt_write(handle, { data, size, count, context in
                guard let data, let context else { return 0 }
                let buffer = Unmanaged<ReplyBuffer>.fromOpaque(context).takeUnretainedValue()
                let length = size * count
                guard buffer.bytes.count + length <= buffer.limit else { return 0 }  // ends the transfer
                buffer.bytes += UnsafeRawBufferPointer(start: data, count: length)
                return length
            }),
            authctl_curl_setopt_pointer(handle, CURLOPT_WRITEDATA, Unmanaged.passUnretained(reply).toOpaque()),
            authctl_curl_setopt_header(handle, { data, size, count, context in
                guard let data, let context else { return 0 }
                let buffer = Unmanaged<ReplyBuffer>.fromOpaque(context).takeUnretainedValue()
                let line = String(decoding: UnsafeRawBufferPointer(start: data, count: size * count), as: UTF8.self)
                // A new status line (after a 1xx) starts the final reply's headers afresh.
                if line.hasPrefix("HTTP/") { buffer.setCookies = [] }
                if let colon = line.firstIndex(of: ":"), line[..<colon].lowercased() == "set-cookie", buffer.setCookies.count < 100 {
                    let blank: Set<Character> = [" ", "\t", "\r", "\n", "\r\n"]
                    var value = line[line.index(after: colon)...]
                    while let first = value.first, blank.contains(first) { value.removeFirst() }
                    while let last = value.last, blank.contains(last) { value.removeLast() }
                    buffer.setCookies.append(String(value))
                }
                return size * count
            }),
            authctl_curl_setopt_pointer(handle, CURLOPT_HEADERDATA, Unmanaged.passUnretained(reply).toOpaque()),
            // Asked while the transfer runs, even while nothing comes: a nonzero answer ends it.
            authctl_curl_setopt_long(handle, CURLOPT_NOPROGRESS, isCanceled == nil ? 1 : 0),
            authctl_curl_setopt_xferinfo(handle, { context, _, _, _, _ in
                guard let context else { return 0 }
                return Unmanaged<ReplyBuffer>.fromOpaque(context).takeUnretainedValue().isCanceled?() == true ? 1 : 0
            }),
            authctl_curl_setopt_pointer(handle, CURLOPT_XFERINFODATA, Unmanaged.passUnretained(reply).toOpaque()),
        ]
        if let failed = codes.first(where: { $0 != CURLE_OK }) { throw Failure(message: String(cString: authctl_curl_easy_strerror(failed))) }
        // A method that carries a body gets one, empty when none is given (Content-Length: 0).
        let sent = body ?? (["POST", "PUT", "PATCH"].contains(method) ? [] : nil)
        for (name, value) in extraHeaders { headers = authctl_curl_slist_append(headers, "\(name): \(value)") }
        if sent == nil, headers != nil { _ = authctl_curl_setopt_pointer(handle, CURLOPT_HTTPHEADER, UnsafeMutableRawPointer(headers)) }
        if let body = sent {
            headers = authctl_curl_slist_append(headers, "Content-Type: \(contentType)")
            headers = authctl_curl_slist_append(headers, "Accept: application/json")
            _ = authctl_curl_setopt_pointer(handle, CURLOPT_HTTPHEADER, UnsafeMutableRawPointer(headers))
            _ = authctl_curl_setopt_long(handle, CURLOPT_POSTFIELDSIZE, body.count)
            let bytes = body.isEmpty ? [0] : body  // a valid pointer even for no bytes (the size says 0)
            _ = bytes.withUnsafeBytes { authctl_curl_setopt_pointer(handle, CURLOPT_COPYPOSTFIELDS, UnsafeMutableRawPointer(mutating: $0.baseAddress)) }
        }
        let rc = withExtendedLifetime(reply) { authctl_curl_easy_perform(handle) }
        guard rc == CURLE_OK else {
            let reason = rc == CURLE_ABORTED_BY_CALLBACK ? Self.stopped : String(cString: authctl_curl_easy_strerror(rc))
            throw Failure(message: "\(method) \(url): \(reason)", reason: reason)
        }
        var status = 0
        _ = authctl_curl_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &status)
        return Response(status: status, body: reply.bytes, setCookies: reply.setCookies)
    }

    private final class ReplyBuffer {
        var bytes: [UInt8] = []
        var setCookies: [String] = []
        var limit = HTTPClient.replyLimit
        var isCanceled: (@Sendable () -> Bool)?
    }
}
