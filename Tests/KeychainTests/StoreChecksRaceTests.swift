import Foundation
import SyncStore
@testable import Keychain
import Testing
import TestSupport

// A vault's own uploads read back after another vault's upload landed between its read and its
// append: nothing is wrong with the store, so nothing is named.

/// A ``HostileStore`` that runs `before` once, just before the first append of more than one object.
private final class InterleavingStore: AccountStore, @unchecked Sendable {
    let inner = HostileStore()
    var before: (() throws -> Void)?

    var sizes = [Int]()
    func append(_ objects: [StoreObject]) throws(StoreError) -> [UInt64] {
        sizes.append(objects.count)
        if objects.count > 1, let run = before {
            before = nil
            do { try run() } catch { Issue.record("the interleaved upload failed: \(error)") }
        }
        return try inner.append(objects)
    }
    func changes(after cursor: UInt64, limit: Int) throws(StoreError) -> ChangePage { try inner.changes(after: cursor, limit: limit) }
    func snapshot() throws(StoreError) -> StoreSnapshot? { try inner.snapshot() }
    func compact(through sequence: UInt64, snapshot parts: [StoreObject]) throws(StoreError) { try inner.compact(through: sequence, snapshot: parts) }
    func extent() throws(StoreError) -> StoreExtent { try inner.extent() }
    func metadata(_ keys: [String]) throws(StoreError) -> [String: StoreMetadata] { try inner.metadata(keys) }
    @discardableResult
    func setMetadata(_ key: String, _ bytes: [UInt8], expecting expected: UInt64) throws(StoreError) -> UInt64 {
        try inner.setMetadata(key, bytes, expecting: expected)
    }
}

@Test func anUploadOfSeveralObjectsWithAnotherVaultsUploadBetweenIsNoReplay() throws {
    let store = InterleavingStore()
    let clock = VirtualClock(start: 1_800_000_000_000)
    try Account.$storeHere.withValue(Account.StoreOverride(open: { _ in store }, exists: { _ in store.inner.holdsAnything })) {
        try Account.$objectBudgetHere.withValue(900) {
            try withTemporaryDirectory { dir in
                var phone: Account? = try Account.create(at: dir + "/phone", passphrase: secret(passphrase), kdf: .min, deviceName: "phone",
                                               biometricPIN: nil, clock: clock.wallClock, random: .seeded(11))
                let laptop = try phone!.addDevice("laptop", inNewVaultAt: dir + "/laptop", passphrase: secret(passphrase), kdf: .min, pin: nil)
                try phone!.setOnline(false, device: "phone")
                for user in ["AQID", "BAUG", "BwgJ"] {
                    _ = try phone!.device().register(optionsJSON: creationOptions(userId: user, userVerification: "discouraged"), origin: origin)
                }
                // The laptop's upload lands between the phone's read of the store and its append.
                store.before = {
                    _ = try laptop.device().register(optionsJSON: creationOptions(userId: "CgsM", userVerification: "discouraged"), origin: origin)
                }
                try phone!.setOnline(true, device: "phone")
                phone = nil
                // The next command's sync: the phone's three passkeys leave in one append, in more than one object.
                let again = try Account.open(at: dir + "/phone", passphrase: secret(passphrase), access: .write, clock: clock.wallClock)
                #expect(store.before == nil, "the phone uploaded several objects in one append: \(store.sizes)")
                let status = try again.syncStatus()
                let named = status.storeProblems
                #expect(named.isEmpty, "nothing is wrong with the store, yet: \(named.map(\.message))")
                #expect(again.storeWarnings.isEmpty, "\(again.storeWarnings)")
            }
        }
    }
}
