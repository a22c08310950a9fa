/// The vault's decoders as standalone functions, for tools that read vault bytes independently
/// and for the fuzz harness (Sources/authctl-fuzz). Each takes untrusted bytes and either returns
/// a value or throws `VaultError` — never traps.
package enum VaultDecoding {
    /// Parses a `header` file (magic, version, KDF, salt, vault id, wrapped key, checksum).
    package static func header(_ bytes: [UInt8]) throws(VaultError) -> (vaultId: [UInt8], opslimit: UInt64, memlimit: UInt64) {
        let header = try VaultHeader(parsing: bytes)
        return (header.vaultId, header.opslimit, header.memlimit)
    }

    /// Parses the plaintext of a log frame: count u32 ‖ records.
    package static func batch(_ plain: [UInt8], context: @autoclosure @escaping () -> String = "batch") throws(VaultError) -> [VaultRecord] {
        var r = ByteReader(plain, context: context())
        let count = try r.read(UInt32.self)
        // Each record takes at least 27 bytes: a count beyond what fits is a lie, not a reason to loop.
        guard Int(count) <= r.remaining / 27 else { throw VaultError(.corrupted, "\(r.context) claims \(count) records") }
        var records = [VaultRecord]()
        records.reserveCapacity(Int(count))
        for _ in 0..<count { records.append(try VaultRecord(reading: &r)) }
        guard r.remaining == 0 else { throw VaultError(.corrupted, "\(r.context) has \(r.remaining) trailing bytes") }
        return records
    }

    /// Parses the plaintext of an index root (docs/vault-format.md, "Index") and returns it
    /// encoded again, which must be the same bytes: the format has one encoding per root.
    package static func indexRoot(_ plain: [UInt8]) throws(VaultError) -> [UInt8] {
        try VaultIndex(rootPlaintext: plain).rootPlaintext
    }

    /// Parses the plaintext of an index bucket: its partitions, and every record of each.
    package static func indexBucket(_ plain: [UInt8]) throws(VaultError) -> [(partition: [UInt8], records: [VaultRecord])] {
        try VaultIndex.bucketDirectory(plain, number: 0).map { value, place throws(VaultError) in
            (Array(value.bytes), try VaultIndex.partitionRecords(plain, range: place.range, count: place.count, number: 0).map(\.record))
        }
    }

    /// The plaintext of an index bucket holding `partitions` (each record with sequence number 0).
    package static func encodeIndexBucket(_ partitions: [(partition: [UInt8], records: [VaultRecord])]) -> [UInt8] {
        VaultIndex.bucketPlaintext(partitions.map { (ByteKey($0.partition), $0.records.map { (UInt64(0), $0) }) })
    }

    /// The plaintext of a log frame holding `records`.
    package static func encodeBatch(_ records: some Collection<VaultRecord>) -> [UInt8] {
        var w = ByteWriter(capacity: records.reduce(4) { $0 + $1.encodedLength })
        w.append(UInt32(records.count))
        for record in records { record.write(to: &w) }
        return w.bytes
    }
}
