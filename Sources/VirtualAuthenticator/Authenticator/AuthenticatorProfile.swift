/// A named authenticator model, as an RP meets it: its AAGUID, the attestation it sends when
/// asked, the key algorithms it makes, whether its passkeys sync (BE/BS), whether it counts
/// signatures, and how it is attached. `authctl profiles` lists them; docs/profiles.md says what
/// each sends and which verifiers accept it.
public struct AuthenticatorProfile: Sendable, Equatable {
    public let name: String
    public let summary: String
    /// The AAGUID the real authenticator publishes (the community passkey AAGUID list, FIDO MDS).
    public let aaguid: [UInt8]
    /// The statement format sent when the RP asks for attestation (`direct`, `enterprise`,
    /// `indirect`); with `none` every profile sends `none`.
    public let attestation: AttestationFormat
    /// The format `--u2f` selects instead (a security key answering as a U2F device).
    public let alternateAttestation: AttestationFormat?
    /// The algorithms its keys can use. The first of the RP's `pubKeyCredParams` among them is
    /// chosen, unless `preferred` is listed by the RP at all.
    public let algorithms: [COSEAlgorithm]
    public let preferred: COSEAlgorithm?
    /// Synced passkeys (BE=1; BS as sync decides) or device-bound ones (BE=0, BS=0).
    public let backupEligible: Bool
    /// How its passkeys' signature counters move.
    public let signCounter: SignCounter
    public var countsSignatures: Bool { signCounter != .zero }
    public let attachment: AuthenticatorAttachment
    /// `response.transports` (WebAuthn L3 §5.2.1 getTransports()).
    public let transports: [String]
    /// The length of the credential ids it makes, as the real authenticator's recorded responses
    /// carry it in attestedCredentialData (docs/profiles.md names each recording). Its passkeys
    /// are discoverable, so this is the length of a discoverable credential's id.
    public let credentialIdLength: Int
    /// The length of an id that wraps the key, where the model's differs: a credential it does
    /// not keep (non-discoverable), as a security key answering over U2F makes every one.
    public var wrappedCredentialIdLength: Int? = nil
    /// `packed` without a certificate: the credential key signs (self attestation).
    public var selfAttests = false
    /// The organization in its attestation certificates' subjects.
    public var vendor = "authctl"

    /// The algorithm for a registration whose `pubKeyCredParams` lists `requested`, or `nil`
    /// when none of them is one this model makes (`NotSupportedError`).
    package func algorithm(for requested: [Int]) -> COSEAlgorithm? {
        if let preferred, requested.contains(preferred.rawValue) { return preferred }
        return COSEAlgorithm.choose(from: requested, supported: algorithms)
    }

    /// The format answering an RP's conveyance preference.
    package func format(for conveyance: AttestationConveyance, u2f: Bool = false) -> AttestationFormat {
        guard conveyance != .none else { return .none }
        return u2f ? alternateAttestation ?? attestation : attestation
    }
}

extension AuthenticatorProfile {
    public static let iCloudKeychain = AuthenticatorProfile(
        name: "icloud-keychain", summary: "an iPhone's or Mac's synced passkey (iCloud Keychain / Apple Passwords)",
        aaguid: uuid("fbfc3007-154e-4ecc-8c0b-6e020557d7bd"), attestation: .none, alternateAttestation: nil,
        algorithms: [.es256], preferred: nil, backupEligible: true, signCounter: .zero,
        attachment: .platform, transports: ["hybrid", "internal"], credentialIdLength: 20)

    public static let appleDeviceBound = AuthenticatorProfile(
        name: "apple-device-bound", summary: "an Apple device's passkey kept on the device, with Apple anonymous attestation",
        aaguid: uuid("f24a8e70-d0d3-f82c-2937-32523cc4de5a"), attestation: .apple, alternateAttestation: nil,
        algorithms: [.es256], preferred: nil, backupEligible: false, signCounter: .zero,
        attachment: .platform, transports: ["internal"], credentialIdLength: 20)

    public static let googlePasswordManager = AuthenticatorProfile(
        name: "google-password-manager", summary: "an Android phone's or Chrome's synced passkey (Google Password Manager)",
        aaguid: uuid("ea9b8d66-4d01-1d21-3ce4-b6b48cb575d4"), attestation: .none, alternateAttestation: nil,
        algorithms: [.es256], preferred: nil, backupEligible: true, signCounter: .zero,
        attachment: .platform, transports: ["hybrid", "internal"], credentialIdLength: 16)

    public static let windowsHello = AuthenticatorProfile(
        name: "windows-hello", summary: "Windows Hello on a PC's TPM: RS256 when the RP offers it, tpm attestation",
        aaguid: uuid("08987058-cadc-4b81-b6e1-30de50dcbe96"), attestation: .tpm, alternateAttestation: nil,
        algorithms: [.es256, .rs256], preferred: .rs256, backupEligible: false, signCounter: .perCredential,
        attachment: .platform, transports: ["internal"], credentialIdLength: 32)

    public static let androidDevice = AuthenticatorProfile(
        name: "android-device", summary: "an Android phone's device-bound key in its TEE, android-key attestation",
        aaguid: uuid("b93fd961-f2e6-462f-b122-82002247de78"), attestation: .androidKey, alternateAttestation: nil,
        algorithms: [.es256, .rs256], preferred: nil, backupEligible: false, signCounter: .perCredential,
        attachment: .platform, transports: ["internal"], credentialIdLength: 65)

    public static let managedDevice = AuthenticatorProfile(
        name: "managed-device", summary: "a managed (enterprise) device: packed attestation with a certificate chain",
        aaguid: uuid("dd4ec289-e01d-41c9-bb89-70fa845d4bf2"), attestation: .packed, alternateAttestation: nil,
        algorithms: [.es256], preferred: nil, backupEligible: false, signCounter: .perCredential,
        attachment: .platform, transports: ["internal"], credentialIdLength: 16)

    public static let securityKey = AuthenticatorProfile(
        name: "security-key", summary: "a USB/NFC security key (a YubiKey 5): packed x5c, fido-u2f with --u2f; cross-platform",
        aaguid: uuid("2fc0579f-8113-47ea-b116-bb5a8db9202a"), attestation: .packed, alternateAttestation: .fidoU2F,
        algorithms: [.es256, .edDSA, .rs256], preferred: nil, backupEligible: false, signCounter: .global,
        attachment: .crossPlatform, transports: ["nfc", "usb"], credentialIdLength: 48, wrappedCredentialIdLength: 64)

    /// authctl's own model: self attestation (`packed`, no certificate) and every algorithm.
    public static let authctl = AuthenticatorProfile(
        name: "authctl", summary: "authctl's own model: packed self attestation, every algorithm, synced passkeys",
        aaguid: AuthenticatorConfiguration.authctlAAGUID, attestation: .packed, alternateAttestation: nil,
        algorithms: [.es256, .edDSA, .rs256], preferred: nil, backupEligible: true, signCounter: .zero,
        attachment: .platform, transports: ["hybrid", "internal"], credentialIdLength: 16, selfAttests: true)

    public static let all: [AuthenticatorProfile] = [
        iCloudKeychain, appleDeviceBound, googlePasswordManager, windowsHello, androidDevice, managedDevice, securityKey, authctl,
    ]
    public static let `default` = iCloudKeychain

    public static func named(_ name: String) -> AuthenticatorProfile? { all.first { $0.name == name } }

    /// 16 bytes from a UUID's text form; `nil` unless it is 32 hex digits in the 8-4-4-4-12 layout.
    package static func parseAAGUID(_ text: String) -> [UInt8]? {
        let groups = text.split(separator: "-", omittingEmptySubsequences: false)
        guard groups.map(\.count) == [8, 4, 4, 4, 12] else { return nil }
        let hex = Array(groups.joined().utf8)
        var out = [UInt8]()
        for i in stride(from: 0, to: hex.count, by: 2) {
            guard let byte = UInt8(String(decoding: hex[i..<i + 2], as: UTF8.self), radix: 16) else { return nil }
            out.append(byte)
        }
        return out
    }

    /// The 8-4-4-4-12 lower-case form of a 16-byte AAGUID.
    package static func formatAAGUID(_ bytes: [UInt8]) -> String {
        let hex = bytes.map { String($0, radix: 16).leftPadded(to: 2) }.joined()
        var out = ""
        for (i, c) in hex.enumerated() {
            if [8, 12, 16, 20].contains(i) { out.append("-") }
            out.append(c)
        }
        return out
    }

    private static func uuid(_ text: String) -> [UInt8] { parseAAGUID(text)! }
}

private extension String {
    func leftPadded(to width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}
