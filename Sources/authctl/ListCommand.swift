import Foundation
import VirtualAuthenticator

/// `authctl list`: the passkeys in the vault, as a table for people or JSON for scripts.
enum ListCommand {
    static func run(_ args: inout Arguments, json: Bool) throws {
        let vaultOptions = try VaultOptions(&args)
        let rpId = try args.value("--rp-id")
        try args.finish()

        let store = VaultCredentialStore(vault: try vaultOptions.open(.read))
        let credentials = try store.allCredentials().filter { rpId == nil || $0.rpId == rpId }
        if json {
            Output.data(ResponseJSON.encode(["credentials": credentials.map(describe)]))
            return
        }
        let rows = [["CREDENTIAL ID", "RP ID", "USER", "CREATED (UTC)", "BACKUP"]] + credentials.map { c in
            [Base64URL.encode(c.id), c.rpId, c.userName, timestamp(c.createdAt),
             c.backupEligible ? (c.backupState ? "synced" : "eligible") : "device-bound"]
        }
        let widths = (0..<5).map { column in rows.map { $0[column].count }.max() ?? 0 }
        for row in rows {
            Output.data(zip(row, widths).map { $0.padding(toLength: $1, withPad: " ", startingAt: 0) }
                .joined(separator: "  ").trimmingCharacters(in: .whitespaces))
        }
    }

    static func describe(_ c: Credential) -> [String: Any] {
        [
            "id": Base64URL.encode(c.id), "rpId": c.rpId, "userHandle": Base64URL.encode(c.userHandle),
            "userName": c.userName, "userDisplayName": c.userDisplayName, "createdAt": timestamp(c.createdAt),
            "signCount": Int(c.signCount), "backupEligible": c.backupEligible, "backupState": c.backupState,
            "publicKey": Base64URL.encode(COSEKey(uncompressedPoint: c.publicPoint)?.subjectPublicKeyInfo ?? []),
            "publicKeyAlgorithm": COSEKey.es256,
        ]
    }

    /// RFC 3339 UTC, second precision.
    static func timestamp(_ seconds: UInt64) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.timeZone = TimeZone(identifier: "UTC")
        return formatter.string(from: Date(timeIntervalSince1970: TimeInterval(seconds)))
    }
}

/// `authctl delete ID`: removes one passkey (a tombstone in the vault).
enum DeleteCommand {
    static func run(_ args: inout Arguments) throws {
        let vaultOptions = try VaultOptions(&args)
        guard let id = args.positional() else { throw AuthenticatorError(.usage, "delete needs a credential id") }
        try args.finish()
        guard let raw = Base64URL.decode(id) else { throw AuthenticatorError(.badInput, "credential id '\(id)' is not base64url") }
        let store = VaultCredentialStore(vault: try vaultOptions.open(.write))
        guard let credential = try store.allCredentials().first(where: { $0.id == raw }) else {
            throw AuthenticatorError(.notHandled, "no passkey with id \(id) in the vault")
        }
        try store.delete(credential)
        Output.diagnostic("authctl: deleted passkey \(id) (\(credential.rpId), \(credential.userName))")
    }
}
