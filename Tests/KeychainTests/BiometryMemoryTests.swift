import Foundation
import KeyVault
@testable import Keychain
import Testing
import TestSupport
import VirtualAuthenticator

// What an open account keeps of a right biometric PIN (docs/biometry.md, "What a process keeps"):
// a later check compares a verifier instead of running Argon2id, and still refuses a wrong PIN,
// counts it in the vault, locks out, and follows the device's record as it is now.

private func signIn(_ device: Device, _ typed: String) throws -> Bool {
    let signed = try device.sign(optionsJSON: requestOptions(userVerification: "required"), origin: origin,
                                 user: UserPolicy(pin: secret(typed)))
    return signed.result.authenticatorData[32] & 0x04 == 0x04
}

/// A device with a passkey made with user verification (sealed under the biometry key), signed in
/// once with the right PIN, so that the account keeps what that check established.
private func deviceWithKeptPIN(in dir: String, maxPINAttempts: UInt32 = 5) throws -> Device {
    let device = try makeDevice(in: dir, maxPINAttempts: maxPINAttempts)
    _ = try device.register(optionsJSON: creationOptions(userVerification: "required"), origin: origin,
                            user: UserPolicy(pin: secret(pin)))
    #expect(try signIn(device, pin))
    #expect(device.account.checkedPINs[device.id] != nil)
    return device
}

@Test func aWrongPINIsRefusedAndCountedAfterARightOneWasKept() throws {
    try withTemporaryDirectory { dir in
        let device = try deviceWithKeptPIN(in: dir, maxPINAttempts: 3)
        expectDeviceError(.authenticator(.failed)) { try signIn(device, "0000") }
        #expect(device.biometry.failures == 1)
        // Another PIN of another length, and the enrolled PIN with a byte more: wrong too.
        expectDeviceError(.authenticator(.failed)) { try signIn(device, "42420") }
        #expect(device.biometry.failures == 2)
        // The right PIN clears the count, in the vault.
        #expect(try signIn(device, pin))
        #expect(device.biometry.failures == 0)
        // Three wrong ones lock out; then even the right PIN is refused, without being asked for.
        for typed in ["1111", "2222", "3333"] { expectDeviceError(.authenticator(.failed)) { try signIn(device, typed) } }
        #expect(device.biometry.lockedOut && device.biometry.failures == 3)
        var asked = false
        let watching = UserPolicy(pin: { _ throws(AuthenticatorError) in asked = true; return secret(pin) })
        expectDeviceError(.authenticator(.biometryLockout)) {
            try device.sign(optionsJSON: requestOptions(userVerification: "required"), origin: origin, user: watching)
        }
        #expect(!asked)
        try device.unlockBiometry()
        #expect(try signIn(device, pin))
    }
}

@Test func theCountKeptInTheVaultOutlivesTheAccountThatKeptThePIN() throws {
    try withTemporaryDirectory { dir in
        do {
            let device = try deviceWithKeptPIN(in: dir, maxPINAttempts: 3)
            for typed in ["1111", "2222"] { expectDeviceError(.authenticator(.failed)) { try signIn(device, typed) } }
        }
        // A restart (a new process opens the vault): nothing kept, the count as written.
        do {
            let reopened = try Device.open(at: dir + "/vault", passphrase: secret(passphrase))
            #expect(reopened.account.checkedPINs.isEmpty)
            #expect(reopened.biometry.failures == 2 && !reopened.biometry.lockedOut)
            expectDeviceError(.authenticator(.failed)) { try signIn(reopened, "3333") }
        }
        let again = try Device.open(at: dir + "/vault", passphrase: secret(passphrase))
        #expect(again.biometry.lockedOut)
        expectDeviceError(.authenticator(.biometryLockout)) { try signIn(again, pin) }
    }
}

/// The device's record as another process would leave it: the vault's writer lock lets only one
/// process write at a time, so this is what an account finds when it checks again after one.
private func writeRecord(of device: Device, _ change: (inout VaultRecord) throws(VaultError) -> Void) throws {
    try DeviceRecord.update(device.id, in: device.account.vault, change)
}

@Test func aKeptPINFollowsTheCountAndLockoutAsTheVaultHasThem() throws {
    try withTemporaryDirectory { dir in
        let device = try deviceWithKeptPIN(in: dir, maxPINAttempts: 3)
        // Failures counted elsewhere: the kept right PIN clears them, with a write.
        try writeRecord(of: device) { r throws(VaultError) in r.setInteger(DeviceRecord.Tag.failures, UInt32(2)) }
        #expect(try signIn(device, pin))
        #expect(device.biometry.failures == 0)
        // A wrong PIN here counts from what is there: 2 + 1 locks out.
        try writeRecord(of: device) { r throws(VaultError) in r.setInteger(DeviceRecord.Tag.failures, UInt32(2)) }
        expectDeviceError(.authenticator(.failed)) { try signIn(device, "0000") }
        #expect(device.biometry.lockedOut)
        try device.unlockBiometry()
        // A lockout reached elsewhere refuses the kept right PIN.
        try writeRecord(of: device) { r throws(VaultError) in r.setInteger(DeviceRecord.Tag.failures, UInt32(3)) }
        expectDeviceError(.authenticator(.biometryLockout)) { try signIn(device, pin) }
        #expect(device.biometry.failures == 3)
    }
}

@Test func aPINChangedElsewhereOrHereIsNoLongerTheKeptOne() throws {
    try withTemporaryDirectory { dir in
        let device = try deviceWithKeptPIN(in: dir)
        // Another process re-enrolls the same biometry key under a new PIN.
        let key = try #require(device.account.checkedPINs[device.id]).unlock.biometryKey
        let (enrollment, _) = try device.account.vault.enrollBiometry(pin: secret("9999"), keeping: key)
        try writeRecord(of: device) { r throws(VaultError) in DeviceRecord.setEnrollment(enrollment, in: &r) }
        expectDeviceError(.authenticator(.failed)) { try signIn(device, pin) }
        #expect(device.biometry.failures == 1)
        #expect(try signIn(device, "9999"))
        #expect(device.biometry.failures == 0)
        // And through this account: the old PIN stops working at once.
        try device.enrollBiometricPIN(secret("5555"), user: UserPolicy(pin: secret("9999")))
        expectDeviceError(.authenticator(.failed)) { try signIn(device, "9999") }
        #expect(try signIn(device, "5555"))
    }
}

@Test func aVaultCopiedOffTheMachineStillNeedsThePIN() throws {
    try withTemporaryDirectory { dir in
        let device = try deviceWithKeptPIN(in: dir)
        let copy = dir + "/elsewhere"
        try FileManager.default.createDirectory(atPath: copy, withIntermediateDirectories: false)
        try FileManager.default.copyItem(atPath: dir + "/vault", toPath: copy + "/vault")
        // The copy, opened as on another machine, while the original's account still keeps its PIN.
        let stolen = try Device.open(at: copy + "/vault", passphrase: secret(passphrase))
        expectDeviceError(.authenticator(.notInteractive)) {
            try stolen.sign(optionsJSON: requestOptions(userVerification: "discouraged"), origin: origin)
        }
        expectDeviceError(.authenticator(.failed)) { try signIn(stolen, "0000") }
        expectDeviceError(.authenticator(.failed)) { try stolen.sign(optionsJSON: requestOptions(), origin: origin, user: UserPolicy(action: .wrongPIN)) }
        #expect(stolen.biometry.failures == 2)
        #expect(try signIn(stolen, pin))
        #expect(try signIn(device, pin))
    }
}

/// With a PIN kept and the count at 0, a right PIN writes nothing, so a counting write that fails
/// would tell a wrong guess without counting it: the first such failure forgets what was kept, and
/// the checks after it run in full, where a failed write answers both PINs alike.
@Test func aCountingWriteThatFailsForgetsTheKeptPIN() throws {
    try withTemporaryDirectory { dir in
        let device = try deviceWithKeptPIN(in: dir, maxPINAttempts: 5)
        let planted = dir + "/vault/commit.tmp"  // the commit pointer cannot be written: every commit fails
        try FileManager.default.createDirectory(atPath: planted, withIntermediateDirectories: false)
        var wrong: (any Error)?
        do { _ = try signIn(device, "0000") } catch { wrong = error }
        #expect(wrong != nil && (wrong as? DeviceError)?.code != .authenticator(.failed))  // not counted, not "did not match"
        #expect(device.account.checkedPINs[device.id] == nil)
        // Now a right PIN is checked in full and its commit fails too: the same answer as a wrong one.
        var right: (any Error)?
        do { _ = try signIn(device, pin) } catch { right = error }
        #expect(right != nil && (right as? DeviceError)?.code == (wrong as? DeviceError)?.code)
        try FileManager.default.removeItem(atPath: planted)
        #expect(try signIn(device, pin))
        #expect(device.account.checkedPINs[device.id] != nil && device.biometry.failures == 0)
    }
}
