/// The `commit` file: which log generation is current and how much of it is acknowledged. Sealed
/// under the vault key, so a log cut short (or a frame made to look unfinished) is told apart from
/// a write that never finished.
///
///     nonce (24) ‖ XChaCha20-Poly1305(generation u64 ‖ frameCount u64 ‖ logLength u64) ‖ tag (16)
///     associated data: "AUTHCTL-COMMIT" ‖ formatVersion u16 ‖ vaultId (16)
struct CommitPointer: Equatable {
    /// The sealed file's size: nonce (24) ‖ three u64 (24) ‖ tag (16).
    static let size = 64

    var generation: UInt64
    var frameCount: UInt64
    var logLength: UInt64

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
        return w.bytes.withUnsafeBytes { Sodium.seal($0, key: key, associatedData: Self.associatedData(vaultId: vaultId)) }
    }

    init(generation: UInt64, frameCount: UInt64, logLength: UInt64) {
        self.generation = generation
        self.frameCount = frameCount
        self.logLength = logLength
    }

    init(opening sealed: [UInt8], key: SecureBytes, vaultId: [UInt8]) throws(VaultError) {
        guard let plain = Sodium.open(sealed[...], key: key, associatedData: Self.associatedData(vaultId: vaultId)),
              plain.count == 24
        else { throw VaultError(.corrupted, "the commit file failed authentication: the vault was damaged or tampered with") }
        var r = ByteReader(plain.withUnsafeBytes { Array($0) }, context: "commit file")
        generation = try r.read(UInt64.self)
        frameCount = try r.read(UInt64.self)
        logLength = try r.read(UInt64.self)
    }
}
