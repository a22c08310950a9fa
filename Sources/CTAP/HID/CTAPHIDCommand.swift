/// The CTAPHID commands (CTAP 2.1 §11.2.9): the low seven bits of an initialization packet's CMD
/// byte, whose top bit marks the packet as one.
public enum CTAPHIDCommand: UInt8, Sendable, CaseIterable {
    /// CTAPHID_PING: the data echoed back.
    case ping = 0x01
    /// CTAPHID_MSG: a CTAP1/U2F request APDU.
    case msg = 0x03
    /// CTAPHID_LOCK: one channel alone may talk to the key for up to 10 s.
    case lock = 0x04
    /// CTAPHID_INIT: a channel allocated (on the broadcast channel) or resynchronized.
    case initialize = 0x06
    /// CTAPHID_WINK: the key shows the person which it is.
    case wink = 0x08
    /// CTAPHID_CBOR: a CTAP2 command byte and its CBOR parameters.
    case cbor = 0x10
    /// CTAPHID_CANCEL: the channel's request stops waiting; never answered itself.
    case cancel = 0x11
    /// CTAPHID_KEEPALIVE: sent by the key while it works on a request.
    case keepalive = 0x3B
    /// CTAPHID_ERROR: sent by the key for a transport-level failure.
    case error = 0x3F
}

/// The CTAPHID error codes a CTAPHID_ERROR response carries (CTAP 2.1 §11.2.9.1.6).
public enum CTAPHIDError: UInt8, Sendable, CaseIterable, CustomStringConvertible {
    case invalidCommand = 0x01
    case invalidParameter = 0x02
    case invalidLength = 0x03
    case invalidSequence = 0x04
    case messageTimeout = 0x05
    case channelBusy = 0x06
    case lockRequired = 0x0A
    case invalidChannel = 0x0B
    case other = 0x7F

    /// The spec's name.
    public var description: String {
        switch self {
        case .invalidCommand: "ERR_INVALID_CMD"
        case .invalidParameter: "ERR_INVALID_PAR"
        case .invalidLength: "ERR_INVALID_LEN"
        case .invalidSequence: "ERR_INVALID_SEQ"
        case .messageTimeout: "ERR_MSG_TIMEOUT"
        case .channelBusy: "ERR_CHANNEL_BUSY"
        case .lockRequired: "ERR_LOCK_REQUIRED"
        case .invalidChannel: "ERR_INVALID_CHANNEL"
        case .other: "ERR_OTHER"
        }
    }
}
