import Session

/// The people at a hosted account's devices: each types the PIN the server was given for it
/// (changed by the API's PIN requests), else the one a request gives; a prompt's timeout passes
/// at once, never holding the account — on a virtual clock, the clock moves by it. WebDriver's
/// user settings (`isUserConsenting`, `isUserVerified`) override, for an account made by Add
/// Virtual Authenticator. Touched only under the account's lock (`HostedAccount.serve`).
final class HostedPeople: People, @unchecked Sendable {
    private var pins: [String: String]
    private let clock: VirtualClock?
    var webDriverUser: (consenting: Bool, verified: Bool)?

    init(pins: [String: String], clock: VirtualClock?) {
        self.pins = pins
        self.clock = clock
    }

    func user(at device: String, doing person: PersonRequest) -> UserPolicy {
        var person = person
        var known = pins[device]
        var why = "device '\(device)' has no PIN known to the server: give one as \"pin\""
        if let webDriverUser {
            if !webDriverUser.consenting { person.action = .cancel }
            if !webDriverUser.verified {
                (person.pin, known) = (nil, nil)
                why = "the virtual authenticator's user does not verify (isUserVerified is false)"
            }
        }
        let timeouts: TimeoutPassing = if let clock, !person.instantTimeout { .on(clock) } else { .atOnce }
        return .person(person, knowing: known, unknown: why, timeouts: timeouts)
    }

    func knowsPIN(of device: String) -> Bool { pins[device] != nil }

    /// Sets the PIN the person at `device` types from now (`nil`: none).
    func setPIN(_ pin: String?, device: String) { pins[device] = pin }
}
