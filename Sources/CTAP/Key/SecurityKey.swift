import Foundation
import Session

/// A device of an account answering as a USB security key over CTAP2 (CTAP 2.1): the commands'
/// dispatcher, and what a key keeps only while it has power (PIN tokens, the key agreement, the
/// consecutive PIN failures, an assertion's next credentials). What it keeps across power — its
/// credentials, its PIN and retries — lives on the device, behind ``Session``. Transports
/// (`HID/`) hand it whole messages, one at a time.
///
///     let key = SecurityKey(session: session, device: "key")
///     let answer = key.cbor([0x04], progress: CTAPProgress())   // authenticatorGetInfo
public final class SecurityKey: CTAPHIDHandler, @unchecked Sendable {
    let session: Session
    /// The device that answers (`nil`: the account's first).
    public let device: String?
    /// The person's finger on the key.
    public let touch: Touch
    /// One request at a time; the transports already serialize, this holds for in-process callers.
    let lock = NSLock()
    /// When the key last got power: authenticatorReset is refused 10 s after (CTAP 2.1 §6.6).
    package var poweredAt = Date()
    /// The credentials an authenticatorGetAssertion left for GetNextAssertion.
    var pending: PendingAssertions?
    /// What an enumeration of authenticatorCredentialManagement has left to give.
    var enumeration: PendingEnumeration?
    /// An authenticatorLargeBlobs write under way, fragment by fragment.
    var largeBlobWrite: PendingLargeBlobWrite?
    /// authenticatorClientPIN's state while the key has power: key agreements, the token, the
    /// wrong PINs in a row.
    var pinState = ClientPINState()
    /// The time, for the timers of the key's power cycle (a token's usage timer).
    var now: @Sendable () -> Date = { Date() }

    public init(session: Session, device: String? = nil, touch: Touch = Touch()) {
        self.session = session
        self.device = device
        self.touch = touch
        speaksU2F = (try? session.keyFacts(device: device).profile.alternateAttestation) == .fidoU2F
    }

    /// Whether the device's model answers CTAP1/U2F (a security key's does): read when the key is
    /// plugged in, as a key's firmware is fixed.
    let speaksU2F: Bool

    /// WINK and CBOR; NMSG for a model that speaks no U2F (only security-key does).
    public var capabilities: UInt8 { 0x01 | 0x04 | (speaksU2F ? 0 : 0x08) }
    public var deviceVersion: (major: UInt8, minor: UInt8, build: UInt8) { (1, 0, 0) }
    public var maxMessageSize: Int { Self.maxMessageSize }

    public func wink() {}

    public func powerCycled() {
        lock.withLock {
            poweredAt = now()
            forgetPowerState()
            // New key agreements too.
            pinState = ClientPINState()
        }
    }

    /// What lives only while the key has power, forgotten at power-up and by a reset.
    func forgetPowerState() {
        pending = nil
        enumeration = nil
        largeBlobWrite = nil
        // Every PIN token ends; the wrong PINs in a row are forgotten.
        pinState.resetPinUvAuthTokens()
        pinState.consecutiveMismatches = 0
    }

    public func cbor(_ request: [UInt8], progress: CTAPProgress) -> [UInt8] {
        lock.lock()
        defer { lock.unlock() }
        guard let first = request.first else { return [CTAPStatus.invalidLength.rawValue] }
        // Any command but GetNextAssertion ends what GetAssertion left for it (§6.3); any but
        // authenticatorCredentialManagement an enumeration (its own other subcommands too), and
        // any but authenticatorLargeBlobs a write of the large-blob array.
        if first != CTAPCommand.getNextAssertion.rawValue { pending = nil }
        if first != CTAPCommand.credentialManagement.rawValue && first != CTAPCommand.credentialManagementPreview.rawValue {
            enumeration = nil
        }
        if first != CTAPCommand.largeBlobs.rawValue { largeBlobWrite = nil }
        do {
            let body = try answer(first, request.dropFirst(), progress)
            return [CTAPStatus.ok.rawValue] + (body?.encoded() ?? [])
        } catch {
            return [error.rawValue]
        }
    }

    public func msg(_ apdu: [UInt8], progress: CTAPProgress) -> [UInt8] {
        lock.lock()
        defer { lock.unlock() }
        pending = nil
        guard speaksU2F else { return StatusWord.insNotSupported.bytes }
        return u2f(apdu, progress)
    }

    /// One command's answer (`nil`: a command whose success carries no data).
    func answer(_ byte: UInt8, _ parameters: ArraySlice<UInt8>, _ progress: CTAPProgress) throws(CTAPStatus) -> CBORValue? {
        guard let command = CTAPCommand(rawValue: byte) else { throw .invalidCommand }
        // A command the spec gives no parameters, followed by bytes, is not that command: nothing
        // is done (a garbled message that starts with 0x07 must not wipe the key).
        if [.getInfo, .reset, .getNextAssertion, .selection].contains(command) && !parameters.isEmpty { throw .invalidLength }
        switch command {
        case .getInfo:
            return try getInfo()
        case .makeCredential:
            return try makeCredential(CTAPParameters(parameters), progress)
        case .getAssertion:
            return try getAssertion(CTAPParameters(parameters), progress)
        case .getNextAssertion:
            return try getNextAssertion()
        case .reset:
            try reset(progress)
            return nil
        case .selection:
            try selection(progress)
            return nil
        case .credentialManagement, .credentialManagementPreview:
            return try credentialManagement(CTAPParameters(parameters))
        case .largeBlobs:
            return try largeBlobs(CTAPParameters(parameters))
        case .config:
            try config(CTAPParameters(parameters))
            return nil
        case .clientPIN:
            return try clientPIN(CTAPParameters(parameters))
        default:
            throw .invalidCommand
        }
    }

    /// The device's facts; a failure of the layers below is CTAP1_ERR_OTHER.
    func facts(counting: Bool = false) throws(CTAPStatus) -> KeyFacts {
        do { return try session.keyFacts(device: device, counting: counting) } catch { throw .other }
    }
}
