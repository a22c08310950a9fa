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
            report("app", "the transfer is not sent; \(Self.handling(failure))")
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
            report("app", "\(Self.handling(failure)); the password form is not shown (the .notHandled branch is never taken)")
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

    /// What the app does for each branch of its switch (the guide's handlers).
    static func handling(_ failure: PasskeyFailure) -> String {
        switch failure.handling {
        case .userCanceled: "dismissed: nothing is shown, the AutoFill sign-in resumes"
        case .authenticationFailed: "shows: \(failure.reason ?? "the request failed")"
        case .duplicateCredential: "shows: this device already has a passkey for this account"
        case .noPasskeyFound: "shows the password form"
        case .invalidResponse, .unknownError, .nonInteractive: "shows: something went wrong (\(failure.code))"
        }
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
