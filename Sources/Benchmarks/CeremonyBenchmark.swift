import Glibc
import KeyVault
import Keychain
import Session
import VirtualAuthenticator

/// `authctl bench ceremonies`: the whole path a caller pays in one process — options JSON in,
/// response JSON out — for registration and sign-in, over an in-memory store and over an
/// unlocked vault, with the share of that time the signature (or key generation) takes.
package enum CeremonyBenchmark {
    /// The cases, by the names `--only` takes, in the order they run.
    package static let cases = ["register-memory", "register-packed-memory", "sign-memory", "sign-vault", "sign-pin-vault", "register-vault"]

    package struct Row: Encodable {
        package let ceremony: String
        package let store: String
        package let perSecond: Double
        /// Of the time per operation, the part the crypto alone needs (absent with `--only`).
        package let cryptoShare: Double?
    }

    package struct Report: Encodable {
        package let seconds: Double
        package let opensslSignsPerSecond: Double?
        package let keyGenerationsPerSecond: Double?
        package let rows: [Row]
    }

    static let origin = "https://bench.example"
    static func registration(attestation: String, user: String = "b") -> [UInt8] {
        let id = Base64URL.encode(Array(user.utf8))
        return Array(#"{"rp":{"id":"bench.example","name":"Bench"},"user":{"id":"\#(id)","name":"\#(user)","displayName":"B"},"challenge":"Y2hhbGxlbmdlLWNoYWxsZW5nZQ","pubKeyCredParams":[{"type":"public-key","alg":-7}],"authenticatorSelection":{"residentKey":"required","userVerification":"discouraged"},"attestation":"\#(attestation)"}"#.utf8)
    }
    static func request(userVerification: String) -> [UInt8] {
        Array(#"{"rpId":"bench.example","challenge":"Y2hhbGxlbmdlLWNoYWxsZW5nZQ","userVerification":"\#(userVerification)"}"#.utf8)
    }

    /// Each case (or the one `selected`) for `duration` seconds, and the crypto alone when all run.
    package static func run(seconds duration: Double, only selected: String?) throws(SessionError) -> Report {
        func runs(_ name: String) -> Bool { selected == nil || selected == name }
        // The crypto alone, on the same core: what no ceremony can beat.
        var signRate: Double? = nil, keygenRate: Double? = nil
        if selected == nil {
            let key: PrivateKey
            do { key = try PrivateKey.generate() } catch { throw SessionError(.unknown, "OpenSSL: \(error)") }
            let message = [UInt8](repeating: 7, count: 69)
            signRate = try rate(duration) { () throws(SessionError) in
                do { _ = try key.sign(message) } catch { throw SessionError(.unknown, "OpenSSL: \(error)") }
            }
            keygenRate = try rate(duration) { () throws(SessionError) in
                do { _ = try PrivateKey.generate() } catch { throw SessionError(.unknown, "OpenSSL: \(error)") }
            }
        }

        var rows = [Row]()
        // In memory: the client and authenticator over InMemoryCredentialStore.
        let store = InMemoryCredentialStore()
        let client = WebAuthnClient(authenticator: Authenticator(configuration: AuthenticatorConfiguration(profile: .authctl),
                                                                 store: store, user: ScriptedUser()),
                                    suffixes: { PublicSuffixList(text: "example\n") })
        func memory(_ name: String, _ crypto: Double?, _ body: @escaping () throws(AuthenticatorError) -> String) throws(SessionError) {
            let perSecond = try rate(duration) { () throws(SessionError) in
                do throws(AuthenticatorError) { _ = try body() } catch { throw SessionError(DeviceError(error)) }
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
            } catch { throw SessionError(DeviceError(error)) }
        }
        if runs("sign-memory") { try memory("sign", signRate) { () throws(AuthenticatorError) in
            try client.get(options: try RequestOptions(json: discouraged), origin: origin).json
        } }

        if cases.filter({ $0.hasSuffix("-vault") }).contains(where: runs) {
            // Through a vault, already unlocked (kdf min): every ceremony commits to its log.
            var template = Array("/tmp/authctl-bench-XXXXXX".utf8CString)
            guard let made = mkdtemp(&template) else { throw SessionError(.ioError, "cannot make a directory in /tmp") }
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
            } catch { throw SessionError(error) }
            let user = UserPolicy(pin: pin)
            func vault(_ name: String, _ crypto: Double?, _ body: @escaping () throws(DeviceError) -> String) throws(SessionError) {
                let perSecond = try rate(duration) { () throws(SessionError) in
                    do throws(DeviceError) { _ = try body() } catch { throw SessionError(error) }
                }
                rows.append(Row(ceremony: name, store: "vault", perSecond: perSecond, cryptoShare: crypto.map { perSecond / $0 }))
            }
            // Sign-ins first, with the one passkey of the RP; then registrations, each of a new user,
            // as a load test registers its users.
            do { _ = try device.register(optionsJSON: registration(attestation: "none"), origin: origin, user: user) } catch {
                throw SessionError(error)
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
        return Report(seconds: duration, opensslSignsPerSecond: signRate, keyGenerationsPerSecond: keygenRate, rows: rows)
    }

    /// Operations per second of `body`, run for `seconds`.
    static func rate(_ seconds: Double, _ body: () throws(SessionError) -> Void) throws(SessionError) -> Double {
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
