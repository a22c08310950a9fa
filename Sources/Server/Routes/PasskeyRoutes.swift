import Keychain
import KeyVault
import Session
import VirtualAuthenticator

/// `…/devices/{device}/passkeys`: what a device holds — listed, read, added from a private key
/// (WebDriver's Add Credential), flags set, deleted, exported and imported.
extension AccountService {
    func addPasskeyRoutes(to router: inout Router<AccountService>) {
        router.add("GET", "/accounts/{account}/devices/{device}/passkeys") { s, call throws(Problem) in
            let rpId = call.query["rpId"]
            return try s.onDevice(call) { hosted, device throws(Problem) in
                let held = try session { () throws(SessionError) in try hosted.session.passkeys(device: device, rpId: rpId) }
                return .encoded(200, ["credentials": held.map(PasskeyReport.init)])
            }
        }
        router.add("POST", "/accounts/{account}/devices/{device}/passkeys") { s, call throws(Problem) in
            let added = try Self.addedPasskey(call.body(allowed: ["credentialId", "rpId", "privateKey", "userHandle", "userName", "userDisplayName",
                                                                  "signCount", "backupEligibility", "backupState", "largeBlob", "isResidentCredential"]))
            return try s.onDevice(call) { hosted, device throws(Problem) in
                let credential = try session { () throws(SessionError) in try hosted.session.addPasskey(device: device, added) }
                hosted.events.emit("credentialAdded", CredentialEventData(device: device, credential, time: hosted.now))
                var answer = HTTPResponse.encoded(201, PasskeyReport(credential))
                answer.headers = [("Location", "/accounts/\(hosted.id)/devices/\(device)/passkeys/\(Base64URL.encode(credential.id))")]
                return answer
            }
        }
        router.add("GET", "/accounts/{account}/devices/{device}/passkeys/{credential}") { s, call throws(Problem) in
            let id = try Self.credentialId(call)
            return try s.onDevice(call) { hosted, device throws(Problem) in .encoded(200, PasskeyReport(try Self.held(id, on: device, in: hosted))) }
        }
        router.add("PATCH", "/accounts/{account}/devices/{device}/passkeys/{credential}") { s, call throws(Problem) in
            let id = try Self.credentialId(call)
            let body = try call.body(allowed: ["backupEligible", "backupState"])
            let eligible = try body.bool("backupEligible")
            guard let state = try body.bool("backupState") else { throw Problem.input("backupState is required (and backupEligible may be given)") }
            return try s.onDevice(call) { hosted, device throws(Problem) in
                _ = try Self.held(id, on: device, in: hosted)
                let changed = try session { () throws(SessionError) in
                    try hosted.session.setBackupFlags(device: device, credentialId: id, eligible: eligible, state: state)
                }
                hosted.events.emit("credentialUpdated", CredentialEventData(device: device, changed, time: hosted.now))
                return .encoded(200, PasskeyReport(changed))
            }
        }
        router.add("DELETE", "/accounts/{account}/devices/{device}/passkeys/{credential}") { s, call throws(Problem) in
            let id = try Self.credentialId(call)
            return try s.onDevice(call) { hosted, device throws(Problem) in
                _ = try Self.held(id, on: device, in: hosted)
                let gone = try session { () throws(SessionError) in try hosted.session.delete(device: device, credentialId: id) }
                hosted.events.emit("credentialDeleted", CredentialEventData(device: device, gone, time: hosted.now))
                return .noContent
            }
        }
        router.add("POST", "/accounts/{account}/devices/{device}/passkeys/{credential}/export") { s, call throws(Problem) in
            let id = try Self.credentialId(call)
            let body = try call.body(allowed: ["passphrase", "pin"])
            let passphrase = try body.string(required: "passphrase"), pin = try body.string("pin")
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
        router.add("POST", "/accounts/{account}/devices/{device}/import") { s, call throws(Problem) in
            let body = try call.body(allowed: ["envelope", "passphrase", "pin"])
            let envelope = try body.base64URL(required: "envelope")
            let passphrase = try body.string(required: "passphrase"), pin = try body.string("pin")
            return try s.onDevice(call) { hosted, device throws(Problem) in
                let credential = try session { () throws(SessionError) in
                    try hosted.session.importPasskey(device: device, envelope, passphrase: Self.secret(passphrase), person: PersonRequest(pin: pin))
                }
                hosted.events.emit("credentialAdded", CredentialEventData(device: device, credential, time: hosted.now))
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
    static func addedPasskey(_ body: RequestBody) throws(Problem) -> AddedPasskey {
        _ = try body.bool("isResidentCredential")
        guard let handle = try body.base64URL("userHandle") else { throw Problem.input("userHandle is required (a discoverable credential has one)") }
        let eligible = try body.bool("backupEligibility") ?? true
        return AddedPasskey(id: try body.base64URL(required: "credentialId"), rpId: try body.string(required: "rpId"), userHandle: handle,
                            userName: try body.string("userName") ?? "", userDisplayName: try body.string("userDisplayName") ?? "",
                            privateKeyDER: try body.base64URL(required: "privateKey"),
                            signCount: UInt32(try body.integer("signCount", maximum: UInt64(UInt32.max - 1)) ?? 0),
                            backupEligible: eligible, backupState: try body.bool("backupState") ?? eligible,
                            backupStateFixed: body.has("backupState"), largeBlob: try body.base64URL("largeBlob"))
    }
}
