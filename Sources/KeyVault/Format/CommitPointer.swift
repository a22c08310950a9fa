/// The `commit` file: which log generation is current and how much of it is acknowledged, and
/// which index of it counts. Sealed under the vault key, so a log cut short (or a frame made to
/// look unfinished) is told apart from a write that never finished.
///
///     nonce (24) ‖ XChaCha20-Poly1305(generation u64 ‖ frameCount u64 ‖ logLength u64
///                                      [‖ indexLength u64 ‖ rootLength u32 ‖ rootId (16)]) ‖ tag (16)
///     associated data: "AUTHCTL-COMMIT" ‖ formatVersion u16 ‖ vaultId (16)
///
/// The index fields came with the index: a 64-byte commit file (from before it) names none.
struct CommitPointer: Equatable {
    /// The sealed file's size: nonce (24) ‖ four u64, a u32 and an id (52) ‖ tag (16).
    static let size = 92

    /// Which index of the generation counts: the committed length of `index.<generation>`, the
    /// length of the root at its end, and the random id that root was sealed with — which names
    /// this root, not merely one at that place (a root left by a compaction that died has the same
    /// generation and may have the same offset).
    struct IndexName: Equatable {
        var length: UInt64
        var rootLength: UInt32
        var rootId: [UInt8]
    }

    var generation: UInt64
    var frameCount: UInt64
    var logLength: UInt64
    /// `nil`: the generation has no index.
    var index: IndexName?

    static func associatedData(vaultId: [UInt8]) -> [UInt8] {
        var w = ByteWriter()
        w.append(Array("AUTHCTL-COMMIT".utf8))
        w.append(VaultHeader.formatVersion)
        w.append(vaultId)
        return w.bytes
    }

    func sealed(key: SecureBytes, vaultId: [UInt8]) -> [UInt8] {
        var w = ByteWriter()
        w.append(generation)
        w.append(frameCount)
        w.append(logLength)
        w.append(index?.length ?? 0)
        w.append(index?.rootLength ?? 0)
        w.append(index?.rootId ?? [UInt8](repeating: 0, count: 16))
        return w.bytes.withUnsafeBytes { Sodium.seal($0, key: key, associatedData: Self.associatedData(vaultId: vaultId)) }
    }

    init(generation: UInt64, frameCount: UInt64, logLength: UInt64, index: IndexName? = nil) {
        self.generation = generation
        self.frameCount = frameCount
        self.logLength = logLength
        self.index = index
    }

    init(opening sealed: [UInt8], key: SecureBytes, vaultId: [UInt8]) throws(VaultError) {
        guard let plain = Sodium.open(sealed[...], key: key, associatedData: Self.associatedData(vaultId: vaultId)),
              plain.count == 24 || plain.count == 52
        else { throw VaultError(.corrupted, "the commit file failed authentication: the vault was damaged or tampered with") }
        var r = ByteReader(plain.withUnsafeBytes { Array($0) }, context: "commit file")
        generation = try r.read(UInt64.self)
        frameCount = try r.read(UInt64.self)
        logLength = try r.read(UInt64.self)
        guard plain.count == 52 else { return }
        let length = try r.read(UInt64.self), rootLength = try r.read(UInt32.self), rootId = try r.take(16)
        guard length > 0 else {
            guard rootLength == 0 else { throw VaultError(.corrupted, "the commit file names a root but no index") }
            return
        }
        guard rootLength > 0, UInt64(rootLength) <= length else {
            throw VaultError(.corrupted, "the commit file names an index root of \(rootLength) bytes in \(length)")
        }
        index = IndexName(length: length, rootLength: rootLength, rootId: rootId)
    }
}
