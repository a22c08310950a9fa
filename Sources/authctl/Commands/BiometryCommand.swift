/// `authctl biometry status | enroll | unlock`: the simulated Face ID.
enum BiometryCommand {
    static let spec = CommandSpec(
        name: "biometry", abstract: "the simulated biometric: status, enroll a PIN, unlock after lockout",
        subcommands: [BiometryStatusCommand.spec, BiometryEnrollCommand.spec, BiometryUnlockCommand.spec])
}
