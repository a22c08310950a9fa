import Session

/// The extension inputs (CTAP 2.1 §12) of authenticatorMakeCredential and GetAssertion that this
/// key reads from the request's extensions map (parameter 0x06 and 0x04). An extension it does
/// not know is ignored (§6.1.1).
extension SecurityKey {
    struct ExtensionInputs {
        /// largeBlobKey (§12.3): only `true` is allowed.
        var largeBlobKey = false
        /// minPinLength (§12.4).
        var minPinLength = false
    }

    static func extensionInputs(_ members: [(CBORValue, CBORValue)]) throws(CTAPStatus) -> ExtensionInputs {
        var inputs = ExtensionInputs()
        for (key, value) in members {
            guard let name = key.textValue else { throw .cborUnexpectedType }
            switch name {
            case "largeBlobKey":
                guard let flag = value.boolValue else { throw .cborUnexpectedType }
                guard flag else { throw .invalidOption }  // §12.3: false is not a value of it
                inputs.largeBlobKey = true
            case "minPinLength":
                guard let flag = value.boolValue else { throw .cborUnexpectedType }
                inputs.minPinLength = flag
            default: continue
            }
        }
        return inputs
    }
}
