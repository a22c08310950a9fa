import Foundation
import Synchronization
import KeyVault
@testable import Keychain
import Testing
import TestSupport
import VirtualAuthenticator

/// The RP's history a long-lived account keeps in step with each change (``RPHistory``), and each
/// device's view kept in step with it and the clock (``KeptDeviceView``), against the view worked
/// out from the records read afresh, as a new process reads them: over randomized histories —
/// several devices, added and removed, delays drawn from ranges and changed, the seed and the BS
/// rule changed, offline spans, deletions, counting passkeys, replacements, resets, the clock
/// moving on and stepping back — every device's view must be the same, item for item, after every
/// step.
@Test(arguments: 0..<24 as Range<UInt64>)
func theKeptHistoryEqualsTheOneReadFromTheRecords(seed: UInt64) throws {
    try withTemporaryDirectory { dir in
        var rng = SplitMix(seed: seed &+ 0x5eed)
        let clock = SteppingClock(start: 1_800_000_000_000)
        let account = try Account.create(at: dir + "/vault", passphrase: secret(passphrase), kdf: .min, deviceName: "d0",
                                         biometricPIN: nil, clock: clock.wallClock, random: .seeded(seed))
        var names = ["d0", "d1", "d2"]
        var added = names.count
        for name in names.dropFirst() { try account.addDevice(name, pin: nil) }
        try account.setDelays(upload: DelayRange(parsing: "0s..2s"), download: DelayRange(parsing: "0s..3s"))
        var registered = [[UInt8]]()
        for step in 0..<80 {
            let device = names[Int(rng.next() % UInt64(names.count))]
            switch rng.next() % 14 {
            case 0, 1, 2:  // a registration, for a user that may have a passkey already (it replaces it)
                let user = Base64URL.encode(Array("u\(rng.next() % 6)".utf8))
                if let made = try? account.device(device).register(
                    optionsJSON: creationOptions(userId: user, userVerification: "discouraged"), origin: origin,
                    passkey: PasskeySettings(signatureCounter: rng.next() % 2 == 0)).result.credential {
                    registered.append(made.id)
                }
            case 3, 4:  // a sign-in: a counting passkey writes a revision
                _ = try? account.device(device).sign(optionsJSON: requestOptions(userVerification: "discouraged"), origin: origin)
            case 5 where !registered.isEmpty:
                _ = try? account.device(device).delete(credentialId: registered[Int(rng.next() % UInt64(registered.count))])
            case 6 where device != "d0":
                try account.setOnline(rng.next() % 2 == 0, device: device)
            case 7 where rng.next() % 4 == 0 && device != "d0":
                try account.resetDevice(device)
            case 8:  // the clock stepped back (a device's clock corrected)
                clock.stepBack(by: rng.next() % 4000)
            case 9:  // the account's or one device's delays changed, or the seed, or the BS rule
                switch rng.next() % 4 {
                case 0: try account.setDelays(upload: DelayRange(parsing: "0s..1s"), download: DelayRange(parsing: "1s..4s"))
                case 1: try account.setDelays(upload: nil, download: DelayRange(parsing: "0s..2s"), device: device)
                case 2: try account.setSyncOptions(seed: rng.next())
                default: try account.setSyncOptions(backupStateImmediate: rng.next() % 2 == 0)
                }
            case 10 where names.count < 5:
                let name = "d\(added)"
                added += 1
                try account.addDevice(name, pin: nil)
                names.append(name)
            case 11 where device != "d0" && rng.next() % 2 == 0:
                try account.removeDevice(device)
                names.removeAll { $0 == device }
            default:
                break
            }
            clock.advance(by: rng.next() % 2500)
            for name in names {
                let record = try account.deviceRecord(named: name)
                let kept = try account.view(of: record, rpIds: ["example.com"]).items.map(describe)
                let read = try account.viewFromRecords(of: record, rpId: "example.com").items.map(describe)
                #expect(kept == read, "seed \(seed), step \(step), device \(name)")
                if kept != read { return }
            }
        }
    }
}

/// On an RP the vault splits by user (docs/vault-format.md, "Index"), a command that names a
/// passkey or a user reads that user's passkeys alone (``Account/scope(_:user:)``): over randomized
/// histories — several devices, delays, offline spans, registrations replacing a user's passkey,
/// sign-ins by credential id with counting passkeys, deletions by id — each user's view, read by
/// a process that opened the vault afresh, must be the RP's view of that user, item for item.
@Test(arguments: 0..<10 as Range<UInt64>)
func aUsersViewOfASplitRPEqualsTheRPsViewOfThatUser(seed: UInt64) throws {
    try Account.$splitRecordsHere.withValue(3) {
        try withTemporaryDirectory { dir in
            var rng = SplitMix(seed: seed &+ 0x5b17)
            let clock = SteppingClock(start: 1_800_000_000_000)
            let path = dir + "/vault"
            do {
                let account = try Account.create(at: path, passphrase: secret(passphrase), kdf: .min, deviceName: "d0",
                                                 biometricPIN: nil, clock: clock.wallClock, random: .seeded(seed))
                try account.addDevice("d1", pin: nil)
                try account.addDevice("d2", pin: nil)
                try account.setDelays(upload: DelayRange(parsing: "0s..2s"), download: DelayRange(parsing: "0s..3s"))
            }
            let names = ["d0", "d1", "d2"]
            let users = (0..<8).map { Array("u\($0)".utf8) }
            var registered = [[UInt8]]()
            var readByUser = 0
            for step in 0..<60 {
                do {
                    let account = try Account.open(at: path, passphrase: secret(passphrase), clock: clock.wallClock,
                                                   random: .seeded(seed &* 1000 &+ UInt64(step) &+ 1))
                    let device = names[Int(rng.next() % UInt64(names.count))]
                    switch rng.next() % 8 {
                    case 0, 1, 2:
                        let user = Base64URL.encode(users[Int(rng.next() % UInt64(users.count))])
                        if let made = try? account.device(device).register(
                            optionsJSON: creationOptions(userId: user, userVerification: "discouraged"), origin: origin,
                            passkey: PasskeySettings(signatureCounter: rng.next() % 2 == 0)).result.credential {
                            registered.append(made.id)
                        }
                    case 3 where !registered.isEmpty, 4 where !registered.isEmpty:
                        let id = registered[Int(rng.next() % UInt64(registered.count))]
                        _ = try? account.device(device).sign(
                            optionsJSON: requestOptions(userVerification: "discouraged", allow: [Base64URL.encode(id)]), origin: origin)
                    case 5 where !registered.isEmpty && rng.next() % 2 == 0:
                        _ = try? account.device(device).delete(credentialId: registered[Int(rng.next() % UInt64(registered.count))])
                    case 6 where device != "d0":
                        try account.setOnline(rng.next() % 2 == 0, device: device)
                    default:
                        break
                    }
                }
                clock.advance(by: rng.next() % 2500)
                let fresh = try Account.open(at: path, passphrase: secret(passphrase), clock: clock.wallClock,
                                             random: .seeded(seed &* 1000 &+ UInt64(step) &+ 500))
                for name in names {
                    let record = try fresh.deviceRecord(named: name)
                    var mine = [[String]]()
                    for user in users {
                        let scope = try fresh.scope("example.com", user: user)
                        if scope.user != nil { readByUser += 1 }
                        mine.append(try fresh.view(of: record, scope: scope).items(userHandle: user).map(describe))
                    }
                    let whole = try fresh.viewFromRecords(of: record, rpId: "example.com")
                    for (user, items) in zip(users, mine) {
                        #expect(items == whole.items(userHandle: user).map(describe), "seed \(seed), step \(step), device \(name)")
                    }
                }
            }
            // The RP was split, and users' views were read on their own.
            #expect(readByUser > 0)
        }
    }
}

/// A clock a test moves either way.
private final class SteppingClock: Sendable {
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

