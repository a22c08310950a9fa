import Testing
@testable import VirtualAuthenticator

/// Each profile's credential id length (attestedCredentialData's credentialIdLength), and the
/// recorded registration of the real authenticator it comes from: a test fixture of another
/// project, decoded (docs/profiles.md lists them with their AAGUIDs). A profile no recording
/// shows keeps 16 bytes, WebAuthn's least.
private let recorded: [(profile: String, length: Int, source: String)] = [
    ("icloud-keychain", 20, "linuxchata/fido2 tests/Shark.Fido2.Core.Tests/Validators/AttestationObjectValidatorTests.cs (an iPhone, BE BS); "
        + "kanidm/webauthn-rs webauthn-rs-core/src/core.rs test_macos_openssl_key_segfault (AAGUID fbfc3007, BE BS)"),
    ("apple-device-bound", 20, "Yubico/java-webauthn-server RealExamples.scala AppleAttestationIos, AppleAttestationMacos; "
        + "duo-labs/py_webauthn tests/test_verify_registration_response_apple.py (AAGUID f24a8e70)"),
    ("google-password-manager", 16, "altshiftab/passkey_utils pkg/types/public_key_credential/transport/transport_public_key_credential_test.go "
        + "(AAGUID ea9b8d66, BE BS)"),
    ("windows-hello", 32, "duo-labs/py_webauthn tests/test_verify_registration_response_tpm.py; "
        + "Yubico/java-webauthn-server RealExamples.scala WindowsHelloTpm (AAGUID 08987058, tpm)"),
    ("android-device", 65, "duo-labs/py_webauthn tests/test_verify_registration_response_android_key.py (a Pixel 8a); "
        + "go-webauthn/webauthn protocol/attestation_androidkey_test.go (AAGUID b93fd961, android-key)"),
    ("managed-device", 16, "no recording: WebAuthn's least"),
    ("security-key", 48, "Yubico/java-webauthn-server RealExamples.scala CredPropsRkTrue, YubikeyBio_5_5_6; "
        + "Yubico/libfido2 issue 866 (a YubiKey 5 Nano 5.4.3, rk): discoverable"),
    ("authctl", 16, "authctl's own model: WebAuthn's least"),
]

/// A registration as `profile` through the client, ES256, with attestation when the RP asks.
private func registeredId(_ configuration: AuthenticatorConfiguration, attestation: AttestationConveyance = .direct) throws -> (attested: [UInt8], response: [UInt8]) {
    let authenticator = Authenticator(configuration: configuration, store: InMemoryCredentialStore(), user: ScriptedUser(),
                                      clock: .fixed(seconds: 1_700_000_000))
    let client = WebAuthnClient(authenticator: authenticator, suffixes: { PublicSuffixList(text: "com\n") })
    var options = try CreationOptions(json: jsonBytes(creationObject()))
    options.algorithms = [COSEAlgorithm.es256.rawValue]
    options.attestation = attestation
    let response = try client.create(options: options, origin: "https://login.example.com")
    let object = try CBORValue.decode(response.result.attestationObject.bytes)
    let authData = try AuthenticatorData(parsing: try #require(object[.text("authData")]?.bytesValue))
    return (try #require(authData.attestedCredentialData).credentialId, response.result.credential.id)
}

@Test func everyProfileHasARecordedCredentialIdLength() {
    #expect(recorded.map(\.profile) == AuthenticatorProfile.all.map(\.name))
}

@Test(arguments: recorded)
func aRegistrationMakesTheRecordedCredentialIdLength(_ row: (profile: String, length: Int, source: String)) throws {
    let profile = try #require(AuthenticatorProfile.named(row.profile))
    let made = try registeredId(AuthenticatorConfiguration(profile: profile, attestationCA: try AttestationCA.generate()))
    #expect(made.attested.count == row.length, "\(row.profile): \(row.source)")
    #expect(made.response == made.attested)
}

/// A YubiKey answering over U2F keeps nothing: its key handle wraps the key, 64 bytes in every
/// recording (Yubico/java-webauthn-server RealExamples.scala YubiKeyNeo, YubiKey4,
/// YubiKey5NfcPost5cNfc, YubiKey5cNfc: fido-u2f).
@Test func aSecurityKeyOverU2FMakesAWrappedKeyHandle() throws {
    let made = try registeredId(AuthenticatorConfiguration(profile: .securityKey, u2f: true, attestationCA: try AttestationCA.generate()))
    #expect(made.attested.count == 64)
}

/// A configuration's length wins over the profile's, and `none` attestation (which every profile
/// sends when the RP asks for none) keeps the profile's length.
@Test func aConfiguredLengthWinsAndNoneAttestationKeepsTheProfiles() throws {
    #expect(try registeredId(AuthenticatorConfiguration(profile: .windowsHello, credentialIdLength: 100), attestation: .none).attested.count == 100)
    #expect(try registeredId(AuthenticatorConfiguration(profile: .androidDevice), attestation: .none).attested.count == 65)
    #expect(try registeredId(AuthenticatorConfiguration()).attested.count == 20)
}
