import Foundation
import Testing
@testable import KeyVault
import TestSupport

/// A vault made without flushes (a scenario's throw-away one) is the same vault on disk, and the
/// choice is not kept with it: whoever opens the directory again gets a durable vault.
final class VaultDurabilityTests {
    let directory: TemporaryDirectory
    var root: String { directory.path }
    var path: String { root + "/vault" }

    init() throws {
        directory = try TemporaryDirectory("authctl-durability-test")
    }

    private func secure(_ text: String) -> SecureBytes {
        var bytes = Array(text.utf8)
        return SecureBytes(consuming: &bytes)
    }

    private func record(_ n: UInt8, version: UInt64 = 1) -> VaultRecord {
        VaultRecord(id: [UInt8](repeating: n, count: 16), kind: .credential, version: version, fields: [1: [n], 2: [n % 3]])
    }

    @Test func aThrowawayVaultIsAnOrdinaryVaultAndReopensDurable() throws {
        let partitioning = VaultPartitioning(kind: .credential, tag: 2)
        do {
            let vault = try Vault.create(at: path, passphrase: secure("pass"), kdf: .min, partitioning: partitioning, durability: .none)
            #expect(vault.durability == .none)
            for n in 1...40 { try vault.commit([record(UInt8(n))]) }  // past the index's first append
            try vault.commit([record(7, version: 2)])
            try vault.compact()
            try vault.changePassphrase(to: secure("other"), kdf: .min, sealedFields: [:])  // a key rotation writes without flushes too
        }
        let reopened = try Vault.open(at: path, passphrase: secure("other"), access: .write, partitioning: partitioning)
        #expect(reopened.durability == .full)
        try reopened.verify()
        #expect(try reopened.records.count == 40)
        #expect(try reopened.record(id: record(7).id)?.version == 2)
    }
}
