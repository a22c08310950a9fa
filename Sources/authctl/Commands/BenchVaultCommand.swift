import Glibc
import KeyVault
import Keychain
import VirtualAuthenticator

/// `authctl bench vault`: what opening, registering and signing cost as the vault grows, measured
/// in-process through the device library. It prints figures and the ratios measured in one run.
enum BenchVaultCommand {
    static let sizes = OptionSpec.value("--sizes", "N,N,...", "vault sizes in passkeys (default 10,1000,100000)")
    static let runs = OptionSpec.value("--runs", "N", "runs per size; the median is shown (1-1000, default 7)")
    static let directory = OptionSpec.value("--dir", "DIR", "where the throw-away vaults go (default /tmp)", completion: .directories)
    static let keep = OptionSpec.value(
        "--keep", "DIR", "leave the largest vault at DIR (a new path on the same file system as --dir), to time 'authctl sign' against it",
        completion: .directories)

    /// One size's medians, as `--json` prints them.
    struct Row: Encodable {
        let size: Int
        let openMs, registerMs, signMs, openSignMs, logMiB: Double
    }
    struct Report: Encodable {
        let runs: Int
        let rows: [Row]
    }

    static let spec = CommandSpec(
        name: "vault", abstract: "time open, register and sign at several vault sizes",
        options: [sizes, runs, directory, keep],
        examples: [".build/release/authctl bench vault --sizes 10,1000,100000 --runs 7",
                   ".build/release/authctl --json bench vault --sizes 10,100,1000,10000,100000 > vault.json; python3 scripts/bench_chart.py vault.json > latency.svg"],
        run: run)

    static func run(_ args: ParsedArguments) throws(CLIError) {
        var counts = [Int]()
        for text in (args.value(sizes) ?? "10,1000,100000").split(separator: ",") {
            guard let n = Int(text), (1...10_000_000).contains(n) else {
                throw CLIError(.usage, "--sizes takes whole numbers from 1 to 10000000, like 10,1000,100000")
            }
            counts.append(n)
        }
        guard !counts.isEmpty else { throw CLIError(.usage, "--sizes takes whole numbers, like 10,1000,100000") }
        let runCount = try args.integer(runs, in: 1...1000) ?? 7
        let dir = args.value(directory) ?? "/tmp"
        var st = stat()
        guard stat(dir, &st) == 0, (st.st_mode & S_IFMT) == S_IFDIR else { throw CLIError(.usage, "--dir \(dir) is not a directory") }

        let kept = args.value(keep)
        if let kept, access(kept, F_OK) == 0 { throw CLIError(.usage, "--keep \(kept) exists; name a new path") }
        // Everything is measured before anything is printed: a failure leaves stdout empty.
        var rows: [(Int, [Double])] = []
        let largest = counts.max()!
        for size in counts {
            rows.append((size, try measure(size: size, runs: runCount, directory: dir, keepAt: size == largest ? kept : nil)))
        }
        if args.flag(GlobalOptions.json) {
            try Output.data(JSONOutput.string(Report(runs: runCount, rows: rows.map { size, f in
                Row(size: size, openMs: f[0], registerMs: f[1], signMs: f[2], openSignMs: f[3], logMiB: f[4])
            })))
            return
        }
        var lines = ["vault size   open+index (ms)   register (ms)   sign (ms)   open+sign (ms)   log (MiB)"]
        for (size, figures) in rows {
            lines.append(pad(String(size), 10) + "   " + figures.enumerated().map { i, v in
                pad(format(v, i == 4 ? 2 : 3), [15, 13, 9, 14, 9][i]) }.joined(separator: "   "))
        }
        if let first = rows.first, rows.count > 1 {
            lines.append("")
            for (size, figures) in rows.dropFirst() {
                let ratios = zip(figures.prefix(4), first.1.prefix(4)).map { format($0 / $1, 2) + "x" }
                lines.append("ratio \(size)/\(first.0): open+index \(ratios[0]), register \(ratios[1]), sign \(ratios[2]), open+sign \(ratios[3])")
            }
        }
        for line in lines { try Output.data(line) }
    }

    static let registration = Array(#"{"rp":{"id":"bench.example","name":"Bench"},"user":{"id":"YmVuY2g","name":"b","displayName":"B"},"challenge":"Y2hhbGxlbmdl","pubKeyCredParams":[{"type":"public-key","alg":-7}],"authenticatorSelection":{"userVerification":"discouraged"}}"#.utf8)
    static let request = Array(#"{"rpId":"target.example","challenge":"Y2hhbGxlbmdl","userVerification":"discouraged"}"#.utf8)

    /// Milliseconds: median open (with the index of the one RP), register, sign, open + sign; log MiB.
    static func measure(size: Int, runs: Int, directory: String, keepAt kept: String? = nil) throws(CLIError) -> [Double] {
        // A directory of its own, made for this run (mkdtemp): nothing that was there before is
        // ever opened, let alone removed.
        var template = Array((directory + "/authctl-bench-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else {
            throw CLIError(.ioError, "cannot make a directory in \(directory): \(String(cString: strerror(errno)))")
        }
        let scratch = String(cString: made)
        let path = scratch + "/vault"
        var keptHere = false
        defer {
            if !keptHere { try? Device.removeVault(at: path) }
            rmdir(scratch)
        }
        let passphrase = SecureBytes(count: 5)
        passphrase.withUnsafeMutableBytes { $0.copyBytes(from: Array("bench".utf8)) }
        let passkeys = try makePasskeys(size)
        let figures: [Double]
        do throws(DeviceError) {
            try fill(path: path, passkeys: passkeys, passphrase: passphrase)
            figures = try time(runs: runs, path: path, passphrase: passphrase)
        } catch { throw CLIError(error) }
        if let kept {
            guard rename(path, kept) == 0 else {
                throw CLIError(.ioError, "cannot move the vault to \(kept): \(String(cString: strerror(errno))) (--keep must be on the file system of --dir)")
            }
            keptHere = true
            Output.diagnostic("authctl: kept the \(size)-passkey vault at \(kept): passphrase 'bench', no PIN; "
                + "time it with AUTHCTL_PASSPHRASE=bench authctl --vault \(kept) sign --origin https://target.example")
        }
        return figures
    }

    /// The median of `runs` timings of each step, on the filled vault at `path`.
    static func time(runs: Int, path: String, passphrase: SecureBytes) throws(DeviceError) -> [Double] {
        var open = [Double](), register = [Double](), sign = [Double](), cold = [Double]()
        for _ in 0..<runs {
            var device: Device? = nil
            open.append(try milliseconds { () throws(DeviceError) in
                device = try Device.open(at: path, passphrase: passphrase)
                _ = try device!.credentials(rpId: "target.example")
            })
            sign.append(try milliseconds { () throws(DeviceError) in _ = try device!.sign(optionsJSON: request, origin: "https://target.example") })
            register.append(try milliseconds { () throws(DeviceError) in
                _ = try device!.register(optionsJSON: registration, origin: "https://bench.example")
            })
            device = nil  // releases the vault's lock
            cold.append(try milliseconds { () throws(DeviceError) in
                _ = try Device.open(at: path, passphrase: passphrase).sign(optionsJSON: request, origin: "https://target.example")
            })
        }
        let facts = try Device.open(at: path, passphrase: passphrase, access: .read).facts
        return [median(open), median(register), median(sign), median(cold), Double(facts.committedBytes) / 1_048_576]
    }

    /// `size` real passkeys spread over 1,000 RPs; the last one, of target.example, is signed with.
    static func makePasskeys(_ size: Int) throws(CLIError) -> [(Credential, PrivateKey)] {
        var out = [(Credential, PrivateKey)]()
        out.reserveCapacity(size)
        for i in 0..<size {
            let key: PrivateKey
            do { key = try PrivateKey.generate() } catch { throw CLIError(.unknown, "OpenSSL: \(error)") }
            out.append((Credential(
                id: RandomSource.live.bytes(16), rpId: i == size - 1 ? "target.example" : "rp\(i % 1000).example",
                userHandle: RandomSource.live.bytes(16), userName: "user\(i)@example.com", userDisplayName: "User \(i)",
                createdAt: 1_700_000_000, signCount: 0, backupEligible: true, backupState: true, publicKey: key.publicKey), key))
        }
        return out
    }

    /// A vault holding `passkeys`, one frame each as `register` writes them, but flushed a thousand
    /// at a time.
    static func fill(path: String, passkeys: [(Credential, PrivateKey)], passphrase: SecureBytes) throws(DeviceError) {
        let device = try Device.create(at: path, passphrase: passphrase, kdf: .min, biometricPIN: nil)
        try device.addInBulk(passkeys)
    }

    static func milliseconds(_ body: () throws(DeviceError) -> Void) throws(DeviceError) -> Double {
        let clock = ContinuousClock()
        let start = clock.now
        try body()
        let (seconds, attoseconds) = (clock.now - start).components
        return Double(seconds) * 1000 + Double(attoseconds) / 1e15
    }

    static func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }

    static func format(_ value: Double, _ digits: Int) -> String {
        var scale = 1.0
        for _ in 0..<digits { scale *= 10 }
        return "\((value * scale).rounded() / scale)"
    }

    static func pad(_ text: String, _ width: Int) -> String {
        String(repeating: " ", count: max(0, width - text.count)) + text
    }
}
