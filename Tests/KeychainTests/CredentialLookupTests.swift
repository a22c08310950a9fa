import Foundation
import Testing
import TestSupport
import VirtualAuthenticator

@testable import KeyVault
@testable import Keychain

/// `credential show ID` and `delete ID` among many passkeys: found through the vault's
/// credential-id lookup, they read the one RP's passkeys, and stay right after compaction, a key
/// rotation, and changes the index has not caught up with.
private func bulkVault(_ dir: String, passkeys count: Int) throws -> [[UInt8]] {
    let device = try Device.create(at: dir + "/vault", passphrase: secret(passphrase), kdf: .min, biometricPIN: nil,
                                   random: .seeded(3))
    var passkeys = [(Credential, PrivateKey)]()
    let key = try PrivateKey.generate()
    for i in 0..<count {
        passkeys.append((Credential(id: RandomSource.seeded(UInt64(i)).bytes(16), rpId: "rp\(i % 97).example", userHandle: [UInt8(i & 0xFF), UInt8(i >> 8)],
                                    userName: "user\(i)", userDisplayName: "User \(i)", createdAt: 1_800_000_000, signCount: 0,
                                    backupEligible: true, backupState: true, publicKey: key.publicKey), key))
    }
    try device.addInBulk(passkeys)
    return passkeys.map(\.0.id)
}

private func open(_ dir: String, _ access: Vault.Access = .read, passphrase text: String = passphrase) throws -> Device {
    try Device.open(at: dir + "/vault", passphrase: secret(text), access: access)
}

@Test func showingAndDeletingOnePasskeyReadsOnlyItsRP() throws {
    try withTemporaryDirectory { dir in
        let ids = try bulkVault(dir, passkeys: 2000)
        do {
            let device = try open(dir)
            let before = device.account.vault.partitionsRead
            let shown = try #require(try device.credential(id: ids[1234]))
            #expect(shown.userName == "user1234" && shown.rpId == "rp\(1234 % 97).example")
            #expect(device.account.vault.partitionsRead - before == 1)
            #expect(try device.credential(id: RandomSource.seeded(99_999).bytes(16)) == nil)
        }
        do {
            let device = try open(dir, .write)
            let before = device.account.vault.partitionsRead
            let deleted = try device.delete(credentialId: ids[77])
            #expect(deleted.userName == "user77")
            #expect(device.account.vault.partitionsRead - before == 1)
        }
        let device = try open(dir)
        #expect(try device.credential(id: ids[77]) == nil)
        #expect(try device.credential(id: ids[78])?.userName == "user78")
        #expect(throws: DeviceError.self) { try open(dir, .write).delete(credentialId: ids[77]) }
    }
}

@Test func showAndDeleteStayRightAfterCompactionKeyRotationAndChangesPastTheIndex() throws {
    try withTemporaryDirectory { dir in
        let ids = try bulkVault(dir, passkeys: 600)
        var gone = Set<Int>()
        func check(_ text: String = passphrase) throws {
            let device = try open(dir, passphrase: text)
            let all = Set(try device.credentials().map(\.id))
            for i in stride(from: 0, to: 600, by: 13) {
                let shown = try device.credential(id: ids[i])
                #expect((shown == nil) == gone.contains(i), "passkey \(i)")
                #expect(all.contains(ids[i]) == !gone.contains(i))
            }
        }
        // Deletions one by one: each a frame, some past the index, some appended to it.
        for i in stride(from: 0, to: 600, by: 26) {
            try open(dir, .write).delete(credentialId: ids[i])
            gone.insert(i)
        }
        try check()
        try open(dir, .write).compact()
        try check()
        try open(dir, .write).changePassphrase(to: secret("rotated"), kdf: .min)
        try check("rotated")
        for i in stride(from: 13, to: 600, by: 52) {
            try open(dir, .write, passphrase: "rotated").delete(credentialId: ids[i])
            gone.insert(i)
        }
        try check("rotated")
    }
}
