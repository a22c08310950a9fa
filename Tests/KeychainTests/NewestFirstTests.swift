import Foundation
import Synchronization
import KeyVault
@testable import Keychain
import Testing
import TestSupport
import VirtualAuthenticator

/// A discoverable sign-in's default account read newest first (``NewestFirst``) — each passkey's
/// records grouped and bounded by the latest creation instant they carry, passkeys worked out one
/// at a time from the newest bound down — against the device's view worked out from every
/// record: over randomized histories (several devices, delays drawn from ranges and changed,
/// offline spans, deletions, replacements, resets, the clock stepping back, devices added and
/// removed), after every step, for every device and for what a ceremony with and without user
/// verification may offer (and for every passkey), the newest must be the view's newest, item for
/// item, and the list worked out passkey by passkey (``NewestFirst/all()``) the view's list.
@Test(arguments: 0..<16 as Range<UInt64>)
func theNewestReadNewestFirstIsTheViewsNewest(seed: UInt64) throws {
    try Account.$splitRecordsHere.withValue(seed % 2 == 0 ? 4 : nil) {
        try withTemporaryDirectory { dir in
            var rng = SplitMix(seed: seed &+ 0x2e57)
            let clock = MovingClock(start: 1_800_000_000_000)
            let account = try Account.create(at: dir + "/vault", passphrase: secret(passphrase), kdf: .min, deviceName: "d0",
                                             biometricPIN: nil, clock: clock.wallClock, random: .seeded(seed))
            var names = ["d0", "d1", "d2"]
            var added = names.count
            for name in names.dropFirst() { try account.addDevice(name, pin: nil) }
            try account.setDelays(upload: DelayRange(parsing: "0s..2s"), download: DelayRange(parsing: "0s..3s"))
            var registered = [[UInt8]]()
            var compared = 0, shardsCompared = 0, fewerShards = 0
            for step in 0..<70 {
                let device = names[Int(rng.next() % UInt64(names.count))]
                switch rng.next() % 14 {
                case 0, 1, 2, 3:  // a registration, for a user that may have a passkey already (it replaces it)
                    let user = Base64URL.encode(Array("u\(rng.next() % 8)".utf8))
                    if let made = try? account.device(device).register(
                        optionsJSON: creationOptions(userId: user, userVerification: "discouraged"), origin: origin,
                        passkey: PasskeySettings(signatureCounter: rng.next() % 2 == 0)).result.credential {
                        registered.append(made.id)
                    }
                case 4:  // a sign-in naming a passkey: a counting one writes a revision
                    if let id = registered.randomElement(using: &rng) {
                        _ = try? account.device(device).sign(
                            optionsJSON: requestOptions(userVerification: "discouraged", allow: [Base64URL.encode(id)]), origin: origin)
                    }
                case 5 where !registered.isEmpty, 6 where !registered.isEmpty:
                    _ = try? account.device(device).delete(credentialId: registered[Int(rng.next() % UInt64(registered.count))])
                case 7 where device != "d0":
                    try account.setOnline(rng.next() % 2 == 0, device: device)
                case 8 where rng.next() % 4 == 0 && device != "d0":
                    try account.resetDevice(device)
                case 9:  // the clock stepped back: a passkey made later may be created earlier
                    clock.stepBack(by: rng.next() % 4000)
                case 10:
                    switch rng.next() % 3 {
                    case 0: try account.setDelays(upload: DelayRange(parsing: "0s..1s"), download: DelayRange(parsing: "1s..4s"))
                    case 1: try account.setDelays(upload: nil, download: DelayRange(parsing: "0s..2s"), device: device)
                    default: try account.setSyncOptions(backupStateImmediate: rng.next() % 2 == 0)
                    }
                case 11 where names.count < 5:
                    let name = "d\(added)"
                    added += 1
                    try account.addDevice(name, pin: nil)
                    names.append(name)
                case 12 where device != "d0" && rng.next() % 2 == 0:
                    try account.removeDevice(device)
                    names.removeAll { $0 == device }
                default:
                    break
                }
                clock.advance(by: rng.next() % 2500)
                for name in names {
                    let record = try account.deviceRecord(named: name)
                    let whole = try account.viewFromRecords(of: record, rpId: "example.com").items
                    // The list, passkey by passkey, is the view's.
                    let listed = try NewestFirst(account: account, device: record, rpId: "example.com").all()
                    #expect(listed.map(describe) == whole.map(describe), "seed \(seed), step \(step), device \(name)")
                    for wanted in offered {
                        let lazy = try NewestFirst(account: account, device: record, rpId: "example.com")
                        let found = try lazy.newest(where: wanted).map(describe)
                        #expect(found == whole.last(where: { wanted($0.credential) }).map(describe),
                                "seed \(seed), step \(step), device \(name)")
                        compared += found == nil ? 0 : 1
                    }
                }
                // A fresh process reads a split RP's shards newest first, by the bounds its index
                // keeps (and raises by the log after the index): the same answers.
                let reader = try Account.open(at: dir + "/vault", passphrase: secret(passphrase), access: .read,
                                              clock: clock.wallClock, random: .seeded(seed))
                for name in names {
                    let record = try reader.deviceRecord(named: name)
                    let whole = try account.viewFromRecords(of: try account.deviceRecord(named: name), rpId: "example.com").items
                    for wanted in offered {
                        let lazy = try NewestFirst(account: reader, device: record, rpId: "example.com")
                        let found = try lazy.newest(where: wanted).map(describe)
                        #expect(found == whole.last(where: { wanted($0.credential) }).map(describe),
                                "fresh: seed \(seed), step \(step), device \(name)")
                        if lazy.shards > 0 {
                            shardsCompared += 1
                            fewerShards += lazy.shardsRead < lazy.shards ? 1 : 0
                        }
                    }
                    let listed = try NewestFirst(account: reader, device: record, rpId: "example.com").all()
                    #expect(listed.map(describe) == whole.map(describe), "fresh: seed \(seed), step \(step), device \(name)")
                }
            }
            #expect(compared > 0)
            if seed % 2 == 0 {
                // Split into shards, read newest first in a fresh process: some shards, not all.
                #expect(shardsCompared > 0 && fewerShards > 0, "seed \(seed): \(shardsCompared) searches by shard, \(fewerShards) stopped early")
            }
        }
    }
}

/// A fresh process's discoverable sign-in on an RP the vault splits by user, as `authctl sign`
/// without allowCredentials: it signs with the newest passkey the device holds; a deleted newest
/// falls back to the next; a passkey made on another device appears once it has reached this
/// one, not before; and it works out a few passkeys, not the RP's 40.
@Test func aDiscoverableSignInOnASplitRPSignsWithTheNewestTheDeviceHolds() throws {
    try Account.$splitRecordsHere.withValue(8) {
        try withTemporaryDirectory { dir in
            let clock = MovingClock(start: 1_800_000_000_000)
            let path = dir + "/vault"
            var made = [[UInt8]]()
            do {
                let account = try Account.create(at: path, passphrase: secret(passphrase), kdf: .min, deviceName: "d0",
                                                 biometricPIN: nil, clock: clock.wallClock, random: .seeded(7))
                try account.addDevice("d1", pin: nil)
                try account.setDelays(upload: DelayRange(parsing: "1s"), download: DelayRange(parsing: "2s"))
                for i in 0..<40 {
                    made.append(try account.device("d0").register(
                        optionsJSON: creationOptions(userId: Base64URL.encode(Array("user\(i)".utf8)), userVerification: "discouraged"),
                        origin: origin).result.credential.id)
                    clock.advance(by: 10)
                }
            }
            clock.advance(by: 10_000)  // every passkey has reached d1
            func discoverable(_ device: String, expect lookedAt: ClosedRange<Int>? = nil) throws -> [UInt8] {
                let account = try Account.open(at: path, passphrase: secret(passphrase), clock: clock.wallClock, random: .seeded(9))
                let signed = try account.device(device).sign(optionsJSON: requestOptions(userVerification: "discouraged"), origin: origin)
                    .result.credential.id
                if let lookedAt {
                    // What it worked out: the one it signed with, and the few above it.
                    let list = try NewestFirst(account: account, device: try account.deviceRecord(named: device), rpId: "example.com")
                    _ = try list.newest(where: { !$0.hidden && $0.discoverable })
                    #expect(lookedAt.contains(list.resolved), "worked out \(list.resolved) passkeys")
                    // And read a few of the RP's shards (40 users, 8 per split: 64 shards of some one each).
                    #expect(list.shards > 8 && list.shardsRead <= 2 * lookedAt.upperBound, "read \(list.shardsRead) of \(list.shards) shards")
                }
                return signed
            }
            #expect(try discoverable("d0", expect: 1...1) == made[39])
            #expect(try discoverable("d1", expect: 1...1) == made[39])

            // The newest deleted on d0: d0 falls back at once; d1 once the deletion has reached it.
            do {
                let account = try Account.open(at: path, passphrase: secret(passphrase), clock: clock.wallClock, random: .seeded(11))
                try account.device("d0").delete(credentialId: made[39])
            }
            #expect(try discoverable("d0", expect: 2...2) == made[38])
            #expect(try discoverable("d1") == made[39])
            clock.advance(by: 5_000)
            // (The deleted passkey's revisions may be collected by now: then there is nothing to look at.)
            #expect(try discoverable("d1", expect: 1...2) == made[38])

            // A newer passkey made on d1: on d1 at once; on d0 only once it has arrived.
            let newer: [UInt8]
            do {
                let account = try Account.open(at: path, passphrase: secret(passphrase), clock: clock.wallClock, random: .seeded(13))
                newer = try account.device("d1").register(
                    optionsJSON: creationOptions(userId: Base64URL.encode(Array("late".utf8)), userVerification: "discouraged"),
                    origin: origin).result.credential.id
            }
            #expect(try discoverable("d1", expect: 1...1) == newer)
            #expect(try discoverable("d0", expect: 2...3) == made[38])
            clock.advance(by: 5_000)
            #expect(try discoverable("d0", expect: 1...1) == newer)

            // `list --rp-id` in a fresh process, worked out passkey by passkey, lists what the view holds.
            for name in ["d0", "d1"] {
                let account = try Account.open(at: path, passphrase: secret(passphrase), clock: clock.wallClock, random: .seeded(15))
                let listed = try account.device(name).credentials(rpId: "example.com").map(\.id)
                #expect(account.readNewestFirst == ["example.com"])
                let whole = try account.viewFromRecords(of: try account.deviceRecord(named: name), rpId: "example.com")
                #expect(listed == whole.items.map(\.credential.id) && listed.count == 40)
            }
        }
    }
}

/// A process that signs in without allowCredentials again and again on one RP (a server, a
/// scenario) reads it newest first once, then keeps the RP's whole view: every sign-in, either
/// way, signs with the newest passkey — after a newer one was registered, after the newest was
/// deleted, after one arrived from another device — so neither way can answer from a stale state.
@Test func repeatedDiscoverableSignInsInOneProcessFollowEveryChange() throws {
    try Account.$splitRecordsHere.withValue(8) {
        try withTemporaryDirectory { dir in
            let clock = MovingClock(start: 1_800_000_000_000)
            let account = try Account.create(at: dir + "/vault", passphrase: secret(passphrase), kdf: .min, deviceName: "d0",
                                             biometricPIN: nil, clock: clock.wallClock, random: .seeded(3))
            try account.addDevice("d1", pin: nil)
            try account.setDelays(upload: DelayRange(parsing: "1s"), download: DelayRange(parsing: "2s"))
            func register(_ device: String, _ user: String) throws -> [UInt8] {
                defer { clock.advance(by: 10) }
                return try account.device(device).register(
                    optionsJSON: creationOptions(userId: Base64URL.encode(Array(user.utf8)), userVerification: "discouraged"),
                    origin: origin).result.credential.id
            }
            func discoverable(_ device: String) throws -> [UInt8] {
                try account.device(device).sign(optionsJSON: requestOptions(userVerification: "discouraged"), origin: origin)
                    .result.credential.id
            }
            var made = [[UInt8]]()
            for i in 0..<20 { made.append(try register("d0", "user\(i)")) }
            #expect(try discoverable("d0") == made[19])  // read newest first
            #expect(account.readNewestFirst == ["example.com"])
            made.append(try register("d0", "user20"))
            #expect(try discoverable("d0") == made[20])  // the kept view from here on
            try account.device("d0").delete(credentialId: made[20])
            #expect(try discoverable("d0") == made[19])
            let fromD1 = try register("d1", "other")
            #expect(try discoverable("d0") == made[19])
            clock.advance(by: 5_000)
            #expect(try discoverable("d0") == fromD1)
            #expect(try discoverable("d1") == fromD1)
        }
    }
}

/// A passkey whose revisions carry different creation instants (one from before tag 26, or from a
/// device that recorded it otherwise) is bounded by the latest of them but placed by its winner's:
/// the search must look past it to a passkey created in between, not stop at the first it finds.
@Test func aPasskeyBoundedAboveItsPlaceDoesNotHideTheNewest() throws {
    try withTemporaryDirectory { dir in
        let account = try Account.create(at: dir + "/vault", passphrase: secret(passphrase), kdf: .min, biometricPIN: nil)
        let device = try account.deviceRecord(named: nil)
        let key = try PrivateKey.generate()
        func record(_ n: UInt8, item: UInt8, changed: UInt64, created: UInt64) -> VaultRecord {
            let id = [n] + [UInt8](repeating: 0x5a, count: 15)
            let credential = Credential(id: [0xC0, item], rpId: "example.com", userHandle: [item], userName: "user\(item)",
                                        userDisplayName: "User \(item)", createdAt: 1_800_000_000, signCount: 0, backupEligible: true,
                                        backupState: true, publicKey: key.publicKey)
            let sealed = [UInt8](repeating: 1, count: 32).withUnsafeBytes { account.vault.sealSecret($0, recordId: id) }
            // Made now by this device (its own revisions: held at once).
            return CredentialRecord.make(id: id, itemId: [item], for: credential, sealedKey: sealed, device: device,
                                         changedAt: Instant(ms: 1_800_000_000_000 + changed, order: UInt64.max / 2),
                                         created: Instant(ms: 1_800_000_000_000 + created, order: 0))
        }
        // Passkey 1: a first revision saying it was created at +100, the winner (changed later) at +0.
        // Passkey 2: created at +50, between the two.
        try account.commitChange([record(1, item: 1, changed: 1, created: 100), record(2, item: 1, changed: 2, created: 0),
                                  record(3, item: 2, changed: 3, created: 50)])
        let whole = try account.viewFromRecords(of: device, rpId: "example.com").items
        #expect(whole.map(\.itemId) == [[1], [2]])
        let list = try NewestFirst(account: account, device: device, rpId: "example.com")
        #expect(try list.newest(where: { _ in true })?.itemId == [2])
        #expect(list.resolved == 2)
        #expect(try list.all().map(\.itemId) == [[1], [2]])
    }
}

/// What a ceremony may offer without allowCredentials, with and without user verification, and
/// any passkey at all.
private var offered: [(Credential) -> Bool] {
    [
        { !$0.hidden && $0.discoverable && $0.isVisible(userVerified: false, listed: false) },
        { !$0.hidden && $0.discoverable && $0.isVisible(userVerified: true, listed: false) },
        { _ in true },
    ]
}

/// A clock a test moves either way.
private final class MovingClock: Sendable {
    private let milliseconds: Mutex<UInt64>
    init(start: UInt64) { milliseconds = Mutex(start) }
    func advance(by delta: UInt64) { milliseconds.withLock { $0 += delta } }
    func stepBack(by delta: UInt64) { milliseconds.withLock { $0 -= min(delta, $0) } }
    var wallClock: WallClock { WallClock { [self] in milliseconds.withLock { $0 } } }
}

/// Everything a device's view says of a passkey.
private func describe(_ item: DeviceView.Item) -> String {
    let c = item.credential
    return [Base64URL.encode(item.itemId), Base64URL.encode(c.id), Base64URL.encode(item.winner.id), c.userName,
            "\(c.signCount)", "\(c.backupEligible)", "\(c.backupState)", "\(c.hidden)", "\(item.since)"].joined(separator: " ")
}


/// Passkeys made in one millisecond (an import, a bulk fill: every passkey of the RP at one
/// creation instant) still order a split RP's shards, by item id after the instant, so a fresh
/// process's discoverable sign-in reads the shard of the newest and stops, and picks what the
/// whole view picks — the newest by item id among them, or a later one made since.
@Test func passkeysMadeInOneMillisecondStillOrderTheShards() throws {
    try Account.$splitRecordsHere.withValue(8) {
        try withTemporaryDirectory { dir in
            let clock = MovingClock(start: 1_800_000_000_000)
            let path = dir + "/vault"
            do {
                let account = try Account.create(at: path, passphrase: secret(passphrase), kdf: .min, deviceName: "d0",
                                                 biometricPIN: nil, clock: clock.wallClock, random: .seeded(21))
                var passkeys = [(Credential, PrivateKey)]()
                for i in 0..<120 {
                    let key = try PrivateKey.generate()
                    passkeys.append((Credential(id: Array("bulk-credential-\(i)".utf8), rpId: "example.com", userHandle: Array("bulk-user-\(i)".utf8),
                                                userName: "user\(i)", userDisplayName: "User \(i)", createdAt: 1_700_000_000, signCount: 0,
                                                backupEligible: true, backupState: true, publicKey: key.publicKey), key))
                }
                try account.device("d0").addInBulk(passkeys)
                try account.vault.compact()
            }
            func newest() throws -> (found: [UInt8]?, whole: [UInt8]?, read: Int, shards: Int) {
                let account = try Account.open(at: path, passphrase: secret(passphrase), access: .read, clock: clock.wallClock, random: .seeded(23))
                let record = try account.deviceRecord(named: "d0")
                let list = try NewestFirst(account: account, device: record, rpId: "example.com")
                let found = try list.newest(where: { !$0.hidden && $0.discoverable })?.credential.id
                let whole = try account.viewFromRecords(of: record, rpId: "example.com").items.last?.credential.id
                return (found, whole, list.shardsRead, list.shards)
            }
            let first = try newest()
            #expect(first.found != nil && first.found == first.whole)
            #expect(first.shards > 8 && first.read == 1, "read \(first.read) of \(first.shards) shards")

            // A passkey made later, in a frame after the index: it is the newest, found in its shard.
            clock.advance(by: 1_000)
            let later: [UInt8]
            do {
                let account = try Account.open(at: path, passphrase: secret(passphrase), clock: clock.wallClock, random: .seeded(25))
                later = try account.device("d0").register(
                    optionsJSON: creationOptions(userId: Base64URL.encode(Array("later".utf8)), userVerification: "discouraged"),
                    origin: origin).result.credential.id
            }
            let second = try newest()
            #expect(second.found == later && second.whole == later)
            #expect(second.read <= 2, "read \(second.read) of \(second.shards) shards")
        }
    }
}
