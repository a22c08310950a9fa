import Glibc
import KeyVault
import Keychain
import SyncStore
import VirtualAuthenticator

/// `authctl bench join`: what a device joining an account with many passkeys on a shared store
/// pays for its first sync.
enum BenchJoinCommand {
    static let store = OptionSpec.value(
        "--store", "STORE", "the store to make the account on: a postgresql:// address (a new #account each run) or a directory from the root (required)")
    static let passkeys = OptionSpec.value("--passkeys", "N", "passkeys in the account (default 100000), spread over 1,000 RPs")
    static let directory = OptionSpec.value("--dir", "DIR", "where the throw-away vaults go (default /tmp)", completion: .directories)

    static let spec = CommandSpec(
        name: "join", abstract: "time the first sync of a device joining an account of many passkeys on a shared store",
        discussion: """
        Makes an account on --store whose first device holds --passkeys real P-256 passkeys, then
        times: the first device's upload of them all; a second vault joining with the recovery
        secret and its first sync (reading the whole account from the store); its first listing;
        and a sign-in on it. Each step runs once, in this process; the vaults are removed after.
        """,
        options: [store, passkeys, directory],
        examples: [".build/release/authctl bench join --store 'postgresql://localhost/authctl' --passkeys 100000"],
        run: run)

    /// The account and its passkeys, in a function of its own so the account (and its hold on the
    /// vault) is gone when it returns.
    static func makeAccount(at path: String, passphrase: SecureBytes, address: String, secret: String,
                            passkeys: [(Credential, PrivateKey)]) throws(DeviceError) {
        let account = try Account.create(at: path, passphrase: passphrase, kdf: .min, storePath: address, deviceName: "d0", biometricPIN: nil)
        try account.publishRecovery(secret: secret, pin: nil)
        try account.device("d0").addInBulk(passkeys)
    }

    static func run(_ args: ParsedArguments) throws(CLIError) {
        guard let base = args.value(store) else { throw CLIError(.usage, "bench join needs --store") }
        let count = try args.integer(passkeys, in: 10...1_000_000) ?? 100_000
        let dir = args.value(directory) ?? "/tmp"
        let tag = Hex.string(RandomSource.live.bytes(4))
        let address = PostgresAddress.names(base) ? base.split(separator: "#", maxSplits: 1)[0] + "#bench-\(tag)" : base + "/bench-\(tag)"
        let first = dir + "/authctl-bench-join-\(tag)-a", second = dir + "/authctl-bench-join-\(tag)-b"
        defer { for path in [first, second] { BenchVaultCommand.removeScratch(path) } }
        let passphrase = SecureBytes(copying: Array("bench".utf8).withUnsafeBytes { UnsafeRawBufferPointer(rebasing: $0[...]) })
        let made = try BenchVaultCommand.makePasskeys(count, bigRP: false)
        var figures = [(String, Double)]()
        do throws(DeviceError) {
            let secret = RecoverySecret.make()
            try makeAccount(at: first, passphrase: passphrase, address: address, secret: secret, passkeys: made)
            figures.append(("upload \(count) passkeys (open the first vault as a writer)", try BenchVaultCommand.milliseconds { () throws(DeviceError) in
                _ = try Account.open(at: first, passphrase: passphrase)
            }))
            var keys: JoinedKeys?
            figures.append(("join: read the recovery envelope", try BenchVaultCommand.milliseconds { () throws(DeviceError) in
                keys = try RecoverySecret.keys(storePath: address, secret: secret, name: "d1")
            }))
            figures.append(("join: make the vault and its first sync (the whole account)", try BenchVaultCommand.milliseconds { () throws(DeviceError) in
                _ = try Account.join(at: second, passphrase: passphrase, kdf: .min, storePath: address, name: "d1", keys: keys!, pin: nil)
            }))
            var listed = 0
            figures.append(("first listing on the joined device (open as a reader, list all)", try BenchVaultCommand.milliseconds { () throws(DeviceError) in
                let joined = try Account.open(at: second, passphrase: passphrase, access: .read)
                listed = try joined.device("d1").credentials().count
            }))
            guard listed == count else { throw DeviceError(.storage, "the joined device lists \(listed) passkeys, not \(count)") }
            figures.append(("a sign-in on the joined device (open as a writer, sign)", try BenchVaultCommand.milliseconds { () throws(DeviceError) in
                let device = try Account.open(at: second, passphrase: passphrase).device("d1")
                _ = try device.sign(optionsJSON: BenchVaultCommand.signRequest(made[count - 1].0.id), origin: "https://" + BenchVaultCommand.targetRP)
            }))
        } catch { throw CLIError(error) }
        try Output.data("account of \(count) passkeys on \(PostgresAddress.redacted(address))")
        for (what, ms) in figures { try Output.data(BenchVaultCommand.pad(BenchVaultCommand.format(ms, 0) + " ms", 12) + "  " + what) }
    }
}
