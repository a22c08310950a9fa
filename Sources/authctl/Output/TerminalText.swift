/// Text an RP or a user supplied (a user name, an RP name, a path), made safe to show a person:
/// control characters, and the invisible ones that reorder a line, are written as escapes, so a
/// name can neither forge a table row nor send an escape sequence to the terminal. JSON output
/// never goes through this: it stays exact.
enum TerminalText {
    static func escaped(_ text: String) -> String {
        var out = ""
        out.unicodeScalars.reserveCapacity(text.unicodeScalars.count)
        for scalar in text.unicodeScalars {
            switch scalar.value {
            case 0x00...0x1F, 0x7F...0x9F:
                out += "\\x" + hex(scalar.value, digits: 2)
            case 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069:  // bidirectional marks and overrides
                out += "\\u{" + hex(scalar.value, digits: 4) + "}"
            default:
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    private static func hex(_ value: UInt32, digits: Int) -> String {
        let text = String(value, radix: 16)
        return String(repeating: "0", count: max(0, digits - text.count)) + text
    }
}
