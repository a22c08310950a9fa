import Keychain
import Session
import VirtualAuthenticator

/// `authctl credential show ID`: everything the vault knows of one passkey, without its key.
enum CredentialShowCommand {
    static let spec = CommandSpec(
        name: "show", abstract: "show one passkey: algorithm, AAGUID, profile, flags, counter, dates",
        discussion: "Shows no secret and decrypts no private key.",
        arguments: [CredentialCommand.id],
        examples: ["authctl credential show AbCdEfGhIjKlMnOpQrStUw", "authctl --json credential show AbCdEfGhIjKlMnOpQrStUw"],
        run: run)

    struct Details: Encodable {
        let id, rpId, userHandle, userName, userDisplayName, createdAt: String
        let algorithm: String
        let publicKeyAlgorithm: Int
        let publicKey: String
        let aaguid: String?
        let profile: String?
        let backupEligible, backupState, backupStateSetByHand: Bool
        let signCount: UInt32
        let signCounter: String
        let userVerificationRequired: Bool
        /// Extensions' state: credProtect level (1 when none was asked), credBlob and large blob sizes.
        let credProtect: Int
        let credBlobBytes: Int?
        let largeBlobBytes: Int?
        /// Hidden by the RP's signal (offered to no ceremony until a later signal lists it).
        let hidden: Bool
    }

    static func details(_ c: Credential) -> Details {
        Details(id: Base64URL.encode(c.id), rpId: c.rpId, userHandle: Base64URL.encode(c.userHandle), userName: c.userName,
                userDisplayName: c.userDisplayName, createdAt: ListCommand.timestamp(c.createdAt),
                algorithm: c.publicKey.algorithm.name, publicKeyAlgorithm: c.publicKey.algorithm.rawValue,
                publicKey: Base64URL.encode(c.publicKey.subjectPublicKeyInfo),
                aaguid: c.aaguid.count == 16 ? AuthenticatorProfile.formatAAGUID(c.aaguid) : nil,
                profile: c.profile.isEmpty ? nil : c.profile, backupEligible: c.backupEligible, backupState: c.backupState,
                backupStateSetByHand: c.backupStateFixed, signCount: c.signCount,
                signCounter: c.globalCounter ? SignCounter.global.rawValue : c.countsSignatures ? SignCounter.perCredential.rawValue : SignCounter.zero.rawValue, userVerificationRequired: c.requiresUserVerification,
                credProtect: Int(c.credProtect?.rawValue ?? 1), credBlobBytes: c.credBlob?.count,
                largeBlobBytes: c.largeBlob.map { max(0, $0.count - LargeBlob.overhead) }, hidden: c.hidden)
    }

    static func run(_ args: ParsedArguments) throws(CLIError) {
        try Output.requireStdout()
        let id = try CredentialId.decode(args.argument(0) ?? "")
        let vault = try VaultSelection(args)
        let credential = try vault.session(.read).passkey(device: vault.deviceName, id: id)
        let d = details(credential)
        if args.flag(GlobalOptions.json) {
            try Output.data(JSONOutput.string(d))
            return
        }
        let rows: [[String]] = [
            ["id", d.id], ["rp id", d.rpId], ["user", "\(d.userName) (\(d.userDisplayName))"], ["user handle", d.userHandle],
            ["created", d.createdAt], ["algorithm", "\(d.algorithm) (\(d.publicKeyAlgorithm))"],
            ["aaguid", d.aaguid ?? "(not recorded)"], ["profile", d.profile ?? "(not recorded)"],
            ["backup", "BE=\(d.backupEligible ? 1 : 0) BS=\(d.backupState ? 1 : 0)\(d.backupStateSetByHand ? " (set by hand)" : "")"],
            ["sign count", "\(d.signCount) (\(d.signCounter))"],
            ["user verification", d.userVerificationRequired ? "required on every use (key sealed under the biometric)" : "as the RP asks"],
            ["credProtect", "level \(d.credProtect)"],
            ["credBlob", d.credBlobBytes.map { "\($0) bytes" } ?? "none"],
            ["large blob", d.largeBlobBytes.map { "\($0) bytes (sealed)" } ?? "none"],
            ["hidden", d.hidden ? "yes: the RP's accepted-credentials signal left it out" : "no"],
        ]
        for line in TextTable.lines(rows) { try Output.text(line) }
    }
}
