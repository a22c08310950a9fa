import Benchmarks
import Glibc
import Session

/// `authctl bench command -- ARGS...`: `authctl ARGS` run as a process and timed from outside
/// (`CommandBenchmark` measures; this parses, catches signals and prints).
enum BenchCommandCommand {
    static let runs = OptionSpec.value("--runs", "N", "how many times to run it (1-1000, default 10)")

    static let spec = CommandSpec(
        name: "command", abstract: "run an authctl command as a process and print its time and peak memory",
        discussion: "Runs this same binary with ARGS (after '--') --runs times, one after the other, with the environment as it is, "
            + "stdin and stdout /dev/null; prints the median and 90th-percentile wall time, the median CPU time and the largest "
            + "peak resident memory. A run that fails stops it (unknown, with the command's message).",
        options: [runs],
        arguments: [ArgumentSpec(name: "ARGS", help: "the command and its arguments, after '--'", variadic: true)],
        examples: ["AUTHCTL_PASSPHRASE=bench authctl bench command --runs 30 -- --vault /tmp/kept sign --origin https://target.example",
                   "authctl --json bench command --runs 5 -- list"],
        run: run)

    static func run(_ args: ParsedArguments) throws(CLIError) {
        let arguments = args.positionals
        guard !arguments.isEmpty else { throw CLIError(.usage, "authctl bench command needs the command to run, after '--'") }
        let count = try args.integer(runs, in: 1...1000) ?? 10
        let executable = try TimedProcess.ownExecutable()
        // Interrupted (Ctrl-C, SIGTERM, a hang-up), it stops the command it is running (which,
        // another bench command or a scenario, cleans up after itself) and leaves no scratch
        // directory behind: canceled, never a signal death with a command still running. A signal
        // that comes while the directory is being made waits until it is caught.
        Interruption.holdSignals()
        let scratch: String
        do { scratch = try CommandBenchmark.makeScratch() } catch {
            Interruption.resumeSignals()
            throw error
        }
        defer { rmdir(scratch) }
        Interruption.onSignal(json: args.flag(GlobalOptions.json), done: "the command it ran was stopped",
                              stop: { TimedProcess.stopRunning() }) { TimedProcess.removeScratch(scratch) }
        Interruption.resumeSignals()
        defer { Interruption.parkIfUnderway() }
        let report = try CommandBenchmark.run(executable, arguments, runs: count, scratch: scratch, safePoints: .interruption)
        if args.flag(GlobalOptions.json) {
            try Output.data(JSONOutput.string(report))
            return
        }
        try Output.data(CommandBenchmark.text(report, arguments: arguments))
    }
}
