import Benchmarks
import Session

/// `authctl bench ceremonies`: rates of register and sign, JSON in to JSON out
/// (`CeremonyBenchmark` measures; this parses and prints).
enum BenchCeremoniesCommand {
    static let seconds = OptionSpec.value("--seconds", "S", "how long each case runs (0.1-600, default 2)")

    static let only = OptionSpec.value("--only", "CASE", "run only this case, without the crypto baselines (for a profiler): " + CeremonyBenchmark.cases.joined(separator: ", "),
                                       choices: CeremonyBenchmark.cases)

    static let spec = CommandSpec(
        name: "ceremonies", abstract: "rates of register and sign, JSON in to JSON out, in memory and through a vault",
        discussion: "Build with -c release. One core; figures are rates per second and the share of each case's time the crypto alone takes (key generation for a registration, the signature for a sign-in). --only runs one case alone, for `perf record`; it has no crypto share.",
        options: [seconds, only],
        examples: [".build/release/authctl bench ceremonies --seconds 3", ".build/release/authctl --json bench ceremonies"],
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
        let report = try CeremonyBenchmark.run(seconds: duration, only: args.value(only))
        if args.flag(GlobalOptions.json) {
            try Output.data(JSONOutput.string(report))
            return
        }
        var lines = [String]()
        if let signRate = report.opensslSignsPerSecond, let keygenRate = report.keyGenerationsPerSecond {
            lines += ["P-256 signatures (OpenSSL, in-process): \(Int(signRate))/s; key generations: \(Int(keygenRate))/s", ""]
        }
        lines += TextTable.lines([["CEREMONY", "STORE", "PER SECOND", "CRYPTO SHARE"]] + report.rows.map {
            [$0.ceremony, $0.store, String(Int($0.perSecond)), $0.cryptoShare.map { VaultBenchmark.format($0, 2) } ?? "-"]
        })
        for line in lines { try Output.data(line) }
    }
}
