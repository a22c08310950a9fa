import Foundation
import VirtualAuthenticator

typealias NSNullValue = NSNull

/// The top level is only the list of commands; each lives in its own file.
var args = Arguments(Array(CommandLine.arguments.dropFirst()))
let json = args.flag("--json")
let command = args.positional() ?? "help"
do {
    switch command {
    case "init": try InitCommand.run(&args)
    case "register": try RegisterCommand.run(&args)
    case "sign": try SignCommand.run(&args)
    case "list": try ListCommand.run(&args, json: json)
    case "delete": try DeleteCommand.run(&args)
    case "vault": try VaultCommand.run(&args, json: json)
    case "bench": try BenchCommand.run(&args)
    case "biometry": try BiometryCommand.run(&args, json: json)
    case "faults": FaultOption.list()
    case "help", "--help", "-h": HelpCommand.run()
    case "version", "--version": Output.data("authctl \(HelpCommand.version)")
    default: throw AuthenticatorError(.usage, "unknown command '\(command)' (see 'authctl help')")
    }
    exit(0)
} catch {
    exit(ErrorReport.emit(ErrorReport.vocabulary(error), json: json))
}
