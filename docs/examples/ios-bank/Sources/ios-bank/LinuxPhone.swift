#if os(Linux)
import AuthenticationServices
import Foundation
import Session

/// What stands for the person's Apple devices on Linux: an iPhone and an iPad of one throw-away
/// authctl account (one iCloud account), in a directory of its own that `close()` deletes, whose
/// passkeys sync with iCloud Keychain's delays on the account's virtual clock; and the app on them,
/// with its Associated Domains. On iOS none of this exists: the system is the device, and time
/// passes by itself.
@MainActor
final class LinuxPhone {
    /// The app's identifier as iOS names it (`TEAMID.bundle.identifier`).
    static let applicationIdentifier = "ABCDE12345.example.yourbank"
    /// A passkey made on one device is on the other once it has uploaded (2 s) and the other has
    /// downloaded it (3 s).
    static let uploadDelay: UInt64 = 2_000, downloadDelay: UInt64 = 3_000

    private let directory: URL
    private let session: Session
    private let host: AuthenticationServicesHost

    /// `associatedDomains`: the domains the app's entitlement names (`webcredentials:DOMAIN`).
    /// `passcode`: whether the iPhone has one (its device a PIN); without, it cannot use passkeys.
    init(associatedDomains: Set<String>, passcode: Bool = true) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("ios-bank-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var iphonePIN = Array("1111".utf8), ipadPIN = Array("2222".utf8), passphrase = Array("ios-bank".utf8)
        let clock = VirtualClock(start: UInt64(Date().timeIntervalSince1970 * 1000))
        session = try Session.create(AccountSpec(path: directory.appendingPathComponent("vault").path,
                                                 passphrase: SecureBytes(consuming: &passphrase), kdf: .min,
                                                 devices: [AccountSpec.DeviceSpec(name: "iphone", pin: passcode ? SecureBytes(consuming: &iphonePIN) : nil),
                                                           AccountSpec.DeviceSpec(name: "ipad", pin: SecureBytes(consuming: &ipadPIN))],
                                                 keeping: .throwAway(storeInMemory: true), clock: clock),
                                     people: KnownPeople(pins: passcode ? ["iphone": "1111", "ipad": "2222"] : ["ipad": "2222"], timeouts: .atOnce))
        try session.setDelays(upload: DelayRange(lower: Self.uploadDelay, upper: Self.uploadDelay),
                              download: DelayRange(lower: Self.downloadDelay, upper: Self.downloadDelay))
        // iCloud Keychain reports a passkey backed up (BS) from its creation, not once it has synced.
        try session.setSyncOptions(backupStateImmediate: true)
        host = AuthenticationServicesHost(session: session, device: "iphone", applicationIdentifier: Self.applicationIdentifier,
                                          associatedDomains: associatedDomains)
        AuthenticationServicesHost.current = host
    }

    /// The device the app runs on from now: "iphone" or "ipad".
    var device: String {
        get { host.device ?? "iphone" }
        set { host.device = newValue }
    }

    /// What the person does at the next sheets: approve with Face ID, Face ID not matching, dismiss.
    var person: PersonRequest {
        get { host.person }
        set { host.person = newValue }
    }

    /// What the person does when Face ID does not match and iOS offers the passcode.
    var passcodeFallback: PasscodeFallback {
        get { host.passcodeFallback }
        set { host.passcodeFallback = newValue }
    }

    /// What the person picks in a sheet that offers passkeys and saved passwords.
    var sheetPick: AuthenticationServicesHost.SheetPick {
        get { host.sheetPick }
        set { host.sheetPick = newValue }
    }

    /// The person saves `password` for `user` in iCloud Keychain when iOS offers to, after the
    /// app's sign-up form: a password of the bank's domain.
    func savePassword(_ password: String, user: String) {
        host.savePassword(password, user: user, domain: BankAuthService.relyingPartyIdentifier)
    }

    /// What the QuickType bar offers for the AutoFill request waiting: the passkeys' user names.
    func autoFillSuggestions() async throws -> [AuthenticationServicesHost.AutoFillSuggestion] {
        try await host.autoFillSuggestions()
    }

    /// The person closes the QuickType bar's suggestions (and types instead).
    func dismissAutoFill() async throws {
        try await host.dismissAutoFill()
    }

    /// The person picks a passkey in the QuickType bar (Face ID as `person` says).
    func pick(credentialID: Data) async throws {
        try await host.pick(credentialID: credentialID)
    }

    /// Whether an AutoFill request waits on the QuickType bar.
    func isAutoFillWaiting() async -> Bool {
        await host.isAutoFillWaiting()
    }

    /// Lets `milliseconds` pass on the account's clock: what sync has delivered by then is there.
    func wait(milliseconds: UInt64) throws {
        try session.clock(.advance(milliseconds: milliseconds))
    }

    /// How many passkeys for `rpID` the current device holds.
    func passkeys(for rpID: String) throws -> Int {
        try session.passkeys(device: device, rpId: rpID).count
    }

    func close() {
        AuthenticationServicesHost.current = nil
        try? FileManager.default.removeItem(at: directory)
    }
}
#endif
