import KeyVault
import Keychain
import Testing
import TestSupport
import VirtualAuthenticator

/// The flag rules through a real device (the vault's biometric sensor and the synced store):
/// UV=1 only after the enrolled PIN really matched, for every request that asks for UV, and BS
/// from the passkey's sync state at the moment it signs.
private let up: UInt8 = 0x01, uv: UInt8 = 0x04, be: UInt8 = 0x08, bs: UInt8 = 0x10

private func flags(_ authenticatorData: [UInt8]) -> UInt8 { authenticatorData[32] }

/// A passkey made without UV has a key the PIN does not seal; a request that asks for UV must
/// still check the PIN against the enrolled one, and a wrong one fails (and is counted).
@Test(arguments: ["required", "preferred"])
func aDeviceChecksTheEnrolledPINWheneverTheRequestAsksForUV(_ requirement: String) throws {
    try withTemporaryDirectory { dir in
        let device = try makeDevice(in: dir)
        _ = try device.register(optionsJSON: creationOptions(userVerification: "discouraged"), origin: origin)
        expectDeviceError(.authenticator(.failed)) {
            try device.sign(optionsJSON: requestOptions(userVerification: requirement), origin: origin,
                            user: UserPolicy(pin: secret("0000")))
        }
        #expect(device.biometry.failures == 1)
        expectDeviceError(.authenticator(.failed)) {
            try device.sign(optionsJSON: requestOptions(userVerification: requirement), origin: origin,
                            user: UserPolicy(action: .wrongPIN))
        }
        #expect(device.biometry.failures == 2)
        let signed = try device.sign(optionsJSON: requestOptions(userVerification: requirement), origin: origin,
                                     user: UserPolicy(pin: secret(pin)))
        #expect(flags(signed.result.authenticatorData) & (up | uv) == up | uv)
        #expect(device.biometry.failures == 0)
        // A registration that asks for UV likewise: a wrong PIN stores nothing.
        expectDeviceError(.authenticator(.failed)) {
            try device.register(optionsJSON: creationOptions(userId: "BAUG", userVerification: requirement), origin: origin,
                                user: UserPolicy(pin: secret("0000")))
        }
        #expect(try device.credentials().count == 1)
    }
}

/// A request that does not ask for UV is not asked for a PIN, and says UV=0.
@Test func aDeviceAsksNoPINWhenTheRequestDiscouragesUV() throws {
    try withTemporaryDirectory { dir in
        let device = try makeDevice(in: dir)
        var asked = 0
        let watching = UserPolicy(pin: { _ throws(AuthenticatorError) in asked += 1; return secret(pin) })
        let made = try device.register(optionsJSON: creationOptions(userVerification: "discouraged"), origin: origin, user: watching)
        let signed = try device.sign(optionsJSON: requestOptions(userVerification: "discouraged"), origin: origin, user: watching)
        #expect(asked == 0)
        #expect(flags(made.result.authenticatorData) & uv == 0 && flags(signed.result.authenticatorData) & uv == 0)
    }
}

/// uv-cleared through the device: the enrolled PIN is really checked (a wrong one fails), and the
/// correctly signed response says UV=0.
@Test func uvClearedThroughADeviceStillChecksThePIN() throws {
    try withTemporaryDirectory { dir in
        let device = try makeDevice(in: dir)
        let made = try device.register(optionsJSON: creationOptions(userVerification: "required"), origin: origin,
                                       user: UserPolicy(pin: secret(pin)))
        expectDeviceError(.authenticator(.failed)) {
            try device.sign(optionsJSON: requestOptions(userVerification: "required"), origin: origin,
                            user: UserPolicy(pin: secret("0000")), fault: .uvCleared)
        }
        let signed = try device.sign(optionsJSON: requestOptions(userVerification: "required"), origin: origin,
                                     user: UserPolicy(pin: secret(pin)), fault: .uvCleared)
        #expect(flags(signed.result.authenticatorData) & (up | uv) == up)
        #expect(SignatureVerifier.verify(signature: signed.result.signature,
                                         message: signed.result.authenticatorData + SHA256.hash(signed.clientDataJSON),
                                         spki: made.result.publicKeySPKI))
    }
}

/// BS in a signed response is the passkey's sync state when it signs: 0 before its first upload
/// lands, 1 after; BE=1 throughout.
@Test func backupStateInASignInFollowsTheUpload() throws {
    try withTemporaryDirectory { dir in
        let clock = VirtualClock(start: 1_800_000_000_000)
        let account = try Account.create(at: dir + "/vault", passphrase: secret(passphrase), kdf: .min, deviceName: "phone",
                                         biometricPIN: secret(pin), clock: clock.wallClock, random: .seeded(7))
        try account.setDelays(upload: DelayRange(parsing: "2s"), download: DelayRange(parsing: "1s"))
        let phone = try account.device("phone")
        let made = try phone.register(optionsJSON: creationOptions(userVerification: "discouraged"), origin: origin)
        #expect(flags(made.result.authenticatorData) & (be | bs) == be)
        let early = try account.device("phone").sign(optionsJSON: requestOptions(userVerification: "discouraged"), origin: origin)
        #expect(flags(early.result.authenticatorData) & (be | bs) == be)
        clock.advance(to: 1_800_000_002_000)
        let late = try account.device("phone").sign(optionsJSON: requestOptions(userVerification: "discouraged"), origin: origin)
        #expect(flags(late.result.authenticatorData) & (be | bs) == be | bs)
    }
}

/// The counter set by hand (WebDriver's Set Credential Properties): a value each assertion counts
/// on from, or none — every assertion then reports 0 and nothing is stored; with the backup flags
/// in one change, none of it made when BS without BE is refused.
@Test func aPasskeysSignatureCounterIsSetByHandOrRemoved() throws {
    func count(_ authenticatorData: [UInt8]) -> UInt32 { authenticatorData[33..<37].reduce(0) { $0 << 8 | UInt32($1) } }
    try withTemporaryDirectory { dir in
        let device = try makeDevice(in: dir)
        let made = try device.register(optionsJSON: creationOptions(userVerification: "discouraged"), origin: origin).result.credential
        let sign = { () throws in try device.sign(optionsJSON: requestOptions(userVerification: "discouraged"), origin: origin).result.authenticatorData }
        var changed = try device.setProperties(credentialId: made.id, counter: .counting(from: 41))
        #expect(changed.countsSignatures && changed.signCount == 41)
        let (first, second) = (count(try sign()), count(try sign()))
        #expect((first, second) == (42, 43))
        changed = try device.setProperties(credentialId: made.id, counter: .noCounter)
        #expect(!changed.countsSignatures && changed.signCount == 0)
        let (third, fourth) = (count(try sign()), count(try sign()))
        #expect((third, fourth) == (0, 0))
        #expect(try device.credential(id: made.id)?.signCount == 0)
        expectDeviceError(.invalidArgument) {
            try device.setProperties(credentialId: made.id, eligible: false, state: true, counter: .counting(from: 5))
        }
        let kept = try #require(try device.credential(id: made.id))
        #expect(!kept.countsSignatures && kept.backupEligible == made.backupEligible)
        // Only BE given: BS stays as it was.
        changed = try device.setProperties(credentialId: made.id, eligible: true, counter: .counting(from: UInt32.max))
        #expect(changed.backupEligible && changed.backupState == made.backupState && changed.signCount == UInt32.max)
    }
}
