import KeyVault
@testable import Keychain
import Testing
import TestSupport
import VirtualAuthenticator

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
    // Full, a new key makes room for 16 at once (a sixteenth of the limit): 744 keys left
    // in 47 rooms of 16 (752), so the ring holds the newest 248 — never more than its limit, never
    // fewer than the limit less one room.
    #expect(ring.count == 248 && ring.loads == 1000)
    #expect((752..<1000).allSatisfy { ring.contains(id($0)) })
    #expect(!(0..<752).contains { ring.contains(id($0)) })
}

@Test func aKeyKeptByHandIsFoundWithoutALoadAndCountsAsAUse() throws {
    var ring = Keyring<String>(limit: 2)
    ring.keep("made 1", for: id(1))
    ring.keep("made 2", for: id(2))
    #expect(ring.key(for: id(1)) { "loaded 1" } == "made 1")
    #expect(ring.loads == 0)
    // Key 2 is now the least recently used: a third key takes its place.
    ring.keep("made 3", for: id(3))
    #expect(ring.count == 2 && ring.contains(id(1)) && !ring.contains(id(2)) && ring.contains(id(3)))
    // Keeping a key already kept replaces it and evicts nothing.
    ring.keep("made 3 again", for: id(3))
    #expect(ring.count == 2 && ring.contains(id(1)) && ring.key(for: id(3)) { "loaded 3" } == "made 3 again")
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
        // Each registration keeps its new key: the one made with user verification behind the
        // proof of the PIN check that sealed it.
        #expect(device.account.readModel.keyring.count == 2)
        // The passkey made without user verification: signed with the kept key, nothing loaded.
        for _ in 0..<2 {
            _ = try device.sign(optionsJSON: requestOptions(userVerification: "discouraged"), origin: origin,
                                user: UserPolicy(account: AccountChoice(credentialId: plain)))
        }
        #expect(device.account.readModel.keyring.count == 2 && device.account.readModel.keyring.loads == 0)
        // The one made with user verification: found once the PIN check passed, nothing loaded.
        for _ in 0..<2 {
            _ = try device.sign(optionsJSON: requestOptions(userVerification: "required"), origin: origin,
                                user: UserPolicy(account: AccountChoice(credentialId: verified), pin: secret(pin)))
        }
        #expect(device.account.readModel.keyring.count == 2 && device.account.readModel.keyring.loads == 0)
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

/// A passkey deleted and made again for the same user and RP has a new key; the keyring names
/// keys by revision, so the new passkey's sign-in is made with its own key — never with the one
/// kept for the deleted passkey (a signature its RP could not verify).
@Test func aPasskeyDeletedAndMadeAgainSignsWithItsOwnKeyNotAKeptOne() throws {
    try withTemporaryDirectory { dir in
        let device = try makeDevice(in: dir)
        let user = UserPolicy(pin: secret(pin))
        for uv in ["discouraged", "required"] {
            let signer = uv == "required" ? user : UserPolicy()
            var madeBefore: MakeCredentialResponse?
            for round in 0..<2 {
                let made = try device.register(optionsJSON: creationOptions(userId: "AQID", userVerification: uv), origin: origin,
                                               user: signer).result
                let signed = try device.sign(optionsJSON: requestOptions(userVerification: uv), origin: origin, user: signer)
                let message = signed.result.authenticatorData + SHA256.hash(signed.clientDataJSON)
                #expect(signed.result.credential.id == made.credential.id)
                #expect(SignatureVerifier.verify(signature: signed.result.signature, message: message, spki: made.publicKeySPKI))
                if let madeBefore {
                    #expect(round == 1 && madeBefore.credential.id != made.credential.id)
                    #expect(!SignatureVerifier.verify(signature: signed.result.signature, message: message, spki: madeBefore.publicKeySPKI))
                }
                _ = try device.delete(credentialId: made.credential.id)
                madeBefore = made
            }
        }
        #expect(device.account.readModel.keyring.loads == 0)
    }
}

/// A revision's keys leave with it, follow it to a new revision, and those opened under a
/// biometry key leave when what opened them is forgotten — the keys of other revisions stay.
@Test func theKeyringForgetsAndMovesARevisionsKeysAndDropsTheVerifiedOnes() throws {
    var ring = Keyring<String>(limit: 8)
    let (a, b, c) = ([UInt8](repeating: 1, count: 16), [UInt8](repeating: 2, count: 16), [UInt8](repeating: 3, count: 16))
    let tag: [UInt8] = [9, 9, 9, 9, 9, 9, 9, 9]
    ring.keep("a", for: a)
    ring.keep("a-uv", for: [0xFF] + a + tag, verifiedRevision: a)
    ring.keep("b", for: b)
    ring.keep("b-uv", for: [0xFF] + b + tag, verifiedRevision: b)
    #expect(ring.count == 4)
    ring.move(revision: a, to: c)
    #expect(!ring.contains(a) && !ring.contains([0xFF] + a + tag))
    #expect(ring.key(for: c) { "loaded" } == "a" && ring.key(for: [0xFF] + c + tag, verifiedRevision: c) { "loaded" } == "a-uv")
    ring.forget(revision: b)
    #expect(ring.count == 2 && !ring.contains(b) && !ring.contains([0xFF] + b + tag))
    ring.keep("b-uv", for: [0xFF] + b + tag, verifiedRevision: b)
    ring.forgetVerified()
    #expect(ring.count == 1 && ring.contains(c))
    #expect(ring.loads == 0)
}

/// In an open account: a passkey signed with a counter writes a revision at every sign-in and its
/// kept key follows it (one entry, nothing loaded again); a deleted passkey's key leaves; a new
/// enrollment drops every key opened under the old biometry key, and the next sign-in after it
/// opens under the new one.
@Test func anAccountsKeyringFollowsRevisionsAndForgetsDeletedAndReEnrolledKeys() throws {
    func verifiedEntries(_ device: Device) -> Int { device.account.readModel.keyring.count - device.account.readModel.keyring.plainCount }
    try withTemporaryDirectory { dir in
        let device = try makeDevice(in: dir)
        let user = UserPolicy(pin: secret(pin))
        let counted = try device.register(optionsJSON: creationOptions(userId: "AQID", userVerification: "discouraged"),
                                          origin: origin).result.credential.id
        _ = try device.setProperties(credentialId: counted, counter: .counting(from: 1))
        for _ in 0..<3 {
            _ = try device.sign(optionsJSON: requestOptions(userVerification: "discouraged"), origin: origin,
                                user: UserPolicy(account: AccountChoice(credentialId: counted)))
        }
        #expect(device.account.readModel.keyring.count == 1 && device.account.readModel.keyring.loads == 0)
        let verified = try device.register(optionsJSON: creationOptions(userId: "BAUG", userVerification: "required"),
                                           origin: origin, user: user).result.credential.id
        #expect(verifiedEntries(device) == 1)
        _ = try device.delete(credentialId: counted)
        #expect(device.account.readModel.keyring.count == 1 && verifiedEntries(device) == 1)
        // A new PIN for the same biometry key: what the old PIN opened is forgotten all the same.
        try device.enrollBiometricPIN(secret("2468"), user: user)
        #expect(device.account.readModel.keyring.count == 0)
        _ = try device.sign(optionsJSON: requestOptions(userVerification: "required"), origin: origin,
                            user: UserPolicy(account: AccountChoice(credentialId: verified), pin: secret("2468")))
        #expect(verifiedEntries(device) == 1 && device.account.readModel.keyring.loads == 1)
    }
}

/// A counting passkey made with user verification: its key, opened under the biometry key,
/// follows each new revision (one entry, nothing loaded again); a factory reset of the device
/// forgets every kept key.
@Test func aCountingVerifiedPasskeysKeyFollowsItsRevisionsAndAResetForgetsEveryKey() throws {
    try withTemporaryDirectory { dir in
        let device = try makeDevice(in: dir)
        let user = UserPolicy(pin: secret(pin))
        let made = try device.register(optionsJSON: creationOptions(userId: "AQID", userVerification: "required"),
                                       origin: origin, user: user).result.credential.id
        _ = try device.setProperties(credentialId: made, counter: .counting(from: 1))
        for _ in 0..<3 {
            _ = try device.sign(optionsJSON: requestOptions(userVerification: "required"), origin: origin,
                                user: UserPolicy(account: AccountChoice(credentialId: made), pin: secret(pin)))
        }
        let ring = device.account.readModel.keyring
        #expect(ring.count == 1 && ring.plainCount == 0 && ring.loads == 0)
        _ = try device.register(optionsJSON: creationOptions(userId: "BAUG", userVerification: "discouraged"), origin: origin)
        #expect(device.account.readModel.keyring.count == 2)
        _ = try device.account.addDevice("laptop", pin: secret("1357"), approver: user)
        try device.account.resetDevice("laptop")
        #expect(device.account.readModel.keyring.count == 0)
    }
}
