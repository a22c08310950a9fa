import Glibc
import Scenarios
import Session

/// `authctl scenario run FILE`: prints the timeline (with `--json`, the report as JSON) and fails
/// with `scenarioFailed` at the first unmet expectation (every one with `--keep-going`).
enum ScenarioRunCommand {
    static let keepGoing = OptionSpec.flag("--keep-going", "report every unmet expectation, not only the first")
    static let answers = OptionSpec.flag(
        "--answers", "with --json: each step's answer as the command line and the server give it (a new key, a signature: not the same bytes each run)")

    static let spec = CommandSpec(
        name: "run", abstract: "run a scenario file and print its timeline",
        discussion: """
        The scenario runs on a throw-away vault in a temporary directory, on a virtual clock, with
        randomness seeded by its 'seed' step: the same file gives the same output, byte for byte.
        ${NAME} in the file is taken from the environment. See docs/scenarios.md.
        """,
        options: [keepGoing, answers],
        arguments: [ArgumentSpec(name: "FILE", help: "the scenario (docs/scenarios/*.scn are examples)")],
        examples: ["authctl scenario run docs/scenarios/factory-reset.scn", "authctl --json scenario run --keep-going my.scn"],
        run: run)

    static func run(_ args: ParsedArguments) throws(CLIError) {
        try Output.requireStdout()
        var options = ScenarioRunner.Options()
        options.keepGoing = args.flag(keepGoing)
        options.answers = args.flag(answers)
        let file = args.argument(0) ?? ""
        // A closed stdin was reopened on /dev/null: read, it would be an empty scenario that passes.
        if file == "-", Output.closedAtStart.contains(STDIN_FILENO) { throw CLIError(.badInput, "-: stdin is closed") }
        do { options.workspace = try ScenarioRunner.makeWorkspace(file: file) } catch { throw CLIError(error) }
        let workspace = options.workspace!
        defer { ScenarioRunner.removeWorkspace(workspace) }
        // Interrupted, the run stops at its next step and its temporary vault goes with it.
        Interruption.onSignal(json: args.flag(GlobalOptions.json)) { ScenarioRunner.removeWorkspace(workspace) }
        defer { Interruption.parkIfUnderway() }
        options.isCanceled = { Interruption.isUnderway }
        let report: ScenarioReport
        do { report = try ScenarioRunner.run(file: file, options: options) } catch { throw CLIError(error) }
        if args.flag(GlobalOptions.json) {
            try Output.data(JSONOutput.string(report))
        } else {
            for line in report.timelineLines { try Output.text(line) }  // escaped: RP-supplied names reach the terminal
        }
        guard report.passed else {
            // Every failure is in the JSON report; stderr then carries the one error object.
            if !args.flag(GlobalOptions.json) {
                for failure in report.failures.dropLast() { Output.diagnostic("authctl: \(failure)") }
            }
            throw CLIError(.scenarioFailed, report.failures.last!.description)
        }
    }
}
