import Glibc
import KeyVault
import VirtualAuthenticator

/// `authctl bench vault`: what opening, registering and signing cost as the vault grows.
/// A benchmark, not a test: it prints figures and ratios measured in one run.
enum BenchCommand {
    static func run(_ args: inout Arguments) throws {
        guard args.positional() == "vault" else { throw AuthenticatorError(.usage, "bench needs: vault") }
        let sizes = try (args.value("--sizes") ?? "10,1000,100000").split(separator: ",").map { text throws(AuthenticatorError) in
            guard let n = Int(text), n >= 1 else { throw AuthenticatorError(.usage, "--sizes takes whole numbers, like 10,1000,100000") }
            return n
        }
        guard let runs = Int(try args.value("--runs") ?? "7"), (1...1000).contains(runs) else {
            throw AuthenticatorError(.usage, "--runs takes a whole number from 1 to 1000")
        }
        let directory = try args.value("--dir") ?? "/tmp"
        try args.finish()

        Output.data("vault size   open+index (ms)   register (ms)   sign (ms)   open+sign (ms)   log (MiB)")
        var rows: [(Int, [Double])] = []
        for size in sizes {
            let figures = try measure(size: size, runs: runs, directory: directory)
            rows.append((size, figures))
            Output.data(pad(String(size), 10) + "   " + figures.enumerated().map { i, v in
                pad(format(v, i == 4 ? 2 : 3), [15, 13, 9, 14, 9][i]) }.joined(separator: "   "))
        }
        guard let first = rows.first, rows.count > 1 else { return }
        Output.data("")
        for (size, figures) in rows.dropFirst() {
            let ratios = zip(figures.prefix(4), first.1.prefix(4)).map { format($0 / $1, 2) + "x" }
            Output.data("ratio \(size)/\(first.0): open+index \(ratios[0]), register \(ratios[1]), sign \(ratios[2]), open+sign \(ratios[3])")
        }
    }

    /// Milliseconds: median open (with the index of the one RP), register, sign, open + sign; log MiB.
    static func measure(size: Int, runs: Int, directory: String) throws -> [Double] {
        let path = directory + "/authctl-bench-\(getpid())-\(size)"
        defer { removeTree(path) }
        let passphrase = SecureBytes(count: 5)
        passphrase.withUnsafeMutableBytes { $0.copyBytes(from: Array("bench".utf8)) }
        try fill(path: path, size: size, passphrase: passphrase)

        let options = try CreationOptions(json: Array(#"{"rp":{"id":"bench.example"},"user":{"id":"YmVuY2g","name":"b"},"challenge":"Y2hhbGxlbmdl","pubKeyCredParams":[{"type":"public-key","alg":-7}],"authenticatorSelection":{"userVerification":"discouraged"}}"#.utf8))
        let request = try RequestOptions(json: Array(#"{"rpId":"target.example","challenge":"Y2hhbGxlbmdl","userVerification":"discouraged"}"#.utf8))
        var open = [Double](), register = [Double](), sign = [Double](), cold = [Double]()
        for _ in 0..<runs {
            var vault: Vault? = nil
            var client: WebAuthnClient? = nil
            open.append(try time {
                vault = try Vault.open(at: path, passphrase: passphrase, access: .write)
                client = makeClient(vault!)
                _ = try client!.authenticator.store.credentials(forRP: "target.example")
            })
            sign.append(try time { _ = try client!.get(options: request, origin: "https://target.example") })
            register.append(try time { _ = try client!.create(options: options, origin: "https://bench.example") })
            vault = nil
            client = nil
            cold.append(try time {
                let v = try Vault.open(at: path, passphrase: passphrase, access: .write)
                _ = try makeClient(v).get(options: request, origin: "https://target.example")
            })
        }
        let v = try Vault.open(at: path, passphrase: passphrase, access: .read)
        return [median(open), median(register), median(sign), median(cold), Double(v.facts.committedBytes) / 1_048_576]
    }

    static func makeClient(_ vault: Vault) -> WebAuthnClient {
        WebAuthnClient(authenticator: Authenticator(store: VaultCredentialStore(vault: vault), user: ScriptedUser(canVerify: false)))
    }

    /// A vault of `size` real passkeys spread over 1,000 RPs, laid out as `register` lays them
    /// out (one frame per passkey) but flushed a thousand frames at a time; the last passkey is
    /// the one the benchmark signs with.
    static func fill(path: String, size: Int, passphrase: SecureBytes) throws {
        let vault = try Vault.create(at: path, passphrase: passphrase, kdf: .min)
        try vault.commit([VaultRecord(id: VaultRecord.newId(), kind: .settings)])
        let store = VaultCredentialStore(vault: vault)
        var batch = [[VaultRecord]]()
        for i in 0..<size {
            let key = try P256PrivateKey.generate()
            let rpId = i == size - 1 ? "target.example" : "rp\(i % 1000).example"
            let credential = Credential(
                id: RandomSource.live.bytes(16), rpId: rpId, userHandle: RandomSource.live.bytes(16),
                userName: "user\(i)@example.com", userDisplayName: "User \(i)", createdAt: 1_700_000_000,
                signCount: 0, backupEligible: true, backupState: true, publicPoint: key.publicPoint)
            batch.append([try store.newRecord(for: credential, privateKey: key)])
            if batch.count == 1024 || i == size - 1 {
                try vault.commit(batches: batch)
                batch.removeAll(keepingCapacity: true)
            }
        }
    }

    static func time(_ body: () throws -> Void) rethrows -> Double {
        var start = timespec(), end = timespec()
        clock_gettime(CLOCK_MONOTONIC, &start)
        try body()
        clock_gettime(CLOCK_MONOTONIC, &end)
        return Double(end.tv_sec - start.tv_sec) * 1000 + Double(end.tv_nsec - start.tv_nsec) / 1_000_000
    }

    static func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }

    static func format(_ value: Double, _ digits: Int) -> String {
        var scale = 1.0
        for _ in 0..<digits { scale *= 10 }
        let rounded = (value * scale).rounded() / scale
        return "\(rounded)"
    }

    static func pad(_ text: String, _ width: Int) -> String {
        String(repeating: " ", count: max(0, width - text.count)) + text
    }

    static func removeTree(_ path: String) {
        for name in ["header", "commit", "lock", "commit.tmp", "header.tmp"] { unlink(path + "/" + name) }
        if let dir = opendir(path) {
            while let entry = readdir(dir) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
                if name.hasPrefix("log.") { unlink(path + "/" + name) }
            }
            closedir(dir)
        }
        rmdir(path)
    }
}
