import KeyVault
import SyncStore
import VirtualAuthenticator

/// What can go wrong with a device: a ceremony's outcome, passed through as the authenticator
/// named it, or the device's own trouble with its vault and its caller. Vault errors are mapped
/// here, once; the command line maps this to its table.
public struct DeviceError: Error, Sendable, CustomStringConvertible {
    public enum Code: Equatable, Sendable {
        /// What the ceremony (or the biometric check outside one) ended in.
        case authenticator(AuthenticatorError.Code)
        /// No vault at the path.
        case vaultNotFound
        /// A vault already exists where one is being created.
        case vaultExists
        /// The passphrase does not open the vault.
        case vaultLocked
        /// The vault's files are damaged, or were edited.
        case vaultCorrupted
        /// The vault was written by a newer authctl, in a format this one does not know.
        case vaultTooNew
        /// Another process held the vault longer than the caller would wait, or changed it underneath.
        case vaultBusy
        /// The vault's directory or a file in it belongs to another user or can be written by others.
        case vaultInsecure
        /// The operating system refused a file operation.
        case storage
        /// The account store cannot be reached or used now: a server that does not answer, a
        /// directory that is not a private one of this user's. Like a cloud that is down, it may
        /// work again later; the vault is untouched.
        case storeUnavailable
        /// The caller asked for something the device cannot do (a PIN too short, a directory that
        /// is not empty).
        case invalidArgument
        /// No passkey with the id the caller gave.
        case noSuchCredential
        /// No device with the name the caller gave.
        case noSuchDevice
        /// The device has no passkey support (``Account/setPasskeysSupported(_:device:)``): a
        /// browser without WebAuthn rejects with NotSupportedError.
        case passkeysNotSupported
    }

    public let code: Code
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }

    /// The name of this error in the product's one vocabulary (docs/errors.md): the ceremony's
    /// outcome as the authenticator names it, or the vault's trouble as the table names it.
    public var name: String {
        switch code {
        case .authenticator(.faultNotApplicable): "usage"  // a test control misused by the caller
        case .authenticator(let code): code.rawValue
        case .vaultNotFound: "vaultNotFound"
        case .vaultExists: "vaultExists"
        case .vaultLocked: "vaultLocked"
        case .vaultCorrupted: "vaultCorrupted"
        case .vaultTooNew: "vaultTooNew"
        case .vaultBusy: "vaultBusy"
        case .vaultInsecure: "vaultInsecure"
        case .storage: "ioError"
        case .storeUnavailable: "storeUnavailable"
        case .invalidArgument: "badInput"
        case .noSuchCredential: "notHandled"
        case .noSuchDevice: "usage"
        case .passkeysNotSupported: "passkeysNotSupported"
        }
    }

    init(_ error: VaultError) {
        // A broken invariant of the vault is a bug of this program, not the caller's input.
        self.init(PortFailure(error.kind).map(Self.code(of:)) ?? .authenticator(.unknown), error.message)
    }

    /// A vault error at `path`, the caller's (`--vault`, `--vault-dir`): the vault names its path
    /// in its own words, and a path too long to name a file is echoed cut there (``EchoedInput``).
    package init(_ error: VaultError, path: String) {
        self.init(error)
        let cut = EchoedInput.path(path)
        guard cut != path else { return }
        self = DeviceError(code, message.replacing(path, with: cut))
    }

    /// A ceremony's error; a store or sensor failure inside it is the vault's error it carries.
    /// An account store's error, where one reaches a caller (removing a store): the store is a
    /// file system's or a server's, so it is storage, unless a caller passed something invalid.
    package init(_ error: StoreError) {
        switch error.kind {
        case .invalid: self.init(.invalidArgument, error.message)
        case .corrupted: self.init(.vaultCorrupted, error.message)
        case .unavailable: self.init(.storeUnavailable, error.message)
        case .conflict, .tooLarge, .behindSnapshot: self.init(.storage, error.message)
        }
    }

    /// A ceremony's error: its outcome as the authenticator named it, or, where a port failed for
    /// its storage (the vault behind the credential store and the sensor, a front end's PIN
    /// file), that failure as the device names it.
    package init(_ error: AuthenticatorError) {
        guard let port = error.port else {
            self.init(.authenticator(error.code), error.message)
            return
        }
        self.init(Self.code(of: port), error.message)
    }

    /// The device's code for a port's failure: the vault's row of the same meaning.
    package static func code(of port: PortFailure) -> Code {
        switch port {
        case .notFound: .vaultNotFound
        case .exists: .vaultExists
        case .locked: .vaultLocked
        case .corrupted: .vaultCorrupted
        case .tooNew: .vaultTooNew
        case .io: .storage
        case .busy: .vaultBusy
        case .unsafe: .vaultInsecure
        case .invalid: .invalidArgument
        }
    }
}

extension AuthenticatorError {
    /// A vault failure inside a port (the credential store, the sensor), as the port failure it
    /// is; a broken invariant of the vault is the program's own, a plain `unknown`. The device
    /// maps it back by ``DeviceError/code(of:)``, so it ends as ``DeviceError/init(_:)-VaultError``
    /// would have named it.
    init(_ error: VaultError) {
        if let port = PortFailure(error.kind) { self.init(port, error.message) } else { self.init(.unknown, error.message) }
    }
}

extension PortFailure {
    /// The port failure a vault error is, by its kind; `nil` for a broken invariant of the vault,
    /// which is the program's own failure, not its storage's.
    init?(_ kind: VaultError.Kind) {
        switch kind {
        case .notFound: self = .notFound
        case .exists: self = .exists
        case .locked: self = .locked
        case .corrupted: self = .corrupted
        case .tooNew: self = .tooNew
        case .io: self = .io
        case .busy: self = .busy
        case .unsafe: self = .unsafe
        case .invalid: self = .invalid
        case .inconsistent: return nil
        }
    }
}

extension DeviceError {
    /// No passkey with credential id `id` (the caller's, cut as ``EchoedInput`` cuts it) on `device`.
    package static func noPasskey(_ id: [UInt8], on device: String) -> DeviceError {
        DeviceError(.noSuchCredential, "no passkey with id \(EchoedInput.base64URL(id)) on device '\(device)'")
    }
}
