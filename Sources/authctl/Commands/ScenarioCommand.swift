/// `authctl scenario run FILE`: scripted timelines on a virtual clock (ScenarioRunCommand.swift).
enum ScenarioCommand {
    static let spec = CommandSpec(
        name: "scenario", abstract: "run a scripted scenario of devices, sync and an RP on a virtual clock",
        subcommands: [ScenarioRunCommand.spec])
}
