import Keychain

/// The requests of a device answering as a security key over CTAP2 (`authctl ctap serve`,
/// docs/ctap.md): the key's facts, its credentials, its PIN. The CTAP front end parses the
/// protocol and keeps what lives only while the key has power; what the key keeps lives here.
extension Session {
    /// What `device` reports of itself as a security key.
    public func keyFacts(device: String? = nil) throws(SessionError) -> KeyFacts {
        do { return try account.device(device).keyFacts() } catch { throw SessionError(error) }
    }
}
