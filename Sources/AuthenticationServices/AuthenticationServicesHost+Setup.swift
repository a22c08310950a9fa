import Foundation
import Session

/// What a setup made for a phone, removed with it: a throw-away account's directory.
final class HostSetup {
    /// Removed when the phone goes (`nil`: the caller's, kept).
    let directory: String?
    /// The secret other devices join the account's store with (a phone made on a store).
    let recoverySecret: String?

    init(removing directory: String?, recoverySecret: String? = nil) {
        self.directory = directory
        self.recoverySecret = recoverySecret
    }

    deinit {
        if let directory { try? FileManager.default.removeItem(atPath: directory) }
    }
}

/// Which phone: the account and device the host is, made or opened for a test (docs/ios.md,
/// "Which phone: the host's setups"). Each knows the device's PIN, which its person types when
/// asked (Face ID that matches; the passcode): `host.person` changes what they do.
extension AuthenticationServicesHost {
    /// A phone of a throw-away account: a vault of its own with one device, `device`, whose PIN is
    /// `pin`, at the cheapest KDF. Without `directory` the vault is in a new temporary directory,
    /// removed when the host goes; with one it is made there (a new or empty directory) and kept,
    /// opened again with `passphrase`. With `store` (a store directory, or a `postgresql://…#NAME`
    /// address) the account is made on that shared store, and ``recoverySecret`` is what other
    /// devices join it with (``joiningPhone(store:recoverySecret:applicationIdentifier:associatedDomains:device:pin:directory:passphrase:clock:)``).
    /// On `clock` (a virtual one) the account's time, its sync delays and a prompt's timeout pass
    /// when the clock is moved.
    public static func throwAwayPhone(applicationIdentifier: String, associatedDomains: AssociatedDomains, device: String = "iphone",
                                      pin: String = "1111", directory: String? = nil, passphrase: String = "phone", store: String? = nil,
                                      clock: VirtualClock? = nil) throws(SessionError) -> AuthenticationServicesHost {
        let (path, removed) = try place(directory)
        let shared = store.map { AccountSpec.SharedStore(address: $0) }
        do {
            let spec = AccountSpec(path: path, passphrase: secret(passphrase), kdf: .min,
                                   devices: [AccountSpec.DeviceSpec(name: device, pin: secret(pin))],
                                   keeping: directory == nil && store == nil ? .throwAway(storeInMemory: true) : .durable,
                                   store: shared, clock: clock)
            let session = try Session.create(spec, people: people(knowing: [device: pin], on: clock))
            return made(session, device: device, applicationIdentifier, associatedDomains,
                        HostSetup(removing: removed, recoverySecret: shared?.recoverySecret))
        } catch {
            if let removed { try? FileManager.default.removeItem(atPath: removed) }
            throw error
        }
    }

    /// A phone that is a device of an existing vault: opened at `path` with `passphrase`, as
    /// `device` (`nil`: its first), whose PIN the person knows when `pin` is given. Nothing is
    /// removed when the host goes.
    public static func vaultPhone(at path: String, passphrase: String, device: String? = nil, pin: String? = nil,
                                  applicationIdentifier: String, associatedDomains: AssociatedDomains,
                                  clock: VirtualClock? = nil) throws(SessionError) -> AuthenticationServicesHost {
        let known = people(knowing: [:], on: clock)
        let session = try Session.open(at: path, passphrase: secret(passphrase), people: known, clock: clock)
        if let pin { known[try session.deviceName(device)] = pin }
        return made(session, device: device, applicationIdentifier, associatedDomains, nil)
    }

    /// A phone that joins the account on `store` (a directory store, or `postgresql://…#NAME`)
    /// as a new device, `device`, with `pin`, let in by the account's recovery secret: another
    /// device of the same iCloud account, which gets the account's passkeys, and gives its own, only
    /// as the store's sync delays say. An account `authctl serve` made with a `store` answers
    /// `POST /accounts` with its `recoverySecret`; so does a phone made by
    /// ``throwAwayPhone(applicationIdentifier:associatedDomains:device:pin:directory:passphrase:store:clock:)``
    /// with a store. Its vault is a temporary directory's, removed when the host goes, unless
    /// `directory` names one (new or empty), kept.
    public static func joiningPhone(store: String, recoverySecret: String, applicationIdentifier: String, associatedDomains: AssociatedDomains,
                                    device: String = "iphone", pin: String = "1111", directory: String? = nil, passphrase: String = "phone",
                                    clock: VirtualClock? = nil) throws(SessionError) -> AuthenticationServicesHost {
        let (path, removed) = try place(directory)
        do {
            let session = try Session.join(at: path, passphrase: secret(passphrase), kdf: .min, store: store, name: device, pin: secret(pin),
                                           approval: .recoverySecret({ recoverySecret }), people: people(knowing: [device: pin], on: clock),
                                           clock: clock)
            return made(session, device: device, applicationIdentifier, associatedDomains, HostSetup(removing: removed))
        } catch {
            if let removed { try? FileManager.default.removeItem(atPath: removed) }
            throw error
        }
    }

    /// The secret a device joins this phone's account with, when a setup made it on a store.
    public var recoverySecret: String? { setup?.recoverySecret }

    private static func made(_ session: Session, device: String?, _ applicationIdentifier: String, _ associatedDomains: AssociatedDomains,
                             _ setup: HostSetup?) -> AuthenticationServicesHost {
        let host = AuthenticationServicesHost(session: session, device: device, applicationIdentifier: applicationIdentifier,
                                              associatedDomains: associatedDomains)
        host.setup = setup
        return host
    }

    /// Where a setup's vault goes: in `directory`, kept; else in a new temporary directory (made by
    /// mkdtemp(3), this user's alone), removed with the phone.
    private static func place(_ directory: String?) throws(SessionError) -> (vault: String, removed: String?) {
        if let directory { return (directory, nil) }
        var template = Array((NSTemporaryDirectory() + "/authctl-phone-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else {
            throw SessionError(.ioError, "no temporary directory could be made for the phone's vault: \(String(cString: strerror(errno)))")
        }
        let temporary = String(cString: made)
        return (temporary + "/vault", temporary)
    }

    private static func people(knowing pins: [String: String], on clock: VirtualClock?) -> KnownPeople {
        KnownPeople(pins: pins, timeouts: clock.map { .on($0) } ?? .atOnce)
    }

    private static func secret(_ text: String) -> SecureBytes {
        var bytes = Array(text.utf8)
        return SecureBytes(consuming: &bytes)
    }
}
