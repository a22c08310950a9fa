/// What a caller gave (a credential id, a device name, an option's value, an origin, an RP ID), as
/// an error message repeats it: whole up to ``limit`` characters; past that its first ones, an
/// ellipsis and the whole length, so that a megabyte of input makes a line of an error, not a
/// megabyte. Every layer's errors use it, from WebAuthn's checks here up to the command line's.
package enum EchoedInput {
    /// The most characters of one value an error message repeats.
    package static let limit = 64

    package static func text(_ text: String) -> String {
        guard text.utf8.count > limit else { return text }
        let count = text.count
        guard count > limit else { return text }
        return String(text.prefix(limit - 1)) + "… (\(count) characters)"
    }

    /// `bytes` as base64url, cut likewise, with the whole length in bytes.
    package static func base64URL(_ bytes: [UInt8]) -> String {
        let whole = limit * 3 / 4
        guard bytes.count > whole else { return Base64URL.encode(bytes) }
        return Base64URL.encode(bytes.prefix(whole - 3)) + "… (\(bytes.count) bytes)"
    }
}
