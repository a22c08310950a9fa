import CTAP
import Foundation
import Session
import Testing
import TestSupport

/// authenticatorLargeBlobs: the serialized large-blob array read and written in fragments, kept
/// in the vault with the device.
@Suite struct LargeBlobTests {
    /// A serialized array: `contents` (CBOR) and its checksum.
    static func serialized(_ contents: [UInt8]) -> [UInt8] { contents + KeyLargeBlobs.checksum(of: contents) }

    /// An array of one entry of `size` bytes' worth of a byte string, serialized.
    static func array(entryOf size: Int) -> [UInt8] {
        serialized(CBORValue.array([.map([(.int(1), .bytes([UInt8](repeating: 0xAB, count: size)))])]).encoded())
    }

    static func get(_ count: Int, offset: Int = 0) -> CBORValue {
        .map([(.int(1), .int(count)), (.int(3), .int(offset))])
    }

    static func set(_ fragment: [UInt8], offset: Int, length: Int? = nil) -> CBORValue {
        var members: [(CBORValue, CBORValue)] = [(.int(2), .bytes(fragment)), (.int(3), .int(offset))]
        if let length { members.append((.int(4), .int(length))) }
        return .map(members)
    }

    /// Writes `array` in fragments of `size` bytes; the status of each.
    static func write(_ array: [UInt8], to fixture: some KeySending, fragment size: Int = 1000) throws -> [CTAPStatus] {
        var statuses = [CTAPStatus]()
        for offset in stride(from: 0, to: array.count, by: size) {
            let piece = Array(array[offset..<min(array.count, offset + size)])
            statuses.append(try fixture.send(0x0C, set(piece, offset: offset, length: offset == 0 ? array.count : nil)).0)
        }
        return statuses
    }

    /// The whole array as a client reads it, fragment by fragment.
    static func read(_ fixture: some KeySending) throws -> [UInt8] {
        var out = [UInt8]()
        while true {
            let (status, answer) = try fixture.send(0x0C, get(1136, offset: out.count))
            #expect(status == .ok)
            let fragment = try #require(answer?[.int(1)]?.bytesValue)
            out += fragment
            if fragment.count < 1136 { return out }
        }
    }

    @Test func aNewKeyHoldsTheEmptyArrayWithItsChecksum() throws {
        let fixture = try KeyFixture()
        let initial = try Self.read(fixture)
        #expect(initial.count == 17)
        #expect(initial.first == 0x80)
        // LEFT(SHA-256(0x80), 16), as CTAP 2.1 §6.10.1 gives it.
        #expect(Array(initial.dropFirst()) == [0x76, 0xBE, 0x8B, 0x52, 0x8D, 0x00, 0x75, 0xF7, 0xAA, 0xE9, 0x8D, 0x6F, 0xA5, 0x7A, 0x6D, 0x3C])
    }

    @Test func anArrayWrittenInFragmentsIsReadBackWhole() throws {
        let fixture = try KeyFixture()
        let array = Self.array(entryOf: 3000)
        #expect(try Self.write(array, to: fixture) == [.ok, .ok, .ok, .ok])
        #expect(try Self.read(fixture) == array)
        // A get from an offset, of a length.
        let (status, answer) = try fixture.send(0x0C, Self.get(10, offset: 5))
        #expect(status == .ok)
        #expect(answer?[.int(1)]?.bytesValue == Array(array[5..<15]))
    }

    @Test func aBadChecksumIsAnIntegrityFailureAndTheStoredArrayStays() throws {
        let fixture = try KeyFixture()
        let good = Self.array(entryOf: 10)
        #expect(try Self.write(good, to: fixture) == [.ok])
        var bad = Self.array(entryOf: 1500)
        bad[bad.count - 1] ^= 0xFF
        #expect(try Self.write(bad, to: fixture) == [.ok, .integrityFailure])
        #expect(try Self.read(fixture) == good)
    }

    @Test func anArrayOverTheCapacityIsRefusedAtItsFirstFragment() throws {
        let fixture = try KeyFixture()
        let (status, info) = try fixture.send(0x04)
        #expect(status == .ok)
        #expect(info?[.int(0x0B)] == .int(4096))
        #expect(try fixture.send(0x0C, Self.set([0x80], offset: 0, length: 4097)).0 == .largeBlobStorageFull)
        // Exactly the capacity fits.
        let full = Self.serialized(CBORValue.array([.bytes([UInt8](repeating: 1, count: 4096 - 16 - 4))]).encoded())
        #expect(full.count == 4096)
        #expect(try Self.write(full, to: fixture).allSatisfy { $0 == .ok })
        #expect(try Self.read(fixture) == full)
    }

    @Test func fragmentsOutOfSequenceAndMalformedRequestsAnswerTheSpecsStatus() throws {
        let fixture = try KeyFixture()
        let array = Self.array(entryOf: 1500)
        // A next fragment with no write under way, or at the wrong offset.
        #expect(try fixture.send(0x0C, Self.set([1, 2, 3], offset: 5)).0 == .invalidSequence)
        #expect(try fixture.send(0x0C, Self.set(Array(array[0..<1000]), offset: 0, length: array.count)).0 == .ok)
        #expect(try fixture.send(0x0C, Self.set(Array(array[1000...]), offset: 999)).0 == .invalidSequence)
        // A length on a next fragment; more than the length announced.
        #expect(try fixture.send(0x0C, Self.set(Array(array[1000...]), offset: 1000, length: array.count)).0 == .invalidParameter)
        #expect(try fixture.send(0x0C, Self.set(Array(array[1000...]) + [0], offset: 1000)).0 == .invalidParameter)
        // Another command ends the write: its next fragment is out of sequence.
        #expect(try fixture.send(0x04).0 == .ok)
        #expect(try fixture.send(0x0C, Self.set(Array(array[1000...]), offset: 1000)).0 == .invalidSequence)
        #expect(try Self.read(fixture) == KeyLargeBlobs.initial)
        // get and set both, or neither; a get past the end or longer than a fragment; no offset.
        #expect(try fixture.send(0x0C, .map([(.int(1), .int(1)), (.int(2), .bytes([1])), (.int(3), .int(0))])).0 == .invalidParameter)
        #expect(try fixture.send(0x0C, .map([(.int(3), .int(0))])).0 == .invalidParameter)
        #expect(try fixture.send(0x0C, Self.get(1, offset: 18)).0 == .invalidParameter)
        #expect(try fixture.send(0x0C, Self.get(1137)).0 == .invalidLength)
        #expect(try fixture.send(0x0C, .map([(.int(1), .int(1))])).0 == .missingParameter)
        #expect(try fixture.send(0x0C, .map([(.int(1), .int(-1)), (.int(3), .int(0))])).0 == .cborUnexpectedType)
        // A first fragment without its length, or shorter than an empty array and its checksum.
        #expect(try fixture.send(0x0C, Self.set([0x80], offset: 0)).0 == .invalidParameter)
        #expect(try fixture.send(0x0C, Self.set([0x80], offset: 0, length: 16)).0 == .invalidParameter)
        // A fragment over maxMsgSize − 64.
        #expect(try fixture.send(0x0C, Self.set([UInt8](repeating: 0, count: 1137), offset: 0, length: 2000)).0 == .invalidLength)
    }

    @Test func withAPINSetAWriteNeedsAToken() throws {
        let fixture = try KeyFixture()
        try fixture.session.enrollPIN(secret("12345678"), device: "key")
        let array = Self.array(entryOf: 10)
        #expect(try fixture.send(0x0C, Self.set(array, offset: 0, length: array.count)).0 == .puatRequired)
        var members: [(CBORValue, CBORValue)] = [(.int(2), .bytes(array)), (.int(3), .int(0)), (.int(4), .int(array.count))]
        members.append((.int(5), .bytes([UInt8](repeating: 0, count: 16))))
        #expect(try fixture.send(0x0C, .map(members)).0 == .missingParameter)
        #expect(try fixture.send(0x0C, .map(members + [(.int(6), .int(3))])).0 == .invalidParameter)
        // No token was issued: none can match.
        #expect(try fixture.send(0x0C, .map(members + [(.int(6), .int(2))])).0 == .pinAuthInvalid)
        // Reading needs none.
        #expect(try Self.read(fixture) == KeyLargeBlobs.initial)
    }

    @Test func theArrayOutlivesTheKeyAndItsVaultsReopeningAndAResetClearsIt() throws {
        try withTemporaryDirectory { dir in
            let array = Self.array(entryOf: 2000)
            do {
                let first = try VaultKey(creating: dir + "/vault")
                #expect(try Self.write(array, to: first).allSatisfy { $0 == .ok })
            }
            let fixture = try VaultKey(opening: dir + "/vault")
            #expect(try Self.read(fixture) == array)
            #expect(try fixture.send(0x07).0 == .ok)
            #expect(try Self.read(fixture) == KeyLargeBlobs.initial)
        }
    }
}
