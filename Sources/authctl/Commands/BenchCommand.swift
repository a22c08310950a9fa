/// `authctl bench vault`: a benchmark, not a test (BenchVaultCommand.swift).
enum BenchCommand {
    static let spec = CommandSpec(
        name: "bench", abstract: "benchmarks (build with -c release)", subcommands: [BenchVaultCommand.spec])
}
