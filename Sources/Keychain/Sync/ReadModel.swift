import KeyVault
import VirtualAuthenticator

/// What the account's devices see, as decoded from the vault and kept while the account is open:
/// passkey revisions read once per record version, the signing keys loaded once, the attestation
/// CA read once. The views of each device and the histories of each RP are kept by the vault
/// itself, in step with each record that changes (``RPHistories``, ``KeptDeviceViews``), and
/// computed by the account from these and from its store link (AccountSync.swift). Nothing here
/// writes the vault or the store. See docs/design.md, "Keychain".
final class ReadModel {
    private let vault: Vault
    /// Credential records already read as revisions, by record id (``revisions(_:)``).
    private var revisionCache = [[UInt8]: (version: UInt64, revision: Revision)]()
    /// The attestation CA, once read (``Account/attestationCA()``).
    var cachedCA: AttestationCA?
    /// Private keys of passkeys made without user verification, as OpenSSL holds them once loaded
    /// (Keyring.swift).
    var keyring = Keyring<PrivateKey>(limit: Account.signingKeyLimit)

    init(vault: Vault) {
        self.vault = vault
    }

    /// `records` read as revisions; each record is read once and kept (``revisionCache``), so a
    /// ceremony that looks at an RP's passkeys twice decodes them once. A replica record (a
    /// revision another vault's device uploaded, as this vault downloaded it) reads as the store's.
    func revisions(_ records: [VaultRecord]) throws(VaultError) -> [Revision] {
        let first = try DeviceRecord.everyRecord(in: vault)[0]
        var out = [Revision]()
        out.reserveCapacity(records.count)
        for record in records {
            if let cached = revisionCache[record.id], cached.version == record.version {
                out.append(cached.revision)
                continue
            }
            let revision: Revision
            if let replicated = StoreReplica.revisionRecord(record) {
                revision = try Revision(replicated.record, source: .store(landedAt: replicated.landedAt, record: replicated.record), firstDevice: first)
            } else {
                revision = try Revision(record, source: .local(record), firstDevice: first)
            }
            revisionCache[record.id] = (record.version, revision)
            out.append(revision)
        }
        return out
    }

    /// Forgets the revision read from record `id` (a collected passkey's, about to be rewritten).
    func forgetRevision(ofRecord id: [UInt8]) { revisionCache[id] = nil }

    /// Forgets every revision read (the store's replicas are gone from the vault).
    func forgetRevisions() { revisionCache = [:] }
}
