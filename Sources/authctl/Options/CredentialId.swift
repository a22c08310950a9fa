import Session

/// A credential id as the command line takes it (a positional id, `--credential`, `--exclude`,
/// `--allow`): unpadded base64url, as `list` prints it and as the response's `id` carries it
/// (WebAuthn's Base64URLString), not empty. Standard base64's `+` and `/`, `=` padding, white space
/// and non-zero unused bits in the last character are refused, by name.
enum CredentialId {
    static func decode(_ text: String, _ what: String = "credential id") throws(CLIError) -> [UInt8] {
        guard !text.isEmpty, let raw = Base64URL.decodeStrict(text), !raw.isEmpty else {
            let bad = text.unicodeScalars.first { !($0.isASCII && (Base64URLAlphabet.contains(UInt8($0.value)))) }
            let why = bad.map { "'\(TerminalText.escaped(String($0)))' is not among A-Z a-z 0-9 - _" + ($0 == "=" ? " (no padding)" : $0 == "+" || $0 == "/" ? " (standard base64: write - for +, _ for /)" : "") }
                ?? (text.isEmpty ? "it is empty" : "its length or last character cannot be base64url")
            throw CLIError(.badInput, "\(what) '\(EchoedInput.text(text))' is not unpadded base64url: \(why)")
        }
        return raw
    }
}

private enum Base64URLAlphabet {
    static func contains(_ c: UInt8) -> Bool {
        (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) || (c >= 0x30 && c <= 0x39) || c == 0x2D || c == 0x5F
    }
}
