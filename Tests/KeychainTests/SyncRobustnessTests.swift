import Foundation
import KeyVault
import Keychain
import Testing
import TestSupport
import VirtualAuthenticator

// What sync must survive: large uploads, a store that cannot be trusted or used, device-bound
// passkeys, many things in one millisecond, devices that leave, and a PIN guessed on a reset device.

private let start: UInt64 = 1_800_000_000_000

private func account(in dir: String, upload: String = "0s", download: String = "0s", seed: UInt64 = 7)
    throws -> (Account, VirtualClock) {
    let clock = VirtualClock(start: start)
    let account = try Account.create(at: dir + "/vault", passphrase: secret(passphrase), kdf: .min, deviceName: "phone",
                                     biometricPIN: secret("1111"), clock: clock.wallClock, random: .seeded(seed))
    try account.addDevice("laptop", pin: secret("2222"), approver: UserPolicy(pin: secret("1111")))
    try account.setDelays(upload: DelayRange(parsing: upload), download: DelayRange(parsing: download))
    return (account, clock)
}

private func reopen(_ dir: String, clock: VirtualClock, access: Vault.Access = .write) throws -> Account {
    try Account.open(at: dir + "/vault", passphrase: secret(passphrase), access: access, clock: clock.wallClock)
}

private func register(_ account: Account, on device: String, userId: String = "AQID", deviceBound: Bool = false,
                      counter: Bool = false) throws -> Credential {
    try account.device(device).register(optionsJSON: creationOptions(userId: userId, userVerification: "discouraged"), origin: origin,
                                        passkey: PasskeySettings(deviceBound: deviceBound, signatureCounter: counter)).result.credential
}

private func holds(_ account: Account, _ device: String) throws -> Set<[UInt8]> {
    Set(try account.device(device).credentials().map(\.id))
}

private func storeObjects(_ dir: String) -> [String] {
    ((try? FileManager.default.contentsOfDirectory(atPath: dir + "/vault/cloud/log")) ?? []).filter { !$0.hasPrefix(".") }
}

@Test func thousandsOfChangesUploadInObjectsTheStoreCanReadBack() throws {
    try withTemporaryDirectory { dir in
        let clock = VirtualClock(start: start)
        var phone: Account! = try Account.create(at: dir + "/vault", passphrase: secret(passphrase), kdf: .min, deviceName: "phone",
                                                 biometricPIN: nil, clock: clock.wallClock, random: .seeded(1))
        var passkeys = [(Credential, PrivateKey)]()
        for i in 0..<3000 {
            let key = try PrivateKey.generate()
            passkeys.append((Credential(id: RandomSource.seeded(UInt64(i)).bytes(16), rpId: "rp\(i).example", userHandle: [1, 2],
                                        userName: "user\(i)", userDisplayName: "User", createdAt: 1_800_000_000, signCount: 0,
                                        backupEligible: true, backupState: false, publicKey: key.publicKey), key))
        }
        try phone.device().addInBulk(passkeys)
        try phone.addDevice("laptop", pin: nil)  // the store comes into use: 3,000 revisions upload at once
        #expect(storeObjects(dir).count >= 2)
        phone = nil  // one account per vault per process: close it before opening again
        let again = try reopen(dir, clock: clock)
        #expect(try again.device("laptop").credentials().count == 3000)
    }
}

@Test func anUnreadableStoreObjectIsPassedOverAndAnUnusableStoreSetAside() throws {
    try withTemporaryDirectory { dir in
        var (phone, clock): (Account?, VirtualClock) = try account(in: dir)
        let made = try register(phone!, on: "phone")
        phone = nil
        let objects = dir + "/vault/cloud/log/"
        // A directory, a link and an oversized file beside the log's objects: never read.
        try FileManager.default.createDirectory(atPath: objects + "00112233445566778899aabbccddeeff", withIntermediateDirectories: false)
        try FileManager.default.createSymbolicLink(atPath: objects + "0123456789abcdef0123456789abcdef", withDestinationPath: "/etc/passwd")
        #expect(FileManager.default.createFile(atPath: objects + "ffeeddccbbaa99887766554433221100", contents: Data(count: 2 << 20)))
        var reopened: Account! = try reopen(dir, clock: clock)
        #expect(try holds(reopened, "laptop") == [made.id])
        #expect(reopened.storeProblem == nil)
        reopened = nil
        // The whole store replaced by a file: set aside, said so, and nothing is lost.
        try FileManager.default.removeItem(atPath: dir + "/vault/cloud")
        #expect(FileManager.default.createFile(atPath: dir + "/vault/cloud", contents: Data("not a store".utf8)))
        let aside = try reopen(dir, clock: clock)
        #expect(aside.storeProblem?.contains("not used") == true)
        #expect(try holds(aside, "laptop") == [made.id])
        let second = try register(aside, on: "laptop", userId: "BAUG")
        #expect(try holds(aside, "phone") == [made.id, second.id])
        #expect(try aside.syncStatus().storeProblem != nil)
    }
}

@Test func aDeviceBoundPasskeyNeverLeavesItsDevice() throws {
    try withTemporaryDirectory { dir in
        let (phone, clock) = try account(in: dir)
        let bound = try register(phone, on: "laptop", deviceBound: true)
        clock.advance(by: 60_000)
        #expect(try holds(phone, "laptop") == [bound.id])
        #expect(try holds(phone, "phone").isEmpty)
        let stored = try storeObjects(dir).map { try Data(contentsOf: URL(fileURLWithPath: dir + "/vault/cloud/log/" + $0)) }
        #expect(stored.isEmpty)  // nothing else was made: nothing uploaded
        #expect(try phone.syncStatus().devices.allSatisfy { $0.pendingUploads.isEmpty && $0.pendingDownloads.isEmpty })
        // Removed from the account, the laptop takes it along.
        try phone.removeDevice("laptop")
        #expect(try phone.device("phone").credentials().isEmpty)
    }
}

@Test func changesInOneMillisecondKeepTheOrderTheyWereMadeIn() throws {
    for seed in UInt64(0)..<8 {
        try withTemporaryDirectory { dir in
            let (phone, _) = try account(in: dir, seed: seed)
            let made = try register(phone, on: "phone")
            try phone.device("phone").delete(credentialId: made.id)
            #expect(try holds(phone, "phone").isEmpty, "seed \(seed)")
            #expect(try holds(phone, "laptop").isEmpty, "seed \(seed)")
            // Signed on the laptop right after it arrived, in the same millisecond: the laptop's
            // revision is the later one.
            let again = try register(phone, on: "phone", userId: "BAUG", counter: true)
            _ = try phone.device("laptop").sign(optionsJSON: requestOptions(userVerification: "discouraged"), origin: origin)
            #expect(try phone.device("phone").credential(id: again.id)?.signCount == 1, "seed \(seed)")
        }
    }
}

@Test func goingOfflineOrSlowingDownInTheSameMillisecondTakesNothingBack() throws {
    try withTemporaryDirectory { dir in
        let (phone, _) = try account(in: dir)
        let first = try register(phone, on: "phone")
        #expect(try holds(phone, "laptop") == [first.id])
        try phone.setOnline(false, device: "laptop")
        #expect(try holds(phone, "laptop") == [first.id])  // it had arrived before the laptop went offline
        let second = try register(phone, on: "phone", userId: "BAUG")
        #expect(try holds(phone, "laptop") == [first.id])  // made after: waits for the laptop
        try phone.setOnline(true, device: "laptop")
        #expect(try holds(phone, "laptop") == [first.id, second.id])
        try phone.setDelays(upload: nil, download: DelayRange(parsing: "1h"))
        #expect(try holds(phone, "laptop") == [first.id, second.id])
    }
}

@Test func passkeysOutliveTheStoreAndTheDevicesThatMadeThem() throws {
    try withTemporaryDirectory { dir in
        var (phone, clock): (Account?, VirtualClock) = try account(in: dir)
        try phone!.addDevice("tablet", pin: nil)
        let fromTablet = try register(phone!, on: "tablet")
        let fromLaptop = try register(phone!, on: "laptop", userId: "BAUG", counter: true)
        for _ in 0..<5 { _ = try phone!.device("laptop").sign(optionsJSON: requestOptions(userVerification: "discouraged"), origin: origin) }
        try phone!.removeDevice("tablet")
        try phone!.resetDevice("laptop")
        phone = nil
        try FileManager.default.removeItem(atPath: dir + "/vault/cloud")  // the cloud loses everything
        let reopened = try reopen(dir, clock: clock)
        #expect(try holds(reopened, "phone") == [fromTablet.id, fromLaptop.id])
        #expect(try reopened.device("phone").credential(id: fromLaptop.id)?.signCount == 5)
        #expect(try holds(reopened, "laptop") == [fromTablet.id, fromLaptop.id])  // after its reset, by sync
        #expect(!reopened.deviceNames.contains("tablet"))
        try reopened.addDevice("tablet", pin: nil)  // the name is free again
        #expect(try holds(reopened, "tablet") == [fromTablet.id, fromLaptop.id])
    }
}

@Test func aResetDeviceLocksOutGuessesAtItsFormerPIN() throws {
    try withTemporaryDirectory { dir in
        let (phone, _) = try account(in: dir)
        try phone.resetDevice("laptop")
        let laptop = try phone.device("laptop")
        for guess in ["0001", "0002", "0003", "0004", "0005"] {
            expectDeviceError(.authenticator(.failed)) {
                try laptop.enrollBiometricPIN(secret("3333"), user: UserPolicy(pin: secret(guess)), approvedBy: nil)
            }
        }
        #expect(laptop.biometry.lockedOut)
        expectDeviceError(.authenticator(.biometryLockout)) {
            try laptop.enrollBiometricPIN(secret("3333"), user: UserPolicy(pin: secret("2222")))
        }
        try laptop.unlockBiometry()
        try laptop.enrollBiometricPIN(secret("3333"), user: UserPolicy(pin: secret("2222")))
        #expect(laptop.biometry.enrolled)
    }
}

@Test func anApproverThatIsNoDeviceIsRefusedEvenWhenNoneIsNeeded() throws {
    try withTemporaryDirectory { dir in
        let (phone, _) = try account(in: dir)
        expectDeviceError(.noSuchDevice) { try phone.addDevice("tablet", pin: nil, approvedBy: "watch") }
        expectDeviceError(.noSuchDevice) {
            try phone.device("phone").enrollBiometricPIN(secret("5555"), user: UserPolicy(pin: secret("1111")), approvedBy: "watch")
        }
    }
}

@Test func aReaderWritesNothingToTheStore() throws {
    try withTemporaryDirectory { dir in
        let (phone, clock) = try account(in: dir, upload: "2s")
        let made = try register(phone, on: "phone")
        let before = storeObjects(dir)
        clock.advance(by: 5_000)
        let reader = try reopen(dir, clock: clock, access: .read)
        #expect(try holds(reader, "laptop") == [made.id])  // landed by now, computed, not read from the store
        #expect(storeObjects(dir) == before)
    }
}

@Test func aChangeMadeAfterAResetCountsEvenOnAClockSetBack() throws {
    try withTemporaryDirectory { dir in
        let (phone, _) = try account(in: dir)
        try phone.resetDevice("laptop")
        let clock = phone.clock
        phone.clock = WallClock.fixed(seconds: start / 1000 - 3600)  // an hour back
        let made = try register(phone, on: "laptop")
        phone.clock = clock
        #expect(try holds(phone, "phone") == [made.id])
    }
}

@Test func theStoreIsMergedSoItStaysAboutAsLargeAsTheAccount() throws {
    try withTemporaryDirectory { dir in
        var (phone, clock): (Account?, VirtualClock) = try account(in: dir)
        let made = try register(phone!, on: "phone", counter: true)
        for _ in 0..<100 {
            _ = try phone!.device("laptop").sign(optionsJSON: requestOptions(userVerification: "discouraged"), origin: origin)
            _ = try phone!.syncStatus()  // a writer's sync: each change uploads on its own
        }
        #expect(storeObjects(dir).count <= Account.mergeThreshold + 1)
        phone = nil
        let reopened = try reopen(dir, clock: clock)
        #expect(try reopened.device("phone").credential(id: made.id)?.signCount == 100)
        #expect(try reopened.syncStatus().storeInUse)
    }
}

@Test func aClockSteppedBackHidesNothingADeviceMadeItself() throws {
    try withTemporaryDirectory { dir in
        let (phone, _) = try account(in: dir, upload: "10s", download: "10s")
        let made = try register(phone, on: "phone")
        let clock = phone.clock
        phone.clock = WallClock.fixed(seconds: start / 1000 - 3600)
        #expect(try holds(phone, "phone") == [made.id])
        phone.clock = clock
    }
}

@Test func aLinkedOrMisplacedStoreIsSetAsideNotFollowed() throws {
    try withTemporaryDirectory { dir in
        var (phone, clock): (Account?, VirtualClock) = try account(in: dir)
        let made = try register(phone!, on: "phone")
        phone = nil
        let elsewhere = dir + "/elsewhere"
        try FileManager.default.createDirectory(atPath: elsewhere, withIntermediateDirectories: false)
        try FileManager.default.removeItem(atPath: dir + "/vault/cloud")
        try FileManager.default.createSymbolicLink(atPath: dir + "/vault/cloud", withDestinationPath: elsewhere)
        var linked: Account! = try reopen(dir, clock: clock)
        #expect(linked.storeProblem?.contains("symbolic link") == true)
        _ = try register(linked, on: "laptop", userId: "BAUG")
        #expect(try FileManager.default.contentsOfDirectory(atPath: elsewhere).isEmpty)
        linked = nil
        // A reader says so too, for a file in the store's place.
        try FileManager.default.removeItem(atPath: dir + "/vault/cloud")
        #expect(FileManager.default.createFile(atPath: dir + "/vault/cloud", contents: Data("x".utf8)))
        let reader = try reopen(dir, clock: clock, access: .read)
        #expect(reader.storeProblem != nil)
        #expect(try holds(reader, "laptop").contains(made.id))
    }
}

/// Adding the N-th device decodes that device, not all N (DeviceDirectory): the device list is
/// derived once and followed through every later change, so adding 200 devices one by one
/// derives it a handful of times, where decoding it afresh after each change derived it at least
/// once per device added (quadratic in all: 3,000 devices took 15 s).
@Test func addingDevicesOneByOneDoesNotDecodeEveryDeviceAgain() throws {
    try withTemporaryDirectory { dir in
        let (account, _) = try account(in: dir)
        let before = account.derivations
        for n in 0..<200 { try account.addDevice("device-\(n)", pin: nil) }
        #expect(account.derivations - before < 10)
        #expect(account.deviceNames.count == 202)
        #expect(account.deviceNames.suffix(2) == ["device-198", "device-199"])
        // What was followed is what a fresh decode finds.
        let reopened = try reopen(dir, clock: VirtualClock(start: start), access: .read)
        #expect(reopened.deviceNames == account.deviceNames)
        try account.removeDevice("device-5")
        #expect(!account.deviceNames.contains("device-5") && account.deviceNames.count == 201)
        try account.addDevice("device-5", pin: nil)
        #expect(account.deviceNames.last == "device-5")
        #expect(throws: DeviceError.self) { try account.addDevice("device-7", pin: nil) }
    }
}
