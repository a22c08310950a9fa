@_spi(ByteOrder) import ByteOrder
import Foundation
import KeyVault
@testable import Keychain
import Testing
import TestSupport
import VirtualAuthenticator

// What a change skips on a dense account, one vault's alone: the upload queue is written at every
// change in one exact-size buffer, and it is hashed for what other vaults hold only when there
// are other vaults. Neither may change what is written or what a commit collects.

private let start: UInt64 = 1_800_000_000_000

/// The upload queue as docs/vault-format.md gives sync state tag 3, appended byte by byte.
private func queueAsDocumented(_ queue: [SyncState.Upload]) -> [UInt8]? {
    guard !queue.isEmpty else { return nil }
    var out = [UInt8]()
    for upload in queue {
        out += upload.revisionId
        out += [UInt8(upload.rpId.count >> 8), UInt8(upload.rpId.count & 0xff)] + upload.rpId
        if let lands = upload.landsAt {
            out += [1] + BigEndianBytes.of(lands.ms) + BigEndianBytes.of(lands.order)
        } else {
            out += [UInt8](repeating: 0, count: 17)
        }
    }
    return out
}

@Test func theUploadQueueIsWrittenAsTheFormatSays() {
    let rps = ["example.com", "", String(repeating: "r", count: 300), "login.example.com"]
    var queue = [SyncState.Upload]()
    for n in 0..<40 {
        let lands: Instant? = n % 3 == 0 ? nil : Instant(ms: UInt64(n) * 1_000_003 + 0x0102_0304_0506, order: UInt64(n) << 40 | 7)
        queue.append(SyncState.Upload(revisionId: (0..<16).map { UInt8(truncatingIfNeeded: n * 16 + $0) }, rpId: Array(rps[n % rps.count].utf8),
                                      landsAt: lands, userHandle: n % 4 == 1 ? nil : [UInt8(n), 0xff]))
    }
    #expect(SyncState.bytes(queue: []) == nil)
    for count in [1, 2, 3, 17, 40] {
        let part = Array(queue.prefix(count))
        #expect(SyncState.bytes(queue: part) == queueAsDocumented(part), "\(count) uploads")
        var state = SyncState()
        state.queue = part
        let record = state.record()
        #expect(record.field(SyncState.Tag.queue).map(Array.init) == queueAsDocumented(part))
        // The user handles (tag 14): length u16 ‖ handle, 0 for one not known.
        let handles = part.flatMap { u in [UInt8((u.userHandle?.count ?? 0) >> 8), UInt8((u.userHandle?.count ?? 0) & 0xff)] + (u.userHandle ?? []) }
        #expect(record.field(SyncState.Tag.queueUsers).map(Array.init) == (part.allSatisfy { $0.userHandle == nil } ? nil : handles))
    }
}

/// The queue's encoding kept between commits, appended to an upload at a time, writes what
/// encoding the whole queue afresh writes — and is forgotten by any other change of the queue (a
/// kept one would then write uploads the queue no longer has).
@Test func theQueueKeptEncodedAsItGrowsIsWrittenAsAfreshAndForgottenByOtherChanges() {
    func upload(_ n: Int) -> SyncState.Upload {
        SyncState.Upload(revisionId: (0..<16).map { UInt8(truncatingIfNeeded: n * 16 + $0) }, rpId: Array("rp\(n % 3).example".utf8),
                         landsAt: n % 3 == 0 ? nil : Instant(ms: UInt64(n) * 1_000_003, order: UInt64(n)), userHandle: n % 4 == 1 ? nil : [UInt8(n), 9])
    }
    func afresh(_ state: SyncState) -> VaultRecord {
        var fresh = SyncState()
        fresh.queue = state.queue
        return fresh.record()
    }
    func queueFields(_ record: VaultRecord) -> [[UInt8]?] {
        [record.field(SyncState.Tag.queue).map(Array.init), record.field(SyncState.Tag.queueUsers).map(Array.init)]
    }
    var state = SyncState()
    // Handles not known at first: tag 14 absent until one is.
    state.append(upload: SyncState.Upload(revisionId: [UInt8](repeating: 1, count: 16), rpId: Array("a.example".utf8), landsAt: nil))
    #expect(queueFields(state.record()) == queueFields(afresh(state)) && queueFields(state.record())[1] == nil)
    for n in 0..<30 {
        state.append(upload: upload(n))
        #expect(queueFields(state.record()) == queueFields(afresh(state)), "after \(n + 1) appends")
    }
    #expect(queueFields(state.record())[0] == queueAsDocumented(state.queue))
    // Uploads taken off the front, one changed in place, then more appended: written as the queue is.
    var kept = state
    kept.queue.removeFirst(5)
    kept.queue[2].userHandle = [0xAB]
    #expect(queueFields(kept.record()) == queueFields(afresh(kept)) && queueFields(kept.record())[0] == queueAsDocumented(kept.queue))
    for n in 30..<33 {
        kept.append(upload: upload(n))
        #expect(queueFields(kept.record()) == queueFields(afresh(kept)), "after \(n + 1) appends")
    }
    // Emptied: neither tag.
    kept.queue.removeAll()
    #expect(queueFields(kept.record()) == [nil, nil])
    // The copy it was taken from is as it was.
    #expect(state.queue.count == 31 && queueFields(state.record()) == queueFields(afresh(state)))
    // Whether a state keeps the encoding or not, it equals the same state without it.
    var plain = SyncState()
    plain.queue = state.queue
    #expect(plain == state && state == plain)
    // A state read back from its record keeps appending from what was read.
    var read = state
    read.queue = Array(state.queue)
    read.append(upload: upload(99))
    #expect(queueFields(read.record()) == queueFields(afresh(read)))
}

/// A queued revision is not held by another vault's device until that device has received it;
/// with no other vault the queue is not asked (every device is this vault's, and the schedule
/// says what each holds), so it is not gathered either.
@Test func theQueueIsAskedForWhatOtherVaultsHoldOnlyWhenThereAreOtherVaults() throws {
    try withTemporaryDirectory { dir in
        let clock = VirtualClock(start: start)
        let phone = try Account.create(at: dir + "/phone", passphrase: secret(passphrase), kdf: .min, deviceName: "phone",
                                       biometricPIN: nil, clock: clock.wallClock, random: .seeded(3))
        try phone.addDevice("tablet", pin: nil)
        try phone.setDelays(upload: DelayRange(parsing: "1h"), download: DelayRange(parsing: "2s"))
        // Its upload lands in an hour: it waits in the queue.
        _ = try phone.device("phone").register(optionsJSON: creationOptions(userId: "AQID", userVerification: "discouraged"), origin: origin)
        let queued = try #require(try phone.storeLink.savedSyncState(in: phone.vault)).queue
        #expect(!queued.isEmpty)
        let alone = phone.knowledgeElsewhere()
        #expect(alone.others.isEmpty && alone.queued.isEmpty)

        // Another vault's device: the queue counts again.
        _ = try phone.addDevice("desk", inNewVaultAt: dir + "/desk", passphrase: secret(passphrase), kdf: .min, pin: nil)
        try phone.setOnline(false, device: "phone")  // what it makes now waits, its landing not known
        _ = try phone.device("phone").register(optionsJSON: creationOptions(userId: "BAUG", userVerification: "discouraged"), origin: origin)
        let saved = try #require(try phone.storeLink.savedSyncState(in: phone.vault))
        #expect(!saved.queue.isEmpty)
        let shared = phone.knowledgeElsewhere()
        #expect(!shared.others.isEmpty)
        #expect(shared.queued == Set(saved.queue.map(\.revisionId)))
    }
}

/// A time a generated scenario writes at every step (`at 123456ms`) is read by a fast path; it and
/// every other form read as the general rules say.
@Test func millisecondsReadAlikeOnTheFastPathAndOffIt() {
    let cases: [(String, UInt64?)] = [
        ("0ms", 0), ("5ms", 5), ("007ms", 7), ("123456ms", 123_456), ("999999999999999ms", 999_999_999_999_999),
        ("1000000000000000ms", 1_000_000_000_000_000), ("1.5ms", 2), ("2s", 2000), ("1h30m", 5_400_000), ("1m5ms", 60_005),
        ("ms", nil), ("m", nil), ("12msx", nil), ("12 ms", nil), ("-5ms", nil), ("\u{FF11}ms", nil), ("5mss", nil), ("", nil),
        ("10000000000000000000ms", nil),
    ]
    for (text, expected) in cases {
        #expect(DelayRange.milliseconds(text) == expected, "\(text)")
        #expect(DelayRange.milliseconds(("at " + text).dropFirst(3)) == expected, "\(text) as a substring")
    }
}
