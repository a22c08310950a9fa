import Foundation
import Keychain
import VirtualAuthenticator

/// The options `register` and `sign` share: where the call comes from, the options JSON, and what
/// the simulated user does.
enum CeremonyOptions {
    static let origin = OptionSpec.value(
        "--origin", "URL", "the calling page's origin: https://…, or http://localhost[:port]; a path is ignored", required: true)
    static let options = OptionSpec.value(
        "--options", "FILE", "the options JSON an RP server produced, from FILE or - (stdin)", completion: .files)
    static let userAction = OptionSpec.value(
        "--user-action", "ACTION", "what the simulated user does (default $AUTHCTL_USER_ACTION, else approve)",
        choices: UserAction.allCases.map(\.rawValue))
    static let instantTimeout = OptionSpec.flag(
        "--instant-timeout", "with --user-action timeout, fail at once instead of waiting (also AUTHCTL_INSTANT_TIMEOUT=1)")
    static let fault = OptionSpec.value(
        "--fault", "NAME", "make the response deliberately wrong in one named way (see 'authctl faults')",
        choices: Fault.allCases.map(\.rawValue))

    static let all = [origin, options, userAction, instantTimeout, fault]

    /// The simulated user: `--user-action` / `$AUTHCTL_USER_ACTION`, `--instant-timeout`, the PIN
    /// source of `vault`, and the account picked.
    static func user(_ args: ParsedArguments, vault: VaultSelection, account: AccountChoice = .newest) throws(CLIError) -> UserPolicy {
        let name = args.value(userAction) ?? environment("AUTHCTL_USER_ACTION") ?? UserAction.approve.rawValue
        guard let action = UserAction(rawValue: name) else {
            throw CLIError(.usage, "AUTHCTL_USER_ACTION must be one of \(UserAction.allCases.map(\.rawValue).joined(separator: ", ")), not '\(name)'")
        }
        let instant = args.flag(instantTimeout) || environment("AUTHCTL_INSTANT_TIMEOUT") == "1"
        return vault.user(action: action, account: account, instantTimeout: instant)
    }

    static func chosenFault(_ args: ParsedArguments) -> Fault? {
        args.value(fault).flatMap(Fault.init(rawValue:))
    }

    /// Said on stderr whenever a response is deliberately wrong, so no one mistakes it for a bug.
    static func announce(_ fault: Fault?) {
        guard let fault else { return }
        Output.diagnostic("authctl: fault injected: \(fault.rawValue): \(fault.summary)")
    }

    /// The options JSON from `--options FILE|-`, or `nil` when the flags build them.
    static func optionsJSON(_ args: ParsedArguments) throws(CLIError) -> [UInt8]? {
        guard let source = args.value(options) else { return nil }
        if source == "-" { return Array(FileHandle.standardInput.readDataToEndOfFile()) }
        guard let data = FileManager.default.contents(atPath: source) else {
            throw CLIError(.badInput, "cannot read options file \(source)")
        }
        return Array(data)
    }

    /// Options JSON the convenience flags describe: a JSON text of `object`.
    static func serialize(_ object: [String: Any]) -> [UInt8] {
        Array(try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]))
    }
}
