/// Text an RP or a user supplied (a user name, an RP name, a path), made safe to show a person:
/// control characters, and the invisible ones that reorder a line, are written as escapes, so a
/// name can neither forge a table row nor send an escape sequence to the terminal. JSON output
/// never goes through this: it stays exact.
enum TerminalText {
    static func escaped(_ text: String) -> String {
        // Printable ASCII holds nothing to escape: most text, a whole timeline, passes as it is.
        if text.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7f }) { return text }
        var out = ""
        out.unicodeScalars.reserveCapacity(text.unicodeScalars.count)
        for scalar in text.unicodeScalars {
            let properties = scalar.properties
            if scalar.value < 0x100, properties.generalCategory == .control {
                out += "\\x" + hex(scalar.value, digits: 2)  // C0, DEL, C1
            } else if properties.isBidiControl || [.lineSeparator, .paragraphSeparator].contains(properties.generalCategory) {
                out += "\\u{" + hex(scalar.value, digits: 4) + "}"  // reorders or breaks the line
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// The longest name a table or a notice shows whole, in characters (WebAuthn L3 §6.4.1 lets
    /// an authenticator keep as few as 64 bytes of one); JSON output keeps names whole.
    static let shownLength = 64

    /// `text` escaped, and cut to ``shownLength`` characters (Unicode scalars: a letter with
    /// thousands of combining marks is one grapheme) with an ellipsis when longer.
    static func shortened(_ text: String) -> String {
        let safe = escaped(text)
        let scalars = safe.unicodeScalars
        return scalars.count <= shownLength ? safe : String(String.UnicodeScalarView(scalars.prefix(shownLength - 1))) + "…"
    }

    private static func hex(_ value: UInt32, digits: Int) -> String {
        let text = String(value, radix: 16)
        return String(repeating: "0", count: max(0, digits - text.count)) + text
    }
}
