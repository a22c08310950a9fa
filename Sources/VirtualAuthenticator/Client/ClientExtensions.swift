/// Client extension processing (WebAuthn L3 §9, §10; CTAP 2.1 §12): client inputs to
/// authenticator inputs, and authenticator outputs to client outputs. See docs/extensions.md.
extension WebAuthnClient {
    /// A registration's authenticator extension inputs.
    static func registrationExtensions(_ inputs: CreationExtensionInputs,
                                       userVerification: UserVerificationRequirement) throws(AuthenticatorError) -> MakeCredentialExtensions {
        var extensions = MakeCredentialExtensions()
        // credProtect (CTAP 2.1 §12.1), as Chromium checks it: a policy name that is none of the
        // three, or userVerificationRequired on a request that does not require user verification,
        // is NotSupportedError ("protection policy is inconsistent"), enforced or not.
        if let name = inputs.credentialProtectionPolicyName {
            guard let policy = inputs.credentialProtectionPolicy else {
                throw AuthenticatorError(.notSupported, "extensions.credentialProtectionPolicy '\(EchoedInput.text(name))' is none of userVerificationOptional, "
                    + "userVerificationOptionalWithCredentialIDList, userVerificationRequired (NotSupportedError)")
            }
            if policy == .userVerificationRequired && userVerification != .required {
                throw AuthenticatorError(.notSupported, "extensions.credentialProtectionPolicy userVerificationRequired needs "
                    + "authenticatorSelection.userVerification required, not \(userVerification.rawValue): the protection policy is inconsistent (NotSupportedError)")
            }
        }
        if let prf = inputs.prf {
            // §10.1.4, registration: evalByCredential makes no sense before there is a credential.
            guard !prf.evalByCredentialPresent else {
                throw AuthenticatorError(.notSupported, "extensions.prf.evalByCredential is not allowed in a registration (NotSupportedError)")
            }
            extensions.hmacSecret = true
            extensions.hmacSecretSalts = prf.eval.map(PRFInputs.salts)
        }
        if let largeBlob = inputs.largeBlob {
            // §10.1.5, registration: read and write belong to sign-ins.
            guard largeBlob.read == nil, largeBlob.write == nil else {
                throw AuthenticatorError(.notSupported, "extensions.largeBlob.read and .write are not allowed in a registration (NotSupportedError)")
            }
            extensions.largeBlobKey = true
        }
        // credProtect: this authenticator supports every level, so enforceCredentialProtectionPolicy
        // never refuses otherwise (CTAP 2.1 §12.1 client processing).
        extensions.credProtect = inputs.credentialProtectionPolicy
        extensions.credBlob = inputs.credBlob
        extensions.minPinLength = inputs.minPinLength
        return extensions
    }

    static func registrationResults(_ inputs: CreationExtensionInputs, _ outputs: MakeCredentialExtensionOutputs) -> ClientExtensionResults {
        var results = ClientExtensionResults(credProps: inputs.credProps ? .init(rk: true) : nil)
        if inputs.prf != nil { results.prf = .init(enabled: true, results: outputs.hmacSecret.map(ClientExtensionResults.PRFResults.init)) }
        if inputs.largeBlob != nil { results.largeBlob = .init(supported: outputs.largeBlobSupported) }
        results.credBlob = outputs.credBlob
        return results
    }

    /// A sign-in's authenticator extension inputs.
    static func assertionExtensions(_ inputs: RequestExtensionInputs, allowCredentials: [[UInt8]]) throws(AuthenticatorError) -> GetAssertionExtensions {
        var extensions = GetAssertionExtensions()
        // appid (§10.1.1): Chromium refuses a value that is not empty and not a URL, before credProps.
        if let appid = inputs.appid, !appid.isEmpty, !AppIDSyntax.isValidURL(appid) {
            throw AuthenticatorError(.syntaxError, "extensions.appid '\(EchoedInput.text(appid))' is neither empty nor a valid URL (SyntaxError)")
        }
        // credProps belongs to a registration (Chromium: "only valid when creating a credential").
        if inputs.credProps {
            throw AuthenticatorError(.notSupported, "extensions.credProps is only valid when creating a credential (NotSupportedError)")
        }
        if let prf = inputs.prf {
            // §10.1.4, authentication, steps 1–2.
            if !prf.evalByCredential.isEmpty && allowCredentials.isEmpty {
                throw AuthenticatorError(.notSupported, "extensions.prf.evalByCredential needs allowCredentials (NotSupportedError)")
            }
            for (key, values) in prf.evalByCredential {
                guard !key.isEmpty, let id = Base64URL.decodeStrict(key), allowCredentials.contains(id) else {
                    throw AuthenticatorError(.syntaxError,
                        "extensions.prf.evalByCredential key '\(EchoedInput.text(key))' is not the base64url id of an allowCredentials entry (SyntaxError)")
                }
                extensions.hmacSecretByCredential[id] = PRFInputs.salts(values)
            }
            extensions.hmacSecret = prf.eval.map(PRFInputs.salts)
        }
        if let largeBlob = inputs.largeBlob {
            // §10.1.5, authentication.
            guard largeBlob.support == nil else {
                throw AuthenticatorError(.notSupported, "extensions.largeBlob.support is not allowed in a sign-in (NotSupportedError)")
            }
            if largeBlob.read != nil && largeBlob.write != nil {  // both present, whatever `read` says
                throw AuthenticatorError(.notSupported, "extensions.largeBlob cannot both read and write (NotSupportedError)")
            }
            if let write = largeBlob.write {
                guard allowCredentials.count == 1 else {
                    throw AuthenticatorError(.notSupported,
                        "extensions.largeBlob.write needs exactly one allowCredentials entry, got \(allowCredentials.count) (NotSupportedError)")
                }
                extensions.largeBlobWrite = write
            }
            extensions.largeBlobRead = largeBlob.read == true
        }
        extensions.getCredBlob = inputs.getCredBlob
        return extensions
    }

    static func assertionResults(_ inputs: RequestExtensionInputs, _ outputs: GetAssertionExtensionOutputs) -> ClientExtensionResults {
        var results = ClientExtensionResults()
        // appid (§10.1.1): whether the AppID was used; a platform passkey is never a U2F credential.
        if inputs.appid != nil { results.appid = false }
        if inputs.prf != nil { results.prf = .init(results: outputs.hmacSecret.map(ClientExtensionResults.PRFResults.init)) }
        if let largeBlob = inputs.largeBlob {
            results.largeBlob = .init(blob: outputs.largeBlob.map { Base64URL.encode($0) },
                                      written: largeBlob.write != nil ? outputs.largeBlobWritten ?? false : nil)
        }
        if inputs.getCredBlob { results.getCredBlob = Base64URL.encode(outputs.credBlob ?? []) }
        return results
    }
}
