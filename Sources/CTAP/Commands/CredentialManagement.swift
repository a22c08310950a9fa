import Foundation
import Session

/// authenticatorCredentialManagement (CTAP 2.1 §6.8; command 0x41, the 2.1-PRE preview, answers
/// the same subcommands): with a PIN token of the `cm` permission, a client reads how many
/// credentials the key holds, enumerates its RPs and each RP's credentials, deletes a credential
/// or renames its user. Every credential the key keeps is discoverable (it keeps every one it
/// makes), so every one is listed.
extension SecurityKey {
    /// How long an enumeration waits for its next subcommand (as GetNextAssertion's 30 s).
    static let enumerationWindow: TimeInterval = 30

    enum ManagementSubcommand: Int {
        case getCredsMetadata = 0x01, enumerateRPsBegin, enumerateRPsGetNextRP, enumerateCredentialsBegin
        case enumerateCredentialsGetNextCredential, deleteCredential, updateUserInformation
    }

    /// What an enumeration has left: the answers still to give, made when it began (one view of
    /// the key, whatever happens meanwhile to the vault), and until when.
    struct PendingEnumeration {
        enum Kind { case relyingParties, credentials }
        var kind: Kind
        var remaining: [CBORValue]
        var expires: Date
    }

    func credentialManagement(_ parameters: CTAPParameters) throws(CTAPStatus) -> CBORValue? {
        let number = try parameters.required(0x01, parameters.unsigned)
        let subParameters = try parameters.map(0x02)
        let version = try parameters.int(0x03)
        let param = try parameters.bytes(0x04)
        // Any subcommand but the enumeration's own next one ends it.
        let continuing = enumeration
        enumeration = nil
        guard let subcommand = ManagementSubcommand(rawValue: number) else { throw .invalidSubcommand }
        switch subcommand {
        case .enumerateRPsGetNextRP: return try nextEnumerated(continuing, .relyingParties)
        case .enumerateCredentialsGetNextCredential: return try nextEnumerated(continuing, .credentials)
        default: break
        }

        // pinUvAuthParam over subCommand ‖ subCommandParams, in CTAP2 canonical CBOR.
        let message = [UInt8(number)] + (subParameters.map { CBORValue.map($0).encoded() } ?? [])
        let facts = try facts()
        let held = try keyRequest { () throws(SessionError) in try session.keyCredentials(device: device) }
        let sub = try CTAPParameters(.map(subParameters ?? []))
        // A token bound to an RP serves only the subcommands about that RP's credentials, and is
        // not bound by them (§6.8). The parameters are required only once the token is checked.
        let rp: PinUvAuthRP
        switch subcommand {
        case .enumerateCredentialsBegin:
            rp = ((try? sub.bytes(0x01)) ?? nil).map { .rpIdHash($0) } ?? .any
        case .deleteCredential, .updateUserInformation:
            let id = (try? Self.credentialId(sub.map(0x02))) ?? nil
            rp = held.first { $0.id == id }.map { .rpIdHash(SHA256.hash(Array($0.rpId.utf8))) } ?? .any
        default:
            rp = .any
        }
        let authorization = try authorizeManagement(param, version: version, pinSet: facts.pinSet, message: message,
                                                    permission: .credentialManagement, rp: rp)
        // getCredsMetadata and enumerateRPsBegin are about every RP: a token bound to one is refused.
        if [.getCredsMetadata, .enumerateRPsBegin].contains(subcommand) && authorization.permissionsRPID != nil { throw .pinAuthInvalid }

        switch subcommand {
        case .getCredsMetadata:
            return .map([
                (.int(0x01), .int(held.count)),
                (.int(0x02), .int(max(0, Self.discoverableCredentialSlots - held.count))),
            ])
        case .enumerateRPsBegin:
            let rpIds = Set(held.map(\.rpId)).sorted()
            let answers = rpIds.map { id in
                [(CBORValue.int(0x03), CBORValue.map([(.text("id"), .text(id))])), (.int(0x04), .bytes(SHA256.hash(Array(id.utf8))))]
            }
            return try beginEnumeration(.relyingParties, answers, totalKey: 0x05)
        case .enumerateCredentialsBegin:
            guard let hash = try sub.bytes(0x01) else { throw .missingParameter }
            let credentials = held.filter { SHA256.hash(Array($0.rpId.utf8)) == hash }
            var answers = [[(CBORValue, CBORValue)]]()
            for credential in credentials { answers.append(try enumerated(credential, authorization)) }
            return try beginEnumeration(.credentials, answers, totalKey: 0x09)
        case .deleteCredential:
            guard let id = try Self.credentialId(sub.map(0x02)) else { throw .missingParameter }
            try keyRequest { () throws(SessionError) in try session.keyDeleteCredential(device: device, credentialId: id) }
            return nil
        case .updateUserInformation:
            guard let id = try Self.credentialId(sub.map(0x02)), let user = try sub.map(0x03) else { throw .missingParameter }
            guard let userId = user[text: "id"] else { throw .missingParameter }
            guard let userHandle = userId.bytesValue else { throw .cborUnexpectedType }
            // An absent or empty name or display name is removed (§6.8.7).
            let name = try Self.optionalText(user[text: "name"]) ?? ""
            let displayName = try Self.optionalText(user[text: "displayName"]) ?? ""
            try keyRequest { () throws(SessionError) in
                try session.keyUpdateUser(device: device, credentialId: id, userHandle: userHandle, name: name, displayName: displayName)
            }
            return nil
        case .enumerateRPsGetNextRP, .enumerateCredentialsGetNextCredential:
            throw .invalidSubcommand  // answered above
        }
    }

    /// The first answer of an enumeration, with the total under `totalKey`; the others wait for
    /// their GetNext subcommand. None at all is CTAP2_ERR_NO_CREDENTIALS.
    private func beginEnumeration(_ kind: PendingEnumeration.Kind, _ answers: [[(CBORValue, CBORValue)]],
                                  totalKey: Int) throws(CTAPStatus) -> CBORValue {
        guard let first = answers.first else { throw .noCredentials }
        if answers.count > 1 {
            enumeration = PendingEnumeration(kind: kind, remaining: answers.dropFirst().map { .map($0) },
                                             expires: Date().addingTimeInterval(Self.enumerationWindow))
        }
        return .map(first + [(.int(totalKey), .int(answers.count))])
    }

    /// enumerateRPsGetNextRP, enumerateCredentialsGetNextCredential: the next answer of the
    /// enumeration of that kind, which must be under way (CTAP2_ERR_NOT_ALLOWED otherwise).
    private func nextEnumerated(_ state: PendingEnumeration?, _ kind: PendingEnumeration.Kind) throws(CTAPStatus) -> CBORValue {
        guard var state, state.kind == kind, Date() < state.expires, !state.remaining.isEmpty else { throw .notAllowed }
        let answer = state.remaining.removeFirst()
        enumeration = state.remaining.isEmpty ? nil : state
        return answer
    }

    /// One credential as an enumeration answers it: its user, its id, its public key (COSE), its
    /// credProtect level (1 when it asked for none) and its largeBlobKey when it has one.
    private func enumerated(_ credential: Credential, _ authorization: PinUvAuthorization) throws(CTAPStatus) -> [(CBORValue, CBORValue)] {
        var user: [(CBORValue, CBORValue)] = [(.text("id"), .bytes(credential.userHandle))]
        if !credential.userName.isEmpty { user.append((.text("name"), .text(credential.userName))) }
        if !credential.userDisplayName.isEmpty { user.append((.text("displayName"), .text(credential.userDisplayName))) }
        var members: [(CBORValue, CBORValue)] = [
            (.int(0x06), .map(user)),
            (.int(0x07), .map([(.text("id"), .bytes(credential.id)), (.text("type"), .text("public-key"))])),
            (.int(0x08), credential.publicKey.cbor),
            (.int(0x0A), .int(Int(credential.credProtect?.rawValue ?? 1))),
        ]
        if credential.hasLargeBlobKey {
            let key = try keyRequest { () throws(SessionError) in
                try session.keyLargeBlobKey(device: device, credentialId: credential.id, verification: authorization.verification)
            }
            if let key { members.append((.int(0x0B), .bytes(key))) }
        }
        return members
    }

    /// A PublicKeyCredentialDescriptor's id (`nil`: no descriptor).
    static func credentialId(_ descriptor: [(CBORValue, CBORValue)]?) throws(CTAPStatus) -> [UInt8]? {
        guard let descriptor else { return nil }
        guard let id = descriptor[text: "id"] else { throw .missingParameter }
        guard let bytes = id.bytesValue else { throw .cborUnexpectedType }
        return bytes
    }
}
