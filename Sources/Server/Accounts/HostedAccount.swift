import Foundation
import Keychain
import KeyVault
import Session
import Synchronization
import VirtualAuthenticator

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
    private let lock = Mutex(())
    /// Each device's PIN, as the person at it types it (changed by the API's PIN requests).
    private var pins: [String: String]
    private var ended = false
    /// WebDriver's user settings for the account's authenticator (`isUserConsenting`,
    /// `isUserVerified`), when it was made by Add Virtual Authenticator.
    var webDriverUser: (consenting: Bool, verified: Bool)?
    /// The passkeys it makes are device-bound unless a registration says otherwise
    /// (`defaultBackupEligibility: false`).
    var deviceBoundByDefault = false

    init(id: String, account: Account, clock: VirtualClock?, directory: String?, storage: String, pins: [String: String]) {
        self.id = id
        self.directory = directory
        self.storage = storage
        self.pins = pins
        session = Session(account: account, clock: clock)
        session.people = { [unowned self] device, person in user(on: device, person) }
    }

    /// The person at `device`: the request's PIN, else the device's; a prompt's timeout passes at
    /// once, never holding the account (on a virtual clock, the clock moves by it, unless it has
    /// passed already).
    private func user(on device: String, _ person: PersonRequest) -> UserPolicy {
        var pin = person.pin ?? pins[device]
        var action = person.action
        var why = "device '\(device)' has no PIN known to the server: give one as \"pin\""
        if let webDriverUser {
            if !webDriverUser.consenting { action = .cancel }
            if !webDriverUser.verified {
                pin = nil
                why = "the virtual authenticator's user does not verify (isUserVerified is false)"
            }
        }
        let clock = person.instantTimeout ? nil : session.clock
        return UserPolicy(action: action, account: person.account, pin: { prompt throws(AuthenticatorError) in
            guard let pin else { throw AuthenticatorError(.notInteractive, why) }
            return AccountService.secret(pin)
        }, wait: { duration in
            guard let clock else { return }
            let (seconds, attoseconds) = duration.components
            clock.advance(by: UInt64(seconds) * 1000 + UInt64(attoseconds / 1_000_000_000_000_000))
        })
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
    func setPIN(_ pin: String?, device: String) { pins[device] = pin }

    func knowsPIN(of device: String) -> Bool { pins[device] != nil }

    /// The account's time: its virtual clock's, else the real one.
    var now: UInt64 { session.account.clock.milliseconds() }

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
