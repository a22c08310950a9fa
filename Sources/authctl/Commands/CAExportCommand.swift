import Glibc
import Session

/// `authctl ca export`: prints the root certificate of the vault's attestation CA.
enum CAExportCommand {
    static let format = OptionSpec.value("--format", "FORMAT", "pem (default) or der (binary; not to a terminal)", choices: ["pem", "der"])

    static let spec = CommandSpec(
        name: "export", abstract: "print the attestation CA's root certificate",
        discussion: """
        Every certificate in a packed (x5c), tpm, android-key, apple or fido-u2f attestation this
        vault makes chains to this root; pass it to the RP library as its trusted root (py_webauthn:
        pem_root_certs_bytes_by_fmt; python-fido2: an AttestationVerifier's ca_lookup). The CA's
        private keys stay sealed in the vault. See docs/profiles.md.
        """,
        options: [format],
        examples: ["authctl ca export > authctl-root.pem", "authctl ca export --format der | openssl x509 -inform der -noout -subject"],
        run: run)

    static func run(_ args: ParsedArguments) throws(CLIError) {
        try Output.requireStdout()
        let der = args.value(format) == "der"
        if der && isatty(STDOUT_FILENO) == 1 {
            throw CLIError(.usage, "--format der writes binary; redirect it to a file or a pipe")
        }
        // A look, unless the vault has no CA yet (one from before profiles): a writer makes it.
        let vault = try VaultSelection(args)
        var session = try vault.session(.read)
        if !session.hasAttestationCA { session = try vault.session(.write) }
        let ca = try session.attestationCA()
        if der {
            try Output.bytes(ca.rootDER)
        } else {
            try Output.data(ca.rootPEM.hasSuffix("\n") ? String(ca.rootPEM.dropLast()) : ca.rootPEM)
        }
    }
}
