import Glibc
import KeyVault
import Keychain
import Session
import SyncStore
import VirtualAuthenticator

/// `authctl bench join`: what a device joining an account with many passkeys on a shared store
/// pays for its first sync.
package enum JoinBenchmark {
    /// The account and its passkeys, in a function of its own so the account (and its hold on the
    /// vault) is gone when it returns.
    static func makeAccount(at path: String, passphrase: SecureBytes, address: String, secret: String,
                            passkeys: [(Credential, PrivateKey)]) throws(DeviceError) {
        let account = try Account.create(at: path, passphrase: passphrase, kdf: .min, storePath: address, deviceName: "d0", biometricPIN: nil)
        try account.publishRecovery(secret: secret, pin: nil)
        try account.device("d0").addInBulk(passkeys)
    }

    /// Makes an account of `count` passkeys on the store `base` (a new account of it each run),
    /// its vaults in `dir`, and times each step once: the lines to print.
    package static func run(store base: String, passkeys count: Int, directory dir: String, safePoints: SafePoints) throws(SessionError) -> [String] {
        let tag = Hex.string(RandomSource.live.bytes(4))
        let address = PostgresAddress.names(base) ? base.split(separator: "#", maxSplits: 1)[0] + "#bench-\(tag)" : base + "/bench-\(tag)"
        let first = dir + "/authctl-bench-join-\(tag)-a", second = dir + "/authctl-bench-join-\(tag)-b"
        defer { for path in [first, second] { VaultBenchmark.removeScratch(path) } }
        let passphrase = SecureBytes(copying: Array("bench".utf8).withUnsafeBytes { UnsafeRawBufferPointer(rebasing: $0[...]) })
        let made = try VaultBenchmark.makePasskeys(count, bigRP: false, safePoints: safePoints)
        var figures = [(String, Double)]()
        do throws(DeviceError) {
            let secret = RecoverySecret.make()
            try makeAccount(at: first, passphrase: passphrase, address: address, secret: secret, passkeys: made)
            figures.append(("upload \(count) passkeys (open the first vault as a writer)", try VaultBenchmark.milliseconds { () throws(DeviceError) in
                _ = try Account.open(at: first, passphrase: passphrase)
            }))
            var keys: JoinedKeys?
            figures.append(("join: read the recovery envelope", try VaultBenchmark.milliseconds { () throws(DeviceError) in
                keys = try RecoverySecret.keys(storePath: address, secret: secret, name: "d1")
            }))
            figures.append(("join: make the vault and its first sync (the whole account)", try VaultBenchmark.milliseconds { () throws(DeviceError) in
                _ = try Account.join(at: second, passphrase: passphrase, kdf: .min, storePath: address, name: "d1", keys: keys!, pin: nil)
            }))
            var listed = 0
            figures.append(("first listing on the joined device (open as a reader, list all)", try VaultBenchmark.milliseconds { () throws(DeviceError) in
                let joined = try Account.open(at: second, passphrase: passphrase, access: .read)
                listed = try joined.device("d1").credentials().count
            }))
            guard listed == count else { throw DeviceError(.storage, "the joined device lists \(listed) passkeys, not \(count)") }
            figures.append(("a sign-in on the joined device (open as a writer, sign)", try VaultBenchmark.milliseconds { () throws(DeviceError) in
                let device = try Account.open(at: second, passphrase: passphrase).device("d1")
                _ = try device.sign(optionsJSON: VaultBenchmark.signRequest(made[count - 1].0.id), origin: "https://" + VaultBenchmark.targetRP)
            }))
        } catch { throw SessionError(error) }
        return ["account of \(count) passkeys on \(PostgresAddress.redacted(address))"]
            + figures.map { what, ms in VaultBenchmark.pad(VaultBenchmark.format(ms, 0) + " ms", 12) + "  " + what }
    }
}
