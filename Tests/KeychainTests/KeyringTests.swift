import KeyVault
@testable import Keychain
import Testing
import TestSupport

// The keyring on its own (its bound and which key leaves), then an account's: what a signature
// keeps loaded, and what it never keeps.

private func id(_ n: Int) -> [UInt8] { [UInt8(n >> 8), UInt8(n & 0xff)] }

@Test func theKeyringKeepsAtMostItsLimitAndEvictsTheLeastRecentlyUsed() throws {
    var ring = Keyring<String>(limit: 3)
    var loads = [Int]()
    func use(_ n: Int) -> String {
        ring.key(for: id(n)) { loads.append(n); return "key \(n)" }
    }
    #expect(use(1) == "key 1" && use(2) == "key 2" && use(3) == "key 3")
    #expect(ring.count == 3 && loads == [1, 2, 3])
    // A hit loads nothing and makes key 1 the most recently used.
    #expect(use(1) == "key 1")
    #expect(loads == [1, 2, 3])
    // Full: the fourth key takes the place of the least recently used, key 2 (a first-in,
    // first-out ring would have dropped key 1, used a moment ago).
    #expect(use(4) == "key 4")
    #expect(ring.count == 3)
    #expect(ring.contains(id(1)) && !ring.contains(id(2)) && ring.contains(id(3)) && ring.contains(id(4)))
    // Key 2 is loaded again, and key 3 (now the oldest use) leaves.
    #expect(use(2) == "key 2")
    #expect(loads == [1, 2, 3, 4, 2])
    #expect(!ring.contains(id(3)) && ring.count == 3)
}

@Test func theKeyringStaysAtItsBoundOverManyKeysAndKeepsTheLastOnes() throws {
    var ring = Keyring<Int>(limit: 256)
    for n in 0..<1000 { _ = ring.key(for: id(n)) { n } }
    #expect(ring.count == 256)
    #expect((744..<1000).allSatisfy { ring.contains(id($0)) })
    #expect(!(0..<744).contains { ring.contains(id($0)) })
}

@Test func aKeyThatFailsToLoadIsNotKeptAndTakesNoOnesPlace() throws {
    struct Unreadable: Error {}
    var ring = Keyring<Int>(limit: 2)
    _ = ring.key(for: id(1)) { 1 }
    _ = ring.key(for: id(2)) { 2 }
    #expect(throws: Unreadable.self) { try ring.key(for: id(3)) { () throws(Unreadable) -> Int in throw Unreadable() } }
    #expect(ring.count == 2 && ring.contains(id(1)) && ring.contains(id(2)) && !ring.contains(id(3)))
}

@Test func anAccountKeepsAKeyMadeWithUserVerificationOnlyBehindTheGate() throws {
    try withTemporaryDirectory { dir in
        let device = try makeDevice(in: dir)
        let user = UserPolicy(pin: secret(pin))
        let plain = try device.register(optionsJSON: creationOptions(userId: "AQID", userVerification: "discouraged"),
                                        origin: origin).result.credential.id
        let verified = try device.register(optionsJSON: creationOptions(userId: "BAUG", userVerification: "required"),
                                           origin: origin, user: user).result.credential.id
        #expect(device.account.readModel.keyring.count == 0)
        // The passkey made without user verification: loaded once, kept.
        for _ in 0..<2 {
            _ = try device.sign(optionsJSON: requestOptions(userVerification: "discouraged"), origin: origin,
                                user: UserPolicy(account: AccountChoice(credentialId: plain)))
        }
        #expect(device.account.readModel.keyring.count == 1)
        // The one made with user verification: loaded once its first PIN check passed, then kept.
        for _ in 0..<2 {
            _ = try device.sign(optionsJSON: requestOptions(userVerification: "required"), origin: origin,
                                user: UserPolicy(account: AccountChoice(credentialId: verified), pin: secret(pin)))
        }
        #expect(device.account.readModel.keyring.count == 2)
        // Kept, yet never handed out without a check that passed in this ceremony.
        expectDeviceError(.authenticator(.failed)) {
            try device.sign(optionsJSON: requestOptions(userVerification: "required"), origin: origin,
                            user: UserPolicy(account: AccountChoice(credentialId: verified), pin: secret("0000")))
        }
        expectDeviceError(.authenticator(.notInteractive)) {
            try device.sign(optionsJSON: requestOptions(userVerification: "discouraged"), origin: origin,
                            user: UserPolicy(account: AccountChoice(credentialId: verified)))
        }
        // The store asked for it without the proof refuses (the authenticator always verifies first).
        let store = try device.store()
        let credential = try #require(try device.credential(id: verified))
        #expect(throws: AuthenticatorError.self) { try store.privateKey(for: credential, verification: nil) }
        #expect(device.biometry.failures == 1)
    }
}
