import Foundation
import KeyVault
@testable import Keychain
import Testing
import TestSupport
import VirtualAuthenticator

// A vault whose sync state record is of a newer format than this library knows is refused by
// name (`vaultTooNew`) as it opens, to write or to read, and no file of it changes: a writer
// rewrites the whole record from what it read, so one that went on would drop what the newer
// format added.

private let start: UInt64 = 1_800_000_000_000

/// Every file under `dir` (the store's too), byte for byte; lock files aside (empty, only made).
private func everyFile(_ dir: String) -> [String: Data] {
    var files = [String: Data]()
    let enumerator = FileManager.default.enumerator(atPath: dir)
    while let name = enumerator?.nextObject() as? String {
        let path = dir + "/" + name
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue,
              !name.hasSuffix("lock") else { continue }
        files[name] = FileManager.default.contents(atPath: path)
    }
    return files
}

private func vaultWithSyncState(_ dir: String, format: UInt64?) throws {
    let clock = VirtualClock(start: start)
    let account = try Account.create(at: dir + "/vault", passphrase: secret(passphrase), kdf: .min, deviceName: "phone",
                                     biometricPIN: nil, clock: clock.wallClock, random: .seeded(5))
    try account.addDevice("laptop", pin: nil)
    _ = try account.device("phone").register(optionsJSON: creationOptions(userVerification: "discouraged"), origin: origin)
    let state = try #require(try account.vault.records(kind: SyncState.kind).first)
    var newer = VaultRecord(id: state.id, kind: state.kind, version: state.version + 1, fields: state.fields)
    newer.setInteger(SyncState.Tag.format, format)
    try account.vault.commit([newer])
}

@Test func aSyncStateOfTheCurrentFormatSaysSo() throws {
    try withTemporaryDirectory { dir in
        let account = try Account.create(at: dir + "/vault", passphrase: secret(passphrase), kdf: .min, deviceName: "phone",
                                         biometricPIN: nil, clock: VirtualClock(start: start).wallClock, random: .seeded(5))
        try account.addDevice("laptop", pin: nil)
        let state = try #require(try account.vault.records(kind: SyncState.kind).first)
        #expect(try state.integer(SyncState.Tag.format, as: UInt64.self) == SyncState.format && SyncState.format == 3)
    }
}

@Test func aSyncStateWithoutItsFormatIsFormatOneAndOpens() throws {
    try withTemporaryDirectory { dir in
        try vaultWithSyncState(dir, format: nil)  // as written before the format was recorded
        let account = try Account.open(at: dir + "/vault", passphrase: secret(passphrase), clock: VirtualClock(start: start + 1_000).wallClock)
        #expect(try account.device("laptop").credentials().count == 1)
    }
}

@Test(arguments: [Vault.Access.write, .read])
func aSyncStateOfANewerFormatIsTooNewAndUntouched(access: Vault.Access) throws {
    try withTemporaryDirectory { dir in
        try vaultWithSyncState(dir, format: SyncState.format + 1)
        let before = everyFile(dir + "/vault")
        #expect(before.keys.contains("header") && before.keys.contains { $0.hasPrefix("cloud/") })
        let error = #expect(throws: DeviceError.self) {
            _ = try Account.open(at: dir + "/vault", passphrase: secret(passphrase), access: access,
                                 clock: VirtualClock(start: start + 60_000).wallClock)
        }
        #expect(error?.code == .vaultTooNew && error?.name == "vaultTooNew")
        #expect(error?.message.contains("newer authctl") == true)
        #expect(everyFile(dir + "/vault") == before)
    }
}
