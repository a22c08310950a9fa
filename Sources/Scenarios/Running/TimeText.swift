import Keychain

/// Times since a scenario's start, as a timeline prints them and `at` reads them back: `0s`,
/// `2.5s`, `250ms`, `2m`, `1h`.
enum TimeText {
    static func of(_ ms: UInt64) -> String {
        if ms == 0 { return "0s" }
        if ms < 1000 { return "\(ms)ms" }
        if ms % 1000 != 0 {
            var text = "\(ms / 1000).\(String(1000 + ms % 1000).dropFirst())"
            while text.hasSuffix("0") { text.removeLast() }
            return text + "s"
        }
        return DelayRange.text(milliseconds: ms)
    }
}
