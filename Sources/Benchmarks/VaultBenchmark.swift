import Foundation
import Glibc
import KeyVault
import Keychain
import Session
import Synchronization
import VirtualAuthenticator

/// `authctl bench vault`: what the commands cost as the vault grows, with one device or several.
/// For each size and device count it builds a vault, times opening, registering and signing
/// in-process through the device library, and runs `authctl sign`, `register`, `credential show`,
/// `delete` and `list` as processes (wall time and peak resident memory). It prints figures and the
/// ratios measured in one run.
package enum VaultBenchmark {
    /// The account's devices are d0 … dN-1; d0 makes the passkeys; d1 (d0 when alone) is timed.
    static func deviceName(_ index: Int) -> String { "d\(index)" }
    static func timedDevice(_ count: Int) -> String { deviceName(count > 1 ? 1 : 0) }

    /// One command as a process: wall time (median and 90th percentile), CPU time (median) and the
    /// largest peak resident set of its runs.
    package struct CommandFigures: Encodable {
        let medianMs, p90Ms, cpuMs, maxRssMiB: Double
    }
    /// The commands, in the order each run runs them.
    package struct Commands: Encodable {
        let sign, signDiscoverable, register, show, delete, list, listRP: CommandFigures
        static let names = ["sign", "signDiscoverable", "register", "show", "delete", "list", "listRP"]
        var all: [CommandFigures] { [sign, signDiscoverable, register, show, delete, list, listRP] }
    }
    /// One vault's figures, as `--json` prints them: the library's medians (with `--measure`
    /// library or both) and the commands' (commands or both).
    package struct Row: Encodable {
        let size, devices: Int
        let openMs, registerMs, signMs, openSignMs: Double?
        let logMiB: Double
        let commands: Commands?
    }
    package struct Report: Encodable {
        let runs: Int
        let bigRP: Bool
        let timedDevice: String
        let rows: [Row]

        package init(plan: Plan, rows: [Row]) {
            runs = plan.runs
            bigRP = plan.bigRP
            timedDevice = "d1 (d0 when it is the only one)"
            self.rows = rows
        }
    }

    /// What one run measures, and on which layout.
    package struct Plan {
        let runs: Int
        let bigRP: Bool
        let library, commands: Bool
        let directory: String
        let executable: String
        let safePoints: SafePoints
        /// Says where a vault was kept, as it is kept (a line for stderr).
        let notice: (String) -> Void

        package init(runs: Int, bigRP: Bool, library: Bool, commands: Bool, directory: String, executable: String,
                     safePoints: SafePoints, notice: @escaping (String) -> Void) {
            self.runs = runs
            self.bigRP = bigRP
            self.library = library
            self.commands = commands
            self.directory = directory
            self.executable = executable
            self.safePoints = safePoints
            self.notice = notice
        }
    }

    /// Every vault of `sizes` passkeys on each of `devices` device counts, measured before
    /// anything is printed: a failure leaves stdout empty. The largest vault of the last device
    /// count is left at `kept` (a new path) when one is given.
    package static func run(sizes counts: [Int], devices deviceCounts: [Int], plan: Plan, keep kept: String?) throws(SessionError) -> [Row] {
        var rows: [Row] = []
        let largest = counts.max()!
        for size in counts {
            let passkeys = try makePasskeys(size, bigRP: plan.bigRP, safePoints: plan.safePoints)
            for (i, n) in deviceCounts.enumerated() {
                let keepHere = size == largest && i == deviceCounts.count - 1 ? kept : nil
                rows.append(try measure(size: size, devices: n, passkeys: passkeys, plan: plan, keepAt: keepHere))
            }
        }
        return rows
    }

    /// Removes the vault being built or timed, if any: what an interruption leaves to clean up.
    package static func removeCurrentScratch() {
        if let scratch = current.withLock({ $0 }) { removeScratch(scratch) }
    }

    package static func textReport(_ rows: [Row], plan: Plan) -> [String] {
        var lines = [String]()
        let layout = plan.bigRP ? "all passkeys on target.example" : "passkeys over 1,000 RPs"
        if plan.library {
            lines.append("in-process, \(layout), median of \(plan.runs) (ms)")
            lines.append("devices   vault size   open+index   register       sign   open+sign   log (MiB)")
            for row in rows {
                let figures = [row.openMs, row.registerMs, row.signMs, row.openSignMs].map { $0 ?? 0 }
                lines.append(pad(String(row.devices), 7) + "   " + pad(String(row.size), 10) + "   "
                    + zip(figures, [10, 8, 8, 9]).map { pad(format($0, 3), $1) }.joined(separator: "   ")
                    + "   " + pad(format(row.logMiB, 2), 9))
            }
            if let first = rows.first, rows.count > 1, first.openMs != nil {
                for row in rows.dropFirst() {
                    let pairs = [(row.openMs, first.openMs), (row.registerMs, first.registerMs), (row.signMs, first.signMs), (row.openSignMs, first.openSignMs)]
                    let ratios = pairs.map { format(($0 ?? 0) / max($1 ?? 1, 1e-9), 2) + "x" }
                    lines.append("ratio \(row.devices) device(s) \(row.size) / \(first.devices) device(s) \(first.size): "
                        + "open+index \(ratios[0]), register \(ratios[1]), sign \(ratios[2]), open+sign \(ratios[3])")
                }
            }
        }
        if plan.commands {
            if !lines.isEmpty { lines.append("") }
            lines.append("authctl as a process, \(layout), on d1 (d0 when alone): median / p90 of \(plan.runs) (ms), max RSS (MiB)")
            lines.append("devices   vault size   " + Commands.names.map { pad($0, 20) }.joined(separator: "   "))
            for row in rows {
                guard let commands = row.commands else { continue }
                lines.append(pad(String(row.devices), 7) + "   " + pad(String(row.size), 10) + "   " + commands.all.map {
                    pad(format($0.medianMs, 1) + " / " + format($0.p90Ms, 1) + " " + format($0.maxRssMiB, 1), 20)
                }.joined(separator: "   "))
            }
            if let first = rows.first, let base = first.commands, rows.count > 1 {
                for row in rows.dropFirst() {
                    guard let commands = row.commands else { continue }
                    let ratios = zip(Commands.names, zip(commands.all, base.all)).map { name, pair in
                        "\(name) \(format(pair.0.medianMs / max(pair.1.medianMs, 1e-9), 2))x time \(format(pair.0.maxRssMiB / max(pair.1.maxRssMiB, 1e-9), 2))x RSS"
                    }
                    lines.append("ratio \(row.devices) device(s) \(row.size) / \(first.devices) device(s) \(first.size): " + ratios.joined(separator: ", "))
                }
            }
        }
        return lines
    }

    package static let targetRP = "target.example"
    static let targetOrigin = "https://target.example"

    /// Creation options for a new user of the target RP: each timed registration is a sign-up.
    static func registration(user: String) -> [UInt8] {
        Array(#"{"rp":{"id":"target.example","name":"Target"},"user":{"id":"\#(Base64URL.encode(Array(user.utf8)))","name":"\#(user)","displayName":"\#(user)"},"challenge":"Y2hhbGxlbmdl","pubKeyCredParams":[{"type":"public-key","alg":-7}],"authenticatorSelection":{"userVerification":"discouraged"}}"#.utf8)
    }

    /// Request options that name the one passkey to sign with, as an RP that knows the user does.
    package static func signRequest(_ id: [UInt8]) -> [UInt8] {
        Array(#"{"rpId":"target.example","challenge":"Y2hhbGxlbmdl","userVerification":"discouraged","allowCredentials":[{"type":"public-key","id":"\#(Base64URL.encode(id))"}]}"#.utf8)
    }

    /// Request options that name no passkey (a discoverable sign-in, as a "Sign in with a passkey"
    /// button asks): the candidates are every passkey of the RP, and the newest is picked.
    static let discoverableSignRequest = Array(#"{"rpId":"target.example","challenge":"Y2hhbGxlbmdl","userVerification":"discouraged"}"#.utf8)

    /// The directory of the vault being built or timed, for an interruption to remove.
    private static let current = Mutex<String?>(nil)

    /// Removes a directory this command made, whatever is in it; a few passes, since the main
    /// thread, not stopped within the interruption's wait, may still be writing a file into it.
    package static func removeScratch(_ scratch: String) {
        for _ in 0..<5 where FileManager.default.fileExists(atPath: scratch) {
            try? FileManager.default.removeItem(atPath: scratch)
        }
    }

    /// One vault of `passkeys` on `devices` devices: its figures.
    static func measure(size: Int, devices: Int, passkeys: [(Credential, PrivateKey)], plan: Plan, keepAt kept: String?) throws(SessionError) -> Row {
        // A directory of its own, made for this run (mkdtemp): nothing that was there before is
        // ever opened, let alone removed.
        var template = Array((plan.directory + "/authctl-bench-XXXXXX").utf8CString)
        plan.safePoints.checkpoint()
        plan.safePoints.hold()  // until an interruption would know the directory to remove
        guard let made = mkdtemp(&template) else {
            plan.safePoints.resume()
            throw SessionError(.ioError, "cannot make a directory in \(EchoedInput.path(plan.directory)): \(String(cString: strerror(errno)))")
        }
        let scratch = String(cString: made)
        current.withLock { $0 = scratch }
        plan.safePoints.resume()
        let path = scratch + "/vault"
        var keptHere = false
        var scratchFiles = [String]()
        defer {
            if !keptHere { try? Device.removeVault(at: path) }
            for file in scratchFiles { unlink(file) }
            rmdir(scratch)
            current.withLock { $0 = nil }
        }
        let passphrase = SecureBytes(count: 5)
        passphrase.withUnsafeMutableBytes { $0.copyBytes(from: Array("bench".utf8)) }
        let timed = timedDevice(devices)
        let target = passkeys[passkeys.count - 1].0.id
        let library: [Double]?
        let commands: Commands?
        let logMiB: Double
        do throws(DeviceError) {
            try fill(path: path, devices: devices, passkeys: passkeys, passphrase: passphrase)
            // The timed device catches up with the bulk once, untimed, as a device does when it
            // first syncs; what is timed is the steady state after it.
            _ = try Device.open(at: path, passphrase: passphrase, device: timed).credentials(rpId: targetRP)
            library = plan.library ? try time(runs: plan.runs, path: path, device: timed, target: target, passphrase: passphrase,
                                              safePoints: plan.safePoints) : nil
        } catch { throw SessionError(error) }
        if plan.commands {
            commands = try timeCommands(plan: plan, path: path, scratch: scratch, device: timed, target: target,
                                        victims: passkeys.prefix(plan.runs).map { $0.0.id }, files: &scratchFiles)
        } else {
            commands = nil
        }
        do throws(DeviceError) {
            logMiB = Double(try Device.open(at: path, passphrase: passphrase, access: .read).facts.committedBytes) / 1_048_576
        } catch { throw SessionError(error) }
        if let kept {
            guard rename(path, kept) == 0 else {
                throw SessionError(.ioError, "cannot move the vault to \(EchoedInput.path(kept)): \(String(cString: strerror(errno))) (--keep must be on the file system of --dir)")
            }
            keptHere = true
            let deviceOption = devices > 1 ? " --device \(timed)" : ""
            plan.notice("authctl: kept the \(size)-passkey vault of \(devices) device(s) at \(kept): passphrase 'bench', no PIN; "
                + "time it with AUTHCTL_PASSPHRASE=bench authctl --vault \(kept)\(deviceOption) sign --origin https://target.example")
        }
        return Row(size: size, devices: devices, openMs: library?[0], registerMs: library?[1], signMs: library?[2], openSignMs: library?[3],
                   logMiB: logMiB, commands: commands)
    }

    /// The median of `runs` timings of each step, in-process, as `device` of the filled vault.
    static func time(runs: Int, path: String, device name: String, target: [UInt8], passphrase: SecureBytes,
                     safePoints: SafePoints) throws(DeviceError) -> [Double] {
        var open = [Double](), register = [Double](), sign = [Double](), cold = [Double]()
        let request = signRequest(target)
        for run in 0..<runs {
            safePoints.checkpoint()
            var device: Device? = nil
            open.append(try milliseconds { () throws(DeviceError) in
                device = try Device.open(at: path, passphrase: passphrase, device: name)
                _ = try device!.credentials(rpId: targetRP)
            })
            sign.append(try milliseconds { () throws(DeviceError) in _ = try device!.sign(optionsJSON: request, origin: targetOrigin) })
            let options = registration(user: "library-\(run)")
            register.append(try milliseconds { () throws(DeviceError) in
                _ = try device!.register(optionsJSON: options, origin: targetOrigin)
            })
            device = nil  // releases the vault's lock
            cold.append(try milliseconds { () throws(DeviceError) in
                _ = try Device.open(at: path, passphrase: passphrase, device: name).sign(optionsJSON: request, origin: targetOrigin)
            })
        }
        return [median(open), median(register), median(sign), median(cold)]
    }

    /// `authctl sign` (naming the target passkey, then naming none), `register` (a new user each
    /// run), `credential show` (the signed passkey), `delete` (a different passkey each run), `list`
    /// and `list --rp-id` of the target RP, run in turn `runs` times as processes of this same
    /// binary, as `device`.
    static func timeCommands(plan: Plan, path: String, scratch: String, device: String, target: [UInt8], victims: [[UInt8]],
                             files: inout [String]) throws(SessionError) -> Commands {
        let signFile = scratch + "/sign.json", discoverableFile = scratch + "/sign-discoverable.json"
        files += [signFile, discoverableFile]
        try TimedProcess.write(signRequest(target), to: signFile)
        try TimedProcess.write(discoverableSignRequest, to: discoverableFile)
        let common = ["--vault", path, "--device", device]
        var environment = TimedProcess.environment()
        environment.append("AUTHCTL_PASSPHRASE=bench")
        var samples = [[TimedProcess.Sample]](repeating: [], count: Commands.names.count)
        for run in 0..<plan.runs {
            let registerFile = scratch + "/register-\(run).json"
            files.append(registerFile)
            try TimedProcess.write(registration(user: "command-\(run)"), to: registerFile)
            let commandLines = [
                common + ["sign", "--origin", targetOrigin, "--options", signFile],
                common + ["sign", "--origin", targetOrigin, "--options", discoverableFile],
                common + ["register", "--origin", targetOrigin, "--options", registerFile],
                common + ["credential", "show", "--", Base64URL.encode(target)],
                common + ["delete", "--", Base64URL.encode(victims[run])],
                common + ["list"],
                common + ["list", "--rp-id", targetRP],
            ]
            for (i, arguments) in commandLines.enumerated() {
                samples[i].append(try CommandBenchmark.timedFromOutside(plan.executable, arguments, environment: environment, scratch: scratch,
                                                                        safePoints: plan.safePoints))
            }
        }
        let figures = samples.map { runs in
            CommandFigures(medianMs: median(runs.map(\.wallMs)), p90Ms: percentile90(runs.map(\.wallMs)),
                           cpuMs: median(runs.map(\.cpuMs)), maxRssMiB: runs.map(\.maxRssMiB).max() ?? 0)
        }
        return Commands(sign: figures[0], signDiscoverable: figures[1], register: figures[2], show: figures[3], delete: figures[4],
                        list: figures[5], listRP: figures[6])
    }

    /// `size` real passkeys with the default profile's credential id length, the last of
    /// target.example (signed with and shown); the others spread over 1,000 RPs, or with `bigRP`
    /// all of target.example too.
    package static func makePasskeys(_ size: Int, bigRP: Bool, safePoints: SafePoints) throws(SessionError) -> [(Credential, PrivateKey)] {
        var out = [(Credential, PrivateKey)]()
        out.reserveCapacity(size)
        for i in 0..<size {
            if i % 256 == 0 { safePoints.checkpoint() }
            let key: PrivateKey
            do { key = try PrivateKey.generate() } catch { throw SessionError(.unknown, "OpenSSL: \(error)") }
            out.append((Credential(
                id: RandomSource.live.bytes(AuthenticatorProfile.default.credentialIdLength), rpId: i == size - 1 || bigRP ? targetRP : "rp\(i % 1000).example",
                userHandle: RandomSource.live.bytes(16), userName: "user\(i)@example.com", userDisplayName: "User \(i)",
                createdAt: 1_700_000_000, signCount: 0, backupEligible: true, backupState: true, publicKey: key.publicKey), key))
        }
        return out
    }

    /// A vault whose account has `devices` devices (d0 …), d0 holding `passkeys`, one frame each as
    /// `register` writes them, but flushed a thousand at a time.
    static func fill(path: String, devices: Int, passkeys: [(Credential, PrivateKey)], passphrase: SecureBytes) throws(DeviceError) {
        let account = try Account.create(at: path, passphrase: passphrase, kdf: .min, deviceName: deviceName(0), biometricPIN: nil)
        for i in 1..<max(devices, 1) { try account.addDevice(deviceName(i), pin: nil) }
        try account.device(deviceName(0)).addInBulk(passkeys)
    }

    package static func milliseconds(_ body: () throws(DeviceError) -> Void) throws(DeviceError) -> Double {
        let clock = ContinuousClock()
        let start = clock.now
        try body()
        return TimedProcess.milliseconds(clock.now - start)
    }

    static func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }

    /// The nearest-rank 90th percentile: of 7 runs, the slowest; of 20, the second slowest.
    static func percentile90(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        let rank = Int((0.9 * Double(sorted.count)).rounded(.up))
        return sorted[max(rank, 1) - 1]
    }

    package static func format(_ value: Double, _ digits: Int) -> String {
        var scale = 1.0
        for _ in 0..<digits { scale *= 10 }
        return "\((value * scale).rounded() / scale)"
    }

    package static func pad(_ text: String, _ width: Int) -> String {
        String(repeating: " ", count: max(0, width - text.count)) + text
    }
}
