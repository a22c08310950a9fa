import Foundation
import KeyVault
import Keychain
import Testing
import TestSupport
import VirtualAuthenticator

private let start: UInt64 = 1_800_000_000_000
private let phonePIN = "1111", laptopPIN = "2222"

/// An account with a phone (first device) and a laptop, on a virtual clock, with `upload` and
/// `download` delays for every device.
private func account(in dir: String, upload: String = "2s", download: String = "3s") throws -> (Account, VirtualClock) {
    let clock = VirtualClock(start: start)
    let account = try Account.create(at: dir + "/vault", passphrase: secret(passphrase), kdf: .min, deviceName: "phone",
                                     biometricPIN: secret(phonePIN), clock: clock.wallClock, random: .seeded(7))
    try account.addDevice("laptop", pin: secret(laptopPIN), approver: UserPolicy(pin: secret(phonePIN)))
    try account.setDelays(upload: DelayRange(parsing: upload), download: DelayRange(parsing: download))
    return (account, clock)
}

private func at(_ clock: VirtualClock, _ seconds: Double) { clock.advance(to: start + UInt64(seconds * 1000)) }

private func registerOnPhone(_ account: Account, userId: String = "AQID", uv: String = "discouraged",
                             counter: Bool = false) throws -> Credential {
    try account.device("phone").register(optionsJSON: creationOptions(userId: userId, userVerification: uv), origin: origin,
                                         user: UserPolicy(pin: secret(phonePIN)),
                                         passkey: PasskeySettings(signatureCounter: counter)).result.credential
}

private func holds(_ account: Account, _ device: String) throws -> [[UInt8]] {
    try account.device(device).credentials().map(\.id)
}

@Test func aPasskeyReachesTheOtherDeviceOnlyAfterUploadAndDownload() throws {
    try withTemporaryDirectory { dir in
        let (account, clock) = try account(in: dir)
        let made = try registerOnPhone(account)
        #expect(try holds(account, "phone") == [made.id])
        at(clock, 4.999)
        #expect(try holds(account, "laptop").isEmpty)  // landed at 2 s, downloads for 3 s
        expectDeviceError(.authenticator(.notHandled)) {
            try account.device("laptop").sign(optionsJSON: requestOptions(userVerification: "discouraged"), origin: origin)
        }
        at(clock, 5)
        #expect(try holds(account, "laptop") == [made.id])
        let signed = try account.device("laptop").sign(optionsJSON: requestOptions(userVerification: "discouraged"), origin: origin)
        #expect(signed.result.credential.id == made.id)
        #expect(signed.result.authenticatorData[32] & 0x18 == 0x18)  // BE and BS: it came from backup
    }
}

@Test func backupStateIsZeroUntilTheFirstUploadLands() throws {
    try withTemporaryDirectory { dir in
        let (account, clock) = try account(in: dir)
        let reg = try account.device("phone").register(optionsJSON: creationOptions(userVerification: "discouraged"), origin: origin)
        #expect(reg.result.authenticatorData[32] & 0x18 == 0x08)  // BE=1, BS=0
        at(clock, 1)
        #expect(try account.device("phone").credentials()[0].backupState == false)
        at(clock, 2)
        #expect(try account.device("phone").credentials()[0].backupState == true)
        try account.setSyncOptions(backupStateImmediate: true)
        let immediate = try account.device("phone").register(optionsJSON: creationOptions(userId: "BAUG", userVerification: "discouraged"),
                                                              origin: origin)
        #expect(immediate.result.authenticatorData[32] & 0x18 == 0x18)
    }
}

@Test func aFactoryResetEmptiesTheDeviceUntilSyncCatchesUp() throws {
    try withTemporaryDirectory { dir in
        let (account, clock) = try account(in: dir)
        let made = try registerOnPhone(account)
        at(clock, 10)
        #expect(try holds(account, "laptop") == [made.id])
        try account.resetDevice("laptop")
        #expect(try holds(account, "laptop").isEmpty)
        #expect(try account.device("laptop").biometry.enrolled == false)
        at(clock, 12.999)
        #expect(try holds(account, "laptop").isEmpty)
        at(clock, 13)
        #expect(try holds(account, "laptop") == [made.id])
        // A change the reset device had not uploaded is lost with its replica.
        _ = try account.device("laptop").register(optionsJSON: creationOptions(userId: "Lost", userVerification: "discouraged"),
                                                   origin: origin)
        at(clock, 14)
        try account.resetDevice("laptop")
        at(clock, 100)
        #expect(try holds(account, "laptop") == [made.id])
        #expect(try holds(account, "phone") == [made.id])
    }
}

@Test func anOfflineDeviceSyncsWhenItComesBack() throws {
    try withTemporaryDirectory { dir in
        let (account, clock) = try account(in: dir)
        at(clock, 1)
        try account.setOnline(false, device: "laptop")
        let made = try registerOnPhone(account)  // at 1 s: lands at 3 s
        at(clock, 8)
        #expect(try holds(account, "laptop").isEmpty)
        try account.setOnline(true, device: "laptop")
        at(clock, 10.999)
        #expect(try holds(account, "laptop").isEmpty)
        at(clock, 11)
        #expect(try holds(account, "laptop") == [made.id])
        // Made while offline, a change waits to upload.
        try account.setOnline(false, device: "phone")
        let second = try registerOnPhone(account, userId: "BAUG")
        at(clock, 50)
        #expect(try holds(account, "laptop") == [made.id])
        try account.setOnline(true, device: "phone")  // at 50 s: lands at 52, arrives at 55
        at(clock, 55)
        #expect(Set(try holds(account, "laptop")) == Set([made.id, second.id]))
    }
}

@Test func deletionsTravelAndTheLaterChangeWins() throws {
    try withTemporaryDirectory { dir in
        let (account, clock) = try account(in: dir)
        let made = try registerOnPhone(account)
        at(clock, 20)
        try account.device("phone").delete(credentialId: made.id)
        #expect(try holds(account, "phone").isEmpty)
        at(clock, 24.999)
        #expect(try holds(account, "laptop") == [made.id])
        at(clock, 25)
        #expect(try holds(account, "laptop").isEmpty)
    }
}

@Test func concurrentSignaturesOnTwoDevicesKeepTheHighestCount() throws {
    try withTemporaryDirectory { dir in
        let (account, clock) = try account(in: dir, upload: "1s", download: "1s")
        _ = try registerOnPhone(account, counter: true)
        at(clock, 5)
        // Both devices sign before either hears of the other: each reports 1, then 2 on the phone.
        let onLaptop = try account.device("laptop").sign(optionsJSON: requestOptions(userVerification: "discouraged"), origin: origin)
        _ = try account.device("phone").sign(optionsJSON: requestOptions(userVerification: "discouraged"), origin: origin)
        let second = try account.device("phone").sign(optionsJSON: requestOptions(userVerification: "discouraged"), origin: origin)
        #expect(try AuthenticatorData(parsing: onLaptop.result.authenticatorData).signCount == 1)
        #expect(try AuthenticatorData(parsing: second.result.authenticatorData).signCount == 2)
        at(clock, 10)
        #expect(try account.device("laptop").credentials()[0].signCount == 2)
        #expect(try account.device("phone").credentials()[0].signCount == 2)
        let next = try account.device("laptop").sign(optionsJSON: requestOptions(userVerification: "discouraged"), origin: origin)
        #expect(try AuthenticatorData(parsing: next.result.authenticatorData).signCount == 3)
    }
}

@Test func aPasskeyMadeWithVerificationOpensOnEachDeviceWithItsOwnPIN() throws {
    try withTemporaryDirectory { dir in
        let (account, clock) = try account(in: dir)
        let made = try registerOnPhone(account, uv: "required")
        at(clock, 5)
        let laptop = try account.device("laptop")
        expectDeviceError(.authenticator(.failed)) {
            try laptop.sign(optionsJSON: requestOptions(), origin: origin, user: UserPolicy(pin: secret(phonePIN)))
        }
        #expect(laptop.biometry.failures == 1)
        #expect(try account.device("phone").biometry.failures == 0)  // each device counts its own
        let signed = try laptop.sign(optionsJSON: requestOptions(), origin: origin, user: UserPolicy(pin: secret(laptopPIN)))
        #expect(signed.result.credential.id == made.id)
        #expect(signed.result.authenticatorData[32] & 0x04 == 0x04)
    }
}

@Test func excludedCredentialsAreRefusedOnASecondDeviceOnceSynced() throws {
    try withTemporaryDirectory { dir in
        let (account, clock) = try account(in: dir)
        let made = try registerOnPhone(account)
        let excluding = creationOptions(userId: "BAUG", userVerification: "discouraged", exclude: [Base64URL.encode(made.id)])
        at(clock, 5)
        expectDeviceError(.authenticator(.matchedExcludedCredential)) {
            try account.device("laptop").register(optionsJSON: excluding, origin: origin)
        }
    }
}

@Test func aPhoneSignsForTheLaptopOverHybrid() throws {
    try withTemporaryDirectory { dir in
        let (account, _) = try account(in: dir)
        let made = try registerOnPhone(account, uv: "required")
        #expect(try holds(account, "laptop").isEmpty)
        let response = try account.device("phone").sign(optionsJSON: requestOptions(), origin: origin,
                                                         user: UserPolicy(pin: secret(phonePIN)), attachment: .crossPlatform)
        #expect(response.result.credential.id == made.id)
        #expect(try member(try parsed(response.json), "authenticatorAttachment") == "cross-platform")
    }
}

@Test func theStoreHoldsNothingInClear() throws {
    try withTemporaryDirectory { dir in
        let (account, clock) = try account(in: dir)
        let made = try registerOnPhone(account, uv: "required")
        at(clock, 10)
        _ = try account.device("laptop").credentials()
        var blob = Data()
        let store = dir + "/vault/cloud"
        for name in try FileManager.default.subpathsOfDirectory(atPath: store) where !FileManager.default.isDirectory(store + "/" + name) {
            blob += try Data(contentsOf: URL(fileURLWithPath: store + "/" + name)) + Data(name.utf8)
        }
        #expect(!blob.isEmpty)
        for clear in [Array("example.com".utf8), Array("alice@example.com".utf8), made.id, Array(made.publicKey.storedForm.suffix(32)),
                      Array("phone".utf8)] {
            #expect(blob.range(of: Data(clear)) == nil)
        }
    }
}

@Test func delaysDrawnFromARangeRepeatForTheSameSeed() throws {
    func arrival(seed: UInt64) throws -> Double {
        try withTemporaryDirectory { dir in
            let (account, clock) = try account(in: dir, upload: "1s..9s", download: "0s")
            try account.setSyncOptions(seed: seed)
            _ = try registerOnPhone(account)
            var t = 0.0
            while try holds(account, "laptop").isEmpty {
                t += 0.5
                at(clock, t)
            }
            return t
        }
    }
    let first = try arrival(seed: 1)
    #expect(try arrival(seed: 1) == first)
    #expect((1...9).contains(first))
}

@Test func aDelayChangeAppliesToTransfersThatStartAfterIt() throws {
    try withTemporaryDirectory { dir in
        let (account, clock) = try account(in: dir)
        let first = try registerOnPhone(account)
        at(clock, 5)
        #expect(try holds(account, "laptop") == [first.id])
        // A passkey the laptop holds stays held when downloads become slow.
        try account.setDelays(upload: DelayRange(parsing: "1h"), download: DelayRange(parsing: "1h"))
        #expect(try holds(account, "laptop") == [first.id])
        // One under way keeps the delays it started with: made at 5 s, it lands at 7 s; its
        // download starts then, under the new 1 h delay.
        try account.setDelays(upload: DelayRange(parsing: "2s"), download: DelayRange(parsing: "3s"))
        let second = try registerOnPhone(account, userId: "BAUG")
        at(clock, 6)
        try account.setDelays(upload: DelayRange(parsing: "1h"), download: DelayRange(parsing: "1h"))
        at(clock, 7)
        #expect(try account.device("phone").credentials().first { $0.id == second.id }?.backupState == true)
        at(clock, 7 + 3599.999)
        #expect(try holds(account, "laptop") == [first.id])
        at(clock, 7 + 3600)
        #expect(try holds(account, "laptop") == [first.id, second.id])
        let status = try account.syncStatus()
        #expect(status.uploadDelay == "1h" && status.devices.allSatisfy { $0.pendingUploads.isEmpty && $0.pendingDownloads.isEmpty })
    }
}

@Test func aNewSeedDrawsOnlyTransfersThatStartAfterIt() throws {
    try withTemporaryDirectory { dir in
        let (account, clock) = try account(in: dir, upload: "0s", download: "1s..100s")
        let made = try registerOnPhone(account)
        var arrival: UInt64 = 0
        for ms in stride(from: UInt64(1000), through: 100_000, by: 1000) {
            clock.advance(to: start + ms)
            if try !holds(account, "laptop").isEmpty { arrival = ms; break }
        }
        #expect(arrival > 0)
        for seed in UInt64(1)...20 {
            try account.setSyncOptions(seed: seed)
            #expect(try holds(account, "laptop") == [made.id], "seed \(seed) moved a download already done")
        }
    }
}
