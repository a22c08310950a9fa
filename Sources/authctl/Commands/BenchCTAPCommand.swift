import Benchmarks
import Session

/// `authctl bench ctap`: a security key's GetAssertion round trips per second, in process and
/// over its two transports (`CTAPBenchmark` measures; this parses and prints).
enum BenchCTAPCommand {
    static let seconds = OptionSpec.value("--seconds", "S", "how long each path runs (0.1-600, default 2)")

    static let spec = CommandSpec(
        name: "ctap", abstract: "a security key's GetAssertion round trips per second: in process, over UDP, over a Unix socket",
        discussion: "Build with -c release. A throw-away key of the security-key profile signs with one credential its allow list names, the person touching at once; each path runs in turn, one request at a time, and its rate is given against the in-process one of the same run.",
        options: [seconds],
        examples: [".build/release/authctl bench ctap --seconds 3", ".build/release/authctl --json bench ctap"],
        run: run)

    static func run(_ args: ParsedArguments) throws(CLIError) {
        let duration: Double
        if let text = args.value(seconds) {
            guard let value = Double(text), (0.1...600).contains(value) else { throw CLIError(.usage, "--seconds takes a number from 0.1 to 600") }
            duration = value
        } else {
            duration = 2
        }
        try Output.requireStdout()
        let report = try CTAPBenchmark.run(seconds: duration)
        if args.flag(GlobalOptions.json) {
            try Output.data(JSONOutput.string(report))
            return
        }
        let lines = TextTable.lines([["PATH", "PER SECOND", "AGAINST IN PROCESS"]] + report.rows.map {
            [$0.path, String(Int($0.perSecond)), VaultBenchmark.format($0.ratio, 3)]
        })
        for line in lines { try Output.data(line) }
    }
}
