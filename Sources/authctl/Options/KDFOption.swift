import Session

/// `--kdf LEVEL`, for `init` and `vault passwd`.
enum KDFOption {
    static let spec = OptionSpec.value(
        "--kdf", "LEVEL",
        "Argon2id cost: interactive (~64 MiB; init's default), moderate (256 MiB), sensitive (1 GiB), or min (insecure: test fixtures only)",
        choices: KDFLevel.allCases.map(\.rawValue))

    static func level(_ args: ParsedArguments) -> KDFLevel? {
        args.value(spec).flatMap(KDFLevel.init(rawValue:))
    }
}
