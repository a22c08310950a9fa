import Foundation
import Session

/// What stands for the iPhone an app runs on: a device of an authctl account (its passkeys, its
/// biometric PIN), the app's identity and its Associated Domains (the `webcredentials:` entries of
/// its entitlement and the domains' association files), and the person at its prompt. Not Apple
/// API: set `current` before the app's code performs requests (docs/ios.md, "Which phone").
@MainActor
public final class AuthenticationServicesHost {
    public static var current: AuthenticationServicesHost?

    public let session: Session
    /// The account's device that is this phone (`nil`: the first).
    public var device: String?
    /// `TEAMID.bundle.identifier`, as iOS names the app in its failure reasons.
    public var applicationIdentifier: String
    /// The app's entitlement, the domains' files and the verdicts kept: a request for an RP ID
    /// they do not associate with the app fails, as on iOS.
    public var associatedDomains: AssociatedDomains
    /// What the person does at the next prompts (approve, cancel, a wrong PIN, …).
    public var person: PersonRequest
    /// What the person does when the phone falls back to its passcode (Face ID did not match, or
    /// is locked out).
    public var passcodeFallback: PasscodeFallback = .dismiss
    /// What a setup made for this phone and removes with it (a throw-away account's directory).
    var setup: HostSetup?
    /// What else the phone holds and remembers: saved passwords, password sign-ins, the AutoFill
    /// request waiting on the QuickType bar (AuthenticationServicesHost+State).
    let state = HostState()

    public init(session: Session, device: String? = nil, applicationIdentifier: String, associatedDomains: AssociatedDomains,
                person: PersonRequest = PersonRequest()) {
        self.session = session
        self.device = device
        self.applicationIdentifier = applicationIdentifier
        self.associatedDomains = associatedDomains
        self.person = person
    }

    /// The app associated with each of `domains` without fetching anything: a `webcredentials`
    /// entry for each, taken as listing the app (``AssociatedDomains/init(presuming:)``).
    public convenience init(session: Session, device: String? = nil, applicationIdentifier: String, associatedDomains: Set<String>,
                            person: PersonRequest = PersonRequest()) {
        self.init(session: session, device: device, applicationIdentifier: applicationIdentifier,
                  associatedDomains: AssociatedDomains(presuming: associatedDomains), person: person)
    }

    func register(_ request: ASAuthorizationPlatformPublicKeyCredentialRegistrationRequest) -> Result<ASAuthorization, ASAuthorizationError> {
        let rpID = request.relyingPartyIdentifier
        if let refusal = association(rpID) ?? creationRefusal() { return .failure(refusal) }
        if let refusal = Self.attestationRefusal(request) { return .failure(refusal) }
        do {
            let made = try verifyingOwner { person throws(SessionError) in
                try session.register(RegisterRequest(device: device, caller: CallerContext(origin: "https://" + rpID, nativeApp: true),
                                                     options: .json(PlatformOptions.creation(request)), person: person))
            }
            let json = try ResponseJSON(made.json)
            let credential = ASAuthorizationPlatformPublicKeyCredentialRegistration(
                rawClientDataJSON: try json.bytes("response", "clientDataJSON"), credentialID: try json.bytes("rawId"),
                rawAttestationObject: try json.bytes("response", "attestationObject"), attachment: made.attachment.asAttachment,
                largeBlob: request.largeBlob == nil ? nil : ASAuthorizationPublicKeyCredentialLargeBlobRegistrationOutput(json.clientExtensionResults),
                prf: request.prf == nil ? nil : ASAuthorizationPublicKeyCredentialPRFRegistrationOutput(json.clientExtensionResults))
            return .success(ASAuthorization(provider: request.provider, credential: credential))
        } catch {
            return .failure(Self.authorizationError(error, immediatelyAvailableOnly: false))
        }
    }

    func assert(_ request: ASAuthorizationPlatformPublicKeyCredentialAssertionRequest,
                immediatelyAvailableOnly: Bool) -> Result<ASAuthorization, ASAuthorizationError> {
        let rpID = request.relyingPartyIdentifier
        if let refusal = association(rpID) ?? signInRefusal() { return .failure(refusal) }
        do {
            let signed = try verifyingOwner { person throws(SessionError) in
                try session.sign(SignRequest(device: device, caller: CallerContext(origin: "https://" + rpID, nativeApp: true),
                                             options: .json(PlatformOptions.request(request)), person: person))
            }
            return .success(try Self.assertion(signed, for: request))
        } catch let error as SessionError where error.name == .notHandled && !immediatelyAvailableOnly && person.action == .cancel {
            // No passkey here: iOS's sheet still shows, offering a passkey from a nearby device,
            // and the person dismisses it.
            return .failure(ASAuthorizationError(.canceled))
        } catch {
            return .failure(Self.authorizationError(error, immediatelyAvailableOnly: immediatelyAvailableOnly))
        }
    }

    /// iCloud Keychain's passkeys carry no attestation, and iOS refuses a platform registration that
    /// asks for one rather than answer `none` (docs/ios.md: "Passkeys do not support attestation.").
    static func attestationRefusal(_ request: ASAuthorizationPlatformPublicKeyCredentialRegistrationRequest) -> ASAuthorizationError? {
        request.attestationPreference == .none ? nil : ASAuthorizationError(.failed, failureReason: "Passkeys do not support attestation.")
    }

    /// iOS refuses a request for an RP ID the app is not associated with, before any UI.
    func association(_ rpID: String) -> ASAuthorizationError? {
        associationRefusal(rpID)
    }

    /// A request's failure as iOS reports it to a passkey request: canceled, matchedExcludedCredential,
    /// or failed with the reason (Apple: those three are all a passkey request sees).
    static func authorizationError(_ error: any Error, immediatelyAvailableOnly: Bool) -> ASAuthorizationError {
        guard let error = error as? SessionError else {
            return ASAuthorizationError(.failed, failureReason: "\(error)")
        }
        switch error.name {
        case .canceled: return ASAuthorizationError(.canceled)
        case .matchedExcludedCredential: return ASAuthorizationError(.matchedExcludedCredential)
        // Without a passkey here, a request that prefers immediately available ones shows nothing.
        // iOS's reason then (measured on iOS 26.5 and 27), unlike a dismissal's none.
        case .notHandled where immediatelyAvailableOnly: return ASAuthorizationError(.canceled, failureReason: "No credentials available for login.")
        default: return ASAuthorizationError(.failed, failureReason: error.message)
        }
    }
}

extension AuthenticatorAttachment {
    var asAttachment: ASAuthorizationPublicKeyCredentialAttachment {
        self == .platform ? .platform : .crossPlatform
    }
}
