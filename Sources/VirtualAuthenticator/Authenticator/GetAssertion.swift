/// authenticatorGetAssertion (CTAP 2.1 §6.2), as a platform authenticator performs it.
public struct GetAssertionRequest: Sendable {
    public var clientDataHash: [UInt8]
    public var rpId: String
    /// Credential ids the RP allows; empty means any discoverable credential for the RP.
    public var allowList: [[UInt8]]
    public var performUserVerification: Bool
    public var timeoutMilliseconds: Int?
    public var fault: Fault?

    public init(clientDataHash: [UInt8], rpId: String, allowList: [[UInt8]], performUserVerification: Bool,
                timeoutMilliseconds: Int? = nil, fault: Fault? = nil) {
        self.clientDataHash = clientDataHash
        self.rpId = rpId
        self.allowList = allowList
        self.performUserVerification = performUserVerification
        self.timeoutMilliseconds = timeoutMilliseconds
        self.fault = fault
    }
}

public struct GetAssertionResponse: Sendable {
    public let credential: Credential
    public let authenticatorData: [UInt8]
    public let signature: [UInt8]
}

extension Authenticator {
    public func getAssertion(_ request: GetAssertionRequest) throws(AuthenticatorError) -> GetAssertionResponse {
        // Step 7: the applicable credentials — bound to rpId and, with an allow list, listed in it.
        var candidates = try store.credentials(forRP: request.rpId)
        if !request.allowList.isEmpty {
            candidates = candidates.filter { request.allowList.contains($0.id) }
        }
        guard !candidates.isEmpty else {
            throw AuthenticatorError(.notHandled, request.allowList.isEmpty
                ? "no passkey for \(request.rpId)"
                : "none of the \(request.allowList.count) allowed credentials is here for \(request.rpId)")
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
        let claimOnly = request.fault == .uvClaimedWithoutCheck
        let verify = (request.performUserVerification && !claimOnly) || credential.requiresUserVerification
        // Everything that can refuse the request is checked before the user is asked anything.
        try requireVerificationPossible(verify)
        try request.fault?.check(for: credential)
        try user.confirmPresence(prompt)
        let verification = verify ? try user.verifyUser(prompt) : nil

        // Step 11: a counting credential's next count (synced passkeys keep 0). It is stored, below,
        // once the signature exists and before it is returned, so no two honest responses carry
        // the same count and a failure before that leaves the counter as it was.
        // A passkey on the global counter takes the authenticator's next value.
        var signCount = credential.globalCounter ? try store.globalSignCount() : credential.signCount
        if credential.countsSignatures {
            guard signCount < UInt32.max else { throw AuthenticatorError(.unknown, "the signature counter is exhausted") }
            signCount += 1
        }
        // Authenticator data without attested credential data; the signature is over
        // authenticatorData ‖ clientDataHash.
        var flags: AuthenticatorFlags = [.userPresent]
        flags.set(.userVerified, verify && !claimOnly)
        flags.set(.backupEligible, credential.backupEligible)
        flags.set(.backupState, credential.backupState)
        var data = AuthenticatorData(rpId: request.rpId, flags: flags, signCount: signCount)
        request.fault?.apply(to: &data, previousSignCount: credential.signCount)
        var authenticatorData = data.bytes
        let key = try store.privateKey(for: credential, verification: verification)
        var signature: [UInt8]
        do { signature = try key.sign(authenticatorData + request.clientDataHash) } catch { throw AuthenticatorError(error) }
        request.fault?.apply(toSignature: &signature, authenticatorData: &authenticatorData)
        // A faulted response is one the RP must reject: the stored count stays where it was.
        if credential.countsSignatures && request.fault == nil { try store.updateSignCount(of: credential, to: signCount) }
        return GetAssertionResponse(credential: credential, authenticatorData: authenticatorData, signature: signature)
    }
}
