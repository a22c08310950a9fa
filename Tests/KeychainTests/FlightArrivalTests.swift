import Foundation
import KeyVault
@testable import Keychain
import Testing
import TestSupport
import VirtualAuthenticator

// What a sync keeps from one sync to the next to stay cheap on a dense account: the arrival of
// each change in flight at each device (``Account/FlightArrivals``), and each RP's kept view for a
// device's whole list. Neither may change what a device holds or when a deletion is collected.

private let start: UInt64 = 1_800_000_000_000

/// The records (revisions and replicas) of the passkey `id` in `account`'s vault.
private func records(of id: [UInt8], in account: Account) throws -> Int {
    try account.vault.records(kind: .credential).filter { record in
        let inner = StoreReplica.revisionRecord(record)?.record ?? record
        return inner.field(CredentialRecord.Tag.credentialId).map(Array.init) == id
    }.count
}

private func twoDevices(_ dir: String, clock: VirtualClock) throws -> Account {
    let account = try Account.create(at: dir + "/vault", passphrase: secret(passphrase), kdf: .min, deviceName: "phone",
                                     biometricPIN: nil, clock: clock.wallClock, random: .seeded(7),
                                     durability: .none, storeInMemory: true)
    try account.addDevice("laptop", pin: nil)
    try account.setDelays(upload: nil, download: DelayRange(parsing: "2s"), device: "laptop")
    return account
}

/// A deletion in flight while the laptop is offline has no arrival there; its delay changes
/// (2 s to 5 s) before it comes back. The arrival kept from before must not be used: the deletion
/// reaches the laptop 5 s after it is back — not never (the arrival kept while it was offline),
/// nor after 2 s (the delay in force when the arrival was first worked out) — and only then is
/// it collected.
@Test func anArrivalKeptForAChangeInFlightIsWorkedOutAgainWhenTheScheduleChanges() throws {
    try withTemporaryDirectory { dir in
        let clock = VirtualClock(start: start)
        let account = try twoDevices(dir, clock: clock)
        let made = try account.device("phone").register(optionsJSON: creationOptions(userVerification: "discouraged"), origin: origin)
            .result.credential
        clock.advance(by: 3_000)
        #expect(try account.device("laptop").credentials().map(\.id) == [made.id])
        try account.setOnline(false, device: "laptop")
        clock.advance(by: 1_000)
        _ = try account.device("phone").delete(credentialId: made.id)
        clock.advance(by: 10_000)
        try account.sync()
        #expect(try records(of: made.id, in: account) > 0, "collected while the laptop was offline")
        #expect(account.storeLink.flightArrivals.count == 1, "the deletion's arrivals are not kept")
        try account.setDelays(upload: nil, download: DelayRange(parsing: "5s"), device: "laptop")
        try account.setOnline(true, device: "laptop")
        clock.advance(by: 3_000)
        try account.sync()
        #expect(try records(of: made.id, in: account) > 0, "collected after the old delay: a kept arrival went stale")
        #expect(try account.device("laptop").credentials().map(\.id) == [made.id])
        clock.advance(by: 2_000)
        try account.sync()
        #expect(try account.device("laptop").credentials().isEmpty)
        #expect(try records(of: made.id, in: account) == 0, "never collected: the arrival kept while offline was used")
        #expect(account.storeLink.flightArrivals.count == 0)
    }
}

/// A change in flight whose arrivals were kept, under a schedule that changes only for a device
/// that has it already: it arrives at the others as drawn before (the same seed, delays and
/// revision give the same draw), and a sync that finds it everywhere forgets it.
@Test func keptArrivalsMatchTheScheduleDrawnAgain() throws {
    try withTemporaryDirectory { dir in
        let clock = VirtualClock(start: start)
        let account = try twoDevices(dir, clock: clock)
        try account.setDelays(upload: nil, download: DelayRange(parsing: "1s..60s"), device: "laptop")
        let made = try account.device("phone").register(optionsJSON: creationOptions(userVerification: "discouraged"), origin: origin)
            .result.credential
        let history = try account.historyFromRecords(rpIds: nil)
        let revision = try #require(history.revisions.first)
        let laptop = try account.deviceRecord(named: "laptop")
        let landed = try #require(account.landedAt(revision, in: history))
        let arrival = try #require(account.arrival(of: revision.id, at: laptop, landed: landed))
        var seen = false
        while clock.now <= arrival.ms + 1_000 {
            try account.sync()
            let holds = try account.device("laptop").credentials().map(\.id) == [made.id]
            #expect(holds == (Instant.endOf(clock.now) >= arrival), "at \(clock.now - start) ms, arrival at \(arrival.ms - start) ms")
            seen = seen || holds
            clock.advance(by: 500)
        }
        try account.sync()
        #expect(seen)
        #expect(account.storeLink.flightArrivals.count == 0)
    }
}

private func options(rp: String, userId: String) -> [UInt8] {
    json([
        "rp": ["id": rp, "name": "Example"],
        "user": ["id": userId, "name": "u\(userId)@\(rp)", "displayName": "U"],
        "challenge": "Y2hhbGxlbmdlLTE",
        "pubKeyCredParams": [["type": "public-key", "alg": -7]],
        "authenticatorSelection": ["userVerification": "discouraged"],
    ])
}

/// A device's whole list (every RP) is put together from each RP's kept view: the same passkeys,
/// in the same order (creation, across RPs), as the view of the whole history read afresh —
/// after registrations on two RPs interleaved, passkeys still in flight, and a deletion.
@Test func aDevicesWholeListFromKeptViewsEqualsTheViewOfTheWholeHistory() throws {
    try withTemporaryDirectory { dir in
        let clock = VirtualClock(start: start)
        let account = try twoDevices(dir, clock: clock)
        var made = [Credential]()
        for n in 0..<12 {
            let rp = n % 3 == 0 ? "login.example.com" : "example.com"
            made.append(try account.device(n % 2 == 0 ? "phone" : "laptop")
                .register(optionsJSON: options(rp: rp, userId: Base64URL.encode([UInt8(n), 1])), origin: origin).result.credential)
            clock.advance(by: 700)
            if n == 7 { _ = try account.device("phone").delete(credentialId: made[3].id) }
            for name in ["phone", "laptop"] {
                let device = try account.deviceRecord(named: name)
                let kept = try account.view(of: device).items.map { Base64URL.encode($0.credential.id) + "/\($0.credential.backupState)" }
                let whole = try account.viewFromRecords(of: device).items.map { Base64URL.encode($0.credential.id) + "/\($0.credential.backupState)" }
                #expect(kept == whole, "\(name) after \(n + 1) registrations")
            }
        }
        #expect(Set(try account.device("phone").credentials().map { $0.rpId }) == ["example.com", "login.example.com"])
    }
}

/// The sync state a writer keeps as the decoded form of the record it has just committed
/// (``SyncState/asWritten()``) is what decoding that record gives: through registrations, sign-in
/// counts, deletions waiting and collected, changes in flight and a device offline.
@Test func theSyncStateKeptAfterACommitIsTheRecordDecoded() throws {
    try withTemporaryDirectory { dir in
        let clock = VirtualClock(start: start)
        let account = try twoDevices(dir, clock: clock)
        try account.setDelays(upload: DelayRange(parsing: "1s..20s"), download: DelayRange(parsing: "1s..90s"))
        var made = [Credential]()
        var compared = 0
        for n in 0..<24 {
            if n == 9 { try account.setOnline(false, device: "laptop") }
            if n == 15 { try account.setOnline(true, device: "laptop") }
            made.append(try account.device(n % 2 == 0 ? "phone" : "laptop")
                .register(optionsJSON: creationOptions(userId: Base64URL.encode([UInt8(n), 2]), userVerification: "discouraged"), origin: origin)
                .result.credential)
            if n % 4 == 3 { _ = try account.device("laptop").delete(credentialId: made[n - 2].id) }  // the laptop made it
            clock.advance(by: 7_000)
            let stored = try SyncState.read(in: account.vault)
            if let pending = account.storeLink.pendingSyncState, pending.version > stored?.version ?? 0 { continue }
            #expect(try account.storeLink.savedSyncState(in: account.vault) == stored, "after \(n + 1) registrations")
            compared += 1
        }
        #expect(compared > 0)
        let state = try #require(try SyncState.read(in: account.vault))
        #expect(state.asWritten()?.version == state.version + 1)
    }
}
