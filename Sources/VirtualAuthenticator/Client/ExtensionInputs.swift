/// The client extension inputs authctl acts on (AuthenticationExtensionsClientInputsJSON, WebAuthn
/// L3 §5.7.1), read from the options' `extensions`. Binary values are base64url strings, as in the
/// JSON forms of the options, decoded strictly (an EncodingError otherwise). Extensions not
/// listed here are ignored (§9: unknown extensions).
package struct PRFInputs: Sendable, Equatable {
    /// `eval`: PRF inputs (not yet salted) for any credential.
    package var eval: PRFValues?
    /// `evalByCredential`: base64url credential id (as the RP wrote it) → inputs.
    package var evalByCredential: [String: PRFValues]
    /// Whether `evalByCredential` was given at all (even empty).
    package var evalByCredentialPresent: Bool

    init(_ reader: JSONReader) throws(AuthenticatorError) {
        eval = try reader.optionalReader("eval").map { r throws(AuthenticatorError) in try Self.values(r) }
        evalByCredentialPresent = reader.has("evalByCredential")
        var byCredential = [String: PRFValues]()
        for (key, values) in try reader.records("evalByCredential") ?? [] { byCredential[key] = try Self.values(values) }
        evalByCredential = byCredential
    }

    /// AuthenticationExtensionsPRFValuesJSON: `first`, optional `second`.
    static func values(_ r: JSONReader) throws(AuthenticatorError) -> PRFValues {
        PRFValues(first: try r.bytes("first"), second: r.optionalBytes("second"))
    }

    /// WebAuthn L3 §10.1.4: the hmac-secret salts for PRF inputs.
    static func salts(_ values: PRFValues) -> PRFValues {
        PRFValues(first: HMACSecret.salt(forPRFInput: values.first), second: values.second.map(HMACSecret.salt(forPRFInput:)))
    }
}

/// AuthenticationExtensionsLargeBlobInputsJSON (WebAuthn L3 §10.1.5).
package struct LargeBlobInputs: Sendable, Equatable {
    package var support: String?
    package var read: Bool?
    package var write: [UInt8]?

    init(_ reader: JSONReader) throws(AuthenticatorError) {
        read = reader.bool("read")
        support = reader.optionalString("support")
        write = reader.optionalBytes("write")
    }
}

/// The inputs of a registration.
package struct CreationExtensionInputs: Sendable, Equatable {
    package var credProps = false
    package var prf: PRFInputs?
    package var largeBlob: LargeBlobInputs?
    /// credProtect's inputs (CTAP 2.1 §12.1): the policy, when its name is one of the three.
    package var credentialProtectionPolicy: CredentialProtectionPolicy?
    /// The `credentialProtectionPolicy` value as given (an unknown one is NotSupportedError).
    package var credentialProtectionPolicyName: String?
    package var enforceCredentialProtectionPolicy = false
    package var credBlob: [UInt8]?
    package var minPinLength = false

    package init() {}

    init(_ reader: JSONReader?) throws(AuthenticatorError) {
        guard let reader else { return }
        // Members in WebIDL order (lexicographic).
        credBlob = reader.optionalBytes("credBlob")
        credProps = reader.bool("credProps") ?? false
        credentialProtectionPolicyName = reader.optionalString("credentialProtectionPolicy")
        credentialProtectionPolicy = credentialProtectionPolicyName.flatMap(CredentialProtectionPolicy.init(webAuthnName:))
        enforceCredentialProtectionPolicy = reader.bool("enforceCredentialProtectionPolicy") ?? false
        largeBlob = try reader.optionalReader("largeBlob").map { r throws(AuthenticatorError) in try LargeBlobInputs(r) }
        minPinLength = reader.bool("minPinLength") ?? false
        prf = try reader.optionalReader("prf").map { r throws(AuthenticatorError) in try PRFInputs(r) }
    }
}

/// The inputs of a sign-in.
package struct RequestExtensionInputs: Sendable, Equatable {
    /// `appid` (WebAuthn L3 §10.1.1): the FIDO AppID of U2F credentials, as given.
    package var appid: String?
    /// `credProps: true`, which only a registration takes (Chromium: NotSupportedError).
    package var credProps = false
    package var prf: PRFInputs?
    package var largeBlob: LargeBlobInputs?
    package var getCredBlob = false

    package init() {}

    init(_ reader: JSONReader?) throws(AuthenticatorError) {
        guard let reader else { return }
        appid = reader.optionalString("appid")
        credProps = reader.bool("credProps") ?? false
        getCredBlob = reader.bool("getCredBlob") ?? false
        largeBlob = try reader.optionalReader("largeBlob").map { r throws(AuthenticatorError) in try LargeBlobInputs(r) }
        prf = try reader.optionalReader("prf").map { r throws(AuthenticatorError) in try PRFInputs(r) }
    }
}
