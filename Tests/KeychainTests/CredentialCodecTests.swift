@_spi(ByteOrder) import ByteOrder
import Foundation
import KeyVault
@testable import Keychain
import Testing
import VirtualAuthenticator

// The credential codec (CredentialCodec.swift): seeded random revisions, edge cases included,
// decode back to what was encoded; its bytes are the documented record's; a field missing,
// truncated, lengthened or altered is a named error of that field, never a crash.

/// SplitMix64: a seeded stream, so a failing case repeats.
private struct Seeded: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

private let keys: [COSEKey] = [COSEAlgorithm.es256, .edDSA, .rs256].map { try! PrivateKey.generate($0).publicKey }
private let firstDevice = (id: [UInt8](repeating: 0xfd, count: 16), name: "first")

extension Seeded {
    mutating func bytes(_ count: Int) -> [UInt8] { (0..<count).map { _ in UInt8.random(in: 0...255, using: &self) } }
    mutating func bytes(upTo max: Int) -> [UInt8] { bytes(Int.random(in: 0...max, using: &self)) }
    mutating func bool() -> Bool { Bool.random(using: &self) }
    mutating func pick<T>(_ choices: [T]) -> T { choices.randomElement(using: &self)! }
    mutating func text(upTo max: Int) -> String {
        let pieces = ["a", "Z", "0", " ", "é", "e\u{301}", "Ü", "✓", "日本", "🔑", "👩‍👩‍👧", "\u{0}", "ß", "Ω", "-", "@"]
        var s = ""
        while s.utf8.count < max, !(s.utf8.count > 0 && Int.random(in: 0..<8, using: &self) == 0) { s += pick(pieces) }
        return s
    }
    mutating func integer<T: FixedWidthInteger>(_: T.Type) -> T { pick([T.min, T.max, 0, 1, T.random(in: T.min...T.max, using: &self)]) }
}

/// A random revision as a record could hold it: names in their stored form (64 bytes at most,
/// beyond which a registration cuts them), BS recorded only when set by hand, the global counter
/// counting signatures — the forms encoding gives, so decoding must give it back exactly.
private func randomRevision(_ r: inout Seeded, removed: Bool = false) -> RevisionContent {
    var credential = Credential(
        id: r.bytes(r.pick([1, 16, 32, 64, Int.random(in: 1...1023, using: &r)])),
        rpId: r.pick(["example.com", "login.example.com", "xn--bcher-kva.example", "localhost", "a.b.c.d.e.example"]),
        userHandle: r.pick([[], r.bytes(64), r.bytes(Int.random(in: 1...63, using: &r))]),
        userName: PasskeyRules.storedName(r.pick(["", r.text(upTo: 20), r.text(upTo: 200)])),
        userDisplayName: PasskeyRules.storedName(r.pick(["", r.text(upTo: 20), r.text(upTo: 200)])),
        createdAt: r.integer(UInt64.self), signCount: r.integer(UInt32.self),
        backupEligible: r.bool(), backupState: false, publicKey: r.pick(keys),
        countsSignatures: r.bool(), requiresUserVerification: r.bool())
    credential.backupStateFixed = r.bool()
    credential.backupState = credential.backupStateFixed && r.bool()
    credential.globalCounter = r.bool()
    credential.countsSignatures = credential.countsSignatures || credential.globalCounter
    credential.profile = r.pick(["", "icloud-keychain", "security-key", r.text(upTo: 40)])
    credential.aaguid = r.pick([[], r.bytes(16), [UInt8](repeating: 0, count: 16)])
    credential.credProtect = r.pick([nil, .userVerificationOptional, .userVerificationOptionalWithCredentialIDList, .userVerificationRequired])
    credential.credBlob = r.pick([nil, [], r.bytes(32)])
    credential.largeBlob = r.pick([nil, r.bytes(upTo: 300)])
    credential.hidden = r.bool()
    let instant = { (r: inout Seeded) in Instant(ms: r.integer(UInt64.self), order: r.integer(UInt64.self)) }
    if removed {
        credential = Credential(id: credential.id, rpId: credential.rpId, userHandle: credential.userHandle, userName: "",
                                userDisplayName: "", createdAt: 0, signCount: 0, backupEligible: false, backupState: false,
                                publicKey: .ec2(x: [], y: []))
    }
    return RevisionContent(
        credential: credential, itemId: r.bytes(16), deviceId: r.bytes(16), deviceName: r.pick(["phone", "laptop", r.text(upTo: 64)]),
        changedAt: instant(&r), removed: removed, created: removed ? .zero : instant(&r),
        sealedKey: removed ? nil : r.bytes(Int.random(in: 40...200, using: &r)), sealedInVault: removed ? nil : r.pick([nil, r.bytes(16)]))
}

private func record(_ fields: [UInt8: [UInt8]], id: [UInt8] = [UInt8](repeating: 7, count: 16)) -> VaultRecord {
    VaultRecord(id: id, kind: .credential, fields: fields)
}

/// As a record travels: written into a batch and parsed back (fields then read lazily, from bytes).
private func throughTheLog(_ record: VaultRecord) throws -> VaultRecord {
    try #require(try VaultDecoding.batch(VaultDecoding.encodeBatch([record]), context: "test").first)
}

@Test(arguments: [1, 2, 3, 4, 5, 6, 7, 8] as [UInt64])
func aRevisionDecodesToWhatWasEncoded(seed: UInt64) throws {
    var r = Seeded(state: seed)
    for _ in 0..<200 {
        let content = randomRevision(&r, removed: r.pick([false, false, false, true]))
        let encoded = record(CredentialCodec.encode(content))
        #expect(try CredentialCodec.decode(encoded, firstDevice: firstDevice) == content)
        #expect(try CredentialCodec.decode(try throughTheLog(encoded), firstDevice: firstDevice) == content)
    }
}

@Test func encodingIsCanonical() throws {
    // What encoding normalizes (a BS not set by hand, names past 64 bytes, the global counter
    // without per-credential counting) it normalizes once: encoding what decoding gave is the same bytes.
    var r = Seeded(state: 99)
    for _ in 0..<300 {
        var content = randomRevision(&r)
        content.credential.backupState = r.bool()
        content.credential.countsSignatures = r.bool()
        content.credential.userName = r.text(upTo: 300)
        let fields = CredentialCodec.encode(content)
        let again = try CredentialCodec.decode(record(fields), firstDevice: firstDevice)
        #expect(CredentialCodec.encode(again) == fields)
        #expect(Array(again.credential.userName.utf8).count <= 64)
    }
}

/// The record as docs/vault-format.md describes it, written field by field from the document
/// rather than through the codec: the codec's bytes must be these.
private func documentedRecord(_ c: RevisionContent) -> [UInt8: [UInt8]] {
    var f = VaultRecord(id: [UInt8](repeating: 7, count: 16), kind: .credential)
    let k = c.credential
    f.setField(1, k.id)
    f.setField(2, Array(k.rpId.utf8))
    f.setField(3, k.userHandle)
    f.setField(14, c.itemId)
    f.setField(15, c.deviceId)
    f.setInteger(16, c.changedAt.ms)
    f.setField(18, Array(c.deviceName.utf8))
    f.setInteger(19, c.changedAt.order)
    if c.removed {
        f.setField(17, [1])
        return f.fields
    }
    f.setField(4, Array(k.userName.utf8))
    f.setField(5, Array(k.userDisplayName.utf8))
    f.setInteger(6, k.createdAt)
    f.setInteger(7, k.signCount)
    f.setField(8, [(k.backupEligible ? 1 : 0) | (k.backupStateFixed ? 4 | (k.backupState ? 2 : 0) : 0)])
    f.setField(9, k.publicKey.storedForm)
    f.setField(10, c.sealedKey)
    f.setInteger(11, Int32(k.publicKey.algorithm.rawValue))
    f.setField(12, [k.globalCounter ? 2 : k.countsSignatures ? 1 : 0])
    f.setField(13, [k.requiresUserVerification ? 1 : 0])
    if !k.profile.isEmpty { f.setField(20, Array(k.profile.utf8)) }
    if !k.aaguid.isEmpty { f.setField(21, k.aaguid) }
    f.setField(22, k.credProtect.map { [$0.rawValue] })
    f.setField(23, k.credBlob)
    f.setField(24, k.largeBlob)
    if k.hidden { f.setField(25, [1]) }
    f.setField(26, BigEndianBytes.of(c.created.ms) + BigEndianBytes.of(c.created.order))
    f.setField(42, c.sealedInVault)
    return f.fields
}

@Test func theCodecWritesTheDocumentedRecord() {
    var r = Seeded(state: 2026)
    for _ in 0..<300 {
        let content = randomRevision(&r, removed: r.pick([false, false, true]))
        var expected = documentedRecord(content)
        if content.removed { expected[42] = nil }  // a removal carries no key, so no seal's vault
        #expect(CredentialCodec.encode(content) == expected)
    }
}

@Test func aRecordFromBeforeSyncReadsAsTheFirstDevicesOwnItem() throws {
    var r = Seeded(state: 5)
    var content = randomRevision(&r)
    var fields = CredentialCodec.encode(content)
    for tag in [CredentialRecord.Tag.itemId, CredentialRecord.Tag.deviceId, CredentialRecord.Tag.deviceName, CredentialRecord.Tag.changedAt,
                CredentialRecord.Tag.changedOrder, CredentialRecord.Tag.created, CredentialRecord.Tag.algorithm] { fields[tag] = nil }
    content.credential.publicKey = keys[0]
    fields[CredentialRecord.Tag.publicKey] = keys[0].storedForm
    let id = r.bytes(16)
    let decoded = try CredentialCodec.decode(record(fields, id: id), firstDevice: firstDevice)
    let createdMs = Revision.milliseconds(ofSeconds: content.credential.createdAt)
    #expect(decoded.itemId == id)
    #expect(decoded.deviceId == firstDevice.id && decoded.deviceName == firstDevice.name)
    #expect(decoded.changedAt == Instant(ms: createdMs, order: 0))
    #expect(decoded.created == Instant(ms: createdMs, order: 0))
    #expect(decoded.credential == content.credential)
}

/// Decoding `fields` either gives a revision or throws the codec's error naming `tag`.
private func expectNamedError(_ fields: [UInt8: [UInt8]], tag: UInt8, _ problem: CredentialCodec.DecodingError.Problem? = nil,
                              sourceLocation: SourceLocation = #_sourceLocation) {
    do {
        _ = try CredentialCodec.decode(record(fields), firstDevice: firstDevice)
        Issue.record("field \(tag) damaged decoded anyway", sourceLocation: sourceLocation)
    } catch {
        #expect(error.tag == tag, "\(error)", sourceLocation: sourceLocation)
        if let problem { #expect(error.problem == problem, sourceLocation: sourceLocation) }
    }
}

@Test func aMissingFieldARecordNeedsIsNamed() {
    var r = Seeded(state: 11)
    let required: [UInt8] = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]
    for _ in 0..<50 {
        let content = randomRevision(&r)
        let fields = CredentialCodec.encode(content)
        for tag in fields.keys.sorted() {
            var damaged = fields
            damaged[tag] = nil
            if required.contains(tag) {
                expectNamedError(damaged, tag: tag, .missing)
            } else if tag == CredentialRecord.Tag.algorithm && content.credential.publicKey.algorithm != .es256 {
                // Absent, the algorithm is ES256's: another algorithm's key is then not one of it.
                expectNamedError(damaged, tag: CredentialRecord.Tag.publicKey)
            } else {
                // Optional: the record from before it existed, which decodes.
                #expect(throws: Never.self, "without tag \(tag)") { try CredentialCodec.decode(record(damaged), firstDevice: firstDevice) }
            }
        }
        var removal = CredentialCodec.encode(randomRevision(&r, removed: true))
        removal[CredentialRecord.Tag.changedAt] = nil
        expectNamedError(removal, tag: CredentialRecord.Tag.changedAt, .missing)
    }
}

@Test func aTruncatedLengthenedOrAlteredFieldIsANamedErrorOfThatField() {
    var r = Seeded(state: 12)
    let fixed: [UInt8: Int] = [6: 8, 7: 4, 11: 4, 16: 8, 19: 8, 26: 16]
    let text: [UInt8] = [2, 4, 5, 18, 20]
    for _ in 0..<50 {
        let fields = CredentialCodec.encode(randomRevision(&r))
        for (tag, size) in fixed {
            var short = fields
            short[tag] = Array(fields[tag]!.dropLast())
            expectNamedError(short, tag: tag, .wrongSize(expected: size, found: size - 1))
            var long = fields
            long[tag] = fields[tag]! + [0]
            expectNamedError(long, tag: tag, .wrongSize(expected: size, found: size + 1))
        }
        for tag in text {
            var damaged = fields
            damaged[tag] = (fields[tag] ?? []) + [0xff]
            expectNamedError(damaged, tag: tag, .notUTF8)
        }
        var key = fields
        key[9] = Array(fields[9]!.dropLast())
        expectNamedError(key, tag: 9)
        var algorithm = fields
        algorithm[11] = BigEndianBytes.of(Int32(-65535))
        expectNamedError(algorithm, tag: 11)
        for level in [[0], [4], [], [1, 1]] as [[UInt8]] {
            var protect = fields
            protect[22] = level
            expectNamedError(protect, tag: 22)
        }
    }
    // Every field cut short at every length, or its bytes flipped: decoded, or a named error.
    for _ in 0..<20 {
        let fields = CredentialCodec.encode(randomRevision(&r))
        for (tag, value) in fields {
            for cut in stride(from: 0, to: value.count, by: max(1, value.count / 8)) {
                var damaged = fields
                damaged[tag] = Array(value.prefix(cut))
                if let error = decodingError(damaged) { #expect(error.tag == tag) }
                damaged[tag] = value.map { $0 ^ 0x80 }
                if let error = decodingError(damaged) { #expect(error.tag == tag) }
            }
        }
    }
}

private func decodingError(_ fields: [UInt8: [UInt8]]) -> CredentialCodec.DecodingError? {
    do { _ = try CredentialCodec.decode(record(fields), firstDevice: firstDevice); return nil } catch { return error }
}

@Test(arguments: [COSEAlgorithm.es256, .edDSA, .rs256])
func anExportsPayloadReadsBackAsThePasskey(algorithm: COSEAlgorithm) throws {
    var r = Seeded(state: UInt64(bitPattern: Int64(algorithm.rawValue)))
    let key = try PrivateKey.generate(algorithm)
    var der = [UInt8](repeating: 0, count: key.privateKeyDERCount)
    let length = try der.withUnsafeMutableBytes { buffer throws(OpenSSLFailure) in try key.writePrivateKeyDER(into: buffer) }
    for _ in 0..<40 {
        var credential = randomRevision(&r).credential
        credential.publicKey = key.publicKey
        credential.createdAt = UInt64.random(in: 0...(WallClock.latest / 1000), using: &r)
        credential.backupState = r.bool()  // the export carries BS as it is
        credential.hidden = false          // not exported
        if credential.countsSignatures { credential.signCount = min(credential.signCount, UInt32.max - 1) }
        let payload = CredentialCodec.transferPayload(credential, privateKeyDER: Array(der.prefix(length)))
        let (read, readKey) = try CredentialCodec.passkey(fromTransfer: try CBORValue.decode(payload.encoded()))
        #expect(read == credential)
        #expect(readKey.publicKey == key.publicKey)
    }
}
