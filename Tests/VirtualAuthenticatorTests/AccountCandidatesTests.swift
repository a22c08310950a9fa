import Foundation
import Testing
@testable import VirtualAuthenticator

/// The candidates of a sign-in (``AccountCandidates``) are read through the store's
/// ``CredentialList`` rather than copied and filtered. Over random stores — passkeys of two RPs,
/// hidden ones, every credProtect level, several per user, ids the RP lists or not — a sign-in
/// must pick what the filtered full list picks (its last), fail with the same message when there
/// is none, and the candidates' lookups must answer as a filter of that list does.
@Test(arguments: 0..<12 as Range<UInt64>)
func aSignInPicksWhatTheFilteredFullListPicks(seed: UInt64) throws {
    var rng = SplitMix(seed: seed &+ 0xacc0)
    let key = try PrivateKey.generate()
    let store = InMemoryCredentialStore()
    let authenticator = Authenticator(store: store, user: ScriptedUser())
    let ids: [[UInt8]] = (0..<40).map { [0xA0, UInt8($0)] }
    let handles: [[UInt8]] = [[1], [2], [3]]
    let names = ["alice", "bob", "carol"]
    for (n, id) in ids.prefix(rng.below(ids.count)).enumerated() {
        var credential = Credential(
            id: id, rpId: rng.below(5) == 0 ? "other.example" : "example.com", userHandle: handles[rng.below(handles.count)],
            userName: names[rng.below(names.count)], userDisplayName: "passkey \(n)", createdAt: 1_800_000_000, signCount: 0,
            backupEligible: true, backupState: true, publicKey: key.publicKey, requiresUserVerification: rng.below(4) == 0)
        credential.hidden = rng.below(4) == 0
        credential.credProtect = [nil, .userVerificationOptional, .userVerificationOptionalWithCredentialIDList,
                                  .userVerificationRequired][rng.below(4)]
        try store.save(credential, privateKey: key, replacing: [], verification: ScriptedUser.Verified())
    }
    let stored = store.stored.map(\.0).filter { $0.rpId == "example.com" }

    for round in 0..<30 {
        let allowList = rng.below(2) == 0 ? [] : (0..<rng.below(4)).map { _ in ids[rng.below(ids.count)] }
        let listed = !allowList.isEmpty
        let userVerified = rng.below(2) == 0
        let reference = stored.filter { (!listed || allowList.contains($0.id)) && !$0.hidden
            && $0.isVisible(userVerified: userVerified, listed: listed) }
        let expected = reference.last.map { $0.userDisplayName } ?? (listed
            ? "error: none of the \(allowList.count) allowed credentials is here for example.com"
            : "error: no passkey for example.com")
        let picked: String
        do {
            picked = try authenticator.getAssertion(GetAssertionRequest(
                clientDataHash: [UInt8](repeating: 7, count: 32), rpId: "example.com", allowList: allowList,
                performUserVerification: userVerified)).credential.userDisplayName
        } catch { picked = "error: \(error.message)" }
        #expect(picked == expected, "seed \(seed), round \(round)")

        let candidates = try AccountCandidates(try store.credentialList(forRP: "example.com"), userVerified: userVerified, listed: false)
        let discoverable = stored.filter { !$0.hidden && $0.isVisible(userVerified: userVerified, listed: false) }
        #expect(candidates.map { Array($0) } ?? [] == discoverable, "seed \(seed), round \(round)")
        guard let candidates else { continue }
        let credentialId = rng.below(2) == 0 ? ids[rng.below(ids.count)] : nil
        let userName = rng.below(2) == 0 ? names[rng.below(names.count)] : nil
        let userHandle = rng.below(2) == 0 ? handles[rng.below(handles.count)] : nil
        let matching = discoverable.filter { credential in
            (credentialId.map { credential.id == $0 } ?? true)
                && ((userName == nil && userHandle == nil) || credential.userName == userName || credential.userHandle == userHandle)
        }
        #expect(candidates.newest(credentialId: credentialId, userName: userName, userHandle: userHandle) == matching.last,
                "seed \(seed), round \(round)")
    }
}

/// A small seeded generator (SplitMix64), so each case repeats.
private struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9e37_79b9_7f4a_7c15
        var z = state
        z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
        z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
        return z ^ (z >> 31)
    }
    mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }
}
