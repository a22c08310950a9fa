import Foundation
import Session
import Synchronization

/// One account the server hosts: its request layer, its clock, the PIN the person at each device
/// types, its events, and its directory. Its requests run one at a time (``serve(_:)``), so
/// parallel tests on their own accounts never wait on each other, and one test's requests on one
/// account are never interleaved.
final class HostedAccount: @unchecked Sendable {
    let id: String
    let session: Session
    /// The throw-away vault's directory, removed when the account ends (`nil`: a vault the server
    /// was given, which it never removes).
    let directory: String?
    let storage: String
    let events = AccountEvents()
    let autofill = AutofillPicks()
    let people = QueuedPeople()
    /// The people at its devices: the PIN each types.
    let persons: HostedPeople
    private let lock = Mutex(())
    private var ended = false
    /// WebDriver's user settings for the account's authenticator (`isUserConsenting`,
    /// `isUserVerified`), when it was made by Add Virtual Authenticator.
    var webDriverUser: (consenting: Bool, verified: Bool)? {
        get { persons.webDriverUser }
        set { persons.webDriverUser = newValue }
    }
    /// The passkeys it makes are device-bound unless a registration says otherwise (a virtual
    /// authenticator without `defaultBackupEligibility: true`).
    var deviceBoundByDefault = false
    /// The passkeys it makes count their signatures (1, 2, 3, …), as a browser's virtual
    /// authenticator's do: true for one made by Add Virtual Authenticator.
    var countsSignaturesByDefault = false
    /// Add Credential's backup flags when its parameters give none: the virtual authenticator's
    /// `defaultBackupEligibility` and `defaultBackupState` (WebAuthn L3 §11, Add Credential), `nil` for an
    /// account that is no virtual authenticator.
    var webDriverBackupDefaults: (eligible: Bool, state: Bool)?
    /// Add Virtual Authenticator's `hasResidentKey`: without it, Add Credential refuses a resident
    /// credential (§11), though every passkey the device makes is discoverable.
    var webDriverHasResidentKey = true

    /// `session`'s people must be `persons`.
    init(id: String, session: Session, persons: HostedPeople, directory: String?, storage: String) {
        self.id = id
        self.directory = directory
        self.storage = storage
        self.session = session
        self.persons = persons
    }

    /// Runs one request on the account, alone; then, while a stream is open, what sync did.
    func serve<T>(_ body: () throws(Problem) -> T) throws(Problem) -> T {
        try lock.withLock { _ throws(Problem) -> T in
            guard !ended else { throw Problem.notFound("no account \(JSONText.shown(id)) (it ended)") }
            defer {
                if events.watchesSync, let status = try? session.syncStatus() { events.look(at: status) }
                if let clock = session.clock { autofill.clockMoved(to: clock.now) }
            }
            return try body()
        }
    }

    /// Sets the PIN the person at `device` types from now (`nil`: none).
    func setPIN(_ pin: String?, device: String) { persons.setPIN(pin, device: device) }

    /// The account's time: its virtual clock's, else the real one.
    var now: UInt64 { session.now }

    /// Ends the account: its streams end, its throw-away vault is removed. The streams still open.
    func end() -> [HTTPStream] {
        autofill.close()
        lock.withLock { _ in
            ended = true
            if let directory { try? FileManager.default.removeItem(atPath: directory) }
        }
        return events.close()
    }
}
