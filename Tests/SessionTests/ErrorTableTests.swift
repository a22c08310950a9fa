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
        (.passkeysNotSupported, .passkeysNotSupported),
    ]
    for (code, name) in expected {
        #expect(SessionError.name(of: code) == name, "\(code)")
        // The device's own vocabulary agrees with the table for every code.
        #expect(DeviceError(code, "x").name == name.rawValue, "\(code)")
    }
}

/// A port the front end supplied fails in the front end's own words, which come back unchanged.
@Test func aFrontEndsOwnErrorComesBackThroughTheDevice() {
    let own = SessionError(.notInteractive, "no terminal for the PIN")
    let carried = DeviceError(.authenticator(.unknown), "a port failed", underlying: own)
    let back = SessionError(carried)
    #expect(back.name == .notInteractive && back.message == own.message)
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
