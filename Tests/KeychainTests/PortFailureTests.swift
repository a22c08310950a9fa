import KeyVault
@testable import Keychain
import Testing
import VirtualAuthenticator

// A vault failure met inside a ceremony's port (the credential store, the sensor) leaves the
// authenticator as a typed PortFailure and comes back to the device by type: the same code, and
// the same message, as the vault's error met outside a ceremony.

@Test func aVaultFailureInsideAPortComesBackAsTheDevicesCodeForIt() {
    for kind in VaultError.Kind.allCases {
        let vault = VaultError(kind, "the vault's words")
        let carried = AuthenticatorError(vault)
        #expect(carried.code == .unknown, "\(kind)")
        let back = DeviceError(carried)
        #expect(back.code == DeviceError(vault).code && back.message == vault.message, "\(kind)")
    }
}

/// A broken invariant of the vault is the program's own failure, no storage's: it crosses as a
/// plain `unknown`.
@Test func aBrokenInvariantCrossesAsAPlainUnknown() {
    let carried = AuthenticatorError(VaultError(.inconsistent, "a write through a vault opened to read"))
    #expect(carried.port == nil && DeviceError(carried).code == .authenticator(.unknown))
}

/// A ceremony's outcome carries no port failure and passes through as itself, its message kept
/// when the client says why a call was pending.
@Test func aCeremonysOutcomeCarriesNoPortFailure() {
    for code in AuthenticatorError.Code.allCases {
        let error = AuthenticatorError(code, "x")
        #expect(error.port == nil && DeviceError(error).code == .authenticator(code), "\(code)")
    }
    let said = AuthenticatorError(PortFailure.busy, "held").saying("held: waiting")
    #expect(said.port == .busy && said.code == .unknown && said.message == "held: waiting")
}
