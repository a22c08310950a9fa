/// What a caller gave (a credential id, a device name, an option's value, an origin, an RP ID, a
/// path), as an error message repeats it: whole up to ``limit`` characters (Unicode scalars); past that its first
/// ones, an ellipsis and the whole length, so that a megabyte of input makes a line of an error, not
/// a megabyte. Every layer's errors use it, from WebAuthn's checks here up to the command line's.
package enum EchoedInput {
    /// The most characters of one value an error message repeats.
    package static let limit = 64

    /// The most characters of a path an error message repeats: `PATH_MAX`, so that every path the
    /// system could open is named whole (a long temporary directory included); a longer one names
    /// no file, and is cut as any value.
    package static let pathLimit = 4096

    package static func text(_ text: String) -> String { cut(text, to: limit) }

    /// A path (a file or directory the caller named), cut past ``pathLimit`` characters.
    package static func path(_ path: String) -> String { cut(path, to: pathLimit) }

    /// `text` with every word of it (between spaces) longer than ``limit`` cut: for a message of
    /// another's (Foundation's JSON parser) that quotes the input inside its own words.
    package static func words(_ text: String) -> String {
        guard text.utf8.count > limit else { return text }
        return text.split(separator: " ", omittingEmptySubsequences: false).map { cut(String($0), to: limit) }.joined(separator: " ")
    }

    /// `bytes` as base64url, cut likewise, with the whole length in bytes.
    package static func base64URL(_ bytes: [UInt8]) -> String {
        let whole = limit * 3 / 4
        guard bytes.count > whole else { return Base64URL.encode(bytes) }
        return Base64URL.encode(bytes.prefix(whole - 3)) + "… (\(bytes.count) bytes)"
    }

    /// Counted in Unicode scalars (code points), not in Swift's characters: one letter with a
    /// hundred thousand combining marks is one grapheme cluster, and would be echoed whole.
    private static func cut(_ text: String, to limit: Int) -> String {
        guard text.utf8.count > limit else { return text }
        let scalars = text.unicodeScalars
        let count = scalars.count
        guard count > limit else { return text }
        return String(String.UnicodeScalarView(scalars.prefix(limit - 1))) + "… (\(count) characters)"
    }
}
