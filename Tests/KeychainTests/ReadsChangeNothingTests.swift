import Foundation
import KeyVault
import SyncStore
@testable import Keychain
import Testing
import TestSupport
import VirtualAuthenticator

// A device syncs when its account is opened and after a write; what only looks reads the store
// and changes nothing. A sign-in reads the store once, and commits once when its passkey counts.
// The store is counted (``StoreCounter``), the vault's commits are its frames.

private let start: UInt64 = 1_800_000_000_000

/// An account of two devices in one vault, so its store is in use, with a passkey of RP
/// example.com made on the phone and arrived on the laptop; `upload` is every device's delay.
private func twoDevices(in dir: String, counter: Bool, upload: String, clock: VirtualClock) throws -> Credential {
    let account = try Account.create(at: dir + "/vault", passphrase: secret(passphrase), kdf: .min, deviceName: "phone",
                                     biometricPIN: nil, clock: clock.wallClock, random: .seeded(3))
    try account.addDevice("laptop", pin: nil)
    try account.setDelays(upload: DelayRange(parsing: upload), download: DelayRange(parsing: "1s"))
    let made = try account.device("phone").register(optionsJSON: creationOptions(userVerification: "discouraged"), origin: origin,
                                                    passkey: PasskeySettings(signatureCounter: counter)).result.credential
    clock.advance(by: 60_000)  // landed and arrived everywhere
    return made
}

/// The frames committed to the vault at `path` so far, as a reader finds them (it writes nothing).
private func frames(_ path: String, clock: VirtualClock) throws -> UInt64 {
    try Account.open(at: path, passphrase: secret(passphrase), access: .read, clock: clock.wallClock).vault.committedFrames
}

/// A command's sign-in, as `authctl sign` makes it: the account opened for writing, a sign-in
/// on `device`; returns what the store saw of both and how many frames the vault gained.
private func commandSignIn(_ dir: String, device: String, counter: StoreCounter, clock: VirtualClock)
    throws -> (counts: StoreCounter.Counts, commits: UInt64, signCount: UInt32) {
    let before = try frames(dir + "/vault", clock: clock)
    counter.reset()
    let signed = try {
        let account = try Account.open(at: dir + "/vault", passphrase: secret(passphrase), access: .write, clock: clock.wallClock)
        return try account.device(device).sign(optionsJSON: requestOptions(userVerification: "discouraged"), origin: origin)
    }()
    let counts = counter.now
    let authData = signed.result.authenticatorData
    let signCount = authData[33..<37].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
    return (counts, try frames(dir + "/vault", clock: clock) - before, signCount)
}

@Test func aSignInWithAPasskeyThatDoesNotCountReadsTheStoreOnceAndCommitsNothing() throws {
    let counter = StoreCounter()
    try counter.counting {
        try withTemporaryDirectory { dir in
            let clock = VirtualClock(start: start)
            _ = try twoDevices(in: dir, counter: false, upload: "2s", clock: clock)
            _ = try commandSignIn(dir, device: "laptop", counter: counter, clock: clock)  // what became due is synced by now
            let signIn = try commandSignIn(dir, device: "laptop", counter: counter, clock: clock)
            #expect(signIn.signCount == 0)
            #expect(signIn.counts.fetches == 1, "one store read: \(signIn.counts)")
            #expect(signIn.counts.writes == 0, "nothing written to the store: \(signIn.counts)")
            #expect(signIn.commits == 0, "nothing committed to the vault")
        }
    }
}

@Test func aSignInWithACountingPasskeyReadsTheStoreOnceAndCommitsOnce() throws {
    let counter = StoreCounter()
    try counter.counting {
        try withTemporaryDirectory { dir in
            let clock = VirtualClock(start: start)
            _ = try twoDevices(in: dir, counter: true, upload: "2s", clock: clock)
            _ = try commandSignIn(dir, device: "phone", counter: counter, clock: clock)
            clock.advance(by: 60_000)  // its new count landed: the next opening uploads it
            _ = try Account.open(at: dir + "/vault", passphrase: secret(passphrase), access: .write, clock: clock.wallClock)
            let signIn = try commandSignIn(dir, device: "phone", counter: counter, clock: clock)
            #expect(signIn.signCount > 0, "a counting passkey")
            #expect(signIn.counts.fetches == 1, "one store read: \(signIn.counts)")
            #expect(signIn.counts.writes == 0, "the new count lands in 2 s: nothing is uploaded yet: \(signIn.counts)")
            #expect(signIn.commits == 1, "the new count's revision, in one commit")
        }
    }
}

@Test func aCountingSignInWhoseChangeLandsAtOnceUploadsItWithoutReadingTheStoreAgain() throws {
    let counter = StoreCounter()
    try counter.counting {
        try withTemporaryDirectory { dir in
            let clock = VirtualClock(start: start)
            _ = try twoDevices(in: dir, counter: true, upload: "0s", clock: clock)
            _ = try commandSignIn(dir, device: "phone", counter: counter, clock: clock)
            let signIn = try commandSignIn(dir, device: "phone", counter: counter, clock: clock)
            #expect(signIn.signCount > 0, "a counting passkey")
            #expect(signIn.counts.fetches == 1, "one store read: \(signIn.counts)")
            #expect(signIn.counts.appends == 1, "the new count uploaded after the write: \(signIn.counts)")
            #expect(signIn.commits == 2, "the new count's revision, then the cursor its upload moved")
        }
    }
}

/// An account kept open, as a scenario or the server keeps one: a change that landed while the
/// account was open stays unsent until the next write; looking at it must not send it.
@Test func looksAtAnAccountKeptOpenChangeNothingWhenChangesHaveLandedSinceTheLastSync() throws {
    let counter = StoreCounter()
    try counter.counting {
        try withTemporaryDirectory { dir in
            let clock = VirtualClock(start: start)
            let account = try Account.create(at: dir + "/vault", passphrase: secret(passphrase), kdf: .min, deviceName: "phone",
                                             biometricPIN: nil, clock: clock.wallClock, random: .seeded(3))
            try account.addDevice("laptop", pin: nil)
            try account.setDelays(upload: DelayRange(parsing: "2s"), download: DelayRange(parsing: "3s"))
            let made = try account.device("phone").register(optionsJSON: creationOptions(userVerification: "discouraged"), origin: origin)
                .result.credential
            clock.advance(by: 10_000)  // landed at 2 s, arrived at 5 s
            let before = try treeState(dir)
            counter.reset()
            #expect(try account.device("laptop").credentials().map(\.id) == [made.id])
            #expect(try account.device("phone").credential(id: made.id)?.backupState == true, "BS: its upload has landed")
            let status = try account.syncStatus()
            #expect(status.devices.allSatisfy { $0.pendingUploads.isEmpty && $0.pendingDownloads.isEmpty })
            #expect(counter.now.writes == 0, "\(counter.now)")
            let written = treeChanges(before, try treeState(dir))
            #expect(written.isEmpty, "\(written)")
            // The next write sends it.
            try account.setOnline(false, device: "laptop")
            #expect(counter.now.appends == 1, "\(counter.now)")
        }
    }
}

/// What a command that only looks does (`authctl list`, `credential show`, `sync status`): the
/// vault's directory and the store's stay as they were, byte for byte, and the store is read once.
@Test func commandsThatLookReadTheStoreOnceAndLeaveTheVaultAndTheStoreAsTheyWere() throws {
    let counter = StoreCounter()
    try counter.counting {
        try withTemporaryDirectory { dir in
            let clock = VirtualClock(start: start)
            let made = try twoDevices(in: dir, counter: false, upload: "2s", clock: clock)
            _ = try Account.open(at: dir + "/vault", passphrase: secret(passphrase), access: .write, clock: clock.wallClock)
            let before = try treeState(dir)
            for look in ["list", "show", "status"] {
                counter.reset()
                let account = try Account.open(at: dir + "/vault", passphrase: secret(passphrase), access: .read, clock: clock.wallClock)
                switch look {
                case "list": #expect(try account.device("laptop").credentials().map(\.id) == [made.id])
                case "show": #expect(try account.device("laptop").credential(id: made.id) != nil)
                default: #expect(try account.syncStatus().devices.count == 2)
                }
                #expect(counter.now.fetches == 1, "\(look): \(counter.now)")
                #expect(counter.now.writes == 0, "\(look): \(counter.now)")
            }
            let written = treeChanges(before, try treeState(dir))
            #expect(written.isEmpty, "\(written)")
        }
    }
}

/// Settings another vault published are taken up by a look on a vault kept open — in memory, as a
/// reader takes them up — and written into the vault by its next sync, not lost because a look
/// read them first.
@Test func settingsALookTakesUpAreWrittenByTheNextSync() throws {
    let counter = StoreCounter()
    try counter.counting {
        try withTemporaryDirectory { dir in
            let clock = VirtualClock(start: start)
            try {
                let phone = try Account.create(at: dir + "/phone", passphrase: secret(passphrase), kdf: .min, deviceName: "phone",
                                               biometricPIN: nil, clock: clock.wallClock, random: .seeded(3))
                let desk = try phone.addDevice("desk", inNewVaultAt: dir + "/desk", passphrase: secret(passphrase), kdf: .min, pin: nil)
                try desk.setDelays(upload: DelayRange(parsing: "5s"), download: nil)
                let before = try treeState(dir + "/phone")
                _ = try phone.device().credentials()
                #expect(try phone.syncStatus().uploadDelay == "5s", "taken up as the look read it")
                let written = treeChanges(before, try treeState(dir + "/phone"))
                #expect(written.isEmpty, "\(written)")
                try phone.sync()
            }()  // both accounts closed: their locks let go
            let reopened = try Account.open(at: dir + "/phone", passphrase: secret(passphrase), access: .read, clock: clock.wallClock)
            #expect(reopened.settings.uploadDelay.current == DelayRange(parsing: "5s"), "in the vault")
        }
    }
}
