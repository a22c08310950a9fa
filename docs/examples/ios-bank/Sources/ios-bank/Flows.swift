#if os(Linux)
import AuthenticationServices
import Foundation
import Session

/// The stories the example tells, each the app's code driven by a scripted person on the phone
/// (`LinuxPhone`): what the person does at a sheet, which device they hold, how much time passes.
/// A passkey request that fails where the story expects it is handled as the app handles it and
/// the story goes on; one that fails otherwise ends the story (thrown to `main`).
@MainActor
struct Flows {
    let service: BankAuthService
    let phone: LinuxPhone
    let username: String
    let password: String
    let report: (String, String) -> Void

    /// Signs up with a password; at each password sign-in the bank offers a passkey and the person
    /// dismisses the system's sheet the first `declines` times (the app then declines the offer, as
    /// the guide's upgrade manager does); the next offer is accepted, or, once the bank has stopped
    /// offering (after three declines), the person adds the passkey in the app's Settings. Then signs
    /// out and in with the passkey, by name; `tamper` flips a byte of the signature first.
    func upgrade(declines: Int, tamper: Bool) async throws {
        try await signUp()
        var declined = 0
        var offered = try await service.signIn(username: username, password: password)
        while offered && declined < declines {
            act(.cancel)
            do {
                try await service.addPasskey()
                throw Unexpected(what: "a passkey was made though the person dismissed the sheet")
            } catch let failure as PasskeyFailure where failure.handling == .userCanceled {
                report("passkey-error", failure.description)
                report("app", "the sheet was dismissed: the offer is declined")
                try await service.declineUpgrade()
                declined += 1
            }
            try await service.signOut()
            offered = try await service.signIn(username: username, password: password)
        }
        try await addPasskey(offered: offered)
        try await service.signOut()
        try await service.signInWithPasskey(username: username) { signed in
            if tamper { signed.signature[signed.signature.index(before: signed.signature.endIndex)] ^= 0x01 }
        }
    }

    /// A password account with a passkey on the iPhone, signed out; then a sign-in that names no
    /// user: the passkey's `userID` is the response's `userHandle`, which tells the bank who it is.
    func discoverable() async throws {
        try await enrol()
        try await service.signOut()
        try await service.signInWithPasskey(username: nil)
    }

    /// A password account with a passkey, then a transfer of `amount` the bank approves only with
    /// the passkey verified again. Face ID does not match, and iOS offers the passcode: at the
    /// first try the person dismisses it, the request ends `.canceled` and the app sends nothing
    /// (its dismissed branch shows nothing); at the second they type it, and the bank approves.
    func transfer(amount: Int) async throws {
        try await enrol()
        act(.wrongPIN)
        phone.passcodeFallback = .dismiss
        report("person", "dismisses the passcode")
        do {
            try await service.transfer(amount: amount)
            throw Unexpected(what: "the transfer was approved though Face ID did not match and the passcode was dismissed")
        } catch let failure as PasskeyFailure where failure.handling == .userCanceled {
            report("passkey-error", failure.description)
            report("app", "the transfer is not sent; \(failure.whatTheAppDoes)")
        }
        phone.passcodeFallback = .enterPasscode
        report("person", "types the passcode")
        try await service.transfer(amount: amount)
        try await service.transfers()
    }

    /// A passkey made on the iPhone, then a sign-in on the iPad of the same iCloud account with
    /// `.preferImmediatelyAvailableCredentials`: before the passkey has synced the iPad has none,
    /// which iOS answers `.canceled` (not `.notHandled`), so the app's switch takes its dismissed
    /// branch and the password form is never shown; once the sync delay has passed, it signs in.
    func secondDevice() async throws {
        try await enrol()
        try await service.signOut()
        phone.device = "ipad"
        report("phone", "ipad passkeys=\(try phone.passkeys(for: BankAuthService.relyingPartyIdentifier))")
        do {
            try await service.signInWithPasskey(username: username, immediatelyAvailableOnly: true)
            throw Unexpected(what: "the iPad signed in before the passkey could have synced")
        } catch let failure as PasskeyFailure where failure.handling == .userCanceled {
            report("passkey-error", failure.description)
            report("app", "\(failure.whatTheAppDoes); the password form is not shown (the .notHandled branch is never taken)")
        }
        try phone.wait(milliseconds: LinuxPhone.uploadDelay + LinuxPhone.downloadDelay)
        report("clock", "+\(LinuxPhone.uploadDelay + LinuxPhone.downloadDelay)ms ipad passkeys=\(try phone.passkeys(for: BankAuthService.relyingPartyIdentifier))")
        try await service.signInWithPasskey(username: username, immediatelyAvailableOnly: true)
    }

    /// A password account with a passkey on the iPhone, then Settings' "Add a passkey" again: the
    /// bank excludes the account's passkeys, one of which is on the iPhone.
    func exclude() async throws {
        try await enrol()
        report("app", "Settings: add a passkey")
        try await service.addPasskey()
        throw Unexpected(what: "a second passkey was made on a device that holds one the bank excluded")
    }

    /// The offer of a passkey accepted by an app whose entitlement names www.yourbank.example,
    /// not the bank's RP ID yourbank.example: iOS refuses the request before showing anything.
    func notAssociated() async throws {
        try await enrol()
        throw Unexpected(what: "a passkey was made by an app not associated with the bank's domain")
    }

    /// A password account with a passkey, signed out; the person dismisses the sign-in sheet.
    func cancel() async throws {
        try await enrol()
        try await service.signOut()
        act(.cancel)
        try await service.signInWithPasskey(username: username)
        throw Unexpected(what: "signed in though the person dismissed the sheet")
    }

    /// A password account with a passkey, signed out; the sign-in screen shows and its AutoFill
    /// request waits under the user name field. The person closes the QuickType bar: the request
    /// waits on, its delegate told nothing. The app cancels it to begin again with fresh options:
    /// `.canceled`, and its switch resumes AutoFill (the guide's `handleUserCanceled`). The person
    /// picks the passkey in the bar, and the bank signs them in. Signed out, with AutoFill waiting
    /// again, the person taps the passkey button: the app ends its AutoFill request (`.canceled`,
    /// not resumed) and the sheet signs them in.
    func autoFill() async throws {
        try await enrol()
        try await service.signOut()
        let screen = AutoFillSignIn(service: service)
        try await screen.begin()
        try await quickTypeBar()
        report("person", "dismisses the QuickType bar")
        try await phone.dismissAutoFill()
        try await quickTypeBar()
        screen.refresh()
        try await screen.handledNext()
        guard let passkey = try await quickTypeBar().first else { throw Unexpected(what: "the QuickType bar offers no passkey") }
        report("person", "picks \(passkey.userName) in the QuickType bar")
        try await phone.pick(credentialID: passkey.credentialID)
        try await screen.handledNext()

        try await service.signOut()
        try await screen.begin()
        try await quickTypeBar()
        report("person", "taps Sign in with a passkey")
        try await screen.yieldToSheet()
        report("phone", "autofill waiting=\(await phone.isAutoFillWaiting())")
        try await service.signInWithPasskey(username: username)
    }

    /// Signs up with a password, which the person saves in iCloud Keychain when iOS offers to.
    /// Signed in again with the password typed, the app asks for the automatic upgrade: iOS saw
    /// no password of iCloud Keychain used, makes nothing and answers `.canceled` without showing
    /// anything, and the app keeps its upgrade sheet on offer. Signed in again with the saved
    /// password picked in the sign-in sheet, the automatic upgrade makes the passkey without
    /// asking (the person would dismiss any sheet), and the bank verifies it; then a sign-in with it.
    func autoUpgrade() async throws {
        try await service.signUp(username: username, password: password)
        report("person", "saves the password in iCloud Keychain")
        phone.savePassword(password, user: username)
        try await service.signOut()
        report("person", "types the password")
        if try await service.signIn(username: username, password: password) {
            do {
                try await service.upgradeAutomatically()
                throw Unexpected(what: "a passkey was made though no password of iCloud Keychain was used")
            } catch let failure as PasskeyFailure where failure.handling == .userCanceled {
                report("passkey-error", failure.description)
                report("app", "no passkey made and nothing shown: the upgrade sheet stays on offer")
            }
        }
        try await service.signOut()
        phone.sheetPick = .password(user: username)
        report("person", "picks the saved password in the sign-in sheet")
        if try await service.signInFromSheet() {
            act(.cancel)
            try await service.upgradeAutomatically()
            act(.approve)
        }
        try await service.signOut()
        try await service.signInWithPasskey(username: username)
    }

    /// An iPhone without a passcode: the password account works, but the offer of a passkey,
    /// accepted, ends `.deviceNotConfiguredForPasskeyCreation` (iOS 26) before anything is shown.
    /// The guide's switch names no such code: its default branch handles it.
    func noPasscode() async throws {
        report("phone", "iphone passcode=none")
        try await enrol()
        throw Unexpected(what: "a passkey was made on a phone without a passcode")
    }

    /// A password account with a passkey, signed out; the sign-in screen, the name typed, prepares
    /// its request, and the person taps its passkey button twice before the sheet shows: two
    /// controllers perform back to back. iOS lets an app have one request at a time: the second
    /// ends `.failed` with iOS's reason (the app's switch shows it), and the first signs in.
    func busy() async throws {
        try await enrol()
        try await service.signOut()
        try await service.prepareSignIn(username: username)
        report("person", "taps Sign in with a passkey twice")
        let first = service.passkeyButtonTapped(), second = service.passkeyButtonTapped()
        do {
            try await service.completeSignIn(second)
            throw Unexpected(what: "a second request was answered while the first was pending")
        } catch let failure as PasskeyFailure where failure.handling == .authenticationFailed {
            report("passkey-error", failure.description)
            report("app", failure.whatTheAppDoes)
        }
        try await service.completeSignIn(first)
    }

    /// What the QuickType bar offers now, reported.
    @discardableResult
    private func quickTypeBar() async throws -> [AuthenticationServicesHost.AutoFillSuggestion] {
        let offered = try await phone.autoFillSuggestions()
        report("phone", "autofill waiting offers=[\(offered.map(\.userName).joined(separator: ","))]")
        return offered
    }

    /// Opens the account with a password and signs out: the password sign-in that follows is the
    /// one the bank offers a passkey after.
    private func signUp() async throws {
        try await service.signUp(username: username, password: password)
        try await service.signOut()
    }

    /// Signs up, signs in with the password, and adds the passkey the bank offers.
    private func enrol() async throws {
        try await signUp()
        try await addPasskey(offered: try await service.signIn(username: username, password: password))
    }

    /// The person accepts the bank's offer; with none (the bank stopped offering), they add the
    /// passkey in the app's Settings.
    private func addPasskey(offered: Bool) async throws {
        if !offered { report("app", "not offered: Settings, add a passkey") }
        act(.approve)
        try await service.addPasskey()
    }

    /// What the person at the phone does at the next sheets.
    private func act(_ action: UserAction) {
        guard phone.person.action != action else { return }
        phone.person = PersonRequest(action: action)
        report("person", action.rawValue)
    }
}

/// A passkey request that succeeded where the story has it fail: the phone did not do what the
/// person was scripted to do.
struct Unexpected: Error, CustomStringConvertible {
    let what: String
    var description: String { what }
}

/// The raw values of a registration and a sign-in made through the module with challenges the
/// caller chose, as the app would send them: for relying-party libraries to judge.
@MainActor
func rawCeremonies(name: String, userID: Data, registrationChallenge: Data, assertionChallenge: Data,
                   report: (String, String) -> Void) async throws {
    let coordinator = PasskeyCoordinator()
    let provider = ASAuthorizationPlatformPublicKeyCredentialProvider(relyingPartyIdentifier: BankAuthService.relyingPartyIdentifier)
    let registration = provider.createCredentialRegistrationRequest(challenge: registrationChallenge, name: name, userID: userID)
    registration.userVerificationPreference = .required
    let created = try await coordinator.register(registration)
    report("registration", try json(RegistrationResponseJSON(created)))
    let assertion = provider.createCredentialAssertionRequest(challenge: assertionChallenge)
    assertion.allowedCredentials = [ASAuthorizationPlatformPublicKeyCredentialDescriptor(credentialID: created.credentialID)]
    assertion.userVerificationPreference = .required
    report("assertion", try json(AuthenticationResponseJSON(try await coordinator.signIn(assertion))))
}

private func json(_ value: some Encodable) throws -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    return String(decoding: try encoder.encode(value), as: UTF8.self)
}
#endif
