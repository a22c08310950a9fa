@_spi(ByteOrder) import ByteOrder
import Foundation
import KeyVault
import SyncStore
@testable import Keychain
import Testing
import TestSupport
import VirtualAuthenticator

// The join ceremony through a store (docs/sync.md, "The join ceremony"), in one process: a
// joining device posts a request under its code, an enrolled device approves it, and the answer
// opens on the joining device only. Whoever holds the store is played by the test reading and
// writing the store's metadata directly.

private let start: UInt64 = 1_800_000_000_000

/// The phone: first device of an account on a directory store `dir/store`, its PIN 1111.
private func phone(_ dir: String, clock: VirtualClock) throws -> Account {
    try Account.create(at: dir + "/phone", passphrase: secret(passphrase), kdf: .min, storePath: dir + "/store", deviceName: "phone",
                       biometricPIN: secret("1111"), clock: clock.wallClock)
}

/// What the store holds under the join entries, as its holder reads it.
private func joinEntries(_ store: any AccountStore, _ keys: [String]) throws -> [String: StoreMetadata] {
    try store.metadata(keys)
}

/// The lookups metadata `joins` lists, as hex.
private func listedLookups(_ store: any AccountStore) throws -> [String] {
    guard let bytes = try store.metadata([JoinCode.indexKey])[JoinCode.indexKey]?.bytes, !bytes.isEmpty else { return [] }
    return stride(from: 4, to: bytes.count, by: 24).map { Hex.string(bytes[$0..<$0 + 16]) }
}

/// An answer the holder of the store makes without the code: the keys of an account of its own,
/// sealed to the joining device's public key (the strongest holder, who somehow has it) inside a
/// key of its own choosing.
private func forgedReply(to request: JoinRequest, expiry: UInt64, key: SealingKey) -> [UInt8] {
    let keys = JoinedKeys(accountKey: .random(), accountId: Array(repeating: 7, count: 16), biometryKey: nil)
    var inner = key.sealSecret(keys.sealed, associatedData: JoinCode.replyAD + request.keyPair.publicKey)
    let boxed = SealedBoxKeyPair.seal(SecureBytes(consuming: &inner), to: request.keyPair.publicKey)!
    return JoinCode.framed(JoinCode.replyMagic, expiry: expiry, boxed)
}

@Test func aJoinRequestOpensAndIsAnsweredOnlyWithTheCode() throws {
    try withTemporaryDirectory { dir in
        let clock = VirtualClock(start: start)
        let account = try phone(dir, clock: clock)
        let request = try JoinRequest(storePath: dir + "/store", deviceName: "laptop", timeout: .seconds(600), clock: clock.wallClock)
        #expect(request.expiry == start + 600_000)
        let store = try DirectoryStore(path: dir + "/store", create: false)

        let held = try #require(try joinEntries(store, [request.lookup])[request.lookup]).bytes
        let (magic, expiry, sealed) = try #require(JoinCode.framing(held))
        #expect(magic == Array("AJQ2".utf8) && expiry == request.expiry)
        let stamp = BigEndianBytes.of(expiry)
        // Without the code the request does not open: not under a wrong code's key, not under any
        // key made the same way from what the store holds (the lookup, as text or bytes).
        let (wrongLookup, wrongKey) = try JoinCode.keys(JoinCode.normalized(request.code == "0000-0000-0000" ? "1111-1111-1111" : "0000-0000-0000"))
        #expect(JoinCode.lookupKey(wrongLookup) != request.lookup)
        var fromStore = [wrongKey, try JoinCode.keys(request.lookup).key, try JoinCode.keys(String(request.lookup.dropFirst(5))).key]
        var lookupBytes = Hex.bytes(String(request.lookup.dropFirst(5)))!
        fromStore.append(try SealingKey.derived(from: SecureBytes(consuming: &lookupBytes), salt: JoinCode.salt, kdf: JoinCode.kdf).subkey(JoinCode.keyContext))
        for key in fromStore {
            #expect(key.open(sealed, associatedData: JoinCode.requestAD + stamp) == nil)
        }
        // The lookup and the code key are what docs/sync.md says: one Argon2id of the code
        // (interactive limits, salt "AUTHCTL-JOIN-KDF"), a keyed BLAKE2b name of it, a subkey.
        var code = Array(request.code.utf8)
        let derived = try SealingKey.derived(from: SecureBytes(consuming: &code), salt: Array("AUTHCTL-JOIN-KDF".utf8), kdf: .interactive)
        let lookup = "join-" + Hex.string(derived.fingerprint("AUTHCTL-JOIN-LOOKUP"))
        #expect(request.lookup == lookup)
        #expect(try listedLookups(store) == [String(lookup.dropFirst(5))])
        let body = try #require(derived.subkey("AUTHCTL-JOIN-CODE-KEY").open(sealed, associatedData: Array("AUTHCTL-JOIN-REQUEST".utf8) + stamp))
        #expect(body == request.keyPair.publicKey + Array("laptop".utf8))

        // An approval with a wrong code finds nothing to approve, and asks for no PIN.
        var asked = 0
        let counting = UserPolicy(pin: { _ throws(AuthenticatorError) in asked += 1; return secret("1111") })
        expectDeviceError(.invalidArgument) { try account.approveJoin(code: "0000-0000-0001", approver: counting) }
        #expect(asked == 0)

        // A request of the store holder's own (its key pair, in place of the joining device's) made
        // without the code is no request the approver sees.
        let version = try #require(try joinEntries(store, [lookup])[lookup]).version
        let planted = JoinCode.framed(JoinCode.requestMagic, expiry: expiry,
                                      wrongKey.seal(SealedBoxKeyPair().publicKey + Array("laptop".utf8), associatedData: JoinCode.requestAD + stamp))
        try store.setMetadata(lookup, planted, expecting: version)
        expectDeviceError(.invalidArgument) { try account.approveJoin(code: request.code, approver: counting) }
        #expect(asked == 0)
        // An answer forged without the code does not open on the joining device: the store's doing.
        try store.setMetadata(lookup, forgedReply(to: request, expiry: expiry, key: wrongKey), expecting: version + 1)
        let refused = #expect(throws: DeviceError.self) { _ = try request.waitForApproval() }
        #expect(refused?.code == .storage && refused?.message.contains("does not open") == true)
        try store.setMetadata(lookup, held, expecting: version + 2)

        // The approval, with the code (as typed: case and dashes do not matter).
        #expect(try account.approveJoin(code: request.code.lowercased().replacing("-", with: ""), approver: counting) == "laptop")
        #expect(asked == 1)
        let answer = try #require(try joinEntries(store, [lookup])[lookup]).bytes
        let (answerMagic, answerExpiry, boxed) = try #require(JoinCode.framing(answer))
        #expect(answerMagic == Array("AJA2".utf8) && answerExpiry == expiry)
        // Whoever holds the store cannot open it (sealed to the joining device's key pair) ...
        #expect(SealedBoxKeyPair().open(boxed) == nil)
        // ... and the joining device does, with the account's keys.
        let keys = try request.waitForApproval()
        #expect(keys.accountId == account.settings.accountId)
        keys.accountKey.withRawBytes { got in account.settings.accountKey.withRawBytes { want in #expect(Array(got) == Array(want)) } }
        #expect(keys.biometryKey != nil)
        #expect(try joinEntries(store, [lookup])[lookup]?.bytes == [])  // read, and cleared
    }
}

@Test func aRefusalThatDoesNotOpenUnderTheCodeIsTheStoresProblem() throws {
    try withTemporaryDirectory { dir in
        let clock = VirtualClock(start: start)
        let account = try phone(dir, clock: clock)
        let store = try DirectoryStore(path: dir + "/store", create: false)
        // A refusal the holder of the store wrote without the code: ioError, not the approver's word.
        let request = try JoinRequest(storePath: dir + "/store", deviceName: "laptop", timeout: .seconds(600), clock: clock.wallClock)
        let version = try #require(try store.metadata([request.lookup])[request.lookup]).version
        let (_, otherKey) = try JoinCode.keys("ZZZZ-ZZZZ-ZZZZ")
        let forged = JoinCode.framed(JoinCode.refusalMagic, expiry: request.expiry,
                                     otherKey.seal(Array("go away".utf8), associatedData: JoinCode.refusalAD + request.keyPair.publicKey))
        try store.setMetadata(request.lookup, forged, expecting: version)
        let error = #expect(throws: DeviceError.self) { _ = try request.waitForApproval() }
        #expect(error?.code == .storage && error?.message.contains("does not open") == true)
        // The approver's own refusal (a name the account has) is `canceled`, with its reason.
        let twin = try JoinRequest(storePath: dir + "/store", deviceName: "phone", timeout: .seconds(600), clock: clock.wallClock)
        expectDeviceError(.invalidArgument) { try account.approveJoin(code: twin.code) }
        let told = #expect(throws: DeviceError.self) { _ = try twin.waitForApproval() }
        #expect(told?.code == .authenticator(.canceled) && told?.message.contains("already has a device named 'phone'") == true)
    }
}

@Test func anApprovalAfterTheRequestExpiredIsRefusedWithoutAskingForThePIN() throws {
    try withTemporaryDirectory { dir in
        let clock = VirtualClock(start: start)
        let account = try phone(dir, clock: clock)
        // The joining device was killed while it waited: its request stays, unanswered.
        let request = try JoinRequest(storePath: dir + "/store", deviceName: "laptop", timeout: .seconds(60), clock: clock.wallClock)
        clock.advance(by: 60_001)
        var asked = 0
        let counting = UserPolicy(pin: { _ throws(AuthenticatorError) in asked += 1; return secret("1111") })
        let error = #expect(throws: DeviceError.self) { _ = try account.approveJoin(code: request.code, approver: counting) }
        #expect(error?.code == .authenticator(.timedOut) && error?.message.contains("expired") == true)
        #expect(try asked == 0 && account.device("phone").biometry.failures == 0)
        // Nothing was answered: the request is as it was posted.
        let store = try DirectoryStore(path: dir + "/store", create: false)
        #expect(try JoinCode.framing(#require(store.metadata([request.lookup])[request.lookup]).bytes)?.magic == JoinCode.requestMagic)
    }
}

@Test func staleJoinEntriesAreEmptiedByLaterJoinsAndApprovals() throws {
    try withTemporaryDirectory { dir in
        let clock = VirtualClock(start: start)
        let account = try phone(dir, clock: clock)
        let store = try DirectoryStore(path: dir + "/store", create: false)
        func join(_ name: String) throws -> JoinRequest {
            try JoinRequest(storePath: dir + "/store", deviceName: name, timeout: .seconds(60), clock: clock.wallClock)
        }
        // Three joining devices killed while they waited: one never answered, one approved and one
        // refused, neither answer ever read.
        let waiting = try join("laptop"), approved = try join("tablet"), refused = try join("phone")
        #expect(try account.approveJoin(code: approved.code, approver: UserPolicy(pin: secret("1111"))) == "tablet")
        expectDeviceError(.invalidArgument) { try account.approveJoin(code: refused.code) }
        let left = [waiting, approved, refused].map(\.lookup)
        #expect(try store.metadata(left).values.allSatisfy { !$0.bytes.isEmpty })

        // Past their expiry, but within the minute left for clocks that disagree: kept.
        clock.advance(by: 60_000 + 30_000)
        let next = try join("desk")
        #expect(try store.metadata(left).values.allSatisfy { !$0.bytes.isEmpty })
        // A minute past: the next join empties them and lists only itself.
        clock.advance(by: 31_000)
        let last = try join("pc")
        #expect(try store.metadata(left).count == 3 && store.metadata(left).values.allSatisfy { $0.bytes.isEmpty })
        #expect(try Set(listedLookups(store)) == Set([next.lookup, last.lookup].map { String($0.dropFirst(5)) }))
        #expect(try !store.metadata([next.lookup, last.lookup]).values.contains { $0.bytes.isEmpty })
        // An approval does the same, whatever it comes to (here: a code no device waits with).
        clock.advance(by: 121_000)
        expectDeviceError(.invalidArgument) { try account.approveJoin(code: "0000-0000-0001") }
        #expect(try store.metadata([next.lookup, last.lookup]).values.allSatisfy { $0.bytes.isEmpty })
        #expect(try listedLookups(store).isEmpty)
    }
}
