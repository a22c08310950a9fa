/// Text an RP or a user supplied (a user name, an RP name, a path), made safe to show a person:
/// control characters, and the invisible ones that reorder a line, are written as escapes, so a
/// name can neither forge a table row nor send an escape sequence to the terminal. JSON output
/// never goes through this: it stays exact.
enum TerminalText {
    static func escaped(_ text: String) -> String {
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

    private static func hex(_ value: UInt32, digits: Int) -> String {
        let text = String(value, radix: 16)
        return String(repeating: "0", count: max(0, digits - text.count)) + text
    }
}
