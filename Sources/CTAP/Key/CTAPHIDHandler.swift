/// What a CTAPHID transport hands its messages to (CTAP 2.1 §11.2.9): the key. The transport
/// owns framing, channels, KEEPALIVE, CANCEL and the power line; the key answers whole messages,
/// one at a time (a transport never calls it for two requests at once).
public protocol CTAPHIDHandler: AnyObject, Sendable {
    /// CTAPHID_CBOR: `request` is the command byte followed by its CBOR parameters; the answer is
    /// a status byte followed by CBOR (CTAP 2.1 §8).
    func cbor(_ request: [UInt8], progress: CTAPProgress) -> [UInt8]
    /// CTAPHID_MSG: a CTAP1/U2F request APDU; the answer is the response data followed by SW1 SW2
    /// (FIDO U2F raw message formats).
    func msg(_ apdu: [UInt8], progress: CTAPProgress) -> [UInt8]
    /// CTAPHID_WINK: the key shows the person which it is.
    func wink()
    /// The INIT response's capability flags (CTAPHID_INIT: WINK 0x01, CBOR 0x04, NMSG 0x08).
    var capabilities: UInt8 { get }
    /// The INIT response's device version: major, minor, build.
    var deviceVersion: (major: UInt8, minor: UInt8, build: UInt8) { get }
    /// The longest message the key takes (authenticatorGetInfo's maxMsgSize): a longer one is
    /// refused by the transport with ERR_INVALID_LEN as its first packet arrives.
    var maxMessageSize: Int { get }
    /// The power was cut and comes back: the key forgets what lives only until power-down (PIN
    /// tokens, the key agreement, consecutive PIN failures) and starts the time after power-up in
    /// which it may be reset (CTAP 2.1 §6.6).
    func powerCycled()
}
