import Foundation
import Session

/// authenticatorReset (CTAP 2.1 §6.6) and authenticatorSelection (§6.9).
extension SecurityKey {
    /// How long after power-up a reset is allowed (§6.6: "within 10 seconds").
    static let resetWindow: TimeInterval = 10

    /// Deletes every credential and the PIN, after a touch — only in the first 10 s after the key
    /// got power (CTAP2_ERR_NOT_ALLOWED after); the person must touch (30 s), else
    /// CTAP2_ERR_USER_ACTION_TIMEOUT, and a cancel is CTAP2_ERR_KEEPALIVE_CANCEL.
    func reset(_ progress: CTAPProgress) throws(CTAPStatus) {
        guard now().timeIntervalSince(poweredAt) <= Self.resetWindow else { throw .notAllowed }
        try waitForTouch(progress)
        do { try session.keyReset(device: device) } catch { throw .other }
        forgetPowerState()
    }

    /// Waits for the person's touch, to tell this key from others (§6.9).
    func selection(_ progress: CTAPProgress) throws(CTAPStatus) {
        try waitForTouch(progress)
    }
}
