import Curl
import Foundation
import Session

/// Runs a scenario: a throw-away vault (cheapest KDF) in a temporary directory, an account whose
/// devices the scenario adds, a virtual clock that only `wait` and `at` move (and a prompt left to
/// time out), and a random source seeded by `seed` — so the same file gives the same timeline,
/// byte for byte, in milliseconds of wall time.
public final class ScenarioRunner {
    public struct Options {
        /// Report every unmet expectation, not only the first.
        public var keepGoing = false
        /// Each step's report carries its request's answer (``StepReport/answer``). Off by
        /// default: an answer holds what no seed fixes (a new key pair, a signature), and a file
        /// gives the same report bytes without it.
        public var answers = false
        /// Where `${NAME}` in the scenario is looked up.
        public var environment: [String: String] = ProcessInfo.processInfo.environment
        /// An empty directory, the caller's, for the throw-away vault (removed after the run, the
        /// directory left); `nil`: a new one in the temporary directory, removed with it. A
        /// directory that is not empty is refused before anything runs: the run removes only the
        /// vault it made, never one it found.
        public var workspace: String? = nil
        /// Asked before each step: `true` stops the run there with an error (an interrupted run
        /// stops touching its vault before the vault is removed).
        public var isCanceled: @Sendable () -> Bool = { false }
        public init() {}
    }

    /// When every scenario begins: 2026-01-01T00:00:00Z.
    package static let epoch: UInt64 = 1_767_225_600_000

    let file: String
    let options: Options
    let clock = VirtualClock(start: ScenarioRunner.epoch)
    let directory: String
    let ownsDirectory: Bool
    /// Whether this run made the vault in `directory` (only then is it removed when the run ends).
    private var madeVault = false
    var seed: UInt64 = 0
    /// The request layer over the run's account, once the first device made it.
    var session: Session?
    /// The PIN the person at each device types, as the scenario declared it (a timeout passes on
    /// the run's clock); and the PIN a factory reset retired (which recovers the account's biometry key).
    lazy var people = KnownPeople(timeouts: .on(clock))
    var formerPins = [String: String]()
    var origin = "https://example.com"
    var rpId: String?
    private(set) var labels = [String: [UInt8]]()
    /// The label of each labelled passkey (an id has at most one: each registration makes a new id).
    private var labelOf = [PasskeyId: String]()

    /// A passkey id as a key of ``labelOf``, hashed as one run of bytes: a `holds` of a thousand
    /// passkeys looks up a thousand labels, and `[UInt8]` hashes byte by byte.
    private struct PasskeyId: Hashable {
        let bytes: [UInt8]
        init(_ bytes: [UInt8]) { self.bytes = bytes }
        func hash(into hasher: inout Hasher) {
            bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
        }
    }

    /// Labels passkey `id` (a label used again moves to the new passkey).
    private func setLabel(_ label: String, _ id: [UInt8]) {
        if let old = labels.updateValue(id, forKey: label), labelOf[PasskeyId(old)] == label { labelOf[PasskeyId(old)] = nil }
        labelOf[PasskeyId(id)] = label
    }
    var lastResponse: String?
    /// The conditional sign-in begun on each device (`autofill begin`), as the session holds it.
    private var autofills = [String: ConditionalSignIn]()
    var lastReply: [UInt8]?
    var http: HTTPClient?
    /// What is in flight, watched between steps while `sync events on`.
    var syncWatch: SyncWatch?
    /// The last ceremony's answer from the request layer, with its line: its response JSON or its
    /// error (only the last: a run of many ceremonies keeps no list of them).
    package private(set) var lastAnswer: (line: Int, answer: Result<String, SessionError>)?

    private func answered(_ line: ScenarioLine, _ answer: Result<String, SessionError>) { lastAnswer = (line.number, answer) }

    init(file: String, options: Options) throws(ScenarioError) {
        self.file = file
        self.options = options
        if let workspace = options.workspace {
            let entries: [String]
            do { entries = try FileManager.default.contentsOfDirectory(atPath: workspace) } catch {
                throw ScenarioError(file: file, line: 0, "the workspace \(workspace) is not a directory that can be read")
            }
            guard entries.isEmpty else {
                throw ScenarioError(file: file, line: 0, "the workspace \(workspace) is not empty (it holds \(entries.sorted().prefix(3).joined(separator: ", ")))")
            }
            directory = workspace
            ownsDirectory = false
        } else {
            directory = try Self.makeWorkspace(file: file)
            ownsDirectory = true
        }
    }

    /// A new private directory in the temporary directory, for a run's vault.
    package static func makeWorkspace(file: String = "") throws(ScenarioError) -> String {
        let parent = NSTemporaryDirectory()
        var template = Array((parent + "/authctl-scenario-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else {
            throw ScenarioError(file: file, line: 0, "cannot make a temporary directory in \(EchoedInput.path(parent)) ($TMPDIR): \(String(cString: strerror(errno)))")
        }
        return String(cString: made)
    }

    /// Removes a workspace and the vault in it, whatever state a run left it in.
    package static func removeWorkspace(_ path: String) {
        // A run still going may write a file between two passes: a few passes catch it.
        for _ in 0..<5 where FileManager.default.fileExists(atPath: path) {
            try? FileManager.default.removeItem(atPath: path)
        }
    }

    deinit {
        session = nil  // releases the vault's lock, so it can be removed
        if madeVault { try? Session.removeVault(at: directory + "/vault") }
        if ownsDirectory { rmdir(directory) }
    }

    /// The largest scenario file read: far beyond any written by hand or generated for a test.
    package static let fileLimit = 4 << 20

    /// Reads and runs the scenario at `path` (`-`: standard input).
    public static func run(file path: String, options: Options = Options()) throws(ScenarioError) -> ScenarioReport {
        let text = try ScenarioFile.text(path, limit: fileLimit)
        let lines = try ScenarioParser(file: path, environment: options.environment).parse(text)
        return try ScenarioRunner(file: path, options: options).run(lines)
    }

    func run(_ lines: [ScenarioLine]) throws(ScenarioError) -> ScenarioReport {
        var report = ScenarioReport(file: file)
        for line in lines {
            guard !options.isCanceled() else { throw ScenarioError(file: file, line: line.number, "the run was canceled") }
            if let at = line.at {
                let target = Self.epoch + at
                guard target <= VirtualClock.end else {
                    throw ScenarioError(file: file, line: line.number, "at \(DelayRange.text(milliseconds: at)) is past the end of the year 9999")
                }
                guard target >= clock.now else {
                    throw ScenarioError(file: file, line: line.number, "at \(DelayRange.text(milliseconds: at)) is earlier than now (\(DelayRange.text(milliseconds: clock.now - Self.epoch)))")
                }
                // Checked above, so the session's clock request cannot fail; before the first device
                // there is no session yet, only the clock it will run on.
                if let session { _ = try? session.clock(.set(milliseconds: target)) } else { clock.advance(to: target) }
                watchSync(into: &report)
            }
            guard let step = line.step else { continue }
            let time = clock.now - Self.epoch
            var outcome = try perform(step, line: line)
            // What the store checks found while the step ran, with the browser's warnings.
            if let found = session?.takeWarnings(), !found.isEmpty {
                if let i = outcome.details.firstIndex(where: { $0.key == "warnings" }) {
                    outcome.details[i].value += "; " + found.joined(separator: "; ")
                } else {
                    outcome.details.append(("warnings", found.joined(separator: "; ")))
                }
            }
            // The same file gives the same report: the temporary vault's path is not part of it.
            outcome.error = outcome.error?.replacingOccurrences(directory, "<scenario vault>")
            try requireDevices(named: line.expectation, line: line)
            let failures = judge(outcome, against: line.expectation, line: line)
            if !options.answers { outcome.answer = nil }
            report.record(StepReport(line: line.number, time: time, step: line.text, outcome: outcome, answered: options.answers),
                          failures: failures)
            noteDropped(into: &report)
            watchSync(into: &report)
            if !failures.isEmpty && !options.keepGoing { break }
        }
        report.seed = seed
        return report
    }

    /// The changes the step made that a deletion outranks, into the timeline.
    private func noteDropped(into report: inout ScenarioReport) {
        guard let dropped = session?.droppedRevisions, dropped.count > report.dropped.count else { return }
        for d in dropped[report.dropped.count...] {
            report.record(DroppedChange(time: d.time - min(d.time, Self.epoch), device: d.device, passkey: label(of: d.credentialId),
                                        revision: Base64URL.encode(d.revisionId), deletedBy: d.deletedBy,
                                        deletedAt: d.deletedAt - min(d.deletedAt, Self.epoch)))
        }
    }

    /// With `sync events on`: the transfers that happened since the last look, into the timeline.
    private func watchSync(into report: inout ScenarioReport) {
        guard syncWatch != nil, let session, let status = try? session.syncStatus() else { return }
        for event in syncWatch!.look(status, epoch: Self.epoch, label: { Base64URL.decode($0).map(self.label(of:)) ?? $0 }) {
            report.record(event)
        }
    }

    // MARK: - Judging

    /// `NAME.uploads` and `NAME.downloads` name a device of the account: a misspelt one is never
    /// reported, so `laptpo.uploads!=alice` would always hold.
    private func requireDevices(named expectation: Expectation?, line: ScenarioLine) throws(ScenarioError) {
        for check in expectation?.checks ?? [] where Outcome.isTimed(check.key) {
            guard let dot = check.key.lastIndex(of: ".") else { continue }
            let name = String(check.key[..<dot])
            guard session?.deviceNames.contains(name) == true else {
                throw ScenarioError(file: file, line: line.number, column: check.column,
                                    "no device named '\(name)': \(check.key) names a device of the account")
            }
        }
    }

    /// The failures of `outcome` against what the line expects. Without an expectation, any error
    /// is a failure (a scenario says when it expects one).
    func judge(_ outcome: Outcome, against expectation: Expectation?, line: ScenarioLine) -> [ScenarioFailure] {
        guard let expectation else {
            guard let error = outcome.error else { return [] }
            return [ScenarioFailure(file: file, line: line.number, step: line.text, expected: "ok",
                                    actual: "\(outcome.name): \(error)")]
        }
        var failures = [ScenarioFailure]()
        if let expected = expectation.outcome ?? (outcome.error != nil ? "ok" : nil) {
            // A list (what a device holds) as a multiset: a passkey offered twice shows.
            let matches = outcome.isList ? Outcome.items(expected) == Outcome.items(outcome.name) : expected == outcome.name
            if !matches {
                failures.append(ScenarioFailure(file: file, line: line.number, step: line.text, expected: expected,
                                                actual: outcome.name + (outcome.error.map { ": \($0)" } ?? "")))
                return failures  // the checks of a result that did not happen would only repeat it
            }
        }
        for check in expectation.checks {
            let actual = outcome.value(of: check.key, reply: lastReply)
            let timed = Outcome.isTimed(check.key)
            let met = check.absent ? Outcome.lacks(check.value, actual: actual, timed: timed)
                : Outcome.matches(expected: check.value, actual: actual, timed: timed)
            if !met {
                failures.append(ScenarioFailure(file: file, line: line.number, column: check.column, step: line.text,
                                                expected: check.text, actual: "\(check.key)=\(actual ?? "(none)")"))
            }
        }
        return failures
    }

    // MARK: - Steps

    private func fail(_ line: ScenarioLine, _ message: String) -> ScenarioError {
        ScenarioError(file: file, line: line.number, message)
    }

    private func requireAccount(_ line: ScenarioLine) throws(ScenarioError) -> Session {
        guard let session else { throw fail(line, "no device yet: a scenario starts with 'device add NAME'") }
        return session
    }

    /// The session, once `name` is known to be a device of the account (a scenario error if not).
    private func session(for name: String, line: ScenarioLine) throws(ScenarioError) -> Session {
        try requireDevice(name, line: line)
        return session!
    }

    func perform(_ step: Step, line: ScenarioLine) throws(ScenarioError) -> Outcome {
        switch step {
        case .seed(let n):
            guard session == nil else { throw fail(line, "seed comes before the first device") }
            seed = n
            return .ok
        case .origin(let text):
            origin = text
            return .ok
        case .rpId(let id):
            rpId = id
            return .ok
        case .wait(let ms):
            guard let session else {
                guard ms <= VirtualClock.end - clock.now else { throw fail(line, "the clock would pass the end of the year 9999") }
                clock.advance(by: ms)
                return .ok
            }
            do { try session.clock(.advance(milliseconds: ms)) } catch { throw fail(line, error.message) }
            return .ok
        case .addDevice(let name, let pin, let attempts, let approver, let profile):
            return try addDevice(name, pin: pin, attempts: attempts, approver: approver, profile: profile, line: line)
        case .changeDevice(let name, let change):
            return try changeDevice(name, change, line: line)
        case .delays(let device, let upload, let download):
            return outcome { () throws(SessionError) in try requireSession().setDelays(upload: upload, download: download, device: device) }
        case .backupState(let immediate):
            return outcome { () throws(SessionError) in try requireSession().setSyncOptions(backupStateImmediate: immediate) }
        case .syncStatus(let device):
            return try syncStatus(device, line: line)
        case .deviceList:
            return try deviceList(line: line)
        case .syncEvents(let on):
            syncWatch = on ? SyncWatch() : nil
            return .ok
        case .register(let name, let ceremony):
            return try register(on: name, ceremony, line: line)
        case .sign(let name, let ceremony):
            return try sign(on: name, ceremony, line: line)
        case .delete(let name, let label):
            guard let id = labels[label] else { throw fail(line, "no passkey labelled '\(EchoedInput.text(label))' was registered") }
            let session = try session(for: name, line: line)
            return outcome { () throws(SessionError) in try session.delete(device: name, credentialId: id) }
        case .holds(let name):
            let session = try session(for: name, line: line)
            do {
                // What the device offers: a passkey the RP's signal hid is not.
                let all = try session.passkeys(device: name)
                let held = all.filter { !$0.hidden }.map { label(of: $0.id) }
                var outcome = Outcome(name: held.isEmpty ? "none" : held.joined(separator: ","), isList: true)
                // As `list` shows them, hidden ones too; made only for a run that reports answers
                // (a dense day's hourly listings of 1,000 passkeys spent half its time on reports
                // it then dropped: docs/benchmarks.md, "The dense day").
                if options.answers { outcome.answer = .report(PasskeyListReport(all)) }
                return outcome
            } catch { return Outcome(error) }
        case .show(let name, let label):
            guard let id = labels[label] else { throw fail(line, "no passkey labelled '\(EchoedInput.text(label))' was registered") }
            let session = try session(for: name, line: line)
            do { return Outcome(answer: PasskeyReport(try session.passkey(device: name, id: id))) } catch { return Outcome(error) }
        case .capabilities(let name):
            let session = try session(for: name, line: line)
            do { return Outcome(answer: CapabilitiesReport(try session.capabilities(device: name))) } catch { return Outcome(error) }
        case .http(let method, let url, let body):
            return try send(method, url, body, line: line)
        case .signal(let name, let signal):
            return try self.signal(on: name, signal, line: line)
        case .autofill(let name, let step):
            return try autofill(on: name, step, line: line)
        }
    }

    /// A conditional sign-in begun on a device, held across steps until the person acts on its
    /// list (or its timeout passes on the virtual clock, or the next one on the device takes it).
    private func autofill(on name: String, _ step: AutofillStep, line: ScenarioLine) throws(ScenarioError) -> Outcome {
        let session = try session(for: name, line: line)
        if case .begin(let c) = step {
            let request = try signRequest(on: name, c, line: line)
            do {
                autofills[name] = try session.beginConditional(request)
                return .ok
            } catch {
                answered(line, .failure(error))
                return Outcome(error)
            }
        }
        guard let pending = autofills[name] else { throw fail(line, "no conditional sign-in was begun on \(EchoedInput.text(name)): '\(EchoedInput.text(name)) autofill begin' first") }
        switch step {
        case .begin:
            return .ok
        case .offers:
            // What the list shows, by label, as `holds` lists them.
            do {
                let offered = try pending.offered().map { label(of: $0.id) }
                return Outcome(name: offered.isEmpty ? "none" : offered.joined(separator: ","), isList: true)
            } catch { return Outcome(error) }
        case .pick(let label):
            guard let id = labels[label] else { throw fail(line, "no passkey labelled '\(EchoedInput.text(label))' was registered") }
            do {
                let response = try pending.pick(AccountChoice(credentialId: id))
                answered(line, .success(response.json))
                lastResponse = response.json
                return Outcome(ceremony: response, credential: self.label(of: response.credential.id))
            } catch {
                answered(line, .failure(error))
                return Outcome(error)
            }
        case .dismiss:
            // Pending until its timeout: the clock moves to it, and the call ends timedOut.
            do { try pending.dismiss() } catch { return Outcome(error) }
            let ended = pending.waitOut()
            answered(line, .failure(ended))
            return Outcome(ended)
        }
    }

    /// The options a page would pass to the signal method, built from the scenario's RP, origin
    /// and labels; the outcome names the passkeys it removed, hid, restored or updated.
    private func signal(on name: String, _ signal: SignalStep, line: ScenarioLine) throws(ScenarioError) -> Outcome {
        let session = try session(for: name, line: line)
        let rp = rpId ?? ((try? Origin(parsing: origin).host) ?? "example.com")
        let kind: Signal.Kind
        let options: [String: Any]
        switch signal {
        case .unknown(let label):
            guard let id = labels[label] else { throw fail(line, "no passkey labelled '\(EchoedInput.text(label))' was registered") }
            kind = .unknownCredential
            options = ["rpId": rp, "credentialId": Base64URL.encode(id)]
        case .accepted(let user, let accepted):
            kind = .allAcceptedCredentials
            options = ["rpId": rp, "userId": Base64URL.encode(Array(user.utf8)), "allAcceptedCredentialIds": try ids(accepted, line: line)]
        case .details(let user, let userName, let displayName):
            kind = .currentUserDetails
            options = ["rpId": rp, "userId": Base64URL.encode(Array(user.utf8)), "name": userName, "displayName": displayName]
        }
        do {
            let effect = try session.signal(device: name, kind, optionsJSON: JSONText.bytes(options), origin: origin)
            var outcome = Outcome(answer: SignalReport(effect))
            for (key, list) in [("removed", effect.removed), ("hidden", effect.hidden), ("restored", effect.restored), ("updated", effect.updated)]
            where !list.isEmpty {
                outcome.fields.append((key, list.map { label(of: $0.id) }.joined(separator: ",")))
            }
            return outcome
        } catch { return Outcome(error) }
    }

    /// `sync status [device NAME]`: per device, its changes not landed yet (`uploads`) and what
    /// has landed, or will, that it has not received (`downloads`), each as `LABEL@TIME` — the
    /// time since the start at which it lands or arrives, `offline` while it waits for a device to
    /// be back — a removal as `-LABEL@TIME`; and whether the account store is in use (`store`).
    private func syncStatus(_ only: String?, line: ScenarioLine) throws(ScenarioError) -> Outcome {
        let session = try requireAccount(line)
        if let only { try requireDevice(only, line: line) }
        let status: SyncStatus
        do { status = try session.syncStatus() } catch { return Outcome(error) }
        var outcome = Outcome(answer: status)
        func list(_ transfers: [SyncStatus.Transfer]) -> String {
            guard !transfers.isEmpty else { return "none" }
            return transfers.map { t in
                let id = Base64URL.decode(t.credentialId).map(label(of:)) ?? t.credentialId
                let when = t.at.map { DelayRange.text(milliseconds: $0 >= Self.epoch ? $0 - Self.epoch : 0) } ?? "offline"
                return (t.removal ? "-" : "") + id + "@" + when
            }.joined(separator: ",")
        }
        for device in status.devices where only == nil || device.name == only {
            let prefix = only == nil ? device.name + "." : ""
            outcome.fields += [(prefix + "uploads", list(device.pendingUploads)), (prefix + "downloads", list(device.pendingDownloads))]
        }
        outcome.fields.append(("store", status.storeProblem == nil ? "ok" : "problem"))
        if let problem = status.storeProblem { outcome.details.append(("storeProblem", problem)) }
        return outcome
    }

    /// `device list`: how many passkeys each device holds (`NAME.passkeys`); the JSON report is
    /// `authctl device list --json`'s.
    private func deviceList(line: ScenarioLine) throws(ScenarioError) -> Outcome {
        let session = try requireAccount(line)
        let devices: [DeviceReport]
        do { devices = try session.deviceReports() } catch { return Outcome(error) }
        var outcome = Outcome(answer: DeviceListReport(devices))
        outcome.fields = devices.map { ($0.name + ".passkeys", $0.passkeys.map(String.init) ?? "-") }
        return outcome
    }

    /// The session, or the scenario's mistake in the request layer's words (for `outcome`).
    private func requireSession() throws(SessionError) -> Session {
        guard let session else { throw SessionError(.badInput, "no device yet: a scenario starts with 'device add NAME'") }
        return session
    }

    private func outcome(_ body: () throws(SessionError) -> Void) -> Outcome {
        do {
            try body()
            return .ok
        } catch { return Outcome(error) }
    }

    /// Device `name`'s biometry, once it is known to be one of the account's.
    @discardableResult
    private func requireDevice(_ name: String, line: ScenarioLine) throws(ScenarioError) -> BiometryStatus {
        let session = try requireAccount(line)
        do { return try session.biometry(device: name) } catch { throw fail(line, error.message) }
    }

    func label(of id: [UInt8]) -> String {
        labelOf[PasskeyId(id)] ?? Base64URL.encode(id)
    }

    private func secret(_ text: String) -> SecureBytes {
        var bytes = Array(text.utf8)
        return SecureBytes(consuming: &bytes)
    }

    private func addDevice(_ name: String, pin: String?, attempts: UInt32?, approver: String?, profile: String?,
                           line: ScenarioLine) throws(ScenarioError) -> Outcome {
        guard let session else {
            guard approver == nil else { throw fail(line, "the first device makes the account: no device approves it, so approve-with would be dropped") }
            do throws(SessionError) {
                madeVault = true  // from here on, whatever is at the path is this run's (the workspace was empty)
                // A throw-away vault, this run's alone, deleted after it.
                let spec = AccountSpec(path: directory + "/vault", passphrase: secret("scenario"), kdf: .min,
                                       devices: [AccountSpec.DeviceSpec(name: name, pin: pin.map(secret),
                                                                        maxPINAttempts: attempts ?? Device.defaultMaxPINAttempts)],
                                       profile: profile, keeping: .throwAway(storeInMemory: true), clock: clock, seed: seed)
                let session = try Session.create(spec, people: people)
                self.session = session
                people[name] = pin
                return Outcome(answer: try session.deviceReport(name))
            } catch { return Outcome(error) }
        }
        do {
            try session.addDevice(name, pin: pin.map(secret), maxPINAttempts: attempts ?? Device.defaultMaxPINAttempts,
                                  approvedBy: approver, profile: profile)
            people[name] = pin
            return Outcome(answer: try session.deviceReport(name))
        } catch { return Outcome(error) }
    }

    private func changeDevice(_ name: String, _ change: Step.DeviceChange, line: ScenarioLine) throws(ScenarioError) -> Outcome {
        let session = try requireAccount(line)
        if case .pin(_, let approverName, let former) = change {
            // Refused rather than dropped: what the device's state leaves no use for.
            let enrolled = try requireDevice(name, line: line).enrolled
            if former != nil, enrolled || formerPins[name] == nil {
                throw fail(line, "\(name) has no former PIN to type: 'former' is for a device reset while it had a PIN, before a new one")
            }
            if approverName != nil, enrolled {
                throw fail(line, "\(name) has a PIN, which authorises the new one: approve-with would be dropped")
            }
        }
        do {
            switch change {
            case .offline: try session.change(.offline, device: name)
            case .online: try session.change(.online, device: name)
            case .reset:
                try session.change(.reset, device: name)
                // A second reset before a new PIN keeps the former one, as the device does.
                if let pin = people[name] { formerPins[name] = pin }
                people[name] = nil
            case .remove:
                try session.change(.remove, device: name)
                people[name] = nil
            case .unlock: try session.change(.unlockBiometry, device: name)
            case .unsupported: try session.change(.passkeysSupported(false), device: name)
            case .supported: try session.change(.passkeysSupported(true), device: name)
            case .pin(let pin, let approverName, let typed):
                var current = PersonRequest()
                if people[name] == nil, let former = typed ?? formerPins[name], approverName == nil {
                    current.pin = former  // a reset device recovers with its former PIN
                }
                try session.enrollPIN(secret(pin), device: name, person: current, approvedBy: approverName)
                people[name] = pin
                formerPins[name] = nil
            }
            // The device as it is after the change (a removed one has nothing to show).
            if case .remove = change { return .ok }
            return Outcome(answer: try session.deviceReport(name))
        } catch { return Outcome(error) }
    }

    // MARK: - Ceremonies

    /// Options given whole; `nil` when the step builds them.
    private func options(_ source: Step.OptionsSource?, line: ScenarioLine) throws(ScenarioError) -> [UInt8]? {
        switch source {
        case nil:
            return nil
        case .file(let name):
            // At most what `--options FILE` reads, never more held in memory; opened without
            // waiting, so that a FIFO no program writes to reads as empty instead of hanging the
            // run (what a writer has put in it is read, as at the command line).
            let fd = open(path(relativeToScenario: name), O_RDONLY | O_CLOEXEC | O_NONBLOCK)
            guard fd >= 0 else { throw fail(line, "cannot read options file \(EchoedInput.path(name)): \(String(cString: strerror(errno)))") }
            defer { close(fd) }
            do { return try OptionsReader.readAll(fd, name: "options file \(EchoedInput.path(name))") } catch {
                throw fail(line, error.message)
            }
        case .reply(let path):
            guard let reply = lastReply else { throw fail(line, "'options reply' needs an http step before it") }
            guard let member = JSONText.member(reply, path) else {
                throw fail(line, "the last reply has no \(path.isEmpty ? "JSON" : "member " + path.joined(separator: "."))")
            }
            return member
        case .inline(let json):
            return Array(json.utf8)
        }
    }

    /// A path a scenario names, relative to the scenario file's folder (the current directory
    /// for `rel.scn`, which has none in its name, and for `-`); an absolute one as it is. Cut at
    /// the last "/" by hand: Foundation's `deletingLastPathComponent` traps on a one-character
    /// name (`scenario run a`).
    func path(relativeToScenario name: String) -> String {
        guard !name.hasPrefix("/"), let slash = file.lastIndex(of: "/") else { return name }
        return String(file[...slash]) + name
    }

    /// The caller's context a ceremony line asks for: the scenario's origin, and its mediation,
    /// top-level origin and password sign-in.
    private func caller(_ c: Step.Ceremony) -> CallerContext {
        CallerContext(origin: origin, topOrigin: c.topOrigin, mediation: c.mediation.flatMap(Mediation.init(rawValue:)) ?? .optional,
                      recentPasswordSignIn: c.recentPasswordSignIn)
    }

    private func passkeyIds(_ labels: [String], line: ScenarioLine) throws(ScenarioError) -> [[UInt8]] {
        var out = [[UInt8]]()
        for label in labels {
            guard let id = self.labels[label] else { throw fail(line, "no passkey labelled '\(EchoedInput.text(label))' was registered") }
            out.append(id)
        }
        return out
    }

    private func ids(_ labels: [String], line: ScenarioLine) throws(ScenarioError) -> [String] {
        try passkeyIds(labels, line: line).map { Base64URL.encode($0) }
    }

    /// The person a ceremony line describes: its action and PIN, and the account it picks.
    private func person(_ c: Step.Ceremony, account: AccountChoice = .newest) -> PersonRequest {
        PersonRequest(action: c.action, account: account, pin: c.pin)
    }

    private func register(on name: String, _ c: Step.Ceremony, line: ScenarioLine) throws(ScenarioError) -> Outcome {
        // Hybrid: `via` makes the passkey (its PIN, its store) for NAME's page; both must exist.
        let session = try session(for: name, line: line)
        if let via = c.via { try requireDevice(via, line: line) }
        let user = c.user ?? "user"
        let options: OptionsSource<CreationOptionsBuilder>
        if let given = try self.options(c.options, line: line) {
            options = .json(given)
        } else {
            options = .built(CreationOptionsBuilder(
                rpId: rpId ?? ((try? Origin(parsing: origin).host) ?? "example.com"), rpName: "Scenario RP", userId: Array(user.utf8),
                userName: user, displayName: c.displayName,
                algorithms: [c.algorithm.flatMap(COSEAlgorithm.init(name:))?.rawValue ?? COSEAlgorithm.es256.rawValue],
                attestation: c.attestation ?? "none", userVerification: c.userVerification ?? "preferred",
                exclude: try passkeyIds(c.exclude, line: line), timeout: c.timeout, credProps: false))
        }
        let request = RegisterRequest(
            device: name, via: c.via, caller: caller(c), options: options, person: person(c),
            passkey: PasskeySettings(deviceBound: c.deviceBound, signatureCounter: c.signCounter, profile: c.profile,
                                     counter: c.counter.flatMap(SignCounter.init(rawValue:))),
            fault: try fault(c.fault, line: line))
        do {
            let response = try session.register(request)
            answered(line, .success(response.json))
            lastResponse = response.json
            if request.fault == nil { setLabel(c.label ?? c.user ?? response.credential.userName, response.credential.id) }
            var outcome = Outcome(ceremony: response, credential: label(of: response.credential.id))
            outcome.details += [("alg", response.credential.publicKey.algorithm.name.lowercased()),
                                ("aaguid", AuthenticatorProfile.formatAAGUID(response.credential.aaguid)),
                                ("profile", response.credential.profile)]
            // What the browser accepted but the RP should fix (an empty challenge, …): in the JSON report.
            if !response.warnings.isEmpty { outcome.details.append(("warnings", response.warnings.joined(separator: "; "))) }
            return outcome
        } catch {
            answered(line, .failure(error))
            return Outcome(error)
        }
    }

    private func sign(on name: String, _ c: Step.Ceremony, line: ScenarioLine) throws(ScenarioError) -> Outcome {
        let session = try session(for: name, line: line)
        let request = try signRequest(on: name, c, line: line)
        do {
            let response = try session.sign(request)
            answered(line, .success(response.json))
            lastResponse = response.json
            var outcome = Outcome(ceremony: response, credential: label(of: response.credential.id))
            if !response.warnings.isEmpty { outcome.details.append(("warnings", response.warnings.joined(separator: "; "))) }
            return outcome
        } catch {
            answered(line, .failure(error))
            return Outcome(error)
        }
    }

    /// The sign-in a `sign` (or `autofill begin`) line on `name` asks for.
    private func signRequest(on name: String, _ c: Step.Ceremony, line: ScenarioLine) throws(ScenarioError) -> SignRequest {
        // Hybrid: `via` signs for NAME's page; both must exist.
        if let via = c.via { try requireDevice(via, line: line) }
        let allowed = try passkeyIds(c.allow, line: line)
        var choice = AccountChoice(user: c.user)
        if let label = c.credential {
            guard let id = labels[label] else { throw fail(line, "no passkey labelled '\(EchoedInput.text(label))' was registered") }
            choice.credentialId = id
        }
        let options: OptionsSource<RequestOptionsBuilder>
        if let given = try self.options(c.options, line: line) {
            options = .json(given)
        } else {
            options = .built(RequestOptionsBuilder(rpId: rpId, userVerification: c.userVerification ?? "preferred", allow: allowed,
                                                   timeout: c.timeout))
        }
        return SignRequest(device: name, via: c.via, caller: caller(c), options: options, person: person(c, account: choice),
                           fault: try fault(c.fault, line: line))
    }

    private func fault(_ name: String?, line: ScenarioLine) throws(ScenarioError) -> Fault? {
        guard let name else { return nil }
        guard let fault = Fault(rawValue: name) else { throw fail(line, "unknown fault '\(EchoedInput.text(name))' (see 'authctl faults')") }
        return fault
    }

    // MARK: - HTTP

    /// The most a request's body may be once `$response` is replaced: as much as a reply may be.
    static let bodyLimit = HTTPClient.replyLimit

    private func send(_ method: String, _ url: String, _ body: String?, line: ScenarioLine) throws(ScenarioError) -> Outcome {
        var payload: [UInt8]? = nil
        if var text = body {
            if text.contains("$response") {
                guard let response = lastResponse else { throw fail(line, "'$response' needs a register or sign step before it") }
                // Measured before it is copied: a body of many `$response`s (a 1 MiB body holds
                // over 100,000) would otherwise grow to gigabytes in memory.
                let copies = text.utf8.count - text.replacingOccurrences("$response", "").utf8.count
                let size = text.utf8.count + copies / "$response".utf8.count * (response.utf8.count - "$response".utf8.count)
                guard size <= Self.bodyLimit else {
                    throw fail(line, "with $response replaced, the body would be larger than \(Self.bodyLimit >> 20) MiB")
                }
                text = text.replacingOccurrences("$response", response)
            }
            guard (try? JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed])) != nil else {
                throw fail(line, "the body is not JSON")
            }
            payload = Array(text.utf8)
        }
        do {
            if http == nil { http = try HTTPClient() }
            let response = try http!.send(method: method, url: url, body: payload)
            lastReply = response.body
            return Outcome(status: response.status)
        } catch {
            // libcurl's words name the request; the URL is the scenario's, echoed cut.
            throw fail(line, error.reason == error.message ? error.message : "\(method) \(EchoedInput.text(url)): \(error.reason)")
        }
    }
}
