import Session

/// authenticatorGetInfo (CTAP 2.1 §6.4): what the key is and can do, from the device's profile
/// and state.
extension SecurityKey {
    /// The firmware version reported (0x0E): authctl's own numbering of the CTAP layer.
    static let firmwareVersion = 0x0001_0000
    /// The most a message may carry (0x05): a YubiKey's 1,200 bytes.
    static let maxMessageSize = 1200
    /// The most credentials an allow or exclude list may name (0x07), and the longest id (0x08).
    static let maxCredentialCountInList = 8
    static let maxCredentialIdLength = 128
    /// The serialized large-blob array's capacity (0x0B): at least 1,024 (CTAP 2.1 §6.10.1).
    static let maxSerializedLargeBlobArray = Device.maxSerializedLargeBlobArray
    /// The discoverable credentials the key has room for (a YubiKey 5.7 keeps 100).
    static let discoverableCredentialSlots = 100
    /// The longest credBlob kept (0x0F).
    static let maxCredBlobLength = 32

    /// The options (0x04): what the key supports and how it is set up. A pinUvAuthToken permission
    /// is granted only when its option here is true (``PinUvPermission/options``).
    static func getInfoOptions(_ facts: KeyFacts) -> [(CBORValue, CBORValue)] {
        [
            (.text("rk"), .bool(true)),
            (.text("up"), .bool(true)),
            (.text("plat"), .bool(facts.profile.attachment == .platform)),
            (.text("clientPin"), .bool(facts.pinSet)),
            (.text("pinUvAuthToken"), .bool(true)),
            (.text("makeCredUvNotRqd"), .bool(!facts.settings.alwaysUv)),
            (.text("credMgmt"), .bool(true)),
            (.text("credentialMgmtPreview"), .bool(true)),
            (.text("largeBlobs"), .bool(true)),
            (.text("authnrCfg"), .bool(true)),
            (.text("alwaysUv"), .bool(facts.settings.alwaysUv)),
            (.text("setMinPINLength"), .bool(true)),
        ]
    }

    func getInfo() throws(CTAPStatus) -> CBORValue {
        let facts = try facts(counting: true)
        // CTAP1/U2F messages are not answered yet (NMSG): no U2F_V2.
        let versions = ["FIDO_2_0", "FIDO_2_1"]
        let options = Self.getInfoOptions(facts)
        let algorithms = facts.profile.algorithms.map { algorithm in
            CBORValue.map([(.text("alg"), .int(algorithm.rawValue)), (.text("type"), .text("public-key"))])
        }
        let members: [(CBORValue, CBORValue)] = [
            (.int(0x01), .array(versions.map { .text($0) })),
            (.int(0x02), .array(["credProtect", "hmac-secret", "credBlob", "largeBlobKey", "minPinLength"].map { .text($0) })),
            (.int(0x03), .bytes(facts.aaguid)),
            (.int(0x04), .map(options)),
            (.int(0x05), .int(Self.maxMessageSize)),
            (.int(0x06), .array([.int(2), .int(1)])),
            (.int(0x07), .int(Self.maxCredentialCountInList)),
            (.int(0x08), .int(Self.maxCredentialIdLength)),
            (.int(0x09), .array(["usb"].map { .text($0) })),
            (.int(0x0A), .array(algorithms)),
            (.int(0x0B), .int(Self.maxSerializedLargeBlobArray)),
            (.int(0x0C), .bool(facts.settings.forcePINChange)),
            (.int(0x0D), .int(facts.settings.minPINLength)),
            (.int(0x0E), .int(Self.firmwareVersion)),
            (.int(0x0F), .int(Self.maxCredBlobLength)),
            (.int(0x10), .int(Device.maxRPIDsForSetMinPINLength)),
            (.int(0x14), .int(max(0, Self.discoverableCredentialSlots - (facts.discoverableCredentials ?? 0)))),
        ]
        return .map(members)
    }
}
