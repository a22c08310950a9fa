import Session

/// `--new-pin-file FILE`, for `biometry enroll` and `device add`: the PIN being enrolled.
enum NewPINOption {
    static let spec = OptionSpec.value(
        "--new-pin-file", "FILE", "read the new PIN from FILE (default $AUTHCTL_NEW_PIN, else a prompt)", completion: .files)

    static func read(_ args: ParsedArguments) throws(CLIError) -> SecureBytes {
        try SecretSource.read(.newPIN, file: args.value(spec), fileOption: spec.name)
    }
}
