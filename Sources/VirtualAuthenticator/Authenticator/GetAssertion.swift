/// authenticatorGetAssertion (CTAP 2.1 §6.2), as a platform authenticator performs it.
package struct GetAssertionRequest: Sendable {
    package var clientDataHash: [UInt8]
    package var rpId: String
    /// Credential ids the RP allows; empty means any discoverable credential for the RP.
    package var allowList: [[UInt8]]
    package var performUserVerification: Bool
    package var timeoutMilliseconds: Int?
    package var fault: Fault?
    package var extensions: GetAssertionExtensions
    /// Collect user presence (UP=1). A security key asked with the `up` option false does not
    /// (CTAP 2.1 §6.2.2 step 9: a silent assertion, UP=0).
    package var requireUserPresence = true

    package init(clientDataHash: [UInt8], rpId: String, allowList: [[UInt8]], performUserVerification: Bool,
                timeoutMilliseconds: Int? = nil, fault: Fault? = nil,
                extensions: GetAssertionExtensions = GetAssertionExtensions()) {
        self.clientDataHash = clientDataHash
        self.rpId = rpId
        self.allowList = allowList
        self.performUserVerification = performUserVerification
        self.timeoutMilliseconds = timeoutMilliseconds
        self.fault = fault
        self.extensions = extensions
    }
}

public struct GetAssertionResponse: Sendable {
    public let credential: Credential
    public let authenticatorData: [UInt8]
    public let signature: [UInt8]
    package var extensionOutputs = GetAssertionExtensionOutputs()
    /// The credential's largeBlobKey, when the request asked for it and the credential has one.
    public var largeBlobKey: [UInt8]? { extensionOutputs.largeBlobKey }
}

extension Authenticator {
    package func getAssertion(_ request: GetAssertionRequest) throws(AuthenticatorError) -> GetAssertionResponse {
        // Step 7: the applicable credentials — bound to rpId and, with an allow list, listed in it.
        // A passkey the RP's signal hid is kept, but offered to no sign-in. credProtect (CTAP 2.1
        // §12.1): without user verification, a userVerificationRequired credential is not there at
        // all, and a userVerificationOptionalWithCredentialIDList one only when the RP lists it.
        // Without an allow list the RP's passkeys are read where the store keeps them: the picker
        // looks at a few, not at a copy of all.
        let claimOnly = request.fault == .uvClaimedWithoutCheck
        let listed = !request.allowList.isEmpty
        guard let candidates = try candidates(for: request) else {
            throw AuthenticatorError(.notHandled, listed
                ? "none of the \(request.allowList.count) allowed credentials is here for \(request.rpId)"
                : "no passkey for \(request.rpId)")
        }
        // The account picker comes before the biometric prompt, as on a phone.
        let credential = try user.selectAccount(
            from: candidates, for: UserPrompt(ceremony: .authentication, rpId: request.rpId, userName: nil,
                                              timeoutMilliseconds: request.timeoutMilliseconds))

        // Steps 9–10: user presence, then user verification when the client asked for it or the
        // credential demands it (it was made with user verification; its key needs the PIN).
        let prompt = UserPrompt(ceremony: .authentication, rpId: request.rpId, userName: credential.userName,
                                timeoutMilliseconds: request.timeoutMilliseconds)
        // With the uv-claimed-without-check fault the user is not verified (unless the key itself
        // needs the PIN to be unsealed) and the signed flags say so; the UV bit is set afterwards.
        let verify = (request.performUserVerification && !claimOnly) || credential.requiresUserVerification
        // Everything that can refuse the request is checked before the user is asked anything.
        try requireVerificationPossible(verify)
        try request.fault?.check(for: credential)
        try request.fault?.check(userVerified: verify)
        // Step 11: a counting credential's next count (synced passkeys keep 0). It is stored, below,
        // once the signature exists and before it is returned, so no two honest responses carry
        // the same count and a failure before that leaves the counter as it was.
        // A passkey on the global counter takes the authenticator's next value.
        // (never below the passkey's own last count: one imported from another device keeps it).
        var signCount = credential.globalCounter ? max(try store.globalSignCount(), credential.signCount) : credential.signCount
        if credential.countsSignatures {
            // §6.1.1: the counter is "incremented … by some positive value"; at 4294967295 no
            // 32-bit value is, and a wrap to 0 is what an RP reads as a cloned authenticator
            // (§7.2). The credential can sign no more: refused as no eligible credential,
            // before the user is asked (a browser's NotAllowedError).
            guard signCount < UInt32.max else {
                throw AuthenticatorError(.notHandled, "the passkey's signature counter is at 4294967295: it can sign no more")
            }
            signCount += 1
        }
        if request.requireUserPresence { try user.confirmPresence(prompt) }
        let verification = verify ? try user.verifyUser(prompt) : nil
        // Authenticator data without attested credential data; the signature is over
        // authenticatorData ‖ clientDataHash.
        var flags: AuthenticatorFlags = request.requireUserPresence ? [.userPresent] : []
        flags.set(.userVerified, verify && !claimOnly)
        flags.set(.backupEligible, credential.backupEligible)
        flags.set(.backupState, credential.backupState)
        let key = try store.privateKey(for: credential, verification: verification)
        var sealedHMACSecret: [UInt8]? = nil
        if let sealed = request.extensions.hmacSecretSealed {
            let outputs: PRFValues
            do { outputs = try HMACSecret.evaluate(sealed.salts, key: key, userVerified: verify && !claimOnly) } catch { throw AuthenticatorError(error) }
            sealedHMACSecret = try sealed.seal(outputs.first + (outputs.second ?? []))
        }
        var data = AuthenticatorData(rpId: request.rpId, flags: flags, signCount: signCount,
                                     extensions: assertionExtensionMap(request.extensions, credential: credential, hmacSecret: sealedHMACSecret))
        request.fault?.apply(to: &data, previousSignCount: credential.signCount)
        var authenticatorData = data.bytes
        var signature: [UInt8]
        do { signature = try key.sign(authenticatorData + request.clientDataHash) } catch { throw AuthenticatorError(error) }
        request.fault?.apply(toSignature: &signature, authenticatorData: &authenticatorData)
        // A faulted response is one the RP must reject: the stored count stays where it was.
        if credential.countsSignatures && request.fault == nil { try store.updateSignCount(of: credential, to: signCount) }
        let outputs = try assertionExtensionOutputs(request, credential: credential, key: key, userVerified: verify && !claimOnly)
        return GetAssertionResponse(credential: credential, authenticatorData: authenticatorData, signature: signature,
                                    extensionOutputs: outputs)
    }

    /// Step 7's applicable credentials for `request`, as its account picker sees them (`nil`: none):
    /// also what a conditional sign-in's autofill list offers, so that the list and the pick
    /// follow one rule.
    package func candidates(for request: GetAssertionRequest) throws(AuthenticatorError) -> AccountCandidates? {
        let willVerify = request.performUserVerification && request.fault != .uvClaimedWithoutCheck
        return request.allowList.isEmpty
            ? try AccountCandidates(try store.credentialList(forRP: request.rpId), userVerified: willVerify, listed: false)
            : try AccountCandidates(CredentialArray(try store.credentials(forRP: request.rpId, ids: request.allowList)),
                                userVerified: willVerify, listed: true)
    }

    /// The authenticator data's extension outputs of a sign-in (`nil`: none, no ED flag). The
    /// hmac-secret output is not among them: CTAP encrypts it for the platform, and a platform
    /// authenticator hands it to its client directly (docs/extensions.md).
    func assertionExtensionMap(_ extensions: GetAssertionExtensions, credential: Credential, hmacSecret: [UInt8]? = nil) -> CBORValue? {
        var map = [(CBORValue, CBORValue)]()
        if extensions.getCredBlob { map.append((.text("credBlob"), .bytes(credential.credBlob ?? []))) }
        if let hmacSecret { map.append((.text("hmac-secret"), .bytes(hmacSecret))) }
        return map.isEmpty ? nil : .map(map)
    }

    /// PRF outputs and the large blob, with the key opened for the signature. A faulted response
    /// writes no blob.
    func assertionExtensionOutputs(_ request: GetAssertionRequest, credential: Credential, key: PrivateKey,
                                   userVerified: Bool) throws(AuthenticatorError) -> GetAssertionExtensionOutputs {
        let extensions = request.extensions
        var outputs = GetAssertionExtensionOutputs()
        if extensions.getCredBlob { outputs.credBlob = credential.credBlob ?? [] }
        do {
            if let salts = extensions.salts(for: credential.id) {
                outputs.hmacSecret = try HMACSecret.evaluate(salts, key: key, userVerified: true)
            }
            if extensions.largeBlobKey && credential.hasLargeBlobKey { outputs.largeBlobKey = try LargeBlob.key(of: key) }
            if extensions.largeBlobRead, let sealed = credential.largeBlob {
                guard let blob = try LargeBlob.open(sealed, key: key) else {
                    throw AuthenticatorError(.unknown, "the large blob of this passkey does not open under its key")
                }
                outputs.largeBlob = blob
            }
            if let blob = extensions.largeBlobWrite {
                if blob.count <= LargeBlob.maximumLength && request.fault == nil {
                    try store.storeLargeBlob(try LargeBlob.seal(blob, key: key, nonce: random.bytes(AES256GCM.nonceLength)),
                                             of: credential)
                    outputs.largeBlobWritten = true
                } else {
                    outputs.largeBlobWritten = false
                }
            }
        } catch let error as OpenSSLFailure {
            throw AuthenticatorError(error)
        } catch let error as AuthenticatorError {
            throw error
        } catch {
            throw AuthenticatorError(.unknown, "\(error)")
        }
        return outputs
    }
}
