// Keychain's API is written in the vocabulary of the two modules below it: WebAuthn's
// (`Credential`, the responses, `AuthenticatorError`, `Fault`, `CallerContext`, `WallClock`,
// `RandomSource`) and the vault's (`SecureBytes`, `KDFLevel`, `Vault.Access`). `import Keychain`
// brings both, so a program names every type of Keychain's signatures with that one import.
// KeyVault's public part is only those few types (docs/library.md).
@_exported import KeyVault
@_exported import VirtualAuthenticator
