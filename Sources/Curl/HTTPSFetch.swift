import CCurl
#if canImport(Glibc)
import Glibc
#endif

/// One GET over HTTPS and nothing else, as a device fetches a file a site publishes for it (an
/// `apple-app-site-association`): `https` the only protocol (a redirect is answered, never
/// followed, and plain `http` is never spoken), the server's certificate checked against the
/// system's CAs and the ones given, its name always checked against the host's, the reply cut
/// off past a limit, compressed replies decoded (the limit counts the decoded bytes).
package enum HTTPSFetch {
    package struct Request: Sendable {
        /// `https://HOST/PATH`: any other scheme is refused before anything is sent.
        package var url: String
        /// PEM files of CAs trusted besides the system's (libcurl's CA path): a test's own CA.
        package var trustedCertificates: [[UInt8]] = []
        /// Whether the certificate must chain to a trusted CA; its name is checked either way.
        package var verifyChain = true
        /// Where a host's port 443 is reached instead of where DNS says (`HOST:443:ADDRESS:PORT`,
        /// libcurl's CURLOPT_CONNECT_TO): a test's server on 127.0.0.1, under the name the
        /// certificate and the request carry.
        package var connectTo: [String] = []
        /// The most the decoded reply may hold.
        package var limit: Int
        package var timeoutSeconds: Int = 10
        package var userAgent: String?

        package init(url: String, limit: Int) {
            self.url = url
            self.limit = limit
        }
    }

    package struct Reply: Sendable {
        package let status: Int
        package let body: [UInt8]
        /// The reply's `Content-Type`, as sent.
        package let contentType: String?
        /// The reply's `Location`, as sent (a redirect: never followed).
        package let location: String?
    }

    package enum Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// Nothing was sent: the URL is not an `https://` one.
        case notHTTPS
        /// The reply held more than the limit.
        case tooLarge(limit: Int)
        /// The transfer failed (a name, a connection, TLS, a timeout): libcurl's words.
        case transfer(String)

        package var description: String {
            switch self {
            case .notHTTPS: "only https is fetched"
            case .tooLarge(let limit): "the reply is larger than \(limit) bytes"
            case .transfer(let reason): reason
            }
        }
    }

    package static func get(_ request: Request) throws(Failure) -> Reply {
        guard request.url.lowercased().hasPrefix("https://") else { throw .notHTTPS }
        guard authctl_curl_load() == 1 else {
            throw .transfer("libcurl could not be loaded: " + (authctl_curl_load_error().map { String(cString: $0) } ?? "unknown"))
        }
        guard HTTPClient.globalInit == CURLE_OK, let handle = authctl_curl_easy_init() else { throw .transfer("libcurl could not start a session") }
        defer { authctl_curl_easy_cleanup(handle) }
        let reply = Buffer(limit: request.limit)
        var connectTo: UnsafeMutablePointer<curl_slist>? = nil
        defer { authctl_curl_slist_free_all(connectTo) }
        for entry in request.connectTo { connectTo = authctl_curl_slist_append(connectTo, entry) }
        var pem = request.trustedCertificates.reduce(into: [UInt8]()) { $0 += $1 + [0x0A] }
        var codes: [CURLcode] = [
            authctl_curl_setopt_string(handle, CURLOPT_URL, request.url),
            authctl_curl_setopt_string(handle, CURLOPT_PROTOCOLS_STR, "https"),
            authctl_curl_setopt_string(handle, CURLOPT_REDIR_PROTOCOLS_STR, "https"),
            authctl_curl_setopt_long(handle, CURLOPT_FOLLOWLOCATION, 0),
            authctl_curl_setopt_long(handle, CURLOPT_SSL_VERIFYPEER, request.verifyChain ? 1 : 0),
            authctl_curl_setopt_long(handle, CURLOPT_SSL_VERIFYHOST, 2),
            authctl_curl_setopt_string(handle, CURLOPT_ACCEPT_ENCODING, ""),  // what libcurl can decode, decoded
            authctl_curl_setopt_long(handle, CURLOPT_TIMEOUT, request.timeoutSeconds),
            authctl_curl_setopt_long(handle, CURLOPT_NOSIGNAL, 1),
            // A host reached where the request says is reached directly, never through a proxy.
            authctl_curl_setopt_string(handle, CURLOPT_NOPROXY, request.connectTo.isEmpty ? HTTPClient.noProxy : "*"),
            authctl_curl_setopt_write(handle, { data, size, count, context in
                guard let data, let context else { return 0 }
                let buffer = Unmanaged<Buffer>.fromOpaque(context).takeUnretainedValue()
                let length = size * count
                guard buffer.bytes.count + length <= buffer.limit else {
                    buffer.overflowed = true
                    return 0  // ends the transfer
                }
                buffer.bytes += UnsafeRawBufferPointer(start: data, count: length)
                return length
            }),
            authctl_curl_setopt_pointer(handle, CURLOPT_WRITEDATA, Unmanaged.passUnretained(reply).toOpaque()),
            authctl_curl_setopt_header(handle, { data, size, count, context in
                guard let data, let context else { return 0 }
                let buffer = Unmanaged<Buffer>.fromOpaque(context).takeUnretainedValue()
                buffer.header(String(decoding: UnsafeRawBufferPointer(start: data, count: size * count), as: UTF8.self))
                return size * count
            }),
            authctl_curl_setopt_pointer(handle, CURLOPT_HEADERDATA, Unmanaged.passUnretained(reply).toOpaque()),
        ]
        if let userAgent = request.userAgent { codes.append(authctl_curl_setopt_string(handle, CURLOPT_USERAGENT, userAgent)) }
        if connectTo != nil { codes.append(authctl_curl_setopt_pointer(handle, CURLOPT_CONNECT_TO, UnsafeMutableRawPointer(connectTo))) }
        let rc: CURLcode = pem.withUnsafeMutableBytes { bytes in
            // The CAs given, besides the CA path's (the system's): copied by libcurl.
            var blob = curl_blob(data: bytes.baseAddress, len: bytes.count, flags: UInt32(CURL_BLOB_COPY))
            if !request.trustedCertificates.isEmpty { codes.append(authctl_curl_setopt_pointer(handle, CURLOPT_CAINFO_BLOB, &blob)) }
            if let failed = codes.first(where: { $0 != CURLE_OK }) { return failed }
            return withExtendedLifetime(reply) { authctl_curl_easy_perform(handle) }
        }
        if reply.overflowed { throw .tooLarge(limit: request.limit) }
        guard rc == CURLE_OK else { throw .transfer(String(cString: authctl_curl_easy_strerror(rc))) }
        var status = 0
        _ = authctl_curl_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &status)
        return Reply(status: status, body: reply.bytes, contentType: reply.contentType, location: reply.location)
    }

    private final class Buffer {
        let limit: Int
        var bytes: [UInt8] = []
        var overflowed = false
        var contentType: String?
        var location: String?

        init(limit: Int) { self.limit = limit }

        func header(_ line: String) {
            // A new status line (after a 1xx) starts the final reply's headers afresh.
            if line.hasPrefix("HTTP/") {
                contentType = nil
                location = nil
            }
            guard let colon = line.firstIndex(of: ":") else { return }
            let value = Self.trimmed(line[line.index(after: colon)...])
            switch line[..<colon].lowercased() {
            case "content-type": contentType = value
            case "location": location = value
            default: break
            }
        }

        private static func trimmed(_ value: Substring) -> String {
            let blank: Set<Character> = [" ", "\t", "\r", "\n", "\r\n"]
            var text = value
            while let first = text.first, blank.contains(first) { text.removeFirst() }
            while let last = text.last, blank.contains(last) { text.removeLast() }
            return String(text)
        }
    }
}
