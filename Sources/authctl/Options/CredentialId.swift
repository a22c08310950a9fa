import VirtualAuthenticator

/// A credential id as the command line takes it: base64url, not empty.
enum CredentialId {
    static func decode(_ text: String) throws(CLIError) -> [UInt8] {
        guard !text.isEmpty, let raw = Base64URL.decode(text), !raw.isEmpty else {
            throw CLIError(.badInput, "credential id '\(text)' is not base64url")
        }
        return raw
    }
}
