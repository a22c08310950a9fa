/// `authctl bench vault | ceremonies | command`: benchmarks, not tests (one file each).
enum BenchCommand {
    static let spec = CommandSpec(
        name: "bench", abstract: "benchmarks (build with -c release)", subcommands: [BenchVaultCommand.spec, BenchCeremoniesCommand.spec, BenchCommandCommand.spec, BenchJoinCommand.spec])
}
