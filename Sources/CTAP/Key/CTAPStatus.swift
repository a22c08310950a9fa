/// The status byte that leads every CTAP2 response (CTAP 2.1 §8.2, "Status codes"): what the key
/// answers, named as the spec names it. Errors of the layers below become one of these only where
/// a command answers (``SecurityKey``), as OpenSK's dispatcher maps them.
public struct CTAPStatus: RawRepresentable, Hashable, Sendable, Error, CustomStringConvertible {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let ok = CTAPStatus(rawValue: 0x00)
    public static let invalidCommand = CTAPStatus(rawValue: 0x01)
    public static let invalidParameter = CTAPStatus(rawValue: 0x02)
    public static let invalidLength = CTAPStatus(rawValue: 0x03)
    public static let invalidSequence = CTAPStatus(rawValue: 0x04)
    public static let timeout = CTAPStatus(rawValue: 0x05)
    public static let channelBusy = CTAPStatus(rawValue: 0x06)
    public static let lockRequired = CTAPStatus(rawValue: 0x0A)
    public static let invalidChannel = CTAPStatus(rawValue: 0x0B)
    public static let cborUnexpectedType = CTAPStatus(rawValue: 0x11)
    public static let invalidCBOR = CTAPStatus(rawValue: 0x12)
    public static let missingParameter = CTAPStatus(rawValue: 0x14)
    public static let limitExceeded = CTAPStatus(rawValue: 0x15)
    public static let fpDatabaseFull = CTAPStatus(rawValue: 0x17)
    public static let largeBlobStorageFull = CTAPStatus(rawValue: 0x18)
    public static let credentialExcluded = CTAPStatus(rawValue: 0x19)
    public static let processing = CTAPStatus(rawValue: 0x21)
    public static let invalidCredential = CTAPStatus(rawValue: 0x22)
    public static let userActionPending = CTAPStatus(rawValue: 0x23)
    public static let operationPending = CTAPStatus(rawValue: 0x24)
    public static let noOperations = CTAPStatus(rawValue: 0x25)
    public static let unsupportedAlgorithm = CTAPStatus(rawValue: 0x26)
    public static let operationDenied = CTAPStatus(rawValue: 0x27)
    public static let keyStoreFull = CTAPStatus(rawValue: 0x28)
    public static let unsupportedOption = CTAPStatus(rawValue: 0x2B)
    public static let invalidOption = CTAPStatus(rawValue: 0x2C)
    public static let keepaliveCancel = CTAPStatus(rawValue: 0x2D)
    public static let noCredentials = CTAPStatus(rawValue: 0x2E)
    public static let userActionTimeout = CTAPStatus(rawValue: 0x2F)
    public static let notAllowed = CTAPStatus(rawValue: 0x30)
    public static let pinInvalid = CTAPStatus(rawValue: 0x31)
    public static let pinBlocked = CTAPStatus(rawValue: 0x32)
    public static let pinAuthInvalid = CTAPStatus(rawValue: 0x33)
    public static let pinAuthBlocked = CTAPStatus(rawValue: 0x34)
    public static let pinNotSet = CTAPStatus(rawValue: 0x35)
    public static let puatRequired = CTAPStatus(rawValue: 0x36)
    public static let pinPolicyViolation = CTAPStatus(rawValue: 0x37)
    public static let requestTooLarge = CTAPStatus(rawValue: 0x39)
    public static let actionTimeout = CTAPStatus(rawValue: 0x3A)
    public static let upRequired = CTAPStatus(rawValue: 0x3B)
    public static let uvBlocked = CTAPStatus(rawValue: 0x3C)
    public static let integrityFailure = CTAPStatus(rawValue: 0x3D)
    public static let invalidSubcommand = CTAPStatus(rawValue: 0x3E)
    public static let uvInvalid = CTAPStatus(rawValue: 0x3F)
    public static let unauthorizedPermission = CTAPStatus(rawValue: 0x40)
    public static let other = CTAPStatus(rawValue: 0x7F)

    /// The spec's name (CTAP1_ERR_… for the transport-level codes, CTAP2_ERR_… for the others).
    public var description: String {
        let names: [UInt8: String] = [
            0x00: "CTAP2_OK", 0x01: "CTAP1_ERR_INVALID_COMMAND", 0x02: "CTAP1_ERR_INVALID_PARAMETER",
            0x03: "CTAP1_ERR_INVALID_LENGTH", 0x04: "CTAP1_ERR_INVALID_SEQ", 0x05: "CTAP1_ERR_TIMEOUT",
            0x06: "CTAP1_ERR_CHANNEL_BUSY", 0x0A: "CTAP1_ERR_LOCK_REQUIRED", 0x0B: "CTAP1_ERR_INVALID_CHANNEL",
            0x11: "CTAP2_ERR_CBOR_UNEXPECTED_TYPE", 0x12: "CTAP2_ERR_INVALID_CBOR", 0x14: "CTAP2_ERR_MISSING_PARAMETER",
            0x15: "CTAP2_ERR_LIMIT_EXCEEDED", 0x17: "CTAP2_ERR_FP_DATABASE_FULL", 0x18: "CTAP2_ERR_LARGE_BLOB_STORAGE_FULL",
            0x19: "CTAP2_ERR_CREDENTIAL_EXCLUDED", 0x21: "CTAP2_ERR_PROCESSING", 0x22: "CTAP2_ERR_INVALID_CREDENTIAL",
            0x23: "CTAP2_ERR_USER_ACTION_PENDING", 0x24: "CTAP2_ERR_OPERATION_PENDING", 0x25: "CTAP2_ERR_NO_OPERATIONS",
            0x26: "CTAP2_ERR_UNSUPPORTED_ALGORITHM", 0x27: "CTAP2_ERR_OPERATION_DENIED", 0x28: "CTAP2_ERR_KEY_STORE_FULL",
            0x2B: "CTAP2_ERR_UNSUPPORTED_OPTION", 0x2C: "CTAP2_ERR_INVALID_OPTION", 0x2D: "CTAP2_ERR_KEEPALIVE_CANCEL",
            0x2E: "CTAP2_ERR_NO_CREDENTIALS", 0x2F: "CTAP2_ERR_USER_ACTION_TIMEOUT", 0x30: "CTAP2_ERR_NOT_ALLOWED",
            0x31: "CTAP2_ERR_PIN_INVALID", 0x32: "CTAP2_ERR_PIN_BLOCKED", 0x33: "CTAP2_ERR_PIN_AUTH_INVALID",
            0x34: "CTAP2_ERR_PIN_AUTH_BLOCKED", 0x35: "CTAP2_ERR_PIN_NOT_SET", 0x36: "CTAP2_ERR_PUAT_REQUIRED",
            0x37: "CTAP2_ERR_PIN_POLICY_VIOLATION", 0x39: "CTAP2_ERR_REQUEST_TOO_LARGE", 0x3A: "CTAP2_ERR_ACTION_TIMEOUT",
            0x3B: "CTAP2_ERR_UP_REQUIRED", 0x3C: "CTAP2_ERR_UV_BLOCKED", 0x3D: "CTAP2_ERR_INTEGRITY_FAILURE",
            0x3E: "CTAP2_ERR_INVALID_SUBCOMMAND", 0x3F: "CTAP2_ERR_UV_INVALID", 0x40: "CTAP2_ERR_UNAUTHORIZED_PERMISSION",
            0x7F: "CTAP1_ERR_OTHER",
        ]
        return names[rawValue] ?? "CTAP status 0x" + String(rawValue, radix: 16)
    }
}
