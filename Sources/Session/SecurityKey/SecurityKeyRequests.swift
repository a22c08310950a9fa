import Keychain

/// The requests of a device answering as a security key over CTAP2 (`authctl ctap serve`,
/// docs/ctap.md): the key's facts, its credentials, its PIN. The CTAP front end parses the
/// protocol and keeps what lives only while the key has power; what the key keeps lives here.
extension Session {
    /// What `device` reports of itself as a security key (its credentials counted only when
    /// `counting`).
    public func keyFacts(device: String? = nil, counting: Bool = false) throws(SessionError) -> KeyFacts {
        do { return try account.device(device).keyFacts(counting: counting) } catch { throw SessionError(error) }
    }

    // MARK: - The key's PIN (docs/ctap.md, "PIN"): the device's biometric PIN

    /// Checks `pinHash` (LEFT(SHA-256(PIN), 16)) against the PIN of `device`; a wrong one counts
    /// toward its lockout in the vault before this returns.
    public func verifyKeyPIN(device: String? = nil, pinHash: [UInt8]) throws(SessionError) -> KeyPINCheck {
        do { return try account.device(device).verifyKeyPIN(pinHash: pinHash) } catch { throw SessionError(error) }
    }

    /// Sets the first PIN of `device` from its `pinHash`. When another device of the account is
    /// enrolled, the new PIN wraps the account's biometry key, which the device
    /// ``defaultApprover(for:)`` names unlocks with its person's PIN, as for any new PIN.
    public func setKeyPIN(device: String? = nil, pinHash: [UInt8]) throws(SessionError) {
        do {
            let key = try account.device(device)
            let approving = defaultApprover(for: key.name)
            try key.setKeyPIN(pinHash: pinHash, approvedBy: approving,
                              approver: people.user(at: approving ?? "", doing: PersonRequest()))
        } catch { throw SessionError(error) }
    }

    /// Changes the PIN of `device` to the one of `pinHash`, with the proof that its current PIN
    /// was just given (``verifyKeyPIN(device:pinHash:)``).
    public func changeKeyPIN(device: String? = nil, verified: KeyVerification, pinHash: [UInt8]) throws(SessionError) {
        do { try account.device(device).changeKeyPIN(verified, to: pinHash) } catch { throw SessionError(error) }
    }
}

extension Session {
    /// authenticatorMakeCredential on `device` answering as a security key.
    public func keyMakeCredential(device: String? = nil, _ request: KeyMakeCredential, person: KeyPerson) throws(SessionError) -> MakeCredentialResponse {
        do { return try account.device(device).keyMakeCredential(request, person: person) } catch { throw SessionError(error) }
    }

    /// The credentials an authenticatorGetAssertion on `device` may answer with, newest first.
    public func keyCandidates(device: String? = nil, _ request: KeyGetAssertion) throws(SessionError) -> [Credential] {
        do { return try account.device(device).keyCandidates(request) } catch { throw SessionError(error) }
    }

    /// authenticatorGetAssertion (or GetNextAssertion) on `device` with the credential `credentialId`.
    public func keyGetAssertion(device: String? = nil, _ request: KeyGetAssertion, credentialId: [UInt8],
                                person: KeyPerson) throws(SessionError) -> GetAssertionResponse {
        do { return try account.device(device).keyGetAssertion(request, credentialId: credentialId, person: person) } catch {
            throw SessionError(error)
        }
    }
}

extension Session {
    /// authenticatorReset on `device`: its credentials as a key deleted, its PIN gone.
    public func keyReset(device: String? = nil) throws(SessionError) {
        do { try account.device(device).keyReset() } catch { throw SessionError(error) }
    }

    /// The credentials `device` holds as a security key, oldest first (`rpId`'s only, when
    /// given): the discoverable ones, or every one with `discoverableOnly` false.
    public func keyCredentials(device: String? = nil, rpId: String? = nil, discoverableOnly: Bool = true) throws(SessionError) -> [Credential] {
        do { return try account.device(device).keyCredentials(rpId: rpId, discoverableOnly: discoverableOnly) } catch { throw SessionError(error) }
    }
}

extension Session {
    /// U2F_REGISTER on `device` answering as a security key.
    public func keyU2FRegister(device: String? = nil, application: [UInt8], challenge: [UInt8]) throws(SessionError) -> KeyU2FRegistration {
        do { return try account.device(device).keyU2FRegister(application: application, challenge: challenge) } catch { throw SessionError(error) }
    }

    /// Whether `device` holds `keyHandle` for `application` (U2F_AUTHENTICATE's check-only).
    public func keyU2FHolds(device: String? = nil, application: [UInt8], keyHandle: [UInt8]) throws(SessionError) -> Bool {
        do { return try account.device(device).keyU2FHolds(application: application, keyHandle: keyHandle) } catch { throw SessionError(error) }
    }

    /// U2F_AUTHENTICATE on `device`: the response data (flags ‖ counter ‖ signature); `nil` for a
    /// key handle it does not hold for `application`.
    public func keyU2FAuthenticate(device: String? = nil, application: [UInt8], challenge: [UInt8], keyHandle: [UInt8],
                                   userPresent: Bool) throws(SessionError) -> [UInt8]? {
        do {
            return try account.device(device).keyU2FAuthenticate(application: application, challenge: challenge, keyHandle: keyHandle,
                                                                 userPresent: userPresent)
        } catch { throw SessionError(error) }
    }
}
