import Foundation
import KeyVault
import SyncStore
@testable import Keychain
import Testing
import TestSupport
import VirtualAuthenticator

// The store is what a vault learns other vaults' passkeys from: two vaults sharing one store,
// each with its own device, and a vault that forgets its copy of the store and reads it again.

private let start: UInt64 = 1_800_000_000_000

private func twoVaults(_ dir: String, clock: VirtualClock) throws -> (Account, Account) {
    let phone = try Account.create(at: dir + "/phone", passphrase: secret(passphrase), kdf: .min, deviceName: "phone",
                                   biometricPIN: secret("1111"), clock: clock.wallClock, random: .seeded(1))
    try phone.setDelays(upload: DelayRange(parsing: "1s"), download: DelayRange(parsing: "2s"))
    let desk = try phone.addDevice("desk", inNewVaultAt: dir + "/desk", passphrase: secret(passphrase), kdf: .min, pin: secret("2222"),
                                   approver: UserPolicy(pin: secret("1111")))
    return (phone, desk)
}

private func files(under dir: String) throws -> [String: Data] {
    var out = [String: Data]()
    for name in try FileManager.default.subpathsOfDirectory(atPath: dir) where !FileManager.default.isDirectory(dir + "/" + name) {
        out[name] = try Data(contentsOf: URL(fileURLWithPath: dir + "/" + name))
    }
    return out
}

@Test func aPasskeyMadeInOneVaultReachesAnotherThroughTheStoreAfterTheDelays() throws {
    try withTemporaryDirectory { dir in
        let clock = VirtualClock(start: start)
        let (phone, desk) = try twoVaults(dir, clock: clock)
        #expect(desk.deviceNames == ["desk"] && phone.deviceNames == ["phone"])
        let made = try phone.device("phone").register(optionsJSON: creationOptions(userVerification: "required"), origin: origin,
                                                      user: UserPolicy(pin: secret("1111"))).result.credential
        clock.advance(by: 1_000)
        _ = try phone.device("phone").credentials()  // the phone runs once its upload has landed
        clock.advance(by: 1_999)
        #expect(try desk.device().credentials().isEmpty)
        clock.advance(by: 1)
        #expect(try desk.device().credentials().map(\.id) == [made.id])
        // Made with user verification there, it signs here with this device's own PIN.
        let signed = try desk.device().sign(optionsJSON: requestOptions(userVerification: "required"), origin: origin,
                                            user: UserPolicy(pin: secret("2222")))
        #expect(signed.result.credential.id == made.id)
        #expect(throws: DeviceError.self) {
            _ = try desk.device().sign(optionsJSON: requestOptions(userVerification: "required"), origin: origin, user: UserPolicy(pin: secret("1111")))
        }
        // And back: the desk's passkey reaches the phone.
        let fromDesk = try desk.device().register(optionsJSON: creationOptions(userId: "BAUG", userVerification: "discouraged"),
                                                  origin: origin).result.credential
        clock.advance(by: 1_000)
        _ = try desk.device().credentials()
        clock.advance(by: 2_000)
        #expect(Set(try phone.device("phone").credentials().map(\.id)) == [made.id, fromDesk.id])
    }
}

@Test func aVaultThatForgetsItsCopyOfTheStoreGetsTheSamePasskeysBackFromTheStoreAlone() throws {
    try withTemporaryDirectory { dir in
        let clock = VirtualClock(start: start)
        let (phone, desk) = try twoVaults(dir, clock: clock)
        for user in ["AQID", "BAUG", "BwgJ"] {
            _ = try phone.device("phone").register(optionsJSON: creationOptions(userId: user, userVerification: "discouraged"), origin: origin)
        }
        clock.advance(by: 1_000)
        try phone.sync()  // the phone's next sync uploads them
        clock.advance(by: 60_000)
        try desk.sync()  // the desk's keeps them as replicas
        let held = try desk.device().credentials()
        #expect(held.count == 3)
        let replicas = try desk.vault.records(kind: .credential).filter { StoreReplica.revisionRecord($0) != nil }
        #expect(replicas.count == 3)  // what the desk holds of the phone's is its replica of the store
        try desk.forgetStore()
        #expect(try desk.device().credentials().map(\.id) == held.map(\.id))
        // The store alone gave them back: removed from it, a forgetting vault has nothing.
        try desk.forgetStore()
        try DirectoryStore.remove(at: dir + "/phone/cloud")
        try desk.forgetStore()
        #expect(try desk.device().credentials().isEmpty)
    }
}

@Test func aReaderWritesNeitherTheVaultNorTheStore() throws {
    try withTemporaryDirectory { dir in
        let clock = VirtualClock(start: start)
        do {  // both accounts closed at the end of this block
            let (phone, desk) = try twoVaults(dir, clock: clock)
            _ = try phone.device("phone").register(optionsJSON: creationOptions(userVerification: "discouraged"), origin: origin)
            clock.advance(by: 1_000)
            _ = try phone.device("phone").credentials()
            withExtendedLifetime(desk) {}
        }
        clock.advance(by: 5_000)
        let before = (try files(under: dir + "/desk"), try files(under: dir + "/phone"))
        let reader = try Account.open(at: dir + "/desk", passphrase: secret(passphrase), access: .read, clock: clock.wallClock)
        #expect(try reader.device().credentials().count == 1)
        _ = try reader.syncStatus()
        #expect(try files(under: dir + "/desk") == before.0)
        #expect(try files(under: dir + "/phone") == before.1)
    }
}

@Test func aNewPassphraseKeepsTheReplicasOfOtherVaultsPasskeys() throws {
    try withTemporaryDirectory { dir in
        let clock = VirtualClock(start: start)
        let (phone, desk) = try twoVaults(dir, clock: clock)
        let made = try phone.device("phone").register(optionsJSON: creationOptions(userVerification: "discouraged"), origin: origin).result.credential
        clock.advance(by: 1_000)
        _ = try phone.device("phone").credentials()
        clock.advance(by: 2_000)
        #expect(try desk.device().credentials().map(\.id) == [made.id])
        // Every key sealed under the old vault key is sealed again; the replica's, under the
        // account key, is left as it is — and still signs.
        try desk.changePassphrase(to: secret("a new passphrase"), kdf: .min)
        #expect(try desk.device().sign(optionsJSON: requestOptions(userVerification: "discouraged"), origin: origin).result.credential.id == made.id)
    }
}

/// A throw-away account (a scenario's) syncs through a store in memory: the same arrivals, through
/// the same port, with no store directory made — and a store that goes down sets it aside as a
/// directory store's would.
@Test func aThrowAwayAccountSyncsThroughAStoreInMemoryAndMakesNoStoreDirectory() throws {
    try withTemporaryDirectory { dir in
        let clock = VirtualClock(start: start)
        let account = try Account.create(at: dir + "/vault", passphrase: secret(passphrase), kdf: .min, deviceName: "phone",
                                         biometricPIN: secret("1111"), clock: clock.wallClock, random: .seeded(1),
                                         durability: .none, storeInMemory: true)
        try account.addDevice("laptop", pin: secret("2222"), approver: UserPolicy(pin: secret("1111")))
        try account.setDelays(upload: DelayRange(parsing: "1s"), download: DelayRange(parsing: "2s"))
        let made = try account.device("phone").register(optionsJSON: creationOptions(userVerification: "discouraged"), origin: origin).result.credential
        clock.advance(by: 2_999)
        #expect(try account.device("laptop").credentials().isEmpty)
        clock.advance(by: 1)
        #expect(try account.device("laptop").credentials().map(\.id) == [made.id])
        // The next sync sends it through the store: the store holds the revision, and nothing is on
        // disk for it.
        try account.sync()
        let store = try #require(account.storeLink.memoryStore)
        #expect(try store.extent().head >= 1)
        #expect(!FileManager.default.fileExists(atPath: dir + "/vault/cloud"))
        #expect(account.storeProblem == nil)
        // Down: set aside with a reason, and the devices keep working from the vault.
        store.isAvailable = false
        _ = try account.device("phone").register(optionsJSON: creationOptions(userId: "BAUG", userVerification: "discouraged"), origin: origin)
        clock.advance(by: 5_000)
        #expect(try account.device("laptop").credentials().map(\.id).contains(made.id))
        #expect(account.storeProblem?.contains("in memory") == true && account.storeProblem?.contains("unavailable") == true)
    }
}

/// Opening a vault to write syncs with the store, which writes; opening reads only the index's
/// root and the log after it. `openVerified` (`vault compact`, `vault passwd`, `sync rebuild`)
/// reads and authenticates every frame first: a frame damaged where the index covers it fails it
/// with `vaultCorrupted` before anything of the vault or its store is written. Plain `open` of the
/// same vault does write (the desk's passkey downloaded, the sync state): what the check guards.
@Test func openingVerifiedWritesNothingWhenAFrameTheIndexCoversIsDamaged() throws {
    try withTemporaryDirectory { dir in
        let clock = VirtualClock(start: start)
        let indexed: UInt64
        do {
            let (phone, desk) = try twoVaults(dir, clock: clock)
            for n in 0..<20 {
                _ = try phone.device("phone").register(optionsJSON: creationOptions(userId: Base64URL.encode([UInt8(n), 7, 7]),
                                                                                    userVerification: "discouraged"), origin: origin)
            }
            _ = try desk.device().register(optionsJSON: creationOptions(userId: "BAUG", userVerification: "discouraged"), origin: origin)
            clock.advance(by: 1_000)
            _ = try desk.device().credentials()  // the desk's passkey lands in the store
            indexed = try #require(try phone.facts.indexedFrames)
        }
        #expect(indexed >= 8)
        let logPath = dir + "/phone/log.0"
        var log = try [UInt8](Data(contentsOf: URL(fileURLWithPath: logPath)))
        var offset = 0
        for _ in 0..<(indexed / 2) {
            offset += 4 + Int(UInt32(log[offset]) << 24 | UInt32(log[offset + 1]) << 16 | UInt32(log[offset + 2]) << 8 | UInt32(log[offset + 3]))
        }
        log[offset + 40] ^= 0x01
        try Data(log).write(to: URL(fileURLWithPath: logPath))
        let before = try files(under: dir + "/phone")

        expectDeviceError(.vaultCorrupted) {
            try Account.openVerified(at: dir + "/phone", passphrase: secret(passphrase), clock: clock.wallClock)
        }
        #expect(try files(under: dir + "/phone") == before)

        _ = try Account.open(at: dir + "/phone", passphrase: secret(passphrase), clock: clock.wallClock)
        #expect(try files(under: dir + "/phone") != before)
    }
}

/// A held vault's sync leaves its cursor and queue to the next commit (``StoreLink/pendingSyncState``):
/// the account works from the newer state meanwhile, and the next commit writes its successor —
/// nothing uploads twice, nothing queued is lost.
@Test func aHeldVaultsSyncStateRidesWithTheNextCommit() throws {
    try withTemporaryDirectory { dir in
        let clock = VirtualClock(start: start)
        let account = try Account.create(at: dir + "/vault", passphrase: secret(passphrase), kdf: .min, deviceName: "phone",
                                         biometricPIN: secret("1111"), clock: clock.wallClock, random: .seeded(1),
                                         durability: .none, sharing: .held, storeInMemory: true)
        try account.addDevice("laptop", pin: secret("2222"), approver: UserPolicy(pin: secret("1111")))
        try account.setDelays(upload: DelayRange(parsing: "1s"), download: DelayRange(parsing: "2s"))
        let first = try account.device("phone").register(optionsJSON: creationOptions(userVerification: "discouraged"), origin: origin).result.credential
        let store = try #require(account.storeLink.memoryStore)
        let headBefore = try store.extent().head
        clock.advance(by: 1_000)
        try account.sync()  // the phone's revision uploads
        #expect(try account.device("laptop").credentials().isEmpty)
        #expect(try store.extent().head == headBefore + 1)
        let pending = try #require(account.storeLink.pendingSyncState)
        #expect(pending.version > (try SyncState.storedVersion(in: account.vault)))
        #expect(try account.storeLink.savedSyncState(in: account.vault)?.cursor == pending.cursor && pending.queue.isEmpty)
        // The next change commits the successor: the vault's record is the account's state again.
        let second = try account.device("phone").register(optionsJSON: creationOptions(userId: "BAUG", userVerification: "discouraged"),
                                                          origin: origin).result.credential
        let stored = try #require(try SyncState.read(in: account.vault))
        #expect(stored.version > pending.version && stored.cursor == pending.cursor && stored.queue.count == 1)
        clock.advance(by: 3_000)
        #expect(Set(try account.device("laptop").credentials().map(\.id)) == [first.id, second.id])
        try account.sync()  // the second uploads
        #expect(try store.extent().head == headBefore + 2)  // each revision once
    }
}
