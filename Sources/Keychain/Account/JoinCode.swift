@_spi(ByteOrder) import ByteOrder
import KeyVault
import SyncStore

/// The join code: how it is made, read back, and turned into the store's lookup and the code key;
/// the layout of what a join leaves in the store (``JoinRequest``), and how what is stale there is
/// emptied.
enum JoinCode {
    static let alphabet = Array("0123456789ABCDEFGHJKMNPQRSTVWXYZ")  // Crockford's base32
    static let requestMagic = Array("AJQ2".utf8), replyMagic = Array("AJA2".utf8), refusalMagic = Array("AJX2".utf8)
    static let requestAD = Array("AUTHCTL-JOIN-REQUEST".utf8), replyAD = Array("AUTHCTL-JOIN-REPLY".utf8)
    static let refusalAD = Array("AUTHCTL-JOIN-REFUSAL".utf8)

    /// Argon2id's salt (crypto_pwhash's 16 bytes): the same for every code, so both sides derive
    /// the keys from the code alone. A table of all 2^60 codes' Argon2id is what it leaves open.
    static let salt = Array("AUTHCTL-JOIN-KDF".utf8)
    /// Argon2id's limits for a code: libsodium's interactive ones (2 passes over 64 MiB), whatever
    /// `--kdf` a vault is made with — the approving device has only the code to go on.
    static let kdf = KDFLevel.interactive
    static let lookupContext = "AUTHCTL-JOIN-LOOKUP", keyContext = "AUTHCTL-JOIN-CODE-KEY"

    static func make(_ random: RandomSource) -> String {
        let bytes = random.bytes(12)
        let chars = bytes.map { alphabet[Int($0 & 31)] }
        return stride(from: 0, to: 12, by: 4).map { String(chars[$0..<$0 + 4]) }.joined(separator: "-")
    }

    /// `text` as a code: case, dashes and spaces ignored, O read as 0 and I, L as 1.
    static func normalized(_ text: String) throws(DeviceError) -> String {
        var chars = [Character]()
        for c in text.uppercased() where c != "-" && c != " " {
            let read: Character = c == "O" ? "0" : (c == "I" || c == "L") ? "1" : c
            guard alphabet.contains(read) else { throw DeviceError(.invalidArgument, "'\(EchoedInput.text(text))' is not a join code") }
            chars.append(read)
        }
        guard chars.count == 12 else { throw DeviceError(.invalidArgument, "a join code has 12 characters (XXXX-XXXX-XXXX)") }
        return stride(from: 0, to: 12, by: 4).map { String(chars[$0..<$0 + 4]) }.joined(separator: "-")
    }

    /// The metadata key the request is under, and the key that seals both ways: both from one
    /// Argon2id of the code (`XXXX-XXXX-XXXX`), the lookup a BLAKE2b name of it and the code key a
    /// BLAKE2b subkey. Whoever holds the store sees the lookup; testing a guess of the code
    /// against it costs that guess's Argon2id, as testing it against a sealed request does.
    static func keys(_ code: String) throws(DeviceError) -> (lookup: [UInt8], key: SealingKey) {
        var secret = Array(code.utf8)
        let derived: SealingKey
        do { derived = try SealingKey.derived(from: SecureBytes(consuming: &secret), salt: salt, kdf: kdf) } catch { throw DeviceError(error) }
        return (derived.fingerprint(lookupContext), derived.subkey(keyContext))
    }

    /// The metadata key of a lookup: `join-` and its hex.
    static func lookupKey(_ lookup: [UInt8]) -> String { "join-" + Hex.string(lookup) }

    /// What a request, an answer or a refusal in the store says of itself without the code: its
    /// magic and the request's expiry (when the joining device stops waiting), and the rest.
    static func framing(_ bytes: [UInt8]) -> (magic: [UInt8], expiry: UInt64, rest: [UInt8])? {
        guard bytes.count >= 12 else { return nil }
        let magic = Array(bytes[0..<4])
        guard [requestMagic, replyMagic, refusalMagic].contains(magic) else { return nil }
        return (magic, BigEndianBytes.integer(bytes[4..<12]), Array(bytes[12...]))
    }

    static func framed(_ magic: [UInt8], expiry: UInt64, _ rest: [UInt8]) -> [UInt8] { magic + BigEndianBytes.of(expiry) + rest }

    // MARK: - Stale join entries

    /// The store has no metadata listing and no delete: metadata `joins` lists every join posted
    /// (its lookup, 16 bytes, and its expiry, 8), so a later join or approval finds the stale ones
    /// and empties them — a request whose joining device was killed, an answer nobody read.
    ///
    ///     "AJL1" ‖ (lookup (16) ‖ expiry (8))*
    static let indexKey = "joins"
    static let indexMagic = Array("AJL1".utf8)
    /// How long past its expiry an entry is left alone: the joining device reads an answer that
    /// landed just before it stopped waiting, and other machines' clocks may run ahead of its own.
    static let staleAfter: UInt64 = 60_000
    /// The most stale entries one pass empties (the rest wait for the next).
    static let sweepLimit = 32

    /// Whether what expires at `expiry` is stale at `now`.
    static func isStale(_ expiry: UInt64, now: UInt64) -> Bool { now > staleAfter && expiry < now - staleAfter }

    private struct IndexEntry: Equatable {
        let lookup: [UInt8]
        let expiry: UInt64
    }

    private static func entries(_ bytes: [UInt8]) -> [IndexEntry]? {
        guard bytes.count >= 4 else { return bytes.isEmpty ? [] : nil }
        guard Array(bytes[0..<4]) == indexMagic, (bytes.count - 4) % 24 == 0 else { return nil }
        return stride(from: 4, to: bytes.count, by: 24).map {
            IndexEntry(lookup: Array(bytes[$0..<$0 + 16]), expiry: BigEndianBytes.integer(bytes[$0 + 16..<$0 + 24]))
        }
    }

    /// Empties the join entries listed as stale at `now` (past their expiry by ``staleAfter``) and
    /// takes them off the list; with `adding`, lists a new request's lookup and expiry (before the
    /// request is posted, so a request is never left unlisted). Best effort: a store that cannot
    /// be used, or an index of a format this version does not know, is left as it is.
    static func sweep(_ store: any AccountStore, now: UInt64, adding new: (lookup: [UInt8], expiry: UInt64)? = nil) {
        for _ in 0..<5 {
            do throws(StoreError) {
                let current = try store.metadata([indexKey])[indexKey]
                guard let listed = entries(current?.bytes ?? []) else { return }
                let stale = Array(listed.filter { isStale($0.expiry, now: now) }.prefix(sweepLimit))
                var emptied = [IndexEntry]()
                if !stale.isEmpty {
                    let held = try store.metadata(stale.map { lookupKey($0.lookup) })
                    for entry in stale {
                        let key = lookupKey(entry.lookup)
                        guard let value = held[key], !value.bytes.isEmpty else { emptied.append(entry); continue }
                        // Its own expiry, when it says one, rules: what the list says may be older.
                        if let expiry = framing(value.bytes)?.expiry, !isStale(expiry, now: now) { continue }
                        do { try store.setMetadata(key, [], expecting: value.version); emptied.append(entry) } catch {
                            guard case .conflict = error.kind else { throw error }  // changed meanwhile: next time
                        }
                    }
                }
                guard !emptied.isEmpty || new != nil else { return }
                var kept = listed.filter { !emptied.contains($0) }
                if let new { kept.append(IndexEntry(lookup: new.lookup, expiry: new.expiry)) }
                let bytes = kept.isEmpty ? [] : indexMagic + kept.flatMap { $0.lookup + BigEndianBytes.of($0.expiry) }
                try store.setMetadata(indexKey, bytes, expecting: current?.version ?? 0)
                return
            } catch {
                guard case .conflict = error.kind else { return }  // another join or approval wrote the list: read it again
            }
        }
    }
}
