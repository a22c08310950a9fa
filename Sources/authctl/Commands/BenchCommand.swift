/// `authctl bench vault | ceremonies`: benchmarks, not tests (one file each).
enum BenchCommand {
    static let spec = CommandSpec(
        name: "bench", abstract: "benchmarks (build with -c release)", subcommands: [BenchVaultCommand.spec, BenchCeremoniesCommand.spec])
}
