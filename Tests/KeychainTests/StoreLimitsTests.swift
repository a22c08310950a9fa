import Foundation
import KeyVault
import SyncStore
@testable import Keychain
import Testing
import TestSupport
import VirtualAuthenticator

// A passkey record too large for one store object could never be read back from the store, so
// every writer uploaded it again (43 writes left 87 unreadable objects, 88 MB), and sync status
// said nothing. Such a record is refused before anything is stored; one an older version stored is
// kept in the vault and not uploaded; and what the store cannot read shows as a store problem.

private let start: UInt64 = 1_800_000_000_000

private func objects(_ dir: String) -> [String] {
    ((try? FileManager.default.contentsOfDirectory(atPath: dir + "/vault/cloud/log")) ?? []).filter { !$0.hasPrefix(".") }
}

private func twoDevices(_ dir: String, clock: VirtualClock) throws -> (Account, Credential) {
    let account = try Account.create(at: dir + "/vault", passphrase: secret(passphrase), kdf: .min, deviceName: "phone",
                                     biometricPIN: nil, clock: clock.wallClock, random: .seeded(3))
    try account.addDevice("laptop", pin: nil)
    let made = try account.device("phone").register(optionsJSON: creationOptions(userVerification: "discouraged"), origin: origin)
    return (account, made.result.credential)
}

@Test func aRevisionTooLargeForTheStoreIsRefusedBeforeAnythingIsStored() throws {
    try withTemporaryDirectory { dir in
        let clock = VirtualClock(start: start)
        let (account, credential) = try twoDevices(dir, clock: clock)
        let before = try account.vault.records(kind: .credential).count
        #expect(throws: AuthenticatorError.self) {
            try account.device("phone").store().storeLargeBlob([UInt8](repeating: 9, count: 900_000), of: credential)
        }
        #expect(try account.vault.records(kind: .credential).count == before)
        #expect(try account.device("laptop").credentials().map(\.largeBlob) == [nil])
    }
}

@Test func aRevisionTooLargeForTheStoreIsNotUploadedAgainByEveryWriter() throws {
    try withTemporaryDirectory { dir in
        let clock = VirtualClock(start: start)
        var (account, _): (Account?, Credential) = try twoDevices(dir, clock: clock)
        // What an older version stored: a revision of 1.1 MB (its large blob), written past the
        // checks a change goes through today.
        let made = try #require(try account!.vault.records(kind: .credential).last)
        var record = VaultRecord(id: VaultRecord.newId(), kind: .credential, fields: made.fields)
        record.setField(CredentialRecord.Tag.sealedPrivateKey, try account!.vault.openSecret(Array(made.field(CredentialRecord.Tag.sealedPrivateKey)!), recordId: made.id)
            .withUnsafeBytes { account!.vault.sealSecret($0, recordId: record.id) })
        record.setInteger(CredentialRecord.Tag.changedOrder, UInt64(account!.vault.position))
        record.setField(CredentialRecord.Tag.largeBlob, [UInt8](repeating: 9, count: 1_100_000))
        // An older version kept no sync state: the first writer finds the record by its one scan.
        let state = try #require(try account!.vault.records(kind: SyncState.kind).first)
        try account!.vault.commit([record, VaultRecord(id: state.id, kind: .tombstone, version: state.version + 1)])
        account = nil
        let stored = objects(dir).count
        for _ in 0..<4 {
            clock.advance(by: 1_000)
            let writer = try Account.open(at: dir + "/vault", passphrase: secret(passphrase), clock: clock.wallClock)
            #expect(try writer.device("laptop").credentials().count == 1)  // the vault still has it
            _ = writer
        }
        #expect(objects(dir).count == stored)
        let reader = try Account.open(at: dir + "/vault", passphrase: secret(passphrase), access: .write, clock: clock.wallClock)
        let problem = try #require(try reader.syncStatus().storeProblem)
        #expect(problem.contains("too large for one store object") && problem.contains(Hex.string(record.id)))
    }
}

@Test func anObjectTheStoreCannotReadIsAStoreProblem() throws {
    try withTemporaryDirectory { dir in
        let clock = VirtualClock(start: start)
        let credential = try twoDevices(dir, clock: clock).1  // the account, and its vault lock, released at once
        // Two changes that are no sealed objects of this account, the first then damaged past the
        // store's read limit.
        let store = try DirectoryStore(path: dir + "/vault/cloud")
        let given = try store.append([StoreObject(id: [0xee], bytes: [1]), StoreObject(id: [0xff], bytes: [UInt8](repeating: 1, count: 100))])
        #expect(FileManager.default.createFile(atPath: dir + "/vault/cloud/log/" + String(format: "%016llx", given[0]), contents: Data(count: (1 << 20) + 4096)))
        let reader = try Account.open(at: dir + "/vault", passphrase: secret(passphrase), access: .read, clock: clock.wallClock)
        #expect(try reader.device("laptop").credentials().map(\.id) == [credential.id])
        #expect(reader.storeProblem == nil)  // the store is in use: nothing is set aside
        let status = try reader.syncStatus()
        #expect(status.storeInUse)
        let problem = try #require(status.storeProblem)
        #expect(problem.contains("2 object(s) that cannot be read"))
        #expect(problem.contains("change \(given[0]) (") && problem.contains("1052672 bytes"))
        #expect(problem.contains("change \(given[1]) (does not open under the account key"))
    }
}
