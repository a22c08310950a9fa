import CCurl

/// HTTP requests through libcurl's easy interface: one handle, so cookies set by one reply go with
/// the next request (libcurl's cookie engine), as a browser session keeps them. For a scenario's
/// steps that talk to a relying party.
public final class HTTPClient {
    public struct Response: Sendable {
        public let status: Int
        public let body: [UInt8]
    }

    public struct Failure: Error, Sendable {
        public let message: String
    }

    private let handle: UnsafeMutableRawPointer
    /// The most a reply may hold; anything longer is refused.
    public static let replyLimit = 4 << 20

    public init() throws(Failure) {
        curl_global_init(Int(CURL_GLOBAL_DEFAULT))
        guard let handle = curl_easy_init() else { throw Failure(message: "libcurl could not start a session") }
        self.handle = handle
    }

    deinit { curl_easy_cleanup(handle) }

    /// Sends `method` to `url` with `body` (as JSON when given) and returns the status and reply.
    public func send(method: String, url: String, body: [UInt8]?, timeoutSeconds: Int = 30) throws(Failure) -> Response {
        curl_easy_reset(handle)  // options only: the cookie jar stays
        let reply = ReplyBuffer()
        var headers: UnsafeMutablePointer<curl_slist>? = nil
        defer { curl_slist_free_all(headers) }
        let codes: [CURLcode] = [
            authctl_curl_setopt_string(handle, CURLOPT_COOKIEFILE, ""),  // the cookie engine, in memory
            authctl_curl_setopt_string(handle, CURLOPT_URL, url),
            authctl_curl_setopt_string(handle, CURLOPT_PROTOCOLS_STR, "http,https"),
            authctl_curl_setopt_string(handle, CURLOPT_CUSTOMREQUEST, method),
            authctl_curl_setopt_long(handle, CURLOPT_TIMEOUT, timeoutSeconds),
            authctl_curl_setopt_long(handle, CURLOPT_NOSIGNAL, 1),
            authctl_curl_setopt_write(handle, { data, size, count, context in
                guard let data, let context else { return 0 }
                let buffer = Unmanaged<ReplyBuffer>.fromOpaque(context).takeUnretainedValue()
                let length = size * count
                guard buffer.bytes.count + length <= HTTPClient.replyLimit else { return 0 }  // ends the transfer
                buffer.bytes += UnsafeRawBufferPointer(start: data, count: length)
                return length
            }),
            authctl_curl_setopt_pointer(handle, CURLOPT_WRITEDATA, Unmanaged.passUnretained(reply).toOpaque()),
        ]
        if let failed = codes.first(where: { $0 != CURLE_OK }) { throw Failure(message: String(cString: curl_easy_strerror(failed))) }
        if let body {
            headers = curl_slist_append(headers, "Content-Type: application/json")
            headers = curl_slist_append(headers, "Accept: application/json")
            _ = authctl_curl_setopt_pointer(handle, CURLOPT_HTTPHEADER, UnsafeMutableRawPointer(headers))
            _ = authctl_curl_setopt_long(handle, CURLOPT_POSTFIELDSIZE, body.count)
            _ = body.withUnsafeBytes { authctl_curl_setopt_pointer(handle, CURLOPT_COPYPOSTFIELDS, UnsafeMutableRawPointer(mutating: $0.baseAddress)) }
        }
        let rc = withExtendedLifetime(reply) { curl_easy_perform(handle) }
        guard rc == CURLE_OK else { throw Failure(message: "\(method) \(url): \(String(cString: curl_easy_strerror(rc)))") }
        var status = 0
        _ = authctl_curl_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &status)
        return Response(status: status, body: reply.bytes)
    }

    private final class ReplyBuffer {
        var bytes: [UInt8] = []
    }
}
