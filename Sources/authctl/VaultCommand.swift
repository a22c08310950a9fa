import KeyVault
import VirtualAuthenticator

/// `authctl vault info|check|passwd`: looking after the vault itself.
enum VaultCommand {
    static func run(_ args: inout Arguments, json: Bool) throws {
        let sub = args.positional()
        switch sub {
        case "info": try info(&args, json: json)
        case "check": try check(&args, json: json)
        case "passwd": try passwd(&args)
        case "compact": try compact(&args)
        default: throw AuthenticatorError(.usage, "vault needs one of: info, check, passwd, compact")
        }
    }

    static func info(_ args: inout Arguments, json: Bool) throws {
        let options = try VaultOptions(&args)
        try args.finish()
        let vault = try options.open(.read)
        report(vault, extra: [:], json: json)
    }

    /// Opening already authenticates every committed frame and parses every record; `check` also
    /// opens every sealed private key and compares it with the credential's public key.
    static func check(_ args: inout Arguments, json: Bool) throws {
        let options = try VaultOptions(&args)
        try args.finish()
        let vault = try options.open(.read)
        let store = VaultCredentialStore(vault: vault)
        var problems = [String]()
        let credentials = try store.allCredentials()
        let checkable = credentials.filter { !$0.requiresUserVerification }  // the rest need the PIN
        for credential in checkable {
            let id = Base64URL.encode(credential.id)
            do {
                let key = try store.privateKey(for: credential)
                if key.publicPoint != credential.publicPoint { problems.append("credential \(id): private key does not match its public key") }
            } catch {
                problems.append("credential \(id): \(ErrorReport.vocabulary(error).message)")
            }
        }
        let settings = vault.records(kind: .settings).count
        if settings != 1 { problems.append("the vault has \(settings) settings records; it must have exactly one") }
        guard problems.isEmpty else {
            throw AuthenticatorError(.vaultCorrupted, "\(problems.count) problem(s): " + problems.joined(separator: "; "))
        }
        report(vault, extra: ["credentialsChecked": checkable.count,
                              "sealedUnderBiometry": credentials.count - checkable.count], json: json)
    }

    /// Rewrites the log with only the live records (it also happens by itself as the log grows).
    static func compact(_ args: inout Arguments) throws {
        let options = try VaultOptions(&args)
        try args.finish()
        let vault = try options.open(.write)
        let before = vault.facts.committedBytes
        try vault.compact()
        Output.diagnostic("authctl: compacted the log from \(before) to \(vault.facts.committedBytes) bytes")
    }

    static func passwd(_ args: inout Arguments) throws {
        let options = try VaultOptions(&args)
        let newFile = try args.value("--new-passphrase-file")
        let kdf = try args.value("--kdf").map { name throws(AuthenticatorError) in
            guard let level = KDFLevel(rawValue: name) else { throw AuthenticatorError(.usage, "--kdf must be one of \(KDFLevel.allCases.map(\.rawValue).joined(separator: ", "))") }
            return level
        }
        try args.finish()
        let vault = try options.open(.write)
        guard let new = try SecretSource.read(file: newFile, environment: "AUTHCTL_NEW_PASSPHRASE", prompt: "New vault passphrase: ") else {
            throw AuthenticatorError(.notInteractive, "the new passphrase is needed: set AUTHCTL_NEW_PASSPHRASE, pass --new-passphrase-file, or run on a terminal")
        }
        guard new.count > 0 else { throw AuthenticatorError(.badInput, "the new passphrase is empty") }
        try vault.changePassphrase(to: new, kdf: kdf)
        Output.diagnostic("authctl: the vault passphrase was changed")
    }

    static func report(_ vault: Vault, extra: [String: Any], json: Bool) {
        let facts = vault.facts
        let level = KDFLevel.allCases.first { $0.opslimit == facts.opslimit && $0.memlimit == facts.memlimit }
        var object: [String: Any] = [
            "path": vault.path, "formatVersion": Int(facts.formatVersion), "vaultId": hexString(facts.vaultId),
            "kdf": ["algorithm": "argon2id13", "level": level?.rawValue ?? "custom",
                    "opslimit": Int(facts.opslimit), "memlimit": Int(facts.memlimit)] as [String: Any],
            "generation": Int(facts.generation), "frames": Int(facts.frames), "committedBytes": facts.committedBytes,
            "uncommittedBytes": facts.uncommittedBytes,
            "credentials": facts.liveRecords[.credential] ?? 0,
            "biometry": BiometryCommand.describe(vault),
        ]
        object.merge(extra) { $1 }
        if json { Output.data(ResponseJSON.encode(object)); return }
        for key in object.keys.sorted() {
            let value = object[key]!
            let text: String = switch value {
            case let list as [String]: list.isEmpty ? "none" : list.joined(separator: "; ")
            case let dict as [String: Any]: dict.keys.sorted().map { "\($0)=\(dict[$0]!)" }.joined(separator: " ")
            default: "\(value)"
            }
            Output.data("\(key): \(text)")
        }
    }

    static func hexString(_ bytes: [UInt8]) -> String {
        bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }
}
