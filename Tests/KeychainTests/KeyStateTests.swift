import KeyVault
@testable import Keychain
import Testing
import TestSupport

// A device's own state as a security key (KeyState.swift): its record goes when the device
// leaves the account or is reset, as the device's own PIN and passkeys do.

private func keyWithState(_ dir: String) throws -> (Account, [UInt8]) {
    let account = try Account.create(at: dir + "/vault", passphrase: secret(passphrase), kdf: .min, deviceName: "phone",
                                     biometricPIN: secret("1111"))
    try account.addDevice("key", pin: nil, approver: UserPolicy(pin: secret("1111"), wait: { _ in }))
    let key = try account.device("key")
    try key.setKeyMinPINLength(6, rpIds: ["example.com"], forceChange: false)
    try key.writeKeyLargeBlobArray([0x81, 0x01] + KeyLargeBlobs.checksum(of: [0x81, 0x01]))
    let id = try account.deviceRecord(named: "key").id
    #expect(try KeyStateRecord.record(of: id, in: account.vault) != nil)
    return (account, id)
}

@Test func aDeviceThatLeavesTheAccountTakesItsSecurityKeyStateWithIt() throws {
    try withTemporaryDirectory { dir in
        let (account, id) = try keyWithState(dir)
        try account.removeDevice("key")
        #expect(try KeyStateRecord.record(of: id, in: account.vault) == nil)
    }
}

@Test func aDeviceResetBringsBackTheSecurityKeyDefaults() throws {
    try withTemporaryDirectory { dir in
        let (account, id) = try keyWithState(dir)
        try account.resetDevice("key")
        #expect(try KeyStateRecord.record(of: id, in: account.vault) == nil)
        #expect(try account.device("key").keySettings() == KeySettings())
        #expect(try account.device("key").keyLargeBlobArray() == KeyLargeBlobs.initial)
    }
}
