import Keychain
import VirtualAuthenticator

/// The person at a device for one request: what they do at the prompt, which account they pick,
/// the PIN they type when it is not the device's own, and whether a timeout passes at once.
public struct PersonRequest: Sendable, Equatable {
    public var action: UserAction
    public var account: AccountChoice
    public var pin: String?
    public var instantTimeout: Bool

    public init(action: UserAction = .approve, account: AccountChoice = .newest, pin: String? = nil, instantTimeout: Bool = false) {
        self.action = action
        self.account = account
        self.pin = pin
        self.instantTimeout = instantTimeout
    }
}

/// `navigator.credentials.create()` on a device (`nil`: the first), or over hybrid on `via`.
public struct RegisterRequest: Sendable {
    public var device: String?
    public var via: String?
    public var caller: CallerContext
    public var options: OptionsSource<CreationOptionsBuilder>
    public var person: PersonRequest
    public var passkey: PasskeySettings
    public var fault: Fault?

    public init(device: String? = nil, via: String? = nil, caller: CallerContext, options: OptionsSource<CreationOptionsBuilder>,
                person: PersonRequest = PersonRequest(), passkey: PasskeySettings = PasskeySettings(), fault: Fault? = nil) {
        self.device = device
        self.via = via
        self.caller = caller
        self.options = options
        self.person = person
        self.passkey = passkey
        self.fault = fault
    }
}

/// `navigator.credentials.get()` on a device (`nil`: the first), or over hybrid on `via`; the
/// person's account choice picks among several candidates.
public struct SignRequest: Sendable {
    public var device: String?
    public var via: String?
    public var caller: CallerContext
    public var options: OptionsSource<RequestOptionsBuilder>
    public var person: PersonRequest
    public var fault: Fault?

    public init(device: String? = nil, via: String? = nil, caller: CallerContext, options: OptionsSource<RequestOptionsBuilder>,
                person: PersonRequest = PersonRequest(), fault: Fault? = nil) {
        self.device = device
        self.via = via
        self.caller = caller
        self.options = options
        self.person = person
        self.fault = fault
    }
}

/// Either ceremony, for a front end that reads one request and answers it (a command line, a server).
public enum CeremonyRequest: Sendable {
    case register(RegisterRequest)
    case sign(SignRequest)
}

/// What changes about a device of the account.
public enum DeviceChange: Sendable, Equatable {
    case offline, online, reset, remove
    /// Lifts a biometry lockout.
    case unlockBiometry
    /// No passkey support (a browser without WebAuthn), or support again.
    case passkeysSupported(Bool)
}

/// The virtual clock of a session that has one (a scenario's).
public enum ClockRequest: Sendable, Equatable {
    case advance(milliseconds: UInt64)
    case set(milliseconds: UInt64)
}
