import Foundation
import Session

/// What the key keeps of authenticatorClientPIN while it has power (CTAP 2.1 §6.5.2): each PIN/UV
/// auth protocol's key-agreement key and token, the token's state, and the wrong PINs in a row
/// since power-up. Everything here is forgotten at a power cycle (``SecurityKey/powerCycled()``);
/// the PIN and its retries live on the device, in the vault.
struct ClientPINState {
    /// Wrong PINs in a row after which the key answers CTAP2_ERR_PIN_AUTH_BLOCKED until it is
    /// power-cycled (§6.5.5.7.1 step 9.1.2), so that malware cannot use up every retry unseen.
    static let mismatchesBeforePowerCycle = 3

    /// Each protocol's state, made when first used (a protocol's `initialize()` at power-up would
    /// draw the same fresh keys).
    private var protocols = [PinUvAuthProtocol.Version: PinUvAuthProtocol]()
    /// Consecutive wrong PINs in this power cycle.
    var consecutiveMismatches = 0
    var token = PinUvAuthTokenState()

    /// The key must be power-cycled before it checks a PIN again.
    var needsPowerCycle: Bool { consecutiveMismatches >= Self.mismatchesBeforePowerCycle }

    /// Protocol `version`'s state; CTAP1_ERR_OTHER only if OpenSSL cannot make a key.
    mutating func protocolState(_ version: PinUvAuthProtocol.Version) throws(CTAPStatus) -> PinUvAuthProtocol {
        if let existing = protocols[version] { return existing }
        let made: PinUvAuthProtocol
        do { made = try PinUvAuthProtocol(version) } catch { throw .other }
        protocols[version] = made
        return made
    }

    /// `regenerate()` of protocol `version`: a new key-agreement key (after a wrong PIN).
    mutating func regenerate(_ version: PinUvAuthProtocol.Version) throws(CTAPStatus) {
        var state = try protocolState(version)
        do { try state.regenerate() } catch { throw .other }
        protocols[version] = state
    }

    /// `resetPinUvAuthToken()` for every protocol, and the token no longer in use: every token
    /// handed out so far stops verifying.
    mutating func resetPinUvAuthTokens() {
        for version in protocols.keys { protocols[version]?.resetPinUvAuthToken() }
        token.stopUsing()
    }
}
