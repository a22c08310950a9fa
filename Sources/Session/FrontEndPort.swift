import VirtualAuthenticator

extension AuthenticatorError {
    /// A front end's port (its PIN reader) that failed in the table's words: the ceremony outcome of
    /// the same name (`notInteractive`, `canceled`, `badInput`, …), or the port failure a vault or
    /// I/O row is, so the error comes out of the ceremony as the same ``SessionError`` — mapped by
    /// type, both ways, never carried as an error of this layer. A row no port can fail with (a
    /// usage error, a scenario's, …) is the program's own failure, `unknown`.
    public init(_ error: SessionError) {
        let message = error.message
        switch error.name {
        case .canceled: self.init(Code.canceled, message)
        case .failed: self.init(Code.failed, message)
        case .notHandled: self.init(Code.notHandled, message)
        case .notInteractive: self.init(Code.notInteractive, message)
        case .matchedExcludedCredential: self.init(Code.matchedExcludedCredential, message)
        case .biometryLockout: self.init(Code.biometryLockout, message)
        case .timedOut: self.init(Code.timedOut, message)
        case .securityError: self.init(Code.securityError, message)
        case .notSupported: self.init(Code.notSupported, message)
        case .encodingError: self.init(Code.encodingError, message)
        case .syntaxError: self.init(Code.syntaxError, message)
        case .badInput: self.init(Code.badInput, message)
        case .unknown: self.init(Code.unknown, message)
        case .vaultNotFound: self.init(PortFailure.notFound, message)
        case .vaultExists: self.init(PortFailure.exists, message)
        case .vaultLocked: self.init(PortFailure.locked, message)
        case .vaultCorrupted: self.init(PortFailure.corrupted, message)
        case .vaultTooNew: self.init(PortFailure.tooNew, message)
        case .vaultBusy: self.init(PortFailure.busy, message)
        case .vaultInsecure: self.init(PortFailure.unsafe, message)
        case .ioError: self.init(PortFailure.io, message)
        case .usage, .invalidResponse, .scenarioFailed, .passkeysNotSupported, .storeUnavailable, .auditFindings, .rpUnusable: self.init(Code.unknown, message)
        }
    }
}
