import COpenSSL

/// An OpenSSL call failed. Carries the library's own message; the queue is cleared so later
/// messages are not polluted.
public struct OpenSSLFailure: Error, Sendable, CustomStringConvertible {
    public let operation: String
    public let detail: String
    public var description: String { "\(operation) failed: \(detail)" }

    init(_ operation: String) {
        self.operation = operation
        var buffer = [CChar](repeating: 0, count: 256)
        let code = ERR_peek_last_error()
        if code != 0 {
            ERR_error_string_n(code, &buffer, buffer.count)
            detail = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        } else {
            detail = "no detail from OpenSSL"
        }
        ERR_clear_error()
    }
}
