import Keychain
import Session
import Testing
import VirtualAuthenticator
import Scenarios

/// Every authenticator code has a row of the same name, but the misuse of a test control.
@Test func everyAuthenticatorCodeMapsToTheRowOfItsName() {
    for code in AuthenticatorError.Code.allCases {
        let name = SessionError.Name(code)
        #expect(name.rawValue == (code == .faultNotApplicable ? "usage" : code.rawValue), "\(code)")
        #expect(SessionError(AuthenticatorError(code, "x")).name == name)
        #expect(SessionError(DeviceError(.authenticator(code), "x")).name == name)
    }
}

/// The device's own codes, by type: none of them is a string looked up in the table.
@Test func theDevicesCodesMapByType() {
    let expected: [(DeviceError.Code, SessionError.Name)] = [
        (.vaultNotFound, .vaultNotFound), (.vaultExists, .vaultExists), (.vaultLocked, .vaultLocked),
        (.vaultCorrupted, .vaultCorrupted), (.vaultTooNew, .vaultTooNew), (.vaultBusy, .vaultBusy), (.vaultInsecure, .vaultInsecure), (.storage, .ioError),
        (.invalidArgument, .badInput), (.noSuchCredential, .notHandled), (.noSuchDevice, .usage),
        (.passkeysNotSupported, .passkeysNotSupported), (.storeUnavailable, .storeUnavailable),
    ]
    for (code, name) in expected {
        #expect(SessionError.name(of: code) == name, "\(code)")
        // The device's own vocabulary agrees with the table for every code.
        #expect(DeviceError(code, "x").name == name.rawValue, "\(code)")
    }
}

/// A front end's port (its PIN reader) fails in the table's words, mapped by type into the
/// ceremony's error and back through the device: every row a port can fail with comes back as
/// itself, with its message; the rows no port can fail with (a store: a PIN reader has none) are
/// the program's own (`unknown`).
@Test func aFrontEndsOwnErrorComesBackThroughTheDeviceByType() {
    let programs: Set<SessionError.Name> = [.auditFindings, .rpUnusable, .usage, .invalidResponse, .scenarioFailed, .passkeysNotSupported, .storeUnavailable]
    for name in SessionError.Name.allCases {
        let own = SessionError(name, "the reader's own words")
        let back = SessionError(DeviceError(AuthenticatorError(own)))
        #expect(back.name == (programs.contains(name) ? .unknown : name), "\(name)")
        #expect(back.message == own.message, "\(name)")
        #expect(SessionError(AuthenticatorError(own)).name == back.name, "\(name)")
    }
}

/// A port's failure for its storage is `unknown` to the authenticator, and the device names it
/// by type as the vault's row of the same meaning.
@Test func aPortsFailureIsNamedByTheDeviceByType() {
    let expected: [(PortFailure, SessionError.Name)] = [
        (.notFound, .vaultNotFound), (.exists, .vaultExists), (.locked, .vaultLocked), (.corrupted, .vaultCorrupted),
        (.tooNew, .vaultTooNew), (.io, .ioError), (.busy, .vaultBusy), (.unsafe, .vaultInsecure), (.invalid, .badInput),
    ]
    #expect(expected.map(\.0) == PortFailure.allCases)
    for (port, name) in expected {
        let error = AuthenticatorError(port, "the vault's words")
        #expect(error.code == .unknown && error.code.domException == "UnknownError", "\(port)")
        #expect(SessionError(error).name == name && SessionError(error).message == "the vault's words", "\(port)")
    }
}

/// The PIN reader a front end gives the person fails (no terminal, an interrupted prompt, a PIN
/// file it cannot read): a registration that needs the PIN ends in that error, its name and its
/// message, as the front end said it.
@Test(arguments: [
    SessionError(.notInteractive, "no terminal to ask for the biometric PIN"),
    SessionError(.canceled, "the prompt was interrupted (signal 2); nothing was done"),
    SessionError(.badInput, "cannot read /nonexistent/pin: No such file or directory"),
])
func aPINReadersOwnFailureEndsTheCeremonyAsItself(_ failure: SessionError) throws {
    let directory = try ScenarioRunner.makeWorkspace()
    defer { ScenarioRunner.removeWorkspace(directory) }
    var pin = Array("1111".utf8), passphrase = Array("p".utf8)
    let session = try Session.create(AccountSpec(path: directory + "/vault", passphrase: SecureBytes(consuming: &passphrase), kdf: .min,
                                                 devices: [AccountSpec.DeviceSpec(name: "phone", pin: SecureBytes(consuming: &pin))],
                                                 keeping: .throwAway(storeInMemory: true)),
                                     people: FailingReader(failure))
    do {
        _ = try session.register(RegisterRequest(device: "phone", caller: CallerContext(origin: "https://example.com"),
                                                 options: .built(CreationOptionsBuilder(userVerification: "required"))))
        Issue.record("a registration needing the PIN succeeded without one")
    } catch {
        #expect(error.name == failure.name && error.message == failure.message, "\(error)")
        #expect(error.name.exitCode == failure.name.exitCode)
    }
}

/// People whose PIN reader fails as a front end's does, in the table's words.
private final class FailingReader: People {
    let failure: SessionError

    init(_ failure: SessionError) { self.failure = failure }

    func user(at device: String, doing person: PersonRequest) -> UserPolicy {
        UserPolicy(action: person.action, account: person.account, pin: { [failure] _ throws(AuthenticatorError) in
            throw AuthenticatorError(failure)
        }, wait: { _ in })
    }

    func knowsPIN(of device: String) -> Bool { true }
}

/// The documented table (docs/errors.md): exit codes are unique, and the sysexits ones are where
/// they were.
@Test func exitCodesAreOnePerName() {
    let codes = SessionError.Name.allCases.map(\.exitCode)
    #expect(Set(codes).count == codes.count)
    #expect(SessionError.Name.usage.exitCode == 64 && SessionError.Name.badInput.exitCode == 65)
    #expect(SessionError.Name.unknown.exitCode == 70 && SessionError.Name.ioError.exitCode == 74)
    #expect(SessionError.Name.passkeysNotSupported.domException == "NotSupportedError")
    #expect(SessionError.Name.usage.domException == "TypeError" && SessionError.Name.usage.ctapStatus == nil)
}

/// A broken promise of the program itself is `unknown` (EX_SOFTWARE), never the caller's
/// `badInput`: here a registration through an account opened only to read.
@Test func anInternalInvariantIsNotBadInput() throws {
    let directory = try ScenarioRunner.makeWorkspace()
    defer { ScenarioRunner.removeWorkspace(directory) }
    var passphrase = Array("p".utf8)
    let secret = SecureBytes(consuming: &passphrase)
    _ = try Account.create(at: directory + "/vault", passphrase: secret, kdf: .min, biometricPIN: nil)
    let reader = Session(account: try Account.open(at: directory + "/vault", passphrase: secret, access: .read))
    do {
        _ = try reader.register(RegisterRequest(caller: CallerContext(origin: "https://example.com"), options: .built(CreationOptionsBuilder())))
        Issue.record("a read-only account registered a passkey")
    } catch {
        #expect(error.name == .unknown && error.name.exitCode == 70 && error.message.contains("read-only"), "\(error)")
    }
}

/// Approving a joining device through an account opened only to read is the program's own
/// failure (`unknown`), as a registration through one is: no front end approves without opening
/// the vault to write, so no caller's input can cause it.
@Test func approvingAJoinThroughAReadOnlyAccountIsAnInternalFailure() throws {
    let directory = try ScenarioRunner.makeWorkspace()
    defer { ScenarioRunner.removeWorkspace(directory) }
    var passphrase = Array("p".utf8)
    let secret = SecureBytes(consuming: &passphrase)
    _ = try Account.create(at: directory + "/vault", passphrase: secret, kdf: .min, biometricPIN: nil)
    let reader = Session(account: try Account.open(at: directory + "/vault", passphrase: secret, access: .read))
    do {
        _ = try reader.approveJoin(code: "2345-6789-ABCD")
        Issue.record("a read-only account approved a join")
    } catch {
        #expect(error.name == .unknown && error.name.exitCode == 70 && error.message.contains("opened for writing"), "\(error)")
    }
}
