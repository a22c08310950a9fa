import Foundation
import KeyVault
import SyncStore
@testable import Keychain
import Testing
import TestSupport
import VirtualAuthenticator

// What the devices check of a store that goes back in time, loses, renumbers or reorders changes,
// drops or adds a snapshot part, or holds metadata that does not open: each is a named problem,
// never silence, and the account heals what it can. Vaults on one virtual clock share a
// ``HostileStore``, as machines would share a server.

private let start: UInt64 = 1_800_000_000_000

/// Vaults of one account, each open as one long-lived process holds it; ``reopen(_:)`` closes one
/// and opens it again, as the next command would.
private final class Fleet {
    let clock = VirtualClock(start: start)
    let dir: String
    var vaults = [String: Account]()

    init(_ dir: String) throws {
        self.dir = dir
        let phone = try Account.create(at: dir + "/phone", passphrase: secret(passphrase), kdf: .min, deviceName: "phone",
                                       biometricPIN: nil, clock: clock.wallClock, random: .seeded(11))
        vaults["phone"] = phone
        vaults["laptop"] = try phone.addDevice("laptop", inNewVaultAt: dir + "/laptop", passphrase: secret(passphrase), kdf: .min, pin: nil)
    }

    var phone: Account { vaults["phone"]! }
    var laptop: Account { vaults["laptop"]! }

    /// A vault that joins now, and reads the account from the store alone.
    @discardableResult
    func join(_ name: String) throws -> Account {
        let made = try phone.addDevice(name, inNewVaultAt: dir + "/" + name, passphrase: secret(passphrase), kdf: .min, pin: nil)
        vaults[name] = made
        return made
    }

    /// The vault closed and opened again, as the next command would.
    @discardableResult
    func reopen(_ name: String) throws -> Account {
        vaults[name] = nil
        let opened = try Account.open(at: dir + "/" + name, passphrase: secret(passphrase), access: .write, clock: clock.wallClock)
        vaults[name] = opened
        return opened
    }
}

@discardableResult
private func register(_ account: Account, _ user: String) throws -> [UInt8] {
    try account.device().register(optionsJSON: creationOptions(userId: user, userVerification: "discouraged"), origin: origin).result.credential.id
}

/// What the vault's first device holds once the vault has synced — as a command opening it
/// syncs; looking alone would not (docs/sync.md, "When a device syncs").
private func held(_ account: Account) throws -> Set<[UInt8]> {
    try account.sync()
    return Set(try account.device().credentials().map(\.id))
}

private func problems(_ account: Account, _ kind: StoreProblem.Kind) throws -> [StoreProblem] {
    try account.sync()
    return try account.syncStatus().storeProblems.filter { $0.kind == kind }
}

@Test func aStoreRolledBackAndWrittenAgainIsFoundAndWhatItLostIsUploadedAgain() throws {
    let store = HostileStore()
    try store.serving {
        try withTemporaryDirectory { dir in
            let fleet = try Fleet(dir)
            let u1 = try register(fleet.phone, "AQID")
            #expect(try held(fleet.laptop) == [u1])
            let backup = store.copy()
            let u2 = try register(fleet.phone, "BAUG")  // uploaded, acknowledged by the store
            store.restore(backup)                        // a restore from the older copy
            let u3 = try register(fleet.laptop, "BwgJ")  // the laptop never read u2: its write takes u2's number
            // Without the checks, every device but the phone would lack u2 for good.
            let phone = try fleet.reopen("phone")
            #expect(try held(phone) == [u1, u2, u3])
            let found = try problems(phone, .rolledBack)
            #expect(!found.isEmpty, "the phone names what the store did")
            #expect(found.allSatisfy { !$0.isOpen }, "and it has healed: the phone uploaded u2 again")
            #expect(phone.storeWarnings.contains { $0.contains("lost this vault's uploads") })
            #expect(try held(fleet.laptop) == [u1, u2, u3])
            let tablet = try fleet.join("tablet")
            #expect(try held(tablet) == [u1, u2, u3])
            // Forty more changes and a compaction: nothing is wrong any more.
            for i in 0..<40 { try register(i % 2 == 0 ? fleet.laptop : phone, String(format: "%04d", i).data(using: .utf8)!.base64URL) }
            #expect(try phone.syncStatus().storeProblems.allSatisfy { !$0.isOpen })
            #expect(store.extentNow.snapshot > 0)
            let late = try fleet.join("desk")
            #expect(try held(late).count == 43)
            #expect(try held(late) == held(fleet.laptop))
        }
    }
}

@Test func syncRebuildAfterARollbackHealsWhatTheStoreLost() throws {
    let store = HostileStore()
    try store.serving {
        try withTemporaryDirectory { dir in
            let fleet = try Fleet(dir)
            let u1 = try register(fleet.phone, "AQID")
            let backup = store.copy()
            let u2 = try register(fleet.phone, "BAUG")
            store.restore(backup)
            let u3 = try register(fleet.laptop, "BwgJ")
            // The laptop reads the store again from the start: nothing of its own is lost, and it
            // asks nothing; the phone's rebuild finds its own upload gone, and gives it back.
            try fleet.laptop.forgetStore()
            try fleet.phone.forgetStore()
            #expect(try problems(fleet.phone, .rolledBack).contains { $0.message.contains("lost this vault's uploads") && !$0.isOpen })
            #expect(try held(fleet.laptop) == [u1, u2, u3])
            #expect(try held(fleet.join("tablet")) == [u1, u2, u3])
        }
    }
}

@Test func withTheChecksOffTheStoreIsReadAsBeforeAndWhatARollbackLostStaysLost() throws {
    // AUTHCTL_STORE_CHECKS=off, which the partition checker uses to show it sees the losses the
    // checks prevent: nothing compared, nothing asked for, nothing reported.
    let store = HostileStore()
    try Account.$storeChecksHere.withValue(false) {
        try store.serving {
            try withTemporaryDirectory { dir in
                let fleet = try Fleet(dir)
                let u1 = try register(fleet.phone, "AQID")
                #expect(try held(fleet.laptop) == [u1])
                let backup = store.copy()
                let u2 = try register(fleet.phone, "BAUG")
                store.restore(backup)
                let u3 = try register(fleet.laptop, "BwgJ")  // u2's number
                // The laptop's next upload follows u3, which the phone never read: a gap in the
                // laptop's chain, which an unchecked read passes over.
                let u4 = try register(fleet.laptop, "CgsM")
                #expect(try held(fleet.reopen("phone")) == [u1, u2, u4], "the phone never reads u3, nor uploads u2 again")
                #expect(try held(fleet.reopen("laptop")) == [u1, u3, u4])
                #expect(try fleet.phone.syncStatus().storeProblems.isEmpty)
                #expect(try fleet.laptop.syncStatus().storeProblems.isEmpty)
                // A repair request that does not open is not reported, and none is asked in its place.
                store.overwrite(RepairRequest.key, with: RandomSource.live.bytes(100))
                #expect(try fleet.reopen("laptop").syncStatus().storeProblems.isEmpty)
                let planted = try #require(try store.metadata([RepairRequest.key])[RepairRequest.key])
                #expect(RepairRequest.read(planted, settings: fleet.laptop.settings) == .unreadable(version: planted.version))
                // One a checking vault asked is not answered: nothing is read again, nothing uploaded again.
                let asked = RepairRequest(id: RandomSource.live.bytes(16), vault: RandomSource.live.bytes(16), askedAt: start, head: 3, reason: "a test")
                #expect(try asked.publish(to: store, expecting: planted.version, settings: fleet.laptop.settings))
                #expect(try held(fleet.reopen("phone")) == [u1, u2, u4])
                #expect(try held(fleet.reopen("laptop")) == [u1, u3, u4])
            }
        }
    }
}

@Test func aChangeDeletedAndItsNumberGivenAgainIsMissingAndAskedForAgain() throws {
    let store = HostileStore()
    try store.serving {
        try withTemporaryDirectory { dir in
            let fleet = try Fleet(dir)
            let u1 = try register(fleet.phone, "AQID")
            let u2 = try register(fleet.phone, "BAUG")
            store.removeLast()                         // u2's change is gone, and its number free
            let u3 = try register(fleet.laptop, "BwgJ")  // takes u2's number
            // The phone's cursor is past the change it made: it sees another change there.
            #expect(try held(fleet.phone) == [u1, u2, u3])
            #expect(try held(fleet.laptop) == [u1, u2, u3])
            #expect(try held(fleet.join("tablet")) == [u1, u2, u3])
        }
    }
}

@Test func changesRenumberedWithoutAGapAreReadAgainAndNothingIsLost() throws {
    let store = HostileStore()
    try store.serving {
        try withTemporaryDirectory { dir in
            let fleet = try Fleet(dir)
            let u1 = try register(fleet.phone, "AQID")
            let u2 = try register(fleet.phone, "BAUG")
            #expect(try held(fleet.laptop) == [u1, u2])
            let u3 = try register(fleet.phone, "BwgJ")
            // The store renumbers: the phone's first upload removed, the rest moved down one.
            store.removeAndRenumber(1)
            try fleet.reopen("laptop")
            #expect(try held(fleet.laptop) == [u1, u2, u3], "u3 took the number the laptop had read u2 at: read again from the start")
            // Read again from the start, the phone's first upload is still gone: named, and asked for.
            let missing = try problems(fleet.laptop, .missing)
            #expect(missing.contains { $0.message.contains("numbered 1 to 1") && $0.isOpen }, "\(missing)")
            // The phone's first upload is gone from the store: the phone is asked, and gives it back.
            _ = try fleet.reopen("phone").syncStatus()
            #expect(try held(fleet.join("tablet")) == [u1, u2, u3])
            // Every vault answered: healed.
            #expect(try problems(fleet.reopen("laptop"), .missing).allSatisfy { !$0.isOpen })
        }
    }
}

@Test func changesGivenOutOfOrderAreNamedAndNothingIsLost() throws {
    let store = HostileStore()
    try store.serving {
        try withTemporaryDirectory { dir in
            let fleet = try Fleet(dir)
            let u1 = try register(fleet.phone, "AQID")
            let u2 = try register(fleet.phone, "BAUG")
            store.swap(1, 2)
            let tablet = try fleet.join("tablet")
            #expect(try held(tablet) == [u1, u2])
            let named = try tablet.syncStatus().storeProblems
            #expect(named.contains { $0.kind == .missing || $0.kind == .replayed }, "\(named)")
        }
    }
}

@Test func aRepairRequestTheStoreLostIsAskedAgainAndHeals() throws {
    let store = HostileStore()
    try store.serving {
        try withTemporaryDirectory { dir in
            let fleet = try Fleet(dir)
            try fleet.join("tablet")
            let u1 = try register(fleet.phone, "AQID")
            try fleet.laptop.sync()
            try fleet.vaults["tablet"]!.sync()
            let backup = store.copy()
            let u2 = try register(fleet.laptop, "BAUG")
            #expect(try held(fleet.phone) == [u1, u2])
            store.restore(backup)
            // The phone read the laptop's upload, which the store lost: only the laptop can give it
            // back, so the phone asks every vault (a repair request)...
            #expect(try fleet.reopen("phone").syncStatus().storeProblems.contains { $0.isOpen && $0.kind == .rolledBack })
            #expect(try store.metadata([RepairRequest.key])[RepairRequest.key] != nil)
            // ...and the store goes back again, to before the request was asked: nobody will ever answer it.
            store.restore(backup)
            for _ in 0..<3 {
                for name in ["laptop", "tablet", "phone"] { _ = try fleet.reopen(name).syncStatus() }
            }
            let open = try fleet.reopen("phone").syncStatus().storeProblems.filter(\.isOpen)
            #expect(open.isEmpty, "asked again, answered by every vault: healed (\(open.map(\.message)))")
            for name in ["phone", "laptop", "tablet"] { #expect(try held(fleet.reopen(name)) == [u1, u2]) }
        }
    }
}

@Test func aProblemWaitingForARequestAnotherReplacedWaitsForTheNewOne() throws {
    let store = HostileStore()
    try store.serving {
        try withTemporaryDirectory { dir in
            let fleet = try Fleet(dir)
            try fleet.join("tablet")
            let u1 = try register(fleet.phone, "AQID")
            try fleet.laptop.sync()
            try fleet.vaults["tablet"]!.sync()
            let backup = store.copy()
            let u2 = try register(fleet.laptop, "BAUG")
            #expect(try held(fleet.phone) == [u1, u2])
            store.restoreLog(backup)
            // The phone asks every vault for the laptop's lost upload.
            _ = try fleet.reopen("phone").syncStatus()
            let first = try #require(RepairRequest.read(try store.metadata([RepairRequest.key])[RepairRequest.key],
                                                        settings: fleet.phone.settings).request)
            // Before the tablet answers, it finds a later loss of the laptop's uploads and asks a
            // request of its own, which replaces the phone's in the store.
            let u3 = try register(fleet.phone, "BwgJ")
            let later = store.copy()
            let u4 = try register(fleet.laptop, "CgsM")
            #expect(try held(fleet.vaults["tablet"]!).contains(u4))
            store.restoreLog(later)
            _ = try fleet.reopen("tablet").syncStatus()
            let second = try #require(RepairRequest.read(try store.metadata([RepairRequest.key])[RepairRequest.key],
                                                         settings: fleet.phone.settings).request)
            #expect(second.id != first.id)
            for _ in 0..<3 {
                for name in ["laptop", "tablet", "phone"] { _ = try fleet.reopen(name).syncStatus() }
            }
            for name in ["phone", "laptop", "tablet"] {
                let vault = try fleet.reopen(name)
                let open = try vault.syncStatus().storeProblems.filter(\.isOpen)
                #expect(open.isEmpty, "\(name): the later request covers the earlier (\(open.map(\.message)))")
                #expect(try held(vault) == [u1, u2, u3, u4])
            }
        }
    }
}

/// Enough passkeys that the store compacts into a snapshot of several parts.
private func compacted(_ fleet: Fleet, _ store: HostileStore, count: Int) throws -> Set<[UInt8]> {
    var made = Set<[UInt8]>()
    for i in 0..<count { made.insert(try register(fleet.phone, String(format: "user%03d", i).data(using: .utf8)!.base64URL)) }
    #expect(store.extentNow.snapshot > 0)
    return made
}

@Test func aSnapshotPartDroppedIsFoundAndEveryVaultGivesBackWhatItHeld() throws {
    let store = HostileStore()
    try store.serving {
        try withTemporaryDirectory { dir in
            let fleet = try Fleet(dir)
            let made = try Account.$objectBudgetHere.withValue(2_000) { try compacted(fleet, store, count: 36) }
            #expect(store.snapshotParts.count > 3, "a snapshot of several parts")
            #expect(try held(fleet.laptop) == made)
            // One part (not the list of parts) lost by the store.
            store.editSnapshot { index, part in !(index == 2 && !SnapshotManifest.isManifest(part.id)) }
            try fleet.join("tablet")
            let named = try problems(fleet.vaults["tablet"]!, .snapshot)
            #expect(named.contains { $0.message.contains("lacks 1 of the") }, "\(named)")
            #expect(try held(fleet.vaults["tablet"]!).count < made.count, "the tablet has only what the store still holds")
            // Every vault answers the tablet's request: what the store lacks of theirs, they upload.
            _ = try fleet.reopen("phone").syncStatus()
            _ = try fleet.reopen("laptop").syncStatus()
            let again = try fleet.reopen("tablet")
            #expect(try held(again) == made)
            #expect(try problems(again, .snapshot).allSatisfy { !$0.isOpen }, "healed once every vault answered")
            #expect(try held(fleet.join("desk")) == made)
        }
    }
}

@Test func aSnapshotPartTheListDoesNotNameIsPassedOverAndNamed() throws {
    let store = HostileStore()
    try store.serving {
        try withTemporaryDirectory { dir in
            let fleet = try Fleet(dir)
            let made = try compacted(fleet, store, count: 34)
            let stranger = StoreObject(id: RandomSource.live.bytes(16), bytes: RandomSource.live.bytes(200))
            store.editSnapshot(keeping: { _, _ in true }, adding: [stranger])
            let tablet = try fleet.join("tablet")
            #expect(try held(tablet) == made)
            #expect(try problems(tablet, .snapshot).contains { $0.message.contains("does not list") })
        }
    }
}

@Test func aDirectoryThatDoesNotOpenIsNamedAndTheLastOneReadStandsInForIt() throws {
    let store = HostileStore()
    try store.serving {
        try withTemporaryDirectory { dir in
            let fleet = try Fleet(dir)
            _ = try register(fleet.phone, "AQID")
            #expect(try fleet.laptop.syncStatus().devices.map(\.name).sorted() == ["laptop", "phone"])
            store.overwrite(AccountDirectory.key, with: RandomSource.live.bytes(300))
            let laptop = try fleet.reopen("laptop")
            let status = try laptop.syncStatus()
            #expect(status.devices.map(\.name).sorted() == ["laptop", "phone"], "the phone is still known")
            #expect(status.storeProblems.contains { $0.kind == .metadata && $0.message.contains("device directory") })
            // A name another vault's device has is still taken.
            expectDeviceError(.invalidArgument) { try laptop.addDevice("phone", pin: nil) }
            // Published again: the directory opens, with both vaults' devices.
            let value = try #require(try store.metadata([AccountDirectory.key])[AccountDirectory.key])
            let read = AccountDirectory.read(value, settings: laptop.settings)
            #expect(!read.unreadable && Set(read.devices.map(\.name)) == ["laptop", "phone"])
        }
    }
}

@Test func settingsThatDoNotOpenAreNamedAndPublishedAgain() throws {
    let store = HostileStore()
    try store.serving {
        try withTemporaryDirectory { dir in
            let fleet = try Fleet(dir)
            try fleet.phone.setDelays(upload: DelayRange(parsing: "1s"), download: nil)
            store.overwrite(PublishedSettings.key, with: RandomSource.live.bytes(100))
            let laptop = try fleet.reopen("laptop")
            let named = try problems(laptop, .metadata)
            #expect(named.contains { $0.message.contains("sync settings") && !$0.isOpen })
            let value = try #require(try store.metadata([PublishedSettings.key])[PublishedSettings.key])
            #expect(PublishedSettings.read(value, settings: laptop.settings)?.unreadable == false)
        }
    }
}

@Test func aDeletionIsNotCollectedWhileADeviceHasNotReceivedItWhateverTheStoresNumbersSay() throws {
    let store = HostileStore()
    try store.serving {
        try withTemporaryDirectory { dir in
            let fleet = try Fleet(dir)
            try fleet.laptop.setDelays(upload: nil, download: DelayRange(parsing: "5s"), device: "laptop")
            let u1 = try register(fleet.phone, "AQID")
            fleet.clock.advance(by: 5_000)
            #expect(try held(fleet.laptop) == [u1])
            _ = try fleet.phone.device().delete(credentialId: u1)
            // The laptop has read the deletion but not received it yet (its download delay).
            try fleet.laptop.sync()
            try fleet.phone.sync()
            let phoneRecords = try fleet.phone.vault.records(kind: .credential).count
            #expect(phoneRecords > 0, "not collected: the laptop has not received the deletion")
            fleet.clock.advance(by: 5_000)
            #expect(try held(fleet.laptop).isEmpty)
            try fleet.laptop.sync()
            try fleet.phone.sync()
            #expect(try fleet.phone.vault.records(kind: .credential).isEmpty, "collected once every device received it")
        }
    }
}

@Test func aPasskeyCollectedBeforeTheStoreWentBackDoesNotComeBackForADeviceThatJoinsAfter() throws {
    let store = HostileStore()
    try store.serving {
        try withTemporaryDirectory { dir in
            let fleet = try Fleet(dir)
            let u1 = try register(fleet.phone, "AQID")
            let u2 = try register(fleet.phone, "BAUG")
            #expect(try held(fleet.laptop) == [u1, u2])
            let backup = store.copy()
            _ = try fleet.phone.device().delete(credentialId: u1)
            #expect(try held(fleet.laptop) == [u2])
            try fleet.phone.sync()
            try fleet.laptop.sync()
            #expect(try fleet.phone.vault.records(kind: .credential).count == 1, "collected: every device has the deletion")
            store.restore(backup)  // the old copy holds u1 alive, and no deletion
            try fleet.reopen("phone")
            #expect(try held(fleet.phone) == [u2])
            #expect(try held(fleet.join("tablet")) == [u2], "the store, compacted, no longer holds it")
            #expect(try held(fleet.reopen("laptop")) == [u2])
        }
    }
}

@Test func aDirectoryGoneBackLosesNoDeviceAndCollectsNothingEarly() throws {
    let store = HostileStore()
    try store.serving {
        try withTemporaryDirectory { dir in
            let fleet = try Fleet(dir)
            let early = store.copy()  // the directory knows the phone and the laptop only
            try fleet.join("tablet")
            try fleet.vaults["tablet"]!.setDelays(upload: nil, download: DelayRange(parsing: "5s"), device: "tablet")
            let doomed = try register(fleet.phone, "AQID")
            fleet.clock.advance(by: 5_000)
            #expect(try held(fleet.vaults["tablet"]!) == [doomed])
            store.restoreMetadata(AccountDirectory.key, from: early)  // the tablet is gone from it
            _ = try fleet.phone.device().delete(credentialId: doomed)
            for _ in 0..<3 {
                try fleet.phone.sync()
                try fleet.laptop.sync()
            }
            // The tablet has not received the deletion (its 5 s delay): nothing of the passkey is
            // collected, and it is still a device of the account everywhere.
            #expect(try fleet.phone.vault.records(kind: .credential).count == 2)
            #expect(try fleet.laptop.syncStatus().devices.map(\.name).contains("tablet"))
            #expect(try problems(fleet.phone, .rolledBack).contains { $0.message.contains("no longer lists tablet") })
            fleet.clock.advance(by: 5_000)
            #expect(try held(fleet.vaults["tablet"]!).isEmpty)
            for name in ["tablet", "phone", "laptop", "phone"] { try fleet.vaults[name]!.sync() }
            #expect(try fleet.phone.vault.records(kind: .credential).isEmpty, "collected once every device has it")
        }
    }
}

@Test func settingsGoneBackArePublishedAgainAsTheVaultHoldsThem() throws {
    let store = HostileStore()
    try store.serving {
        try withTemporaryDirectory { dir in
            let fleet = try Fleet(dir)
            try fleet.phone.setDelays(upload: nil, download: DelayRange(parsing: "2s"))
            let early = store.copy()
            try fleet.phone.setDelays(upload: nil, download: DelayRange(parsing: "5s"))
            try fleet.laptop.sync()  // the laptop takes 5 s up
            store.restoreMetadata(PublishedSettings.key, from: early)
            try fleet.laptop.sync()
            #expect(try problems(fleet.laptop, .rolledBack).contains { $0.message.contains("sync settings went back") })
            // What the store holds is the account's settings again, as a vault that reads it takes up.
            let value = try #require(try store.metadata([PublishedSettings.key])[PublishedSettings.key])
            #expect(PublishedSettings.read(value, settings: fleet.laptop.settings)?.value?.downloadDelay == DelayRange(parsing: "5s"))
        }
    }
}

@Test func aChangeSentBeforeItLandsStaysWhenItsDeviceIsResetAndEveryDeviceAgrees() throws {
    let store = HostileStore()
    try store.serving {
        try withTemporaryDirectory { dir in
            let fleet = try Fleet(dir)
            try fleet.phone.addDevice("watch", pin: nil)
            try fleet.phone.setDelays(upload: DelayRange(parsing: "3s"), download: nil, device: "watch")
            let made = try fleet.phone.device("watch").register(optionsJSON: creationOptions(userVerification: "discouraged"), origin: origin)
                .result.credential.id
            // Sent at once to the laptop's vault, with the moment it lands; then the watch is reset.
            try fleet.phone.resetDevice("watch")
            fleet.clock.advance(by: 4_000)
            #expect(try Set(fleet.phone.device("phone").credentials().map(\.id)) == [made])
            #expect(try held(fleet.laptop) == [made])
            #expect(try Set(fleet.phone.device("watch").credentials().map(\.id)) == [made])
        }
    }
}

@Test func aDeletionTheStoreSpoiledTwiceIsNotCollectedBeforeEveryDeviceHasIt() throws {
    let store = HostileStore()
    try store.serving {
        try withTemporaryDirectory { dir in
            let fleet = try Fleet(dir)
            let u1 = try register(fleet.phone, "AQID")
            #expect(try held(fleet.laptop) == [u1])
            // The phone's deletion is acknowledged, and kept empty by the store.
            store.spoilNextAppend()
            _ = try fleet.phone.device().delete(credentialId: u1)
            let u2 = try register(fleet.phone, "BAUG")
            // The laptop reads past the gap in the phone's uploads, and asks for what it lacks.
            try fleet.laptop.sync()
            #expect(try held(fleet.laptop) == [u1, u2])
            // The phone uploads the deletion again, and the store spoils that too. Collected now —
            // the laptop has read past the phone's first upload of it — the deletion would be gone
            // from the phone, and nothing could give it to the laptop any more.
            store.spoilNextAppend()
            try fleet.phone.sync()
            let u3 = try register(fleet.phone, "BwgJ")
            for _ in 0..<3 {
                try fleet.laptop.sync()
                try fleet.phone.sync()
            }
            #expect(try held(fleet.laptop) == [u2, u3], "the deletion reached the laptop")
            #expect(try held(fleet.phone) == [u2, u3])
        }
    }
}

@Test func chainsSayWhatIsWrongWithAVaultsUploads() {
    let vault = [UInt8](repeating: 7, count: 16)
    func digest(_ n: UInt8) -> [UInt8] { [UInt8](repeating: n, count: 32) }
    func link(_ index: UInt64, after previous: UInt64, _ d: UInt8) -> UploadLink {
        UploadLink(vault: vault, index: index, previous: previous == 0 ? .start : ChainPosition(index: previous, digest: digest(d)))
    }
    var chains = StoreChains()
    #expect(chains.follow(link(1, after: 0, 0), digest: digest(1)) == nil)
    #expect(chains.follow(link(2, after: 1, 1), digest: digest(2)) == nil)
    #expect(chains.follow(link(2, after: 1, 1), digest: digest(2)) == .replayed(index: 2))
    #expect(chains.follow(link(5, after: 4, 4), digest: digest(5)) == .missing(3...4))
    #expect(chains.follow(link(6, after: 5, 9), digest: digest(6)) == .forked(index: 5))
    #expect(chains.follow(link(3, after: 2, 2), digest: digest(3)) == .behind(index: 3, read: 6))
    // An upload that restates what the store lost of its vault follows an older one: not a break.
    #expect(chains.follow(link(9, after: 4, 4), digest: digest(9)) == nil)
    #expect(chains.head(of: vault) == ChainPosition(index: 9, digest: digest(9)))
    #expect(UploadLink(bytes: link(3, after: 2, 2).bytes) == link(3, after: 2, 2))
    #expect(UploadLink(bytes: UploadLink(vault: vault, index: 2, previous: ChainPosition(index: 2, digest: digest(1))).bytes) == nil,
            "an upload cannot follow itself")
}

private extension Data {
    var base64URL: String { base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "") }
}

@Test func aGapInAVaultsUploadsFoundAgainAfterItWasGivenBackHealsWithoutAnUpload() throws {
    // The phone gave back what the store kept empty (a later upload restates it), but the gap stays
    // in the store's log until a compaction replaces it — and none does while a device that has
    // not synced since (the tablet) has yet to answer the repair request. Reading the store from
    // the start again, to answer another vault's request, the phone finds its gap where it was:
    // nothing of its own is lacking then, so nothing is uploaded, and the problem heals all the
    // same rather than staying open for good.
    let store = HostileStore()
    try store.serving {
        try withTemporaryDirectory { dir in
            let fleet = try Fleet(dir)
            try fleet.join("tablet")
            let u1 = try register(fleet.phone, "AQID")
            #expect(try held(fleet.laptop) == [u1])
            store.spoilNextAppend()
            let u2 = try register(fleet.phone, "BAUG")
            let u3 = try register(fleet.phone, "BwgJ")
            for _ in 0..<2 {
                try fleet.laptop.sync()
                try fleet.phone.sync()
            }
            #expect(try held(fleet.laptop) == [u1, u2, u3])
            #expect(try problems(fleet.phone, .missing).allSatisfy { !$0.isOpen })
            // Another gap, in the laptop's uploads: its repair request has the phone read the store
            // from the start again.
            store.spoilNextAppend()
            let u4 = try register(fleet.laptop, "CgsM")
            let u5 = try register(fleet.laptop, "DQ4P")
            for _ in 0..<3 {
                try fleet.phone.sync()
                try fleet.laptop.sync()
            }
            #expect(try held(fleet.phone) == [u1, u2, u3, u4, u5])
            let phone = try problems(fleet.phone, .missing)
            #expect(phone.contains { $0.message.hasPrefix("This vault's uploads numbered 2 to 2") })
            #expect(phone.allSatisfy { $0.remedy == .repair || !$0.isOpen }, "\(phone.filter(\.isOpen).map(\.message))")
        }
    }
}
