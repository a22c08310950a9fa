/// What `Device.check()` established: every passkey it could open matches its public key.
public struct VaultCheck: Sendable, Equatable {
    /// Passkeys whose private key was opened and compared with the stored public key.
    public let credentialsChecked: Int
    /// Passkeys sealed under the biometry key: checkable only with the PIN, so not opened.
    public let sealedUnderBiometry: Int
}
