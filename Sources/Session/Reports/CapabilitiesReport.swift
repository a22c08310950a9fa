import Keychain

/// What `getClientCapabilities()` gives a page, and the two older static methods' answers: what
/// `authctl capabilities --json` prints, `GET …/capabilities` answers and a scenario's
/// `capabilities` step carries (docs/reports.md, "Capabilities").
public struct CapabilitiesReport: Encodable, Sendable {
    public let capabilities: [String: Bool]
    public let isUserVerifyingPlatformAuthenticatorAvailable: Bool
    public let isConditionalMediationAvailable: Bool

    public init(_ c: ClientCapabilities) {
        capabilities = Dictionary(c.values.map { ($0.key, $0.value) }, uniquingKeysWith: { a, _ in a })
        isUserVerifyingPlatformAuthenticatorAvailable = c.userVerifyingPlatformAuthenticatorAvailable
        isConditionalMediationAvailable = c.conditionalMediationAvailable
    }
}
