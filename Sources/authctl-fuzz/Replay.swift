#if !FUZZING
@_spi(ByteOrder) import ByteOrder
import CTAP
import Foundation
import KeyVault
import VirtualAuthenticator

/// Without the fuzzer: `authctl-fuzz seeds DIR` writes a seed corpus (valid inputs for every
/// target); `authctl-fuzz FILE…` runs files through the targets (a corpus or a crash reproducer).
@main
struct Replay {
    static func main() throws {
        let args = Array(CommandLine.arguments.dropFirst())
        if args.first == "seeds", args.count == 2 {
            try writeSeeds(to: args[1])
            return
        }
        for path in args {
            guard let data = FileManager.default.contents(atPath: path) else { continue }
            FuzzTarget.run(Array(data))
        }
        print("replayed \(args.count) inputs")
    }

    /// A root of one bucket and one record kept in the root (as the format lays it out).
    static func indexRootSeed(_ record: VaultRecord) -> [UInt8] {
        var out = [UInt8]()
        func append<T: FixedWidthInteger>(_ value: T) { out += BigEndianBytes.of(value) }
        for value: UInt64 in [0, 5, 900, 3] { append(value) }  // generation, frames, log length, next sequence
        out += [1, 2]  // credential records, by tag 2
        append(UInt32(1))
        append(UInt64(0)); append(UInt32(120)); append(UInt32(2))  // bucket 0: offset, length, records
        out += [UInt8](repeating: 0xAB, count: 16)  // and id
        let settings = VaultRecord(id: Array(repeating: 1, count: 16), kind: .settings, version: 1, fields: [8: Array("phone".utf8)])
        append(UInt32(1))
        append(UInt64(0))
        out += VaultDecoding.encodeBatch([settings]).dropFirst(4)
        precondition((try? VaultDecoding.indexRoot(out)) == out, "the index root seed does not decode")
        return out
    }

    /// Clients and a key: a channel allocated, a CBOR request answered, a ping in two packets, a
    /// message left half-sent until it times out, a lock, a client gone mid-message, the power cut.
    static func ctapHIDSeed() -> [UInt8] {
        func report(_ bytes: [UInt8]) -> [UInt8] { bytes + [UInt8](repeating: 0, count: CTAPHIDPacket.reportSize - bytes.count) }
        let one: [UInt8] = [0, 0, 0, 1]
        var steps: [UInt8] = [0x05]
        steps += [0] + report([0xFF, 0xFF, 0xFF, 0xFF, 0x86, 0, 8, 1, 2, 3, 4, 5, 6, 7, 8])  // INIT: channel 1
        steps += [0] + report(one + [0x90, 0, 1, 0x04])  // CBOR getInfo
        steps += [6, 5 | 2 << 3]  // a keepalive, then the answer (80 bytes)
        steps += [1] + report(one + [0x81, 0, 100] + [UInt8](repeating: 0x50, count: 57))  // PING of 100 bytes
        steps += [1] + report(one + [0x00] + [UInt8](repeating: 0x50, count: 43))
        steps += [0] + report(one + [0x90, 0, 200, 0x01])  // half a CBOR message, then 800 ms
        steps += [4 | 16 << 3]
        steps += [2] + report(one + [0x84, 0, 1, 2])  // LOCK for 2 s
        steps += [3] + report(one + [0x81, 0, 90])  // half a PING from a client that then goes
        steps += [7 | 1 << 3 | 3 << 4, 7]
        return steps
    }

    /// Sessions with a key: with a PIN, two credentials made for example.com with a token, a
    /// sign-in and its next assertion, a key agreement, credential management's metadata and both
    /// enumerations, a large-blob array written and read, a power cycle and a wrong PIN; without
    /// one, a credential the key does not keep, a sign-in with an allow list, and the same
    /// management requests (refused: no PIN).
    static func ctapKeySeeds() -> [[UInt8]] {
        typealias Step = CTAPKeySession.Step
        let hash = CBORValue.bytes([UInt8](repeating: 0x68, count: 32))
        let rp = CBORValue.map([(.text("id"), .text("example.com")), (.text("name"), .text("Example"))])
        func makeCredential(_ user: String, discoverable: Bool) -> CBORValue {
            .map([(.int(1), hash), (.int(2), rp),
                  (.int(3), .map([(.text("id"), .bytes(Array(user.utf8))), (.text("name"), .text(user)), (.text("displayName"), .text(user.capitalized))])),
                  (.int(4), .array([.map([(.text("alg"), .int(-7)), (.text("type"), .text("public-key"))])])),
                  (.int(7), .map([(.text("rk"), .bool(discoverable))]))])
        }
        let getAssertion = CBORValue.map([(.int(1), .text("example.com")), (.int(2), hash)])
        let keyAgreement = CBORValue.map([(.int(1), .int(2)), (.int(2), .int(2))])
        func management(_ subcommand: Int, _ parameters: CBORValue? = nil) -> CBORValue {
            .map([(.int(1), .int(subcommand))] + (parameters.map { [(.int(2), $0)] } ?? []))
        }
        func raw(_ command: UInt8, _ parameters: CBORValue? = nil) -> Step { .raw([command] + (parameters?.encoded() ?? [])) }
        let rpIdHash = CBORValue.map([(.int(1), .bytes(SHA256.hash(Array("example.com".utf8))))])
        let emptyArray: [UInt8] = [0x80] + SHA256.hash([0x80]).prefix(16)
        let write = CBORValue.map([(.int(2), .bytes(emptyArray)), (.int(3), .int(0)), (.int(4), .int(emptyArray.count))])
        let read = CBORValue.map([(.int(1), .int(100)), (.int(3), .int(0))])
        let retries = CBORValue.map([(.int(1), .int(2)), (.int(2), .int(1))])
        var withPIN = [Step]()
        withPIN += [.token(0x17, boundToExampleCom: false), .authenticated(0, makeCredential("alice", discoverable: true))]
        withPIN += [.token(0x17, boundToExampleCom: false), .authenticated(0, makeCredential("bob", discoverable: true))]
        withPIN += [raw(0x02, getAssertion), raw(0x08), raw(0x06, keyAgreement)]
        withPIN += [.token(0x04, boundToExampleCom: false), .authenticated(2, management(0x01))]
        withPIN += [.authenticated(2, management(0x02)), raw(0x0A, management(0x03))]
        withPIN += [.authenticated(2, management(0x04, rpIdHash)), raw(0x0A, management(0x05))]
        withPIN += [.token(0x10, boundToExampleCom: false), .authenticated(3, write), raw(0x0C, read)]
        withPIN += [.powerCycle, .wrongPIN, raw(0x06, retries)]
        let descriptor = CBORValue.map([(.text("id"), .bytes([UInt8](repeating: 1, count: 64))), (.text("type"), .text("public-key"))])
        let allowList = CBORValue.map([(.int(1), .text("example.com")), (.int(2), hash), (.int(3), .array([descriptor]))])
        var withoutPIN = [Step]()
        withoutPIN += [raw(0x04), raw(0x01, makeCredential("carol", discoverable: false))]
        withoutPIN += [raw(0x02, allowList), raw(0x02, getAssertion), raw(0x08)]
        withoutPIN += [raw(0x06, keyAgreement), raw(0x0A, management(0x01))]
        return [[1] + withPIN.flatMap { $0.bytes }, [0] + withoutPIN.flatMap { $0.bytes }]
    }

    static func writeSeeds(to directory: String) throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let record = VaultRecord(id: Array(repeating: 7, count: 16), kind: .credential, version: 3,
                                 fields: [1: [1, 2, 3], 2: Array("example.com".utf8), 9: Array(repeating: 4, count: 65)])
        let tombstone = VaultRecord(id: Array(repeating: 8, count: 16), kind: .tombstone, version: 2)
        let key = try PrivateKey.generate()
        let authData = AuthenticatorData(
            rpId: "example.com", flags: [.userPresent, .userVerified], signCount: 7,
            attestedCredentialData: AttestedCredentialData(aaguid: AuthenticatorConfiguration.authctlAAGUID,
                                                           credentialId: Array(repeating: 9, count: 16),
                                                           publicKey: key.publicKey))
        let seeds: [(FuzzTarget, [UInt8])] = [
            (.vaultBatch, VaultDecoding.encodeBatch([record, tombstone])),
            (.vaultBatch, VaultDecoding.encodeBatch([])),
            (.creationOptions, Array(#"{"publicKey":{"rp":{"id":"example.com","name":"E"},"user":{"id":"dQ","name":"u","displayName":"U"},"challenge":"Y2hhbGxlbmdl","pubKeyCredParams":[{"type":"public-key","alg":-7}],"excludeCredentials":[{"type":"public-key","id":"AAAA"}],"authenticatorSelection":{"userVerification":"required"},"attestation":"direct","extensions":{"credProps":true},"timeout":60000}}"#.utf8)),
            (.requestOptions, Array(#"{"rpId":"example.com","challenge":"Y2hhbGxlbmdl","allowCredentials":[{"type":"public-key","id":"AAAA"}],"userVerification":"preferred"}"#.utf8)),
            (.cbor, authData.attestedCredentialData!.publicKey.cbor.encoded()),
            (.cbor, CBORValue.map([(.text("fmt"), .text("none")), (.text("attStmt"), .map([])), (.text("authData"), .bytes(authData.bytes))]).encoded()),
            (.authenticatorData, authData.bytes),
            (.indexBucket, VaultDecoding.encodeIndexBucket([(Array("example.com".utf8), [record])])),
            (.indexRoot, indexRootSeed(record)),
            (.ctapHID, ctapHIDSeed()),
        ] + ctapKeySeeds().map { (.ctapKey, $0) }
        for (i, (target, input)) in seeds.enumerated() {
            guard FileManager.default.createFile(atPath: "\(directory)/seed-\(i)", contents: Data([target.rawValue] + input)) else {
                throw CocoaError(.fileWriteUnknown)
            }
        }
    }
}
#endif
