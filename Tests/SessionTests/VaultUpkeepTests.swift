import Foundation
import Scenarios
import Session
import Testing

private func secret(_ text: String) -> SecureBytes {
    var bytes = Array(text.utf8)
    return SecureBytes(consuming: &bytes)
}

/// The vault's upkeep through the one door, as `vault info`, `check`, `compact`, `passwd` and `ca
/// export` ask for it: typed answers, and the table's rows for what fails.
@Suite struct VaultUpkeepTests {
    @Test func theVaultsUpkeepIsRequestsWithTypedAnswers() throws {
        let directory = try ScenarioRunner.makeWorkspace()
        defer { ScenarioRunner.removeWorkspace(directory) }
        let path = directory + "/vault"
        #expect(throws: SessionError.self) { try Session.requireVault(at: path) }
        do {
            let made = try Session.create(AccountSpec(path: path, passphrase: secret("p"), kdf: .min,
                                                      devices: [AccountSpec.DeviceSpec(name: "phone", pin: nil)]))
            for _ in 0..<3 {
                _ = try made.register(RegisterRequest(caller: CallerContext(origin: "https://example.com"),
                                                      options: .built(CreationOptionsBuilder(rpId: "example.com", userName: "alice"))))
            }
            _ = try made.delete(credentialId: try made.passkeys()[0].id)
        }
        try Session.requireVault(at: path)

        let reader = try Session.open(at: path, passphrase: secret("p"), access: .read)
        let report = try reader.vaultReport()
        // Passkey records: the two held, and the third's deletion, which syncs as a record of its own.
        #expect(report.path == path && report.kdf.level == "min" && report.credentials == 3 && report.biometry.enrolled == false)
        #expect(report.credentialsChecked == nil)
        let checked = try reader.checkVault(device: "phone")
        #expect(checked.credentialsChecked == 2 && checked.sealedUnderBiometry == 0 && checked.vaultId == report.vaultId)
        let ca = try reader.attestationCA()
        #expect(reader.hasAttestationCA && ca.rootPEM.hasPrefix("-----BEGIN CERTIFICATE-----"))
        do {
            _ = try reader.vaultReport(device: "laptop")
            Issue.record("a device the account does not have")
        } catch { #expect(error.name == .usage) }

        let writer = try Session.open(at: path, passphrase: secret("p"), access: .write, verifyingFirst: true)
        let compaction = try writer.compactVault()
        let after = try writer.vaultReport()
        #expect(compaction.bytesAfter < compaction.bytesBefore && compaction.bytesAfter == after.committedBytes)
        do {
            try writer.changePassphrase(to: secret(""))
            Issue.record("an empty passphrase")
        } catch { #expect(error.name == .badInput) }
        try writer.changePassphrase(to: secret("q"), kdf: .min)
        do {
            _ = try Session.open(at: path, passphrase: secret("p"), access: .read)
            Issue.record("the old passphrase opened the vault")
        } catch { #expect(error.name == .vaultLocked) }
        let reopened = try Session.open(at: path, passphrase: secret("q"), access: .read).vaultReport()
        #expect(reopened.credentials == 3 && reopened.vaultId == report.vaultId)
    }

    @Test func aStoresAddressIsShownWithoutItsPassword() {
        #expect(!StoreAddress.shown("postgresql://alice:s3cret@db.example/keys#a").contains("s3cret"))
        #expect(StoreAddress.carriesPassword("postgresql://alice:s3cret@db.example/keys#a"))
        #expect(!StoreAddress.carriesPassword("postgresql://alice@db.example/keys#a") && !StoreAddress.carriesPassword("/srv/store"))
        #expect(StoreAddress.shown("/srv/store") == "/srv/store")
    }
}
