import Testing
@testable import KeyVault

/// `VaultRecord.rewritten(id:kind:version:changing:)`: a record rewritten from its fields'
/// encoding (as read from the log) holds exactly what the same changes made through a dictionary
/// of its fields hold, encodes to the same bytes, and reads back.
struct VaultRecordRewriteTests {
    /// The record as the log gives it back: its fields still encoded.
    static func readBack(_ record: VaultRecord) throws -> VaultRecord {
        var r = ByteReader(record.bytes, context: "a test record")
        let read = try VaultRecord(reading: &r)
        #expect(r.remaining == 0)
        return read
    }

    /// What the changes make through a dictionary of the fields: the way the rewrite replaces.
    static func expected(_ record: VaultRecord, id: [UInt8], kind: VaultRecord.Kind, version: UInt64,
                         _ changes: [(tag: UInt8, value: ArraySlice<UInt8>?)]) -> VaultRecord {
        var fields = record.fields
        for (tag, value) in changes { fields[tag] = value.map(Array.init) }
        return VaultRecord(id: id, kind: kind, version: version, fields: fields)
    }

    static func check(_ original: VaultRecord, _ changes: [(tag: UInt8, value: ArraySlice<UInt8>?)]) throws {
        let id = [UInt8](repeating: 0x5a, count: 16)
        let want = expected(original, id: id, kind: .settings, version: 7, changes)
        for source in [original, try readBack(original)] {
            let got = source.rewritten(id: id, kind: .settings, version: 7, changing: changes)
            #expect(got == want)
            #expect(got.fields == want.fields)
            #expect(got.bytes == want.bytes, "the rewrite encodes other bytes than the record made from its fields")
            #expect(got.encodedLength == want.bytes.count)
            let table = got.fieldTable
            for tag in Set(want.fields.keys).union(changes.map(\.tag)) {
                #expect(got.field(tag).map(Array.init) == want.fields[tag], "field \(tag)")
                #expect(table.field(tag).map(Array.init) == want.fields[tag], "field \(tag) through the table")
            }
            #expect(try readBack(got) == want)
        }
    }

    @Test func replacesRemovesAndAddsAroundEveryField() throws {
        let original = VaultRecord(id: [UInt8](repeating: 1, count: 16), kind: .credential, version: 3,
                                   fields: [5: [1, 2, 3], 10: Array("sealed key".utf8), 20: [], 40: [9]])
        try Self.check(original, [])
        try Self.check(original, [(10, nil)])                                   // removed
        try Self.check(original, [(10, [7, 7][...])])                           // replaced
        try Self.check(original, [(1, [1][...]), (15, [15][...]), (99, [99][...])])  // before, between, after
        try Self.check(original, [(30, nil), (0, nil)])                         // absent, removed: nothing
        try Self.check(original, [(43, original.field(10)), (10, nil), (40, [4, 0][...]), (41, [4, 1][...])])  // a replica's
        try Self.check(original, [(5, nil), (10, nil), (20, nil), (40, nil)])   // every field gone
        try Self.check(VaultRecord(id: [UInt8](repeating: 2, count: 16), kind: .credential), [(8, [8][...]), (2, [][...])])
    }

    @Test func randomFieldsAndChanges() throws {
        var seed: UInt64 = 0x5eed_0038  // fixed: a failure repeats
        func next(_ bound: Int) -> Int {
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((seed >> 33) % UInt64(bound))
        }
        for _ in 0..<300 {
            var fields = [UInt8: [UInt8]]()
            for _ in 0..<next(12) { fields[UInt8(next(16))] = (0..<next(6)).map { _ in UInt8(next(256)) } }
            var changes = [(tag: UInt8, value: ArraySlice<UInt8>?)]()
            var used = Set<UInt8>()
            for _ in 0..<next(6) {
                let tag = UInt8(next(18))
                guard used.insert(tag).inserted else { continue }
                changes.append((tag, next(3) == 0 ? nil : (0..<next(5)).map { _ in UInt8(next(256)) }[...]))
            }
            try Self.check(VaultRecord(id: [UInt8](repeating: 3, count: 16), kind: .credential, version: 1, fields: fields), changes)
        }
    }

    /// `fieldTable` finds every field `field(_:)` finds, and no other, whatever the tags (each
    /// quarter of the 256 tags is a word of its own in the table), in a record read back from
    /// its encoding and in one made from a dictionary.
    @Test func theFieldTableFindsWhatFieldFinds() throws {
        var seed: UInt64 = 0x7ab1_e038
        func next(_ bound: Int) -> Int {
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((seed >> 33) % UInt64(bound))
        }
        let edges: [UInt8] = [0, 1, 62, 63, 64, 65, 127, 128, 129, 191, 192, 193, 254, 255]
        for round in 0..<200 {
            var fields = [UInt8: [UInt8]]()
            for _ in 0..<next(40) { fields[UInt8(next(256))] = (0..<next(7)).map { _ in UInt8(next(256)) } }
            if round % 4 == 0 { for tag in edges { fields[tag] = [tag] } }
            let made = VaultRecord(id: [UInt8](repeating: 4, count: 16), kind: .credential, version: 1, fields: fields)
            for record in [made, try Self.readBack(made)] {
                let table = record.fieldTable
                for tag in 0...255 {
                    let want = fields[UInt8(tag)]
                    #expect(record.field(UInt8(tag)).map(Array.init) == want, "field \(tag)")
                    #expect(table.field(UInt8(tag)).map(Array.init) == want, "field \(tag) through the table")
                }
            }
        }
    }
}
