/// Text for roff (groff's man macros, man(7)), escaped so that nothing a declaration says is read
/// as a request or an escape, and the page renders without warnings on any device.
enum Roff {
    /// `text` as roff input text: a backslash as `\e`, every hyphen as `\-` (so that option names
    /// render as the ASCII hyphen-minus a shell needs), quotes as `\(aq` and `\(ga` (never curled),
    /// a `.` or `'` that would start a line behind `\&` (not a request), and whatever is not
    /// printable ASCII as `\[uXXXX]` (groff reads its input as Latin-1 unless told otherwise).
    static func text(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\\": out += "\\e"
            case "-": out += "\\-"
            case "'": out += "\\(aq"
            case "`": out += "\\(ga"
            case "." where out.isEmpty || out.hasSuffix("\n"): out += "\\&."
            case "\n": out += "\n"
            case "\t": out += " "
            case " "..."~": out.unicodeScalars.append(scalar)
            default:
                // Control characters have no business on a page; everything else by its code point.
                if scalar.value < 0x20 || (0x7F..<0xA0).contains(scalar.value) { continue }
                out += "\\[u" + hex(scalar.value) + "]"
            }
        }
        return out
    }

    static func bold(_ text: String) -> String { "\\fB" + Self.text(text) + "\\fR" }
    static func italic(_ text: String) -> String { "\\fI" + Self.text(text) + "\\fR" }

    /// A request's argument, double-quoted (a quote inside it as `\(dq`).
    static func argument(_ text: String) -> String {
        "\"" + Self.text(text).replacing("\"", with: "\\(dq") + "\""
    }

    /// A reference to another page: `\fBauthctl\-sign\fR(1)`.
    static func reference(_ page: String, section: Int = 1) -> String { bold(page) + "(\(section))" }

    /// groff's `\[uXXXX]` wants at least four upper-case hex digits.
    private static func hex(_ value: UInt32) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }
}
