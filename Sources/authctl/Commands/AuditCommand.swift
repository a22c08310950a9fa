import Audit
import Foundation
import Session

/// `authctl audit URL`: drives the RP at URL through its own registration and sign-in with every
/// case of the battery and reports what it wrongly accepts (docs/audit.md).
enum AuditCommand {
    static let preset = OptionSpec.value("--preset", "NAME", "the RP's shape, built in (rp-server: docs/examples/rp_server.py; fido-conformance: the FIDO2 conformance test API; simplewebauthn-example: SimpleWebAuthn's example server, users named by ?username=)",
                                         choices: AuditProfile.presets.map(\.key))
    static let profile = OptionSpec.value("--profile", "FILE", "the RP's shape as a JSON profile (docs/audit.md, \"A profile for your RP\")")
    static let origin = OptionSpec.value("--origin", "URL", "the origin the RP's pages have, in place of the profile's")
    static let only = OptionSpec.value("--only", "CASES", "run only these cases or families (comma-separated)", repeatable: true)
    static let skip = OptionSpec.value("--skip", "CASES", "leave out these cases or families (comma-separated)", repeatable: true)
    static let rate = OptionSpec.value("--rate", "N", "at most N requests a second to the RP (default 50)")
    static let failOn = OptionSpec.value("--fail-on", "WHAT", "what makes the exit status auditFindings (default accepted)",
                                         choices: ["accepted", "server-error", "any"])
    static let junit = OptionSpec.value("--junit", "FILE", "also write the report as JUnit XML to FILE (replaced; never through a symbolic link)")
    static let html = OptionSpec.value("--html", "FILE", "also write the report as one self-contained HTML page to FILE (replaced; never through a symbolic link)")
    static let dryRun = OptionSpec.flag("--dry-run", "check the URL and profile and print every request the audit would send, in order, sending nothing")
    static let list = OptionSpec.flag("--list", "list the cases, their families and spec steps, and run nothing")

    static let spec = CommandSpec(
        name: "audit", abstract: "drive an RP's own endpoints with forged, replayed and downgraded responses",
        discussion: """
        First a baseline: a user made, a passkey registered and signed in with, each the RP's yes,
        or the audit stops (rpUnusable). Then each case changes one thing, re-signed with the real
        key, and probes what the RP kept. A case is rejected, ACCEPTED (a finding), a server error
        (a finding), or inconclusive (with why). Only URL is reached, no redirect is followed, and
        requests are paced. See docs/audit.md.
        """,
        options: [preset, profile, origin, only, skip, rate, failOn, junit, html, dryRun, list],
        arguments: [ArgumentSpec(name: "URL", help: "the RP, as http(s)://host:port", optional: true)],
        examples: ["authctl audit --preset rp-server http://127.0.0.1:8765", "authctl --json audit --profile my-rp.json --only replay https://rp.test"],
        run: run)

    static func run(_ args: ParsedArguments) throws(CLIError) {
        if args.flag(list) {
            if args.flag(GlobalOptions.json) { return try Output.data(JSONOutput.string(AuditCase.battery)) }
            let rows = AuditCase.battery.map { [$0.id, $0.family.rawValue, $0.spec, $0.check] }
            for line in TextTable.lines([["CASE", "FAMILY", "SPEC", "THE RP CHECKS"]] + rows) { try Output.data(line) }
            return
        }
        guard let url = args.argument(0) else { throw CLIError(.usage, "audit needs the RP's URL (or --list)") }
        var shape: AuditProfile
        switch (args.value(preset), args.value(profile)) {
        case (let name?, nil): shape = AuditProfile.presets.first { $0.key == name }!.value
        case (nil, let file?):
            do { shape = try AuditProfile(file: file) } catch { throw error.sessionError }
        default: throw CLIError(.usage, "audit takes one of --preset NAME and --profile FILE")
        }
        if let origin = args.value(origin) { shape.origin = origin }
        var options = AuditRunner.Options()
        options.only = Set(args.values(only).flatMap { $0.split(separator: ",").map(String.init) })
        options.skip = Set(args.values(skip).flatMap { $0.split(separator: ",").map(String.init) })
        if let text = args.value(rate) {
            guard let n = Int(text), (1...1000).contains(n) else { throw CLIError(.usage, "--rate takes a whole number from 1 to 1000") }
            options.rate = n
        }
        let json = args.flag(GlobalOptions.json)
        if args.flag(dryRun) {
            let plan: AuditPlan
            do { plan = try AuditPlan(base: url, profile: shape, options: options) } catch { throw error.sessionError }
            if json { return try Output.data(JSONOutput.string(plan)) }
            for line in plan.lines { try Output.data(TerminalText.escaped(line)) }
            return
        }
        if !json, isatty(STDERR_FILENO) == 1 {
            options.progress = { result, done, total in
                FileHandle.standardError.write(Data("\r\u{1B}[K[\(done)/\(total)] \(result.id): \(result.verdict.rawValue)".utf8))
                if done == total { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
            }
        }
        try Output.requireStdout()
        options.isCanceled = { Interruption.isUnderway }
        let report: AuditReport
        do throws(AuditError) {
            Interruption.holdSignals()
            let runner: AuditRunner
            do { runner = try AuditRunner(base: url, profile: shape, options: options) } catch {
                Interruption.resumeSignals()
                throw error
            }
            // Interrupted, the run stops at its next case and its throw-away vault goes with it.
            let workspace = runner.workspace
            Interruption.onSignal(json: json, done: "the audit's temporary vault was removed") {
                try? FileManager.default.removeItem(atPath: workspace)
            }
            Interruption.resumeSignals()
            defer { Interruption.parkIfUnderway() }
            report = try runner.run()
        } catch { throw error.sessionError }
        if let file = args.value(junit) { try save(report.junitXML, to: file, for: junit) }
        if let file = args.value(html) { try save(report.html, to: file, for: html) }
        if json {
            try Output.data(JSONOutput.string(report))
        } else {
            let rows = report.results.map { [$0.id, $0.verdict.rawValue, $0.spec, TerminalText.escaped(String($0.evidence.prefix(120)))] }
            for line in TextTable.lines([["CASE", "VERDICT", "SPEC", "EVIDENCE"]] + rows) { try Output.text(line) }
            let counts = report.counts.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", ")
            try Output.text("\(report.results.count) cases against \(report.target): \(counts)")
        }
        let failing: [AuditReport.Result] = switch args.value(failOn) ?? "accepted" {
        case "server-error": report.results.filter { $0.verdict == .serverError }
        case "any": report.findings
        default: report.results.filter { $0.verdict == .accepted }
        }
        if let first = failing.first {
            throw CLIError(.auditFindings, "\(failing.count) case\(failing.count == 1 ? "" : "s") found: \(first.id) \(first.verdict.rawValue) — \(first.evidence)")
        }
    }

    /// A report's other form into `file`: replaced, never through a symbolic link.
    private static func save(_ text: String, to file: String, for option: OptionSpec) throws(CLIError) {
        let fd = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw CLIError(.ioError, "\(option.name) \(EchoedInput.path(file)): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        let bytes = Array(text.utf8)
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + done, $0.count - done) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { throw CLIError(.ioError, "\(option.name) \(EchoedInput.path(file)): \(String(cString: strerror(errno)))") }
            done += n
        }
    }
}
