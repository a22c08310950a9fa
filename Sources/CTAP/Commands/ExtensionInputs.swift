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
                guard value.boolValue != nil else { throw .cborUnexpectedType }
            default:
                continue
            }
        }
        return extensions
    }

    static func getAssertionExtensions(_ members: [(CBORValue, CBORValue)]) throws(CTAPStatus) -> GetAssertionExtensions {
        var extensions = GetAssertionExtensions()
        for (key, value) in members {
            guard let name = key.textValue else { throw .cborUnexpectedType }
            switch name {
            case "credBlob":
                guard let flag = value.boolValue else { throw .cborUnexpectedType }
                extensions.getCredBlob = flag
            default:
                continue
            }
        }
        return extensions
    }
}
