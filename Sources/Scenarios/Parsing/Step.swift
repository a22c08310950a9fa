import Session

/// One step of a scenario, as its line says it. See docs/scenarios.md for the grammar.
enum Step {
    struct Ceremony {
        var user: String? = nil
        var displayName: String? = nil
        var label: String? = nil
        var credential: String? = nil
        var userVerification: String? = nil
        var attestation: String? = nil
        var exclude: [String] = []
        var allow: [String] = []
        var deviceBound = false
        var signCounter = false
        var options: OptionsSource? = nil
        var action: UserAction = .approve
        var pin: String? = nil
        var fault: String? = nil
        var via: String? = nil
        var timeout: Int? = nil
        var profile: String? = nil
        var algorithm: String? = nil
        var counter: String? = nil
        var mediation: String? = nil
        var topOrigin: String? = nil
        var recentPasswordSignIn = false
    }

    enum OptionsSource {
        /// A file, relative to the scenario.
        case file(String)
        /// The last HTTP reply, or one of its members (`reply.publicKey`).
        case reply(path: [String])
        /// JSON written on the line itself.
        case inline(String)
    }

    enum DeviceChange {
        case offline, online, reset, remove, unlock
        /// No passkey support (a browser without WebAuthn), or support again.
        case unsupported, supported
        /// A new PIN, authorised by `approver`'s PIN, or on a reset device by the former PIN the
        /// user types (`former`; default: the one the device had).
        case pin(String, approver: String?, former: String?)
    }

    case seed(UInt64)
    case origin(String)
    case rpId(String)
    case addDevice(String, pin: String?, attempts: UInt32?, approver: String?, profile: String?)
    case changeDevice(String, DeviceChange)
    case delays(device: String?, upload: DelayRange?, download: DelayRange?)
    case backupState(immediate: Bool)
    /// What is in flight: each device's (or one device's) pending uploads and downloads.
    case syncStatus(device: String?)
    /// The account's devices, as `authctl device list` reports them.
    case deviceList
    /// Whether the timeline shows each transfer when it happens.
    case syncEvents(on: Bool)
    case wait(UInt64)
    case register(String, Ceremony)
    case sign(String, Ceremony)
    case delete(String, label: String)
    case holds(String)
    /// One passkey a device holds, everything known of it (`authctl credential show`).
    case show(String, label: String)
    /// What `getClientCapabilities()` gives a page on a device.
    case capabilities(String)
    /// The RP's signal on a device (WebAuthn L3 §5.1.10).
    case signal(String, SignalStep)
    /// `body` is JSON text, in which `$response` stands for the last ceremony's response.
    case http(method: String, url: String, body: String?)
    /// A conditional sign-in (the page's autofill) on a device, and what the person does with its list.
    case autofill(String, AutofillStep)
}

/// `NAME autofill begin WORDS` (a sign-in's words, conditional), `… offers`, `… pick LABEL`, `… dismiss`.
enum AutofillStep {
    case begin(Step.Ceremony)
    case offers
    case pick(label: String)
    case dismiss
}

/// `NAME signal unknown LABEL`, `… accepted user U L1,L2`, `… details user U name N display D`.
enum SignalStep {
    case unknown(label: String)
    case accepted(user: String, labels: [String])
    case details(user: String, name: String, displayName: String)
}

/// What a line expects after `=>`: an outcome (`ok`, an error name, or for `holds` the passkeys)
/// and `key=value` checks of the result.
struct Expectation {
    let outcome: String?
    let checks: [Check]

    /// `KEY=VALUE`: the fact is VALUE (lists compared as multisets); `KEY!=VALUE`: none of VALUE's
    /// comma-separated items is among the fact's (a fact the result lacks included).
    struct Check {
        let key: String
        var value: String
        let column: Int
        var absent = false

        /// The check as written.
        var text: String { key + (absent ? "!=" : "=") + value }
    }
}

/// A parsed line.
struct ScenarioLine {
    let number: Int
    /// The step as written (without time, expectation or comment), for the timeline.
    let text: String
    /// `at DURATION` before the step: the time since the start at which it runs.
    let at: UInt64?
    let step: Step?
    let expectation: Expectation?
}
