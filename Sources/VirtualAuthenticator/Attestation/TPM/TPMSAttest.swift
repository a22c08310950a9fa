@_spi(ByteOrder) import ByteOrder

/// TPMS_ATTEST (TPM 2.0 Library Part 2 §10.12.8) of type TPM_ST_ATTEST_CERTIFY: what a TPM signs
/// in TPM2_Certify, the `certInfo` of a `tpm` attestation statement (WebAuthn L3 §8.3).
///
///     magic (UINT32) ‖ type (UINT16) ‖ qualifiedSigner (TPM2B_NAME) ‖ extraData (TPM2B_DATA)
///     ‖ clockInfo (TPMS_CLOCK_INFO) ‖ firmwareVersion (UINT64) ‖ attested (TPMS_CERTIFY_INFO)
package struct TPMSAttest: Equatable, Sendable {
    /// TPM_GENERATED_VALUE (Part 2 §6.2): "\xFFTCG", marking a structure the TPM made.
    package static let generatedValue: UInt32 = 0xFF54_4347
    /// TPM_ST_ATTEST_CERTIFY (Part 2 §6.9).
    package static let attestCertify: UInt16 = 0x8017
    /// TPM_RH_OWNER (Part 2 §7.4): the storage hierarchy, whose handle is its Qualified Name.
    package static let ownerHierarchy: [UInt8] = [0x40, 0x00, 0x00, 0x01]

    /// The signing key's (the AIK's) Qualified Name.
    package let qualifiedSigner: [UInt8]
    /// The caller's nonce: for WebAuthn, the hash of attToBeSigned (``extraData(alg:authenticatorData:clientDataHash:)``).
    package let extraData: [UInt8]
    package let clockInfo: TPMSClockInfo
    package let firmwareVersion: UInt64
    package let attested: TPMSCertifyInfo

    package init(
        qualifiedSigner: [UInt8], extraData: [UInt8], clockInfo: TPMSClockInfo, firmwareVersion: UInt64,
        attested: TPMSCertifyInfo
    ) {
        self.qualifiedSigner = qualifiedSigner
        self.extraData = extraData
        self.clockInfo = clockInfo
        self.firmwareVersion = firmwareVersion
        self.attested = attested
    }

    /// The certInfo of TPM2_Certify over `pubArea`, a child of the object (or hierarchy) whose
    /// Qualified Name is `parentQualifiedName`, signed by the key whose Qualified Name is
    /// `qualifiedSigner` (both nameAlg ‖ digest; see ``TPMSCertifyInfo/qualifiedName(of:parentQualifiedName:)``).
    package init(
        certifying pubArea: TPMTPublic, parentQualifiedName: [UInt8], qualifiedSigner: [UInt8],
        extraData: [UInt8], clockInfo: TPMSClockInfo, firmwareVersion: UInt64
    ) {
        self.init(
            qualifiedSigner: qualifiedSigner, extraData: extraData, clockInfo: clockInfo,
            firmwareVersion: firmwareVersion,
            attested: TPMSCertifyInfo(object: pubArea, parentQualifiedName: parentQualifiedName))
    }

    /// extraData for WebAuthn (§8.3 "Verification procedure"): attToBeSigned (authenticatorData ‖
    /// clientDataHash) hashed with the hash of the statement's `alg`; `nil` for an `alg` whose hash
    /// is not SHA-256 (ES256 -7, PS256 -37 and RS256 -257 are).
    package static func extraData(alg: Int, authenticatorData: [UInt8], clientDataHash: [UInt8]) -> [UInt8]? {
        guard [-7, -37, -257].contains(alg) else { return nil }
        return SHA256.hash(authenticatorData + clientDataHash)
    }

    /// The TPM's encoding, the bytes of `certInfo` (and what the AIK signs).
    package func encoded() -> [UInt8] {
        BigEndianBytes.of(Self.generatedValue) + BigEndianBytes.of(Self.attestCertify)
            + TPM2B.encoded(qualifiedSigner) + TPM2B.encoded(extraData)
            + clockInfo.encoded() + BigEndianBytes.of(firmwareVersion)
            + attested.encoded()
    }
}
