/// The `commit` file: which log generation is current and how much of it is acknowledged, and
/// how much of its index. Sealed under the vault key, so a log cut short (or a frame made to look
/// unfinished) is told apart from a write that never finished.
///
///     nonce (24) ‖ XChaCha20-Poly1305(generation u64 ‖ frameCount u64 ‖ logLength u64
///                                      [‖ indexLength u64 ‖ rootLength u32]) ‖ tag (16)
///     associated data: "AUTHCTL-COMMIT" ‖ formatVersion u16 ‖ vaultId (16)
///
/// The index fields came with the index: a 64-byte commit file (from before it) names none.
struct CommitPointer: Equatable {
    /// The sealed file's size: nonce (24) ‖ three u64 and a u64 and a u32 (36) ‖ tag (16).
    static let size = 76

    var generation: UInt64
    var frameCount: UInt64
    var logLength: UInt64
    /// Bytes of `index.<generation>` that count, and the length of the root at their end; 0 when
    /// the generation has no index.
    var indexLength: UInt64 = 0
    var rootLength: UInt32 = 0

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
        w.append(indexLength)
        w.append(rootLength)
        return w.bytes.withUnsafeBytes { Sodium.seal($0, key: key, associatedData: Self.associatedData(vaultId: vaultId)) }
    }

    init(generation: UInt64, frameCount: UInt64, logLength: UInt64, indexLength: UInt64 = 0, rootLength: UInt32 = 0) {
        self.generation = generation
        self.frameCount = frameCount
        self.logLength = logLength
        self.indexLength = indexLength
        self.rootLength = rootLength
    }

    init(opening sealed: [UInt8], key: SecureBytes, vaultId: [UInt8]) throws(VaultError) {
        guard let plain = Sodium.open(sealed[...], key: key, associatedData: Self.associatedData(vaultId: vaultId)),
              plain.count == 24 || plain.count == 36
        else { throw VaultError(.corrupted, "the commit file failed authentication: the vault was damaged or tampered with") }
        var r = ByteReader(plain.withUnsafeBytes { Array($0) }, context: "commit file")
        generation = try r.read(UInt64.self)
        frameCount = try r.read(UInt64.self)
        logLength = try r.read(UInt64.self)
        if plain.count == 36 {
            indexLength = try r.read(UInt64.self)
            rootLength = try r.read(UInt32.self)
            guard indexLength == 0 ? rootLength == 0 : (UInt64(rootLength) <= indexLength && rootLength > 0) else {
                throw VaultError(.corrupted, "the commit file names an index root of \(rootLength) bytes in \(indexLength)")
            }
        }
    }
}
