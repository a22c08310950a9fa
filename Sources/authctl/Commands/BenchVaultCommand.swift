import Benchmarks
import Glibc
import Session

/// `authctl bench vault`: what the commands cost as the vault grows, with one device or several
/// (`VaultBenchmark` measures; this parses, catches signals and prints).
enum BenchVaultCommand {
    static let sizes = OptionSpec.value("--sizes", "N,N,...", "vault sizes in passkeys (default 10,1000,100000)")
    static let devices = OptionSpec.value(
        "--devices", "N,N,...",
        "devices of the account, a vault per count (1-20, default 1): the passkeys are made on d0, everything timed runs on d1")
    static let bigRP = OptionSpec.flag("--big-rp", "every passkey on the one RP that is signed with (target.example), not spread over 1,000 RPs")
    static let measure = OptionSpec.value(
        "--measure", "WHAT", "library (in-process), commands (authctl as processes) or both (default)",
        choices: ["both", "library", "commands"])
    static let runs = OptionSpec.value("--runs", "N", "runs per size; the median is shown (1-1000, default 7)")
    static let directory = OptionSpec.value("--dir", "DIR", "where the throw-away vaults go (default /tmp)", completion: .directories)
    static let keep = OptionSpec.value(
        "--keep", "DIR", "leave the largest vault at DIR (a new path on the same file system as --dir), to time 'authctl sign' against it",
        completion: .directories)

    static let spec = CommandSpec(
        name: "vault", abstract: "time open, register and sign, and the commands as processes, at several vault sizes",
        discussion: "Each vault holds real P-256 passkeys made on device d0 at the cheapest KDF level; with --devices above 1 the "
            + "account has that many devices and everything timed runs on d1, so each command goes through sync. Each run "
            + "registers a new user and deletes a different passkey, so every size needs more passkeys than runs.",
        options: [sizes, devices, bigRP, measure, runs, directory, keep],
        examples: [".build/release/authctl bench vault --sizes 10,1000,100000 --runs 7",
                   ".build/release/authctl bench vault --sizes 10,100000 --devices 1,2,5 --measure commands --runs 5",
                   ".build/release/authctl --json bench vault --sizes 10,100,1000,10000,100000 > vault.json; python3 scripts/bench_chart.py vault.json > latency.svg"],
        run: run)

    static func list(_ text: String, _ option: OptionSpec, in range: ClosedRange<Int>, example: String) throws(CLIError) -> [Int] {
        var out = [Int]()
        for item in text.split(separator: ",", omittingEmptySubsequences: false) {
            guard let n = Int(item), range.contains(n) else {
                throw CLIError(.usage, "\(option.name) takes whole numbers from \(range.lowerBound) to \(range.upperBound), like \(example)")
            }
            out.append(n)
        }
        return out
    }

    static func run(_ args: ParsedArguments) throws(CLIError) {
        let counts = try list(args.value(sizes) ?? "10,1000,100000", sizes, in: 1...10_000_000, example: "10,1000,100000")
        let deviceCounts = try list(args.value(devices) ?? "1", devices, in: 1...20, example: "1,2,5")
        let runCount = try args.integer(runs, in: 1...1000) ?? 7
        let what = args.value(measure) ?? "both"
        if let small = counts.min(), small <= runCount {
            throw CLIError(.usage, "every size needs more passkeys than --runs (\(runCount)): each run deletes a different one; \(small) is too small")
        }
        let dir = args.value(directory) ?? "/tmp"
        var st = stat()
        guard stat(dir, &st) == 0, (st.st_mode & S_IFMT) == S_IFDIR else { throw CLIError(.usage, "--dir \(EchoedInput.path(dir)) is not a directory") }
        let kept = args.value(keep)
        if let kept, access(kept, F_OK) == 0 { throw CLIError(.usage, "--keep \(EchoedInput.path(kept)) exists; name a new path") }
        let plan = VaultBenchmark.Plan(runs: runCount, bigRP: args.flag(bigRP), library: what != "commands", commands: what != "library",
                                       directory: dir, executable: try TimedProcess.ownExecutable(),
                                       safePoints: .interruption, notice: { Output.diagnostic($0) })

        // Interrupted (Ctrl-C, SIGTERM, a hang-up), it stops the command it is timing, removes the
        // vault it is building or timing, and ends as canceled: never a signal death that leaves
        // a throw-away vault (gigabytes of one, at the largest sizes) in --dir.
        Interruption.onSignal(json: args.flag(GlobalOptions.json), done: "its throw-away vault was removed",
                              stop: { TimedProcess.stopRunning() }) { VaultBenchmark.removeCurrentScratch() }
        defer { Interruption.parkIfUnderway() }

        // Everything is measured before anything is printed: a failure leaves stdout empty.
        let rows = try VaultBenchmark.run(sizes: counts, devices: deviceCounts, plan: plan, keep: kept)
        if args.flag(GlobalOptions.json) {
            try Output.data(JSONOutput.string(VaultBenchmark.Report(plan: plan, rows: rows)))
            return
        }
        for line in VaultBenchmark.textReport(rows, plan: plan) { try Output.data(line) }
    }
}
