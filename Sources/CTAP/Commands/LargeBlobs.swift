import Session

/// authenticatorLargeBlobs (CTAP 2.1 §6.10): the key's serialized large-blob array — a CBOR array
/// of entries that clients seal under their credentials' largeBlobKeys, followed by LEFT(SHA-256
/// of it, 16) — read and written in fragments of at most maxMsgSize − 64 bytes. A write goes
/// fragment by fragment into memory and replaces the stored array only once complete and intact.
extension SecurityKey {
    /// The longest fragment a get returns or a set carries (§6.10: maxMsgSize − 64).
    static let maxLargeBlobFragment = maxMessageSize - 64

    /// A write under way: the length its first fragment announced and what has come so far.
    struct PendingLargeBlobWrite {
        var expectedLength: Int
        var received: [UInt8]
    }

    func largeBlobs(_ parameters: CTAPParameters) throws(CTAPStatus) -> CBORValue? {
        let get = try parameters.unsigned(0x01)
        let set = try parameters.bytes(0x02)
        let offset = try parameters.required(0x03, parameters.unsigned)
        let length = try parameters.unsigned(0x04)
        let param = try parameters.bytes(0x05)
        let version = try parameters.int(0x06)
        // Exactly one of get and set.
        guard (get == nil) != (set == nil) else { throw .invalidParameter }
        if let get {
            guard length == nil else { throw .invalidParameter }
            guard get <= Self.maxLargeBlobFragment else { throw .invalidLength }
            let array = try keyRequest { () throws(SessionError) in try session.keyLargeBlobArray(device: device) }
            guard offset <= array.count else { throw .invalidParameter }
            return .map([(.int(0x01), .bytes(Array(array[offset..<min(array.count, offset + get)])))])
        }
        guard let set else { throw .invalidParameter }
        try writeLargeBlobFragment(set, offset: offset, length: length, param: param, version: version)
        return nil
    }

    /// §6.10.2's set: the first fragment (offset 0) announces the whole length and starts the
    /// write; each next one must follow on (CTAP1_ERR_INVALID_SEQ); with a PIN set, or alwaysUv,
    /// each carries a pinUvAuthParam of the `lbw` permission over 32 × 0xff ‖ 0x0c 0x00 ‖
    /// uint32LE(offset) ‖ SHA-256(fragment). The last one checks the whole array's checksum
    /// (CTAP2_ERR_INTEGRITY_FAILURE, nothing stored) and stores it.
    private func writeLargeBlobFragment(_ fragment: [UInt8], offset: Int, length: Int?, param: [UInt8]?,
                                        version: Int?) throws(CTAPStatus) {
        guard fragment.count <= Self.maxLargeBlobFragment else { throw .invalidLength }
        if offset == 0 {
            guard let length else { throw .invalidParameter }
            guard length <= Device.maxSerializedLargeBlobArray else { throw .largeBlobStorageFull }
            guard length >= 17 else { throw .invalidParameter }  // at least an empty array and its checksum
            largeBlobWrite = PendingLargeBlobWrite(expectedLength: length, received: [])
        } else if length != nil {
            throw .invalidParameter
        }
        guard var write = largeBlobWrite, offset == write.received.count else { throw .invalidSequence }
        let facts = try facts()
        if facts.pinSet || facts.settings.alwaysUv {
            let message = [UInt8](repeating: 0xFF, count: 32) + [0x0C, 0x00] + (0..<4).map { UInt8(truncatingIfNeeded: offset >> (8 * $0)) }
                + SHA256.hash(fragment)
            _ = try authorizeManagement(param, version: version, pinSet: facts.pinSet, message: message, permission: .largeBlobWrite)
        }
        guard offset + fragment.count <= write.expectedLength else { throw .invalidParameter }
        write.received += fragment
        guard write.received.count == write.expectedLength else {
            largeBlobWrite = write
            return
        }
        largeBlobWrite = nil
        guard KeyLargeBlobs.isIntact(write.received) else { throw .integrityFailure }
        try keyRequest { () throws(SessionError) in try session.writeKeyLargeBlobArray(device: device, write.received) }
    }
}
