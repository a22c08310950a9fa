import KeyVault
import VirtualAuthenticator

/// authenticatorMakeCredential and authenticatorGetAssertion on a device answering as a security
/// key: the authenticator's own commands (CTAP 2.1 §6.1, §6.2), with a client data hash and no
/// WebAuthn client in front — the client is whoever speaks CTAP to the key.
extension Device {
    /// The device's authenticator configuration as a key: its profile and AAGUID, its counter.
    private func keyConfiguration(_ record: DeviceRecord, revisionId: [UInt8]?) throws(DeviceError) -> AuthenticatorConfiguration {
        let (profile, aaguid) = try account.profile(of: record)
        var configuration = AuthenticatorConfiguration(profile: profile, aaguid: aaguid, backupEligible: profile.backupEligible,
                                                       backupState: false, signCounter: profile.signCounter,
                                                       attachment: .crossPlatform, minimumPINLength: Device.minimumPINLength)
        if configuration.needsCertificate(for: .direct) { configuration.attestationCA = try account.attestationCA() }
        return configuration
    }

    private func keyAuthenticator(_ person: KeyPerson, pick: [UInt8]?, revisionId: [UInt8]?) throws(DeviceError)
        -> Authenticator<ViewCredentialStore, KeyUser> {
        let record = try record()
        try Self.requireSupport(record)
        return Authenticator(configuration: try keyConfiguration(record, revisionId: revisionId),
                             store: ViewCredentialStore(account: account, device: record, nextRevisionId: revisionId),
                             user: KeyUser(person: person, pick: pick), random: account.random, clock: account.clock)
    }

    /// authenticatorMakeCredential: a new credential, stored on this device (a key keeps every
    /// credential it makes; see docs/ctap.md). A key's credential made with user verification
    /// does not need it again to be used: its credProtect policy says when it does.
    public func keyMakeCredential(_ request: KeyMakeCredential, person: KeyPerson) throws(DeviceError) -> MakeCredentialResponse {
        var made = MakeCredentialRequest(
            clientDataHash: request.clientDataHash, rpId: request.rpId, userHandle: request.userHandle, userName: request.userName,
            userDisplayName: request.userDisplayName, algorithms: request.algorithms, excludeList: request.excludeList,
            performUserVerification: request.userVerified, attestation: request.attestation,
            timeoutMilliseconds: nil, extensions: request.extensions)
        made.requireUserPresence = request.userPresence
        made.verificationBindsKey = false
        made.discoverable = request.discoverable
        var authenticator = try keyAuthenticator(person, pick: nil, revisionId: account.reserveRevisionId())
        // minPinLength reports the key's minimum only to the RP IDs setMinPINLength named (CTAP 2.1 §12.4).
        let settings = try keySettings()
        authenticator.configuration.minimumPINLength = settings.minPINLengthRPIDs.contains(request.rpId) ? settings.minPINLength : nil
        do { return try authenticator.makeCredential(made) } catch { throw DeviceError(error) }
    }

    /// The credentials an authenticatorGetAssertion may answer with, newest first (CTAP 2.1
    /// §6.2.2 steps 7 and 12): those of `request.rpId`, listed in its allow list when it has one,
    /// that its user verification may see.
    public func keyCandidates(_ request: KeyGetAssertion) throws(DeviceError) -> [Credential] {
        let authenticator = try keyAuthenticator(KeyPerson(touch: { _ throws(AuthenticatorError) in }), pick: nil, revisionId: nil)
        do {
            guard let candidates = try authenticator.candidates(for: request.authenticatorRequest) else { return [] }
            let profile = authenticator.configuration.profile
            // The store keeps creation order, oldest first.
            return Array(candidates).reversed().filter { keyHolds($0, profile: profile) }
        } catch { throw DeviceError(error) }
    }

    /// authenticatorGetAssertion (or GetNextAssertion) with the credential `credentialId`, which
    /// ``keyCandidates(_:)`` offered.
    public func keyGetAssertion(_ request: KeyGetAssertion, credentialId: [UInt8], person: KeyPerson) throws(DeviceError) -> GetAssertionResponse {
        let authenticator = try keyAuthenticator(person, pick: credentialId, revisionId: nil)
        do { return try authenticator.getAssertion(request.authenticatorRequest) } catch { throw DeviceError(error) }
    }
}

/// authenticatorMakeCredential's parameters, once the CTAP front end has read them and checked
/// the PIN token (CTAP 2.1 §6.1.1).
public struct KeyMakeCredential: Sendable {
    public var clientDataHash: [UInt8]
    public var rpId: String
    public var userHandle: [UInt8]
    public var userName: String
    public var userDisplayName: String
    public var algorithms: [Int]
    public var excludeList: [[UInt8]]
    /// Whether a PIN token verified the user (the UV flag).
    public var userVerified: Bool
    /// Whether the person is asked for a touch (UP); false only for the 2.1 `up` option set false.
    public var userPresence: Bool
    /// The attestation the key sends: its model's (`.direct`), or `none`.
    public var attestation: AttestationConveyance
    /// A discoverable credential (the `rk` option); else one only an allow list reaches.
    public var discoverable: Bool
    /// The extensions asked for (CTAP 2.1 §12), as the CTAP front end read them.
    package var extensions: MakeCredentialExtensions

    public init(clientDataHash: [UInt8], rpId: String, userHandle: [UInt8], userName: String, userDisplayName: String,
                algorithms: [Int], excludeList: [[UInt8]], userVerified: Bool, userPresence: Bool = true,
                attestation: AttestationConveyance = .direct, discoverable: Bool = true) {
        self.clientDataHash = clientDataHash
        self.rpId = rpId
        self.userHandle = userHandle
        self.userName = userName
        self.userDisplayName = userDisplayName
        self.algorithms = algorithms
        self.excludeList = excludeList
        self.userVerified = userVerified
        self.userPresence = userPresence
        self.attestation = attestation
        self.discoverable = discoverable
        self.extensions = MakeCredentialExtensions()
    }
}

/// authenticatorGetAssertion's parameters, once read and checked (CTAP 2.1 §6.2.1).
public struct KeyGetAssertion: Sendable {
    public var clientDataHash: [UInt8]
    public var rpId: String
    public var allowList: [[UInt8]]
    public var userVerified: Bool
    public var userPresence: Bool
    package var extensions: GetAssertionExtensions

    public init(clientDataHash: [UInt8], rpId: String, allowList: [[UInt8]], userVerified: Bool, userPresence: Bool = true) {
        self.clientDataHash = clientDataHash
        self.rpId = rpId
        self.allowList = allowList
        self.userVerified = userVerified
        self.userPresence = userPresence
        self.extensions = GetAssertionExtensions()
    }

    var authenticatorRequest: GetAssertionRequest {
        var request = GetAssertionRequest(clientDataHash: clientDataHash, rpId: rpId, allowList: allowList,
                                          performUserVerification: userVerified, extensions: extensions)
        request.requireUserPresence = userPresence
        return request
    }
}
