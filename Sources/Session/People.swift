import Keychain
import VirtualAuthenticator

/// The people at an account's devices, as one front end knows them: what the person at a device
/// types when asked for its PIN, and how a prompt's timeout passes for them. Each front end says
/// it in a few lines — the terminal's (`--pin-file`, `$AUTHCTL_PIN`, a prompt; timeouts waited out),
/// the server's (the PINs its API was given; timeouts pass at once or on the account's virtual
/// clock), a scenario's (the PINs its script declares; timeouts on its virtual clock). What
/// follows from it — which device approves a new device or PIN when a request names none — is
/// the ``Session``'s rule, once (``Session/defaultApprover(for:)``).
public protocol People: AnyObject {
    /// The person at `device`, doing what `person` says (its action, its account choice, a PIN it
    /// types instead of the device's own).
    func user(at device: String, doing person: PersonRequest) -> UserPolicy

    /// Whether the person at `device` can type its PIN when a request gives none.
    func knowsPIN(of device: String) -> Bool
}

/// How a prompt's timeout passes for a person.
public enum TimeoutPassing: Sendable {
    /// At once: nothing waits, and no clock moves (a server on the real clock, `--instant-timeout`).
    case atOnce
    /// On a virtual clock, which moves by the timeout.
    case on(VirtualClock)
    /// Waited out in real time by `wait`.
    case waited(@Sendable (Duration) -> Void)

    /// The wait a ``UserPolicy`` is given.
    public var wait: (Duration) -> Void {
        switch self {
        case .atOnce:
            return { _ in }
        case .on(let clock):
            return { duration in
                let (seconds, attoseconds) = duration.components
                clock.advance(by: UInt64(seconds) * 1000 + UInt64(attoseconds / 1_000_000_000_000_000))
            }
        case .waited(let wait):
            return wait
        }
    }
}

extension UserPolicy {
    /// The person doing what `person` says, typing `person`'s PIN, else `known` when asked (with
    /// neither, verification fails as `notInteractive` and says `unknown`), a timeout passing as
    /// `timeouts` says.
    public static func person(_ person: PersonRequest, knowing known: String?, unknown: String, timeouts: TimeoutPassing) -> UserPolicy {
        let pin = person.pin ?? known
        return UserPolicy(action: person.action, account: person.account, pin: { _ throws(AuthenticatorError) in
            guard let pin else { throw AuthenticatorError(.notInteractive, unknown) }
            var bytes = Array(pin.utf8)
            return SecureBytes(consuming: &bytes)
        }, wait: timeouts.wait)
    }
}

/// People who know no PIN: verification is `notInteractive` unless a request types one; a
/// timeout is slept through.
public final class Nobody: People {
    public init() {}

    public func user(at device: String, doing person: PersonRequest) -> UserPolicy {
        guard let pin = person.pin else { return UserPolicy(action: person.action, account: person.account) }
        var bytes = Array(pin.utf8)
        return UserPolicy(action: person.action, account: person.account, pin: SecureBytes(consuming: &bytes))
    }

    public func knowsPIN(of device: String) -> Bool { false }
}

/// People whose PINs are written down, one per device, and changed as they change them — a
/// script's (scenarios, tests, the server's API): a timeout passes as `timeouts` says.
public final class KnownPeople: People {
    private var pins: [String: String]
    private let timeouts: TimeoutPassing

    public init(pins: [String: String] = [:], timeouts: TimeoutPassing) {
        self.pins = pins
        self.timeouts = timeouts
    }

    public func user(at device: String, doing person: PersonRequest) -> UserPolicy {
        .person(person, knowing: pins[device], unknown: "device '\(device)' has no PIN in this scenario", timeouts: timeouts)
    }

    public func knowsPIN(of device: String) -> Bool { pins[device] != nil }

    /// The PIN the person at `device` types from now (`nil`: none).
    public subscript(device: String) -> String? {
        get { pins[device] }
        set { pins[device] = newValue }
    }
}
