/// The `tpm` attestation statement (WebAuthn L3 §8.3):
///
///     {ver: "2.0", alg, x5c: [aikCert, caCert…], sig, certInfo, pubArea}
///
/// `alg` is the COSE algorithm the AIK signed `certInfo` with (it also picks the hash of extraData),
/// not the credential's.
package enum TPMAttestation {
    package static let version = "2.0"

    /// The statement map. Its keys are encoded in CTAP2 canonical order like every ``CBORValue``
    /// map; verifiers read it as a map and need no order.
    package static func statement(
        alg: Int, x5c: [[UInt8]], sig: [UInt8], certInfo: [UInt8], pubArea: [UInt8]
    ) -> CBORValue {
        precondition(!x5c.isEmpty, "x5c starts with the AIK certificate")
        return .map([
            (.text("ver"), .text(version)),
            (.text("alg"), .int(alg)),
            (.text("x5c"), .array(x5c.map { .bytes($0) })),
            (.text("sig"), .bytes(sig)),
            (.text("certInfo"), .bytes(certInfo)),
            (.text("pubArea"), .bytes(pubArea)),
        ])
    }

    /// The statement of `certInfo` and `pubArea` as structures.
    package static func statement(
        alg: Int, x5c: [[UInt8]], sig: [UInt8], certInfo: TPMSAttest, pubArea: TPMTPublic
    ) -> CBORValue {
        statement(alg: alg, x5c: x5c, sig: sig, certInfo: certInfo.encoded(), pubArea: pubArea.encoded())
    }
}
