import Session

/// `authctl profiles`: the authenticator models `--profile NAME` answers as, and what each sets.
enum ProfilesCommand {
    static let spec = CommandSpec(
        name: "profiles", abstract: "list the authenticator profiles and what each sets",
        discussion: "What each profile sends, and which verifiers accept it: docs/profiles.md.",
        examples: ["authctl profiles", "authctl --json profiles"],
        run: run)

    struct Entry: Encodable {
        let name: String
        let summary: String
        let aaguid: String
        let attestation: String
        let u2fAttestation: String?
        let algorithms: [Int]
        let preferredAlgorithm: Int?
        let backupEligible: Bool
        let signCounter: String
        let attachment: String
        let transports: [String]
        let credentialIdLength: Int
        let isDefault: Bool
    }

    static func entry(_ p: AuthenticatorProfile) -> Entry {
        Entry(name: p.name, summary: p.summary, aaguid: AuthenticatorProfile.formatAAGUID(p.aaguid), attestation: p.attestation.rawValue,
              u2fAttestation: p.alternateAttestation?.rawValue, algorithms: p.algorithms.map(\.rawValue),
              preferredAlgorithm: p.preferred?.rawValue, backupEligible: p.backupEligible,
              signCounter: p.signCounter.rawValue, attachment: p.attachment.rawValue,
              transports: p.transports, credentialIdLength: p.credentialIdLength, isDefault: p == .default)
    }

    static func run(_ args: ParsedArguments) throws(CLIError) {
        if args.flag(GlobalOptions.json) {
            try Output.data(JSONOutput.string(AuthenticatorProfile.all.map(entry)))
            return
        }
        var rows = [["PROFILE", "ATTESTATION", "ALGORITHMS", "BE", "COUNTER", "ATTACHMENT", "ID BYTES", "AAGUID"]]
        for p in AuthenticatorProfile.all {
            let formats = [p.attestation.rawValue] + (p.alternateAttestation.map { ["\($0.rawValue) (--u2f)"] } ?? [])
            let algorithms = p.algorithms.map { $0 == p.preferred ? $0.name + "*" : $0.name }
            rows.append([p.name + (p == .default ? " (default)" : ""), formats.joined(separator: ", "), algorithms.joined(separator: ","),
                         p.backupEligible ? "1" : "0", p.signCounter.rawValue, p.attachment.rawValue, String(p.credentialIdLength),
                         AuthenticatorProfile.formatAAGUID(p.aaguid)])
        }
        for line in TextTable.lines(rows) { try Output.text(line) }
        try Output.text("* preferred whenever the RP lists it; otherwise the RP's order decides. 'none' is sent whenever the RP asks for none.")
    }
}
