import Foundation
import KeyVault
@testable import Keychain
import Testing
import TestSupport
import VirtualAuthenticator

/// A discoverable sign-in picks its passkey through the device view's indexes
/// (``ViewCredentialList``, ``AccountCandidates``), not from a copy of the RP's list. Over random
/// views — hidden passkeys, every credProtect level, several passkeys per user and per user name,
/// names that are another passkey's user handle in base64url, creations in one millisecond and at
/// one instant, credential ids two passkeys share — changed by random puts and removals, every
/// account choice must pick what the full list picked (the rule `AccountChoice.pick` followed
/// before, written out below), fail with the same message when it picked nothing, and list the
/// same candidates in the same order.
@Test(arguments: 0..<16 as Range<UInt64>)
func theLazyPickEqualsThePickFromTheFullList(seed: UInt64) throws {
    try withTemporaryDirectory { dir in
        let account = try Account.create(at: dir + "/vault", passphrase: secret(passphrase), kdf: .min, biometricPIN: nil)
        let device = try account.deviceRecord(named: nil)
        var rng = SplitMix(seed: seed &+ 0x91c4)
        let key = try PrivateKey.generate()
        let credentialIds: [[UInt8]] = (0..<10).map { [0xC0, UInt8($0)] }
        let handles: [[UInt8]] = [[1, 2, 3], Array("bob".utf8), [0xFB, 0xFF], [9]]
        // "AQID" and "Ym9i" are two of the handles in base64url; "AQID=" decodes to one but is not its spelling.
        let names = ["alice", "bob", "AQID", "Ym9i", "carol"]
        let users = names + ["AQID=", "+/8", "-_8", "nobody"]
        var serial = 0

        func item(itemId: [UInt8], created: Instant? = nil) throws -> DeviceView.Item {
            serial += 1
            var credential = Credential(
                id: credentialIds[rng.below(credentialIds.count)], rpId: "example.com", userHandle: handles[rng.below(handles.count)],
                userName: names[rng.below(names.count)], userDisplayName: "passkey \(serial)", createdAt: 1_800_000_000, signCount: 0,
                backupEligible: true, backupState: true, publicKey: key.publicKey)
            credential.hidden = rng.below(4) == 0
            credential.credProtect = [nil, .userVerificationOptional, .userVerificationOptionalWithCredentialIDList,
                                      .userVerificationRequired][rng.below(4)]
            // Two milliseconds, three positions in each: many passkeys made at one instant.
            let created = created ?? Instant(ms: 1_800_000_000_000 + UInt64(rng.below(2)), order: UInt64(rng.below(3)))
            let revisionId = RandomSource.seeded(UInt64(serial) &+ seed << 32).bytes(16)
            let record = CredentialRecord.make(id: revisionId, itemId: itemId, for: credential, sealedKey: [0], device: device,
                                               changedAt: created, created: created)
            let revision = try Revision(record, source: .local(record), firstDevice: device)
            #expect(revision.credential.hidden == credential.hidden && revision.credential.credProtect == credential.credProtect)
            return try #require(DeviceView.item(itemId, seen: [(revision, created)], at: .endOf(.max), landedAt: { _ in nil },
                                                backupStateImmediate: true).item)
        }
        func newItemId() -> [UInt8] { (0..<3).map { _ in UInt8(rng.below(256)) } }

        var view = DeviceView(ordered: [])
        for _ in 0..<rng.below(30) { view.put(try item(itemId: newItemId())) }
        for step in 0..<40 {
            let held = view.items
            switch rng.below(5) {
            case 0 where !held.isEmpty:  // a passkey gone
                view.remove(itemId: held[rng.below(held.count)].itemId)
            case 1 where !held.isEmpty:  // a new revision of one: another name, handle, visibility, at times another place
                let old = held[rng.below(held.count)]
                view.put(try item(itemId: old.itemId, created: rng.below(2) == 0 ? old.winner.created : nil))
            default:
                view.put(try item(itemId: newItemId()))
            }
            let all = view.items.map(\.credential)
            for userVerified in [false, true] {
                let reference = all.filter { !$0.hidden && $0.isVisible(userVerified: userVerified, listed: false) }
                let candidates = try AccountCandidates(ViewCredentialList(view: view), userVerified: userVerified, listed: false)
                #expect((candidates == nil) == reference.isEmpty, "seed \(seed), step \(step)")
                guard let candidates else { continue }
                #expect(Array(candidates) == reference, "seed \(seed), step \(step)")
                var choices = [AccountChoice.newest]
                choices += credentialIds.prefix(4).map { AccountChoice(credentialId: $0) }
                choices += users.map { AccountChoice(user: $0) }
                choices += (0..<6).map { _ in AccountChoice(credentialId: credentialIds[rng.below(5)], user: users[rng.below(users.count)]) }
                for choice in choices {
                    #expect(outcome(try choice.pick(from: candidates)) == fullListPick(choice, from: reference),
                            "seed \(seed), step \(step), \(choice), user verified: \(userVerified)")
                }
            }
        }
    }
}

/// What `AccountChoice` picked when it was handed every candidate (oldest first, never empty):
/// the candidates filtered by credential id and by user (name, or the user handle whose
/// base64url is `user`), then the last.
private func fullListPick(_ choice: AccountChoice, from candidates: [Credential]) -> String {
    var matching = candidates
    if let credentialId = choice.credentialId { matching = matching.filter { $0.id == credentialId } }
    if let user = choice.user {
        let handle = Base64URL.decode(user)
        matching = matching.filter { $0.userName == user || ($0.userHandle == handle && Base64URL.encode($0.userHandle) == user) }
    }
    guard let picked = matching.last else {
        let wanted = [choice.credentialId.map { "credential \(EchoedInput.base64URL($0))" }, choice.user.map { "user \(EchoedInput.text($0))" }]
        return "error: no candidate passkey matches " + wanted.compactMap { $0 }.joined(separator: " and ")
    }
    return describe(picked)
}

private func outcome(_ body: @autoclosure () throws(AuthenticatorError) -> Credential) -> String {
    do { return describe(try body()) } catch { return "error: \(error.message)" }
}

private func describe(_ credential: Credential) -> String {
    "\(Base64URL.encode(credential.id)) \(credential.userName) \(Base64URL.encode(credential.userHandle)) \(credential.userDisplayName)"
}

