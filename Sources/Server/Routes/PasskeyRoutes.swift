import Session

/// `…/devices/{device}/passkeys`: what a device holds — listed, read, added from a private key
/// (WebDriver's Add Credential), flags set, deleted, exported and imported.
extension AccountService {
    func addPasskeyRoutes(to router: inout Router<AccountService>) {
        router.add("GET", "/accounts/{account}/devices/{device}/passkeys") { s, call throws(Problem) in
            let rpId = call.query["rpId"]
            return try s.onDevice(call) { hosted, device throws(Problem) in
                let held = try session { () throws(SessionError) in try hosted.session.passkeys(device: device, rpId: rpId) }
                return .encoded(200, PasskeyListReport(held))
            }
        }
        router.add("POST", "/accounts/{account}/devices/{device}/passkeys", body: Body.CredentialParameters.self) { s, call, body throws(Problem) in
            let added = Self.addedPasskey(body)
            return try s.onDevice(call) { hosted, device throws(Problem) in
                let credential = try session { () throws(SessionError) in try hosted.session.addPasskey(device: device, added) }
                hosted.events.emit(.credentialAdded, CredentialEventData(device: device, credential, time: hosted.now))
                var answer = HTTPResponse.encoded(201, PasskeyReport(credential))
                answer.headers = [("Location", "/accounts/\(hosted.id)/devices/\(device)/passkeys/\(Base64URL.encode(credential.id))")]
                return answer
            }
        }
        router.add("GET", "/accounts/{account}/devices/{device}/passkeys/{credential}") { s, call throws(Problem) in
            let id = try Self.credentialId(call)
            return try s.onDevice(call) { hosted, device throws(Problem) in .encoded(200, PasskeyReport(try Self.held(id, on: device, in: hosted))) }
        }
        router.add("PATCH", "/accounts/{account}/devices/{device}/passkeys/{credential}", body: Body.BackupFlags.self) { s, call, body throws(Problem) in
            let id = try Self.credentialId(call)
            let eligible = body.backupEligible, state = body.backupState
            return try s.onDevice(call) { hosted, device throws(Problem) in
                _ = try Self.held(id, on: device, in: hosted)
                let changed = try session { () throws(SessionError) in
                    try hosted.session.setBackupFlags(device: device, credentialId: id, eligible: eligible, state: state)
                }
                hosted.events.emit(.credentialUpdated, CredentialEventData(device: device, changed, time: hosted.now))
                return .encoded(200, PasskeyReport(changed))
            }
        }
        router.add("DELETE", "/accounts/{account}/devices/{device}/passkeys/{credential}") { s, call throws(Problem) in
            let id = try Self.credentialId(call)
            return try s.onDevice(call) { hosted, device throws(Problem) in
                _ = try Self.held(id, on: device, in: hosted)
                let gone = try session { () throws(SessionError) in try hosted.session.delete(device: device, credentialId: id) }
                hosted.events.emit(.credentialDeleted, CredentialEventData(device: device, gone, time: hosted.now))
                return .noContent
            }
        }
        router.add("POST", "/accounts/{account}/devices/{device}/passkeys/{credential}/export", body: Body.ExportRequest.self) { s, call, body throws(Problem) in
            let id = try Self.credentialId(call)
            let passphrase = body.passphrase, pin = body.pin
            guard !passphrase.isEmpty else { throw Problem.input("passphrase is empty") }
            return try s.onDevice(call) { hosted, device throws(Problem) in
                _ = try Self.held(id, on: device, in: hosted)
                let envelope = try session { () throws(SessionError) in
                    try hosted.session.exportPasskey(device: device, credentialId: id, passphrase: Self.secret(passphrase), kdf: .min,
                                                     person: PersonRequest(pin: pin))
                }
                return .encoded(200, ["envelope": Base64URL.encode(envelope)])
            }
        }
        router.add("POST", "/accounts/{account}/devices/{device}/import", body: Body.ImportRequest.self) { s, call, body throws(Problem) in
            let envelope = body.envelope.bytes
            let passphrase = body.passphrase, pin = body.pin
            return try s.onDevice(call) { hosted, device throws(Problem) in
                let credential = try session { () throws(SessionError) in
                    try hosted.session.importPasskey(device: device, envelope, passphrase: Self.secret(passphrase), person: PersonRequest(pin: pin))
                }
                hosted.events.emit(.credentialAdded, CredentialEventData(device: device, credential, time: hosted.now))
                return .encoded(201, PasskeyReport(credential))
            }
        }
    }

    /// The passkey id in the path (base64url).
    static func credentialId(_ call: Router<AccountService>.Call) throws(Problem) -> [UInt8] {
        guard let id = Base64URL.decode(call.parameter("credential")), !id.isEmpty else {
            throw Problem.notFound("\(JSONText.shown(call.parameter("credential"))) is not a credential id (base64url)", name: .notHandled)
        }
        return id
    }

    /// The passkey `id` on `device`; `404 notHandled` when it holds none.
    static func held(_ id: [UInt8], on device: String, in hosted: HostedAccount) throws(Problem) -> Credential {
        do { return try hosted.session.passkey(device: device, id: id) } catch {
            throw error.name == .notHandled ? Problem(error, status: 404) : Problem(error)
        }
    }

    /// WebDriver's Credential Parameters (WebAuthn L3 §11.3): `credentialId`, `rpId`, `privateKey`
    /// (base64url PKCS #8), `userHandle`, `signCount`, `backupEligibility`, `backupState`,
    /// `largeBlob`, `userName`, `userDisplayName`; `isResidentCredential` is read and not kept
    /// (every passkey of a platform authenticator is discoverable, so a user handle is required).
    /// `signCount` `null` is a passkey with no signature counter; absent, one that counts from 0.
    /// The backup flags not given are `defaults` (a virtual authenticator's), else a synced
    /// passkey's.
    static func addedPasskey(_ body: Body.CredentialParameters, defaults: (eligible: Bool, state: Bool)? = nil) -> AddedPasskey {
        let eligible = body.backupEligibility ?? defaults?.eligible ?? true
        return AddedPasskey(id: body.credentialId.bytes, rpId: body.rpId, userHandle: body.userHandle.bytes,
                            userName: body.userName ?? "", userDisplayName: body.userDisplayName ?? "",
                            privateKeyDER: body.privateKey.bytes, signCount: body.signCount.map { $0.value ?? 0 } ?? 0,
                            countsSignatures: body.signCount.map { $0.value != nil } ?? true,
                            backupEligible: eligible, backupState: body.backupState ?? defaults?.state ?? eligible,
                            backupStateFixed: body.backupState != nil || defaults != nil, largeBlob: body.largeBlob?.bytes)
    }
}
