import Foundation
import KeyVault
import SyncStore
@testable import Keychain
import Testing
import TestSupport
import VirtualAuthenticator

// Collection by the store's knowledge, without processes: two vaults sharing one store on one
// virtual clock; a deletion is collected only once every device of the account (by the store's
// directory) has acknowledged it, and a revision of a collected passkey that arrives later is dropped.

private let start: UInt64 = 1_800_000_000_000

private func twoVaults(_ dir: String, clock: VirtualClock) throws -> (phone: Account, desk: Account) {
    let phone = try Account.create(at: dir + "/phone", passphrase: secret(passphrase), kdf: .min, deviceName: "phone",
                                   biometricPIN: nil, clock: clock.wallClock, random: .seeded(3))
    let desk = try phone.addDevice("desk", inNewVaultAt: dir + "/desk", passphrase: secret(passphrase), kdf: .min, pin: nil)
    try desk.setDelays(upload: nil, download: DelayRange(parsing: "2s"), device: "desk")
    return (phone, desk)
}

/// Two vaults, and a passkey made on the phone that the desk holds.
private func passkeyOnBoth(_ dir: String) throws -> (VirtualClock, phone: Account, desk: Account, made: Credential) {
    let clock = VirtualClock(start: start)
    let (phone, desk) = try twoVaults(dir, clock: clock)
    let made = try phone.device().register(optionsJSON: creationOptions(userVerification: "discouraged"), origin: origin).result.credential
    clock.advance(by: 2_000)
    #expect(try desk.device().credentials().map(\.id) == [made.id])
    return (clock, phone, desk, made)
}

/// The records (revisions and replicas) of the passkey `id` in `account`'s vault.
private func records(of id: [UInt8], in account: Account) throws -> Int {
    try account.vault.records(kind: .credential).filter { record in
        let inner = StoreReplica.revisionRecord(record)?.record ?? record
        return inner.field(CredentialRecord.Tag.credentialId).map(Array.init) == id
    }.count
}

@Test func theDirectoryAndTheSettingsTravelThroughTheStore() throws {
    try withTemporaryDirectory { dir in
        let clock = VirtualClock(start: start)
        let (phone, desk) = try twoVaults(dir, clock: clock)
        #expect(try phone.syncStatus().devices.map(\.name) == ["phone", "desk"])
        #expect(try desk.syncStatus().devices.map { "\($0.name):\($0.vault == "this")" } == ["desk:true", "phone:false"])
        expectDeviceError(.invalidArgument) { try phone.addDevice("desk", pin: nil) }
        try desk.setDelays(upload: DelayRange(parsing: "5s"), download: nil)
        _ = try phone.device().credentials()  // the phone's next command takes it up
        #expect(try phone.syncStatus().uploadDelay == "5s")
        try phone.setSyncOptions(seed: 11)
        _ = try desk.device().credentials()
        #expect(desk.seed == 11)
    }
}

@Test func aDeletionIsCollectedOnlyOnceEveryDeviceOfTheAccountHasAcknowledgedIt() throws {
    try withTemporaryDirectory { dir in
        let (clock, phone, desk, made) = try passkeyOnBoth(dir)
        _ = try phone.device().delete(credentialId: made.id)
        clock.advance(by: 1_000)
        try desk.sync()  // the deletion has not reached the desk (2 s): not acknowledged
        try phone.sync()
        #expect(try records(of: made.id, in: phone) == 2, "collected before the desk had the deletion")
        clock.advance(by: 1_000)
        try desk.sync()
        #expect(try desk.device().credentials().isEmpty)  // now it has: acknowledged, and collected there
        #expect(try records(of: made.id, in: desk) == 0)
        try phone.sync()
        #expect(try records(of: made.id, in: phone) == 0)
        let state = try #require(try SyncState.read(in: phone.vault))
        #expect(state.collected.map(\.itemId).count == 1 && state.pendingDeletions.isEmpty)
    }
}

@Test func aRevisionOfACollectedPasskeyThatArrivesLaterIsDroppedNotResurrected() throws {
    try withTemporaryDirectory { dir in
        let (clock, phone, desk, made) = try passkeyOnBoth(dir)
        // The passkey's revision as the store holds it: what a device unknown to the directory
        // could upload again, changed later.
        let store = try DirectoryStore(path: phone.storePath, create: false, durable: false)
        let opened = try store.allChanges(after: 0).changes.compactMap {
            StorePack.open($0.object.bytes, name: $0.object.id, key: phone.settings.accountKey, accountId: phone.settings.accountId)
        }.flatMap(\.entries)
        let original = try #require(opened.first { $0.record.field(CredentialRecord.Tag.credentialId).map(Array.init) == made.id })
        _ = try phone.device().delete(credentialId: made.id)
        clock.advance(by: 2_000)
        try desk.sync()
        try phone.sync()
        #expect(try records(of: made.id, in: phone) == 0)
        // A late sign-count revision arrives for it.
        clock.advance(by: 1_000)
        var late = VaultRecord(id: VaultRecord.newId(), kind: .credential, version: 1, fields: original.record.fields)
        late.setInteger(CredentialRecord.Tag.changedAt, clock.now)
        late.setInteger(CredentialRecord.Tag.signCount, UInt32(7))
        let name = VaultRecord.newId()
        _ = try store.append([StoreObject(id: name, bytes: StorePack.seal([(late, Instant(ms: clock.now, order: 0))], link: nil, name: name,
                                                                          key: phone.settings.accountKey, accountId: phone.settings.accountId))])
        clock.advance(by: 2_000)
        for account in [phone, desk] {
            try account.sync()
            #expect(try account.device().credentials().isEmpty)
            #expect(try records(of: made.id, in: account) == 0)
            #expect(account.droppedRevisions.map(\.revisionId) == [late.id])
        }
    }
}

/// Users made and deleted again, many times (an RP's test suite): the vault remembers only the
/// newest collected passkeys once no revision of the older ones can be read again, so its sync
/// state stays small — it remembered every deletion ever collected, and each commit wrote the list
/// whole — and still nothing deleted comes back, not even when the store is read again from the
/// start.
@Test func collectedPasskeysAreForgottenOnceNoRevisionCanBringThemBack() throws {
    try withTemporaryDirectory { dir in
        let clock = VirtualClock(start: start)
        let account = try Account.create(at: dir + "/vault", passphrase: secret(passphrase), kdf: .min, deviceName: "phone",
                                         biometricPIN: nil, clock: clock.wallClock, random: .seeded(5),
                                         durability: .none, storeInMemory: true)
        try account.addDevice("laptop", pin: nil)
        let users = Account.collectedKept + 80
        for n in 0..<users {
            let userId = Base64URL.encode([UInt8(n >> 8), UInt8(n & 0xFF), 7])
            let made = try account.device("phone").register(optionsJSON: creationOptions(userId: userId, userVerification: "discouraged"),
                                                            origin: origin).result.credential
            clock.advance(by: 10)
            _ = try account.device("phone").delete(credentialId: made.id)
            clock.advance(by: 10)
            #expect(try account.device("laptop").credentials().isEmpty)
        }
        _ = try account.device("phone").credentials()
        let state = try #require(try SyncState.read(in: account.vault))
        #expect(state.collected.count >= Account.collectedKept && state.collected.count <= Account.collectedKept + 40,
                "\(state.collected.count) collected passkeys remembered after \(users) deletions")
        #expect(state.collected.allSatisfy { $0.through != nil })
        #expect(state.snapshotEntries < 100, "the store's snapshot keeps \(state.snapshotEntries) revisions of deleted passkeys")
        try account.forgetStore()
        for name in ["phone", "laptop"] { #expect(try account.device(name).credentials().isEmpty) }
        #expect(account.droppedRevisions.isEmpty)
    }
}

/// A store removed and made again numbers its changes afresh, and other vaults upload into it what
/// it lacks: where a collected passkey's revisions end there is not known, so what was collected
/// before is remembered for good (`through` 2^64−1), never forgotten by the new store's numbers.
@Test func passkeysCollectedUnderAnotherStoreAreNeverForgotten() throws {
    try withTemporaryDirectory { dir in
        let (clock, storePath, before) = try { () throws -> (VirtualClock, String, SyncState.Deletion) in
            let (clock, phone, desk, made) = try passkeyOnBoth(dir)
            try phone.addDevice("tablet", pin: nil)  // two devices: the phone's vault makes the store again
            clock.advance(by: 2_000)
            _ = try phone.device().delete(credentialId: made.id)
            clock.advance(by: 2_000)
            try desk.sync()
            try phone.sync()
            let collected = try #require(try SyncState.read(in: phone.vault)?.collected.first)
            return (clock, phone.storePath, collected)
        }()  // both accounts closed: their locks let go
        #expect(before.through != nil && before.through != .max)
        try FileManager.default.removeItem(atPath: storePath)
        let phone = try Account.open(at: dir + "/phone", passphrase: secret(passphrase), clock: clock.wallClock, random: .seeded(3))
        _ = try phone.device().register(optionsJSON: creationOptions(userId: "BAUG", userVerification: "discouraged"), origin: origin)
        #expect(FileManager.default.fileExists(atPath: storePath), "\(phone.storeProblem ?? "")")
        let after = try #require(try SyncState.read(in: phone.vault)?.collected.first { $0.itemId == before.itemId })
        #expect(after.through == .max)
    }
}

@Test func aDeviceRecoveredByApprovalIsEnrolledInTheDirectoryAtOnce() throws {
    try withTemporaryDirectory { dir in
        let clock = VirtualClock(start: start)
        let phone = try Account.create(at: dir + "/phone", passphrase: secret(passphrase), kdf: .min, deviceName: "phone",
                                       biometricPIN: secret("1111"), clock: clock.wallClock, random: .seeded(3))
        try phone.addDevice("laptop", pin: secret("2222"), approver: UserPolicy(pin: secret("1111")))
        let desk = try phone.addDevice("desk", inNewVaultAt: dir + "/desk", passphrase: secret(passphrase), kdf: .min, pin: nil)
        func laptopEnrolled() throws -> Bool? { try desk.syncStatus().devices.first { $0.name == "laptop" }?.biometryEnrolled }
        #expect(try laptopEnrolled() == true)
        try phone.resetDevice("laptop")
        #expect(try laptopEnrolled() == false)
        // Every way a PIN is enrolled is a change of the device, published as the others are.
        try phone.device("laptop").enrollBiometricPIN(secret("3333"), approvedBy: "phone", approver: UserPolicy(pin: secret("1111")))
        #expect(try laptopEnrolled() == true)
    }
}
