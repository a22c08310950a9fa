import Session

extension SecurityKey {
    /// The pinUvAuthParam of a management command (authenticatorCredentialManagement, a write of
    /// authenticatorLargeBlobs, authenticatorConfig): required (CTAP2_ERR_PUAT_REQUIRED), with a
    /// protocol this key speaks (CTAP2_ERR_MISSING_PARAMETER, CTAP1_ERR_INVALID_PARAMETER), a PIN
    /// to have issued its token (CTAP2_ERR_PIN_NOT_SET), and checked over `message` against the
    /// current token, its `permission` and its RP binding (`rp`: none looked at, or checked
    /// against an RP ID's hash without binding the token).
    func authorizeManagement(_ param: [UInt8]?, version: Int?, pinSet: Bool, message: [UInt8], permission: PinUvPermission,
                             rp: PinUvAuthRP = .any) throws(CTAPStatus) -> PinUvAuthorization {
        guard let param else { throw .puatRequired }
        guard let version else { throw .missingParameter }
        guard version == 1 || version == 2 else { throw .invalidParameter }
        guard pinSet else { throw .pinNotSet }
        return try authorize(param, version: version, message: message, permission: permission, rp: rp)
    }

    /// A request behind ``Session``, its failure answered with the status of its row of the error
    /// table (CTAP1_ERR_OTHER where the table has none).
    @discardableResult
    func keyRequest<T>(_ body: () throws(SessionError) -> T) throws(CTAPStatus) -> T {
        do { return try body() } catch { throw CTAPStatus(rawValue: error.name.ctapStatus ?? CTAPStatus.other.rawValue) }
    }
}
