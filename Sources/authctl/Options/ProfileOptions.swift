import Session

/// `--profile NAME` and `--aaguid UUID`, declared once for `init`, `device add` and `register`.
enum ProfileOptions {
    static let profile = OptionSpec.value(
        "--profile", "NAME", "the authenticator to answer as (see 'authctl profiles')",
        choices: AuthenticatorProfile.all.map(\.name))
    static let aaguid = OptionSpec.value("--aaguid", "UUID", "an AAGUID instead of the profile's (8-4-4-4-12 hex)")

    static let all = [profile, aaguid]

    /// The AAGUID given, checked; `nil` when absent.
    static func aaguid(_ args: ParsedArguments) throws(CLIError) -> [UInt8]? {
        guard let text = args.value(aaguid) else { return nil }
        guard let bytes = AuthenticatorProfile.parseAAGUID(text) else {
            throw CLIError(.usage, "--aaguid must be a UUID like 6f0e1a4c-2b3d-4e5f-8a9b-0c1d2e3f4a5b, got '\(EchoedInput.text(text))'")
        }
        return bytes
    }
}
