import Foundation
import KeyVault
@testable import Keychain
import Testing
import TestSupport
import VirtualAuthenticator

// The record tables (RecordTags.swift): each kind's tags are unique, every field a real record
// carries is in its kind's table, a field is marked sealed exactly when it opens under the vault
// key, key rotation seals again every field marked sealed, and docs/vault-format.md lists them.

private let start: UInt64 = 1_800_000_000_000
private let phonePIN = "1111", deskPIN = "2222", laptopPIN = "3333"

private func policy(_ pin: String) -> UserPolicy { UserPolicy(pin: secret(pin), wait: { _ in }) }

private func allowing(_ id: [UInt8], userVerification: String = "discouraged", extensions: [String: Any] = [:]) -> [UInt8] {
    json(["rpId": "example.com", "challenge": "Y2hhbGxlbmdlLTI", "userVerification": userVerification,
          "allowCredentials": [["type": "public-key", "id": Base64URL.encode(id)]], "extensions": extensions])
}

private func creating(_ user: String, userVerification: String = "discouraged", extensions: [String: Any] = [:]) -> [UInt8] {
    json([
        "rp": ["id": "example.com", "name": "Example"],
        "user": ["id": user, "name": "alice@example.com", "displayName": "Alice ✓ Ünïcode"],
        "challenge": "Y2hhbGxlbmdlLTE", "pubKeyCredParams": [["type": "public-key", "alg": -7]],
        "authenticatorSelection": ["userVerification": userVerification], "extensions": extensions,
    ])
}

/// Two vaults of one account whose records carry every kind of field the code writes: passkeys
/// with and without user verification, credProtect, credBlob, a large blob, the global counter, a
/// deletion, a hidden passkey; devices enrolled, reset, removed, offline, without passkey support,
/// with a profile and AAGUID and delays of their own; the account's seed and BS setting; and in
/// the desk's vault, replicas of the phone's passkeys (one sealed in the phone's vault).
private func richAccount(_ dir: String, clock: VirtualClock) throws -> (phone: Account, desk: Account) {
    let phone = try Account.create(at: dir + "/phone", passphrase: secret(passphrase), kdf: .min, deviceName: "phone",
                                   biometricPIN: secret(phonePIN), clock: clock.wallClock, random: .seeded(7))
    try phone.setDelays(upload: DelayRange(parsing: "1s"), download: DelayRange(parsing: "2s"))
    try phone.setSyncOptions(seed: 9, backupStateImmediate: true)
    let desk = try phone.addDevice("desk", inNewVaultAt: dir + "/desk", passphrase: secret(passphrase), kdf: .min,
                                   pin: secret(deskPIN), approver: policy(phonePIN))
    // The desk answers as a security key too: its settings and large-blob array (kind 5).
    let key = try desk.device("desk")
    try key.keyPINChanged(length: 8)
    try key.setKeyMinPINLength(9, rpIds: ["example.com"], forceChange: true)
    try key.toggleKeyAlwaysUv()
    try key.writeKeyLargeBlobArray([0x81, 0x01] + KeyLargeBlobs.checksum(of: [0x81, 0x01]))
    try phone.addDevice("laptop", pin: secret(laptopPIN), approver: policy(phonePIN))
    try phone.addDevice("tablet", pin: nil)
    try phone.setProfile("security-key", aaguid: [UInt8](repeating: 0x5a, count: 16), device: "laptop")
    try phone.setDelays(upload: DelayRange(parsing: "3s"), download: nil, device: "laptop")

    let device = try phone.device("phone")
    _ = try device.register(optionsJSON: creating("AQID", userVerification: "required", extensions: [
        "credentialProtectionPolicy": "userVerificationRequired", "credBlob": Base64URL.encode([1, 2, 3]),
    ]), origin: origin, user: policy(phonePIN))
    let blobbed = try device.register(optionsJSON: creating("BAUG", extensions: ["largeBlob": ["support": "required"]]),
                                      origin: origin).result.credential
    _ = try device.sign(optionsJSON: allowing(blobbed.id, extensions: ["largeBlob": ["write": Base64URL.encode([7, 7, 7])]]),
                        origin: origin)
    let gone = try device.register(optionsJSON: creating("BwgJ"), origin: origin).result.credential
    _ = try device.delete(credentialId: gone.id)
    _ = try device.setBackupFlags(credentialId: blobbed.id, state: true)
    let counted = try phone.device("laptop").register(optionsJSON: creating("CgsM"), origin: origin).result.credential
    _ = try phone.device("laptop").sign(optionsJSON: allowing(counted.id), origin: origin)
    // signalAllAcceptedCredentials without this user's passkey: hidden.
    _ = try device.register(optionsJSON: creating("DQ4P"), origin: origin)
    _ = try device.signal(.allAcceptedCredentials, optionsJSON: json([
        "rpId": "example.com", "userId": "DQ4P", "allAcceptedCredentialIds": [String](),
    ]), origin: origin)

    try phone.resetDevice("laptop")
    try phone.setOnline(false, device: "laptop")
    try phone.setPasskeysSupported(false, device: "laptop")
    try phone.removeDevice("tablet")
    clock.advance(by: 10_000)
    try phone.sync()  // each vault syncs, as its next command would: uploads, and the replicas
    clock.advance(by: 10_000)
    try desk.sync()
    return (phone, desk)
}

/// Every record of the vault and the store's metadata as `account` reads them, with its table.
private func everyRecord(of account: Account) throws -> [(table: RecordTable?, record: VaultRecord)] {
    var out = try account.vault.records.map { (RecordTags.table(of: $0.kind), $0) }
    let store = try #require(account.storeLink.state?.store)
    let metadata = try store.metadata([AccountDirectory.key, PublishedSettings.key])
    for (key, table) in [(AccountDirectory.key, RecordTags.publishedDevice), (PublishedSettings.key, RecordTags.publishedSettings)] {
        let value = try #require(metadata[key], "the store has no \(key)")
        let opened = try #require(SealedMetadata.open(value.bytes, known: 1, key: key, accountKey: account.settings.accountKey,
                                                      accountId: account.settings.accountId))
        out += opened.records.map { (Optional(table), $0) }
    }
    return out
}

@Test func eachRecordKindsTagsAreUnique() {
    for table in RecordTags.all {
        #expect(table.duplicateTags.isEmpty, "\(table.name) has tags claimed twice: \(table.duplicateTags)")
        #expect(!table.fields.isEmpty)
    }
    // The check finds a duplicate: the settings record with a device field numbered as the account key.
    let clash = RecordTable("settings", kind: .settings, RecordTags.settings.fields + [
        RecordField(AccountSettings.Tag.accountKey, "a device field numbered like the account key", .deviceRecord),
    ])
    #expect(clash.duplicateTags == [AccountSettings.Tag.accountKey])
    // The device record's fields are the settings record's too: one numbering, checked together.
    #expect(RecordTags.device.fields.allSatisfy { RecordTags.settings.field($0.tag) == $0 })
}

@Test func everyFieldARealRecordCarriesIsInItsTableAndSealedExactlyWhenItOpensUnderTheVaultKey() throws {
    try withTemporaryDirectory { dir in
        let clock = VirtualClock(start: start)
        let (phone, desk) = try richAccount(dir, clock: clock)
        var seen = [String: Set<UInt8>]()
        for account in [phone, desk] {
            for (table, record) in try everyRecord(of: account) {
                let table = try #require(table, "a record of kind \(record.kind) has no table")
                for (tag, value) in record.fields {
                    let field = table.field(tag)
                    #expect(field != nil, "\(table.name): tag \(tag) is not in the table")
                    seen[table.name, default: []].insert(tag)
                    guard table.kind != nil else { continue }  // store metadata: sealed as a whole, not by field
                    let opens = (try? account.vault.openSecret(value, recordId: record.id)) != nil
                    #expect(opens == (field?.sealed ?? false),
                            "\(table.name): tag \(tag) \(opens ? "opens" : "does not open") under the vault key")
                }
            }
        }
        // The fixture reaches what it is meant to: every sealed field, replicas, the device fields.
        for table in RecordTags.vault where table.kind != .tombstone {
            for tag in table.sealedTags { #expect(seen[table.name]?.contains(tag) == true, "\(table.name): tag \(tag) never written") }
        }
        let credentialTags = try #require(seen[RecordTags.credential.name])
        for tag in [StoreReplica.Tag.revisionId, StoreReplica.Tag.landedAt, StoreReplica.Tag.storeSealedKey, CredentialRecord.Tag.sealedInVault,
                    CredentialRecord.Tag.largeBlob, CredentialRecord.Tag.credBlob, CredentialRecord.Tag.credProtect,
                    CredentialRecord.Tag.removed, CredentialRecord.Tag.hidden] {
            #expect(credentialTags.contains(tag), "no credential record carries tag \(tag)")
        }
        #expect(seen[RecordTags.securityKey.name] == Set(RecordTags.securityKey.fields.map(\.tag)))
        #expect(credentialTags.contains(CredentialRecord.Tag.largeBlobKey))
        let deviceTags = try #require(seen[RecordTags.device.name])
        for tag in [DeviceRecord.Tag.formerWrappedKey, DeviceRecord.Tag.offline, DeviceRecord.Tag.removedAt,
                    DeviceRecord.Tag.globalSignCount, DeviceRecord.Tag.passkeysUnsupported, DeviceRecord.Tag.aaguid] {
            #expect(deviceTags.contains(tag), "no device record carries tag \(tag)")
        }
    }
}

/// What of `account`'s secrets does not open when it is opened afresh at `dir` with `pass`: its
/// account key (it then does not open at all), its attestation CA, each passkey's private key.
private func secretsThatDoNotOpen(_ path: String, passphrase pass: String, clock: VirtualClock) -> [String] {
    let account: Account
    do { account = try Account.open(at: path, passphrase: secret(pass), clock: clock.wallClock) } catch {
        return ["the account (its account key): \(error)"]
    }
    var failed = [String]()
    do { _ = try account.attestationCA() } catch { failed.append("the attestation CA: \(error)") }
    do {
        for credential in try account.device("phone").credentials() where !credential.hidden {
            let uv = credential.requiresUserVerification
            do {
                _ = try account.device("phone").sign(optionsJSON: allowing(credential.id, userVerification: uv ? "required" : "discouraged"),
                                                     origin: origin, user: policy(phonePIN))
            } catch { failed.append("passkey \(Base64URL.encode(credential.id)): \(error)") }
        }
    } catch { failed.append("the passkeys: \(error)") }
    return failed
}

@Test func aNewPassphraseLeavesEverySealedSecretOpenUnderTheNewKey() throws {
    try withTemporaryDirectory { dir in
        let clock = VirtualClock(start: start)
        do {
            let (phone, desk) = try richAccount(dir, clock: clock)
            try phone.changePassphrase(to: secret("a new passphrase"), kdf: .min)
            withExtendedLifetime(desk) {}
        }
        #expect(secretsThatDoNotOpen(dir + "/phone", passphrase: "a new passphrase", clock: clock) == [])
        // The other vault's replicas, under the account key, still sign after its own rotation.
        try Account.open(at: dir + "/desk", passphrase: secret(passphrase), clock: clock.wallClock)
            .changePassphrase(to: secret("the desk's new one"), kdf: .min)
        let desk = try Account.open(at: dir + "/desk", passphrase: secret("the desk's new one"), clock: clock.wallClock)
        let held = try desk.device("desk").credentials().filter { !$0.hidden }
        #expect(held.count == 2)
        for credential in held {
            let uv = credential.requiresUserVerification
            _ = try desk.device("desk").sign(optionsJSON: allowing(credential.id, userVerification: uv ? "required" : "discouraged"),
                                             origin: origin, user: policy(deskPIN))
        }
    }
}

/// The check above fails when the table leaves out a sealed field: a rotation from a table with
/// one sealed field dropped leaves that secret under the old key, and it no longer opens.
@Test(arguments: RecordTags.vault.flatMap { table in table.sealedTags.map { (table.name, $0) } })
func aRotationFromATableMissingASealedFieldLeavesThatSecretUnreadable(table name: String, tag: UInt8) throws {
    try withTemporaryDirectory { dir in
        let clock = VirtualClock(start: start)
        do {
            let (phone, desk) = try richAccount(dir, clock: clock)
            let tables = RecordTags.vault.map { table in
                table.name != name ? table
                    : RecordTable(table.name, kind: table.kind, table.fields.map { $0.tag == tag ? RecordField($0.tag, $0.name, $0.owner) : $0 })
            }
            try phone.vault.changePassphrase(to: secret("a new passphrase"), kdf: .min, sealedFields: RecordTags.sealedFields(of: tables))
            withExtendedLifetime(desk) {}
        }
        #expect(secretsThatDoNotOpen(dir + "/phone", passphrase: "a new passphrase", clock: clock) != [])
    }
}

/// docs/vault-format.md's table of each record kind lists exactly the kind's tags.
@Test func theVaultFormatDocumentListsEveryTag() throws {
    let docs = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    let text = try String(contentsOf: docs.appendingPathComponent("docs/vault-format.md"), encoding: .utf8)
    // A device record's tags are the settings record's, named in one sentence.
    let deviceSection = try #require(text.components(separatedBy: "### Device record").dropFirst().first)
    #expect(deviceSection.contains("tags \(spelled(RecordTags.device.fields.map(\.tag))) as in the settings record"),
            "the device record's tags are \(spelled(RecordTags.device.fields.map(\.tag)))")
    for table in RecordTags.all where table.kind != .tombstone && table.kind != .device {
        let documented = try documentedTags(in: text, section: table.name)
        #expect(documented == Set(table.fields.map(\.tag)),
                "\(table.name): documented \(documented.subtracting(table.fields.map(\.tag)).sorted()) too many, \(Set(table.fields.map(\.tag)).subtracting(documented).sorted()) missing")
    }
}

/// The tags in the first column of the table(s) of the section whose heading starts with `section`
/// (a `###` heading, or for store metadata a `- \`key\`` item's own table), up to the next heading.
private func documentedTags(in text: String, section: String) throws -> Set<UInt8> {
    let lines = text.components(separatedBy: "\n")
    let begin = try #require(lines.firstIndex { $0.hasPrefix("### \(section)") || $0.hasPrefix("#### `\(section)`") },
                             "docs/vault-format.md has no section '\(section)'")
    var tags = Set<UInt8>()
    for line in lines[(begin + 1)...] {
        if line.hasPrefix("#") { break }
        let cells = line.split(separator: "|", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
        guard cells.count > 2, cells[0].isEmpty else { continue }
        // A row names one tag, or several ("27, 28", "40–43").
        for part in cells[1].split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) {
            let bounds = part.split(separator: "–").compactMap { UInt8($0) }
            if bounds.count == 2 { tags.formUnion(bounds[0]...bounds[1]) } else if bounds.count == 1, !part.contains("–") { tags.insert(bounds[0]) }
        }
    }
    return tags
}

/// `tags` as prose: runs of three or more as ranges ("2–10, 12–19, 27, 28 and 30").
private func spelled(_ tags: [UInt8]) -> String {
    var runs = [[UInt8]]()
    for tag in tags.sorted() {
        if let last = runs.last?.last, last + 1 == tag { runs[runs.count - 1].append(tag) } else { runs.append([tag]) }
    }
    let parts = runs.flatMap { $0.count >= 3 ? ["\($0.first!)–\($0.last!)"] : $0.map { "\($0)" } }
    return parts.count < 2 ? parts.joined() : parts.dropLast().joined(separator: ", ") + " and " + parts.last!
}
