import Glibc
import KeyVault
import Keychain
import VirtualAuthenticator

/// `authctl bench ceremonies`: the whole path a caller pays in one process — options JSON in,
/// response JSON out — for registration and sign-in, over an in-memory store and over an
/// unlocked vault, with the share of that time the signature (or key generation) takes.
enum BenchCeremoniesCommand {
    static let seconds = OptionSpec.value("--seconds", "S", "how long each case runs (0.1-600, default 2)")

    /// The cases, by the names `--only` takes, in the order they run.
    static let cases = ["register-memory", "register-packed-memory", "sign-memory", "sign-vault", "sign-pin-vault", "register-vault"]
    static let only = OptionSpec.value("--only", "CASE", "run only this case, without the crypto baselines (for a profiler): " + cases.joined(separator: ", "),
                                       choices: cases)

    static let spec = CommandSpec(
        name: "ceremonies", abstract: "rates of register and sign, JSON in to JSON out, in memory and through a vault",
        discussion: "Build with -c release. One core; figures are rates per second and the share of each case's time the crypto alone takes (key generation for a registration, the signature for a sign-in). --only runs one case alone, for `perf record`; it has no crypto share.",
        options: [seconds, only],
        examples: [".build/release/authctl bench ceremonies --seconds 3", ".build/release/authctl --json bench ceremonies"],
        run: run)

    struct Row: Encodable {
        let ceremony: String
        let store: String
        let perSecond: Double
        /// Of the time per operation, the part the crypto alone needs (absent with `--only`).
        let cryptoShare: Double?
    }

    struct Report: Encodable {
        let seconds: Double
        let opensslSignsPerSecond: Double?
        let keyGenerationsPerSecond: Double?
        let rows: [Row]
    }

    static let origin = "https://bench.example"
    static func registration(attestation: String, user: String = "b") -> [UInt8] {
        let id = Base64URL.encode(Array(user.utf8))
        return Array(#"{"rp":{"id":"bench.example","name":"Bench"},"user":{"id":"\#(id)","name":"\#(user)","displayName":"B"},"challenge":"Y2hhbGxlbmdlLWNoYWxsZW5nZQ","pubKeyCredParams":[{"type":"public-key","alg":-7}],"authenticatorSelection":{"residentKey":"required","userVerification":"discouraged"},"attestation":"\#(attestation)"}"#.utf8)
    }
    static func request(userVerification: String) -> [UInt8] {
        Array(#"{"rpId":"bench.example","challenge":"Y2hhbGxlbmdlLWNoYWxsZW5nZQ","userVerification":"\#(userVerification)"}"#.utf8)
    }

    static func run(_ args: ParsedArguments) throws(CLIError) {
        let duration: Double
        if let text = args.value(seconds) {
            guard let value = Double(text), (0.1...600).contains(value) else { throw CLIError(.usage, "--seconds takes a number from 0.1 to 600") }
            duration = value
        } else {
            duration = 2
        }
        try Output.requireStdout()
        let selected = args.value(only)
        func runs(_ name: String) -> Bool { selected == nil || selected == name }
        // The crypto alone, on the same core: what no ceremony can beat.
        var signRate: Double? = nil, keygenRate: Double? = nil
        if selected == nil {
            let key: PrivateKey
            do { key = try PrivateKey.generate() } catch { throw CLIError(.unknown, "OpenSSL: \(error)") }
            let message = [UInt8](repeating: 7, count: 69)
            signRate = try rate(duration) { () throws(CLIError) in
                do { _ = try key.sign(message) } catch { throw CLIError(.unknown, "OpenSSL: \(error)") }
            }
            keygenRate = try rate(duration) { () throws(CLIError) in
                do { _ = try PrivateKey.generate() } catch { throw CLIError(.unknown, "OpenSSL: \(error)") }
            }
        }

        var rows = [Row]()
        // In memory: the client and authenticator over InMemoryCredentialStore.
        let store = InMemoryCredentialStore()
        let client = WebAuthnClient(authenticator: Authenticator(configuration: AuthenticatorConfiguration(profile: .authctl),
                                                                 store: store, user: ScriptedUser()),
                                    suffixes: { PublicSuffixList(text: "example\n") })
        func memory(_ name: String, _ crypto: Double?, _ body: @escaping () throws(AuthenticatorError) -> String) throws(CLIError) {
            let perSecond = try rate(duration) { () throws(CLIError) in
                do throws(AuthenticatorError) { _ = try body() } catch { throw CLIError(DeviceError(error)) }
            }
            rows.append(Row(ceremony: name, store: "memory", perSecond: perSecond, cryptoShare: crypto.map { perSecond / $0 }))
        }
        // The options are the caller's: made once per case, so that only the ceremony is timed.
        let none = registration(attestation: "none"), direct = registration(attestation: "direct")
        let discouraged = request(userVerification: "discouraged")
        if runs("register-memory") { try memory("register (none)", keygenRate) { () throws(AuthenticatorError) in
            try client.create(options: try CreationOptions(json: none), origin: origin).json
        } }
        if runs("register-packed-memory") { try memory("register (packed self)", keygenRate) { () throws(AuthenticatorError) in
            try client.create(options: try CreationOptions(json: direct), origin: origin).json
        } }
        if selected == "sign-memory" {
            // Alone, the sign-in still needs the passkey the registrations leave behind.
            do throws(AuthenticatorError) {
                _ = try client.create(options: try CreationOptions(json: none), origin: origin)
            } catch { throw CLIError(DeviceError(error)) }
        }
        if runs("sign-memory") { try memory("sign", signRate) { () throws(AuthenticatorError) in
            try client.get(options: try RequestOptions(json: discouraged), origin: origin).json
        } }

        if cases.filter({ $0.hasSuffix("-vault") }).contains(where: runs) {
            // Through a vault, already unlocked (kdf min): every ceremony commits to its log.
            var template = Array("/tmp/authctl-bench-XXXXXX".utf8CString)
            guard let made = mkdtemp(&template) else { throw CLIError(.ioError, "cannot make a directory in /tmp") }
            let scratch = String(cString: made)
            defer {
                try? Device.removeVault(at: scratch + "/vault")
                rmdir(scratch)
            }
            let secret = SecureBytes(count: 5)
            secret.withUnsafeMutableBytes { $0.copyBytes(from: Array("bench".utf8)) }
            let pin = SecureBytes(count: 4)
            pin.withUnsafeMutableBytes { $0.copyBytes(from: Array("1234".utf8)) }
            let device: Device
            do {
                device = try Device.create(at: scratch + "/vault", passphrase: secret, kdf: .min, biometricPIN: pin)
                try device.account.setProfile("authctl")
            } catch { throw CLIError(error) }
            let user = UserPolicy(pin: pin)
            func vault(_ name: String, _ crypto: Double?, _ body: @escaping () throws(DeviceError) -> String) throws(CLIError) {
                let perSecond = try rate(duration) { () throws(CLIError) in
                    do throws(DeviceError) { _ = try body() } catch { throw CLIError(error) }
                }
                rows.append(Row(ceremony: name, store: "vault", perSecond: perSecond, cryptoShare: crypto.map { perSecond / $0 }))
            }
            // Sign-ins first, with the one passkey of the RP; then registrations, each of a new user,
            // as a load test registers its users.
            do { _ = try device.register(optionsJSON: registration(attestation: "none"), origin: origin, user: user) } catch {
                throw CLIError(error)
            }
            let required = request(userVerification: "required")
            if runs("sign-vault") { try vault("sign", signRate) { () throws(DeviceError) in
                try device.sign(optionsJSON: discouraged, origin: origin, user: user).json
            } }
            if runs("sign-pin-vault") { try vault("sign (PIN)", signRate) { () throws(DeviceError) in
                try device.sign(optionsJSON: required, origin: origin, user: user).json
            } }
            var user64 = 0
            if runs("register-vault") { try vault("register (none)", keygenRate) { () throws(DeviceError) in
                user64 += 1
                return try device.register(optionsJSON: registration(attestation: "none", user: "u\(user64)"), origin: origin, user: user).json
            } }
        }
        let report = Report(seconds: duration, opensslSignsPerSecond: signRate, keyGenerationsPerSecond: keygenRate, rows: rows)
        if args.flag(GlobalOptions.json) {
            try Output.data(JSONOutput.string(report))
            return
        }
        var lines = [String]()
        if let signRate, let keygenRate {
            lines += ["P-256 signatures (OpenSSL, in-process): \(Int(signRate))/s; key generations: \(Int(keygenRate))/s", ""]
        }
        lines += TextTable.lines([["CEREMONY", "STORE", "PER SECOND", "CRYPTO SHARE"]] + rows.map {
            [$0.ceremony, $0.store, String(Int($0.perSecond)), $0.cryptoShare.map { BenchVaultCommand.format($0, 2) } ?? "-"]
        })
        for line in lines { try Output.data(line) }
    }

    /// Operations per second of `body`, run for `seconds`.
    static func rate(_ seconds: Double, _ body: () throws(CLIError) -> Void) throws(CLIError) -> Double {
        let clock = ContinuousClock()
        let start = clock.now
        let limit = Duration.milliseconds(Int64(seconds * 1000))
        var count = 0
        var elapsed = Duration.zero
        repeat {
            for _ in 0..<16 { try body() }
            count += 16
            elapsed = clock.now - start
        } while elapsed < limit
        let (s, attoseconds) = elapsed.components
        return Double(count) / (Double(s) + Double(attoseconds) / 1e18)
    }
}
