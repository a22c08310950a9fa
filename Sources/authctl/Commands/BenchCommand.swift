import Benchmarks

/// `authctl bench vault | ceremonies | command`: benchmarks, not tests (one file each).
enum BenchCommand {
    static let spec = CommandSpec(
        name: "bench", abstract: "benchmarks (build with -c release)", subcommands: [BenchVaultCommand.spec, BenchCeremoniesCommand.spec, BenchCommandCommand.spec, BenchJoinCommand.spec, BenchCTAPCommand.spec])
}

extension SafePoints {
    /// A benchmark that `Interruption` stops: at its checkpoints once a signal has come, with the
    /// signals held back while it makes what the clean-up removes.
    static let interruption = SafePoints(checkpoint: { Interruption.parkIfUnderway() }, hold: { Interruption.holdSignals() },
                                         resume: { Interruption.resumeSignals() })
}
