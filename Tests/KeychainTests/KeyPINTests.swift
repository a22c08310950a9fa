import Foundation
import KeyVault
import Keychain
import Testing
import TestSupport
import VirtualAuthenticator

/// A security key's PIN as its device's biometric PIN (``KeyPIN``): set, checked and changed by
/// its hash, with the biometry key kept across a change.
@Suite struct KeyPINTests {
    /// LEFT(SHA-256(pin), 16).
    static func hash(_ pin: String) -> [UInt8] { Array(SHA256.hash(Array(pin.utf8)).prefix(16)) }
    static func hex(_ pin: String) -> String { hash(pin).map { String(format: "%02x", $0) }.joined() }

    @Test func theBiometricPINOfAPINHashIsItsLowercaseHex() {
        let pin = KeyPIN.biometricPIN(pinHash: Self.hash("1234"))
        #expect(pin.withUnsafeBytes { Array($0) } == Array("03ac674216f3e15c761ee1a5e255f067".utf8))
    }

    @Test func changingAKeysPINKeepsThePasskeysMadeWithItsPIN() throws {
        try withTemporaryDirectory { dir in
            let device = try makeDevice(in: dir, maxPINAttempts: KeyPIN.maxRetries, pin: nil)
            try device.setKeyPIN(pinHash: Self.hash("1234"))
            #expect(device.biometry.enrolled && device.biometry.maxAttempts == 8)
            // A passkey made with user verification is sealed under the biometry key the PIN unwraps.
            let made = try device.register(optionsJSON: creationOptions(userVerification: "required"), origin: origin,
                                           user: UserPolicy(pin: secret(Self.hex("1234"))))
            guard case .verified(let proof) = try device.verifyKeyPIN(pinHash: Self.hash("1234")) else {
                Issue.record("the PIN did not verify")
                return
            }
            try device.changeKeyPIN(proof, to: Self.hash("5678"))
            guard case .wrong(let retries) = try device.verifyKeyPIN(pinHash: Self.hash("1234")) else {
                Issue.record("the old PIN still verifies")
                return
            }
            #expect(retries == 7)
            let signed = try device.sign(optionsJSON: requestOptions(userVerification: "required"), origin: origin,
                                         user: UserPolicy(pin: secret(Self.hex("5678"))))
            #expect(signed.result.credential.id == made.result.credential.id)
        }
    }

    @Test func aKeyPINCheckSaysWrongBlockedOrNotSetAndCountsInTheVault() throws {
        try withTemporaryDirectory { dir in
            let device = try makeDevice(in: dir, maxPINAttempts: 2, pin: nil)
            guard case .notSet = try device.verifyKeyPIN(pinHash: Self.hash("1234")) else { Issue.record("not .notSet"); return }
            try device.setKeyPIN(pinHash: Self.hash("1234"))
            expectDeviceError(.invalidArgument) { try device.setKeyPIN(pinHash: Self.hash("9999")) }
            // Bytes of any length are checked and counted; only the right 16 verify.
            guard case .wrong(retries: 1) = try device.verifyKeyPIN(pinHash: Self.hash("1234") + [0]) else { Issue.record("not 1 left"); return }
            guard case .wrong(retries: 0) = try device.verifyKeyPIN(pinHash: []) else { Issue.record("not 0 left"); return }
            #expect(device.biometry.lockedOut)
            guard case .blocked = try device.verifyKeyPIN(pinHash: Self.hash("1234")) else { Issue.record("not .blocked"); return }
            #expect(device.biometry.failures == 2)
        }
    }

    @Test func aKeyAfterAResetSetsAFreshPINNotItsFormerOne() throws {
        try withTemporaryDirectory { dir in
            let device = try makeDevice(in: dir, maxPINAttempts: KeyPIN.maxRetries, pin: nil)
            try device.setKeyPIN(pinHash: Self.hash("1234"))
            try device.account.resetDevice(device.name)
            #expect(!device.biometry.enrolled)
            // No former PIN is asked for: a key's PIN after a reset is new.
            try device.setKeyPIN(pinHash: Self.hash("5678"))
            guard case .verified = try device.verifyKeyPIN(pinHash: Self.hash("5678")) else { Issue.record("the new PIN does not verify"); return }
        }
    }
}
