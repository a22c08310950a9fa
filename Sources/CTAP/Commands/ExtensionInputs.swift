import Session

/// The extensions a key answers in authenticatorMakeCredential and authenticatorGetAssertion
/// (CTAP 2.1 §12), read from a command's extensions map: each of its type, or
/// CTAP2_ERR_CBOR_UNEXPECTED_TYPE; an extension this key does not know is ignored (§6.1.2 step 9).
extension SecurityKey {
    static func makeCredentialExtensions(_ members: [(CBORValue, CBORValue)]) throws(CTAPStatus) -> MakeCredentialExtensions {
        var extensions = MakeCredentialExtensions()
        for (key, value) in members {
            guard let name = key.textValue else { throw .cborUnexpectedType }
            switch name {
            case "credProtect":
                guard let level = value.intValue else { throw .cborUnexpectedType }
                guard let policy = (0...255).contains(level) ? CredentialProtectionPolicy(rawValue: UInt8(level)) : nil else {
                    throw .invalidParameter
                }
                extensions.credProtect = policy
            case "credBlob":
                guard let blob = value.bytesValue else { throw .cborUnexpectedType }
                extensions.credBlob = blob
            case "hmac-secret":
                guard let flag = value.boolValue else { throw .cborUnexpectedType }
                extensions.hmacSecret = flag
            case "minPinLength":
                guard let flag = value.boolValue else { throw .cborUnexpectedType }
                extensions.minPinLength = flag
            case "largeBlobKey":
                extensions.largeBlobKey = try Self.largeBlobKey(value)
            default:
                continue
            }
        }
        return extensions
    }

    func getAssertionExtensions(_ members: [(CBORValue, CBORValue)]) throws(CTAPStatus) -> GetAssertionExtensions {
        var extensions = GetAssertionExtensions()
        for (key, value) in members {
            guard let name = key.textValue else { throw .cborUnexpectedType }
            switch name {
            case "credBlob":
                guard let flag = value.boolValue else { throw .cborUnexpectedType }
                extensions.getCredBlob = flag
            case "largeBlobKey":
                extensions.largeBlobKey = try Self.largeBlobKey(value)
            case "hmac-secret":
                extensions.hmacSecretSealed = try hmacSecret(CTAPParameters(value))
            default:
                continue
            }
        }
        return extensions
    }

    /// largeBlobKey's input (§12.3): only `true` is a value of it (CTAP2_ERR_INVALID_OPTION).
    private static func largeBlobKey(_ value: CBORValue) throws(CTAPStatus) -> Bool {
        guard let flag = value.boolValue else { throw .cborUnexpectedType }
        guard flag else { throw .invalidOption }
        return true
    }

    /// hmac-secret's input (CTAP 2.1 §12.5): the platform's key agreement (0x01), the salts
    /// encrypted under the shared secret (0x02) and their MAC (0x03), in protocol 0x04 (1 when
    /// absent). A key agreement that is not a point on P-256 is CTAP1_ERR_INVALID_PARAMETER, a MAC
    /// that does not verify CTAP2_ERR_PIN_AUTH_INVALID, salts that are not one or two 32-byte
    /// values CTAP1_ERR_INVALID_LENGTH. The outputs go back encrypted under the same secret.
    private func hmacSecret(_ input: CTAPParameters) throws(CTAPStatus) -> SealedHMACSecret {
        guard let keyAgreement = input.members[0x01] else { throw .missingParameter }
        let saltEnc = try input.required(0x02, input.bytes)
        let saltAuth = try input.required(0x03, input.bytes)
        let version = try input.int(0x04) ?? 1
        let rules = try pinUvAuthProtocol(version)
        let secret: [UInt8]?
        do { secret = try rules.decapsulate(keyAgreement) } catch { throw .other }
        guard let secret else { throw .invalidParameter }
        guard rules.verify(key: secret, saltEnc, signature: saltAuth) else { throw .pinAuthInvalid }
        guard let salts = rules.decrypt(key: secret, saltEnc), salts.count == 32 || salts.count == 64 else { throw .invalidLength }
        return SealedHMACSecret(salts: PRFValues(first: Array(salts.prefix(32)), second: salts.count == 64 ? Array(salts.suffix(32)) : nil)) {
            outputs throws(AuthenticatorError) in
            guard let sealed = rules.encrypt(key: secret, outputs) else {
                throw AuthenticatorError(.unknown, "the hmac-secret outputs could not be encrypted")
            }
            return sealed
        }
    }
}
