import Keychain

/// The requests of a security key's management commands (docs/ctap.md):
/// authenticatorCredentialManagement, authenticatorLargeBlobs and authenticatorConfig. The CTAP
/// front end checks the PIN token and reads the protocol; what the key keeps changes here.
extension Session {
    /// deleteCredential: the credential `credentialId` that `device` holds as a key is deleted.
    public func keyDeleteCredential(device: String? = nil, credentialId: [UInt8]) throws(SessionError) {
        do { try account.device(device).keyDeleteCredential(id: credentialId) } catch { throw SessionError(error) }
    }

    /// updateUserInformation: the user name and display name of the key's credential
    /// `credentialId` replaced; `userHandle` must be its own.
    public func keyUpdateUser(device: String? = nil, credentialId: [UInt8], userHandle: [UInt8], name: String,
                              displayName: String) throws(SessionError) {
        do {
            try account.device(device).keyUpdateUser(credentialId: credentialId, userHandle: userHandle, name: name, displayName: displayName)
        } catch { throw SessionError(error) }
    }

    /// The largeBlobKey of the key's credential `credentialId` (`nil`: made without one);
    /// `verification`, a PIN token's, opens a credential sealed under the biometry key.
    public func keyLargeBlobKey(device: String? = nil, credentialId: [UInt8], verification: KeyVerification?) throws(SessionError) -> [UInt8]? {
        do { return try account.device(device).keyLargeBlobKey(credentialId: credentialId, verification: verification) } catch {
            throw SessionError(error)
        }
    }
}

extension Session {
    /// The serialized large-blob array `device` holds as a key.
    public func keyLargeBlobArray(device: String? = nil) throws(SessionError) -> [UInt8] {
        do { return try account.device(device).keyLargeBlobArray() } catch { throw SessionError(error) }
    }

    /// Replaces the key's serialized large-blob array with `array` (it must fit and end with its
    /// checksum).
    public func writeKeyLargeBlobArray(device: String? = nil, _ array: [UInt8]) throws(SessionError) {
        do { try account.device(device).writeKeyLargeBlobArray(array) } catch { throw SessionError(error) }
    }
}

extension Session {
    /// toggleAlwaysUv on `device` as a key; returns alwaysUv as it is now.
    @discardableResult
    public func toggleKeyAlwaysUv(device: String? = nil) throws(SessionError) -> Bool {
        do { return try account.device(device).toggleKeyAlwaysUv() } catch { throw SessionError(error) }
    }

    /// setMinPINLength on `device` as a key: the minimum raised to `length`, the RP IDs that may
    /// read it replaced by `rpIds`, a PIN change forced.
    public func setKeyMinPINLength(device: String? = nil, _ length: Int?, rpIds: [String]?, forceChange: Bool) throws(SessionError) {
        do { try account.device(device).setKeyMinPINLength(length, rpIds: rpIds, forceChange: forceChange) } catch { throw SessionError(error) }
    }

    /// The key's PIN was set or changed over CTAP to one of `length` code points: no change is
    /// forced any more.
    public func keyPINChanged(device: String? = nil, length: Int) throws(SessionError) {
        do { try account.device(device).keyPINChanged(length: length) } catch { throw SessionError(error) }
    }
}
