import Foundation
import Session

/// The requests of one controller, sorted as iOS sorts them before it asks anything
/// (ASAuthorizationController's `_requestContextWithRequests:error:`): one of each kind at most, a
/// registration alone.
struct RequestKinds {
    static let duplicates = "Found duplicate requests. Only one of each type of request is currently supported."
    static let registrationWithOthers = "Registration requests cannot be used with other types of requests."

    var registration: ASAuthorizationPlatformPublicKeyCredentialRegistrationRequest?
    var assertion: ASAuthorizationPlatformPublicKeyCredentialAssertionRequest?
    var password: ASAuthorizationPasswordRequest?

    init(_ requests: [ASAuthorizationRequest]) throws(ASAuthorizationError) {
        for request in requests {
            switch request {
            case let r as ASAuthorizationPlatformPublicKeyCredentialRegistrationRequest:
                guard registration == nil else { throw Self.failed(Self.duplicates) }
                registration = r
            case let a as ASAuthorizationPlatformPublicKeyCredentialAssertionRequest:
                guard assertion == nil else { throw Self.failed(Self.duplicates) }
                assertion = a
            case let p as ASAuthorizationPasswordRequest:
                guard password == nil else { throw Self.failed(Self.duplicates) }
                password = p
            default:
                throw Self.failed("Only platform passkey and password requests are supported.")
            }
        }
        if registration != nil, assertion != nil || password != nil { throw Self.failed(Self.registrationWithOthers) }
    }

    private static func failed(_ reason: String) -> ASAuthorizationError {
        ASAuthorizationError(.failed, failureReason: reason)
    }
}

extension AuthenticationServicesHost {
    /// `performRequests(options:)` of a controller on this phone. The first platform registration
    /// request in the conditional style is performed alone, without UI (iOS drops the others:
    /// ASAuthorizationController's `performRequestsWithOptions:`). Otherwise the sheet is modal,
    /// and offers what the requests ask for together — a passkey or a saved password, whichever the
    /// person picks; while an AutoFill-assisted request of the app waits, it fails at once with
    /// iOS's reason and the AutoFill request waits on (measured on iOS 26.5 and 27: docs/ios.md).
    func perform(_ requests: [ASAuthorizationRequest], options: ASAuthorizationController.RequestOptions) -> Result<ASAuthorization, ASAuthorizationError> {
        if let first = requests.lazy.compactMap({ $0 as? ASAuthorizationPlatformPublicKeyCredentialRegistrationRequest }).first,
           first.requestStyle == .conditional {
            return registerConditionally(first)
        }
        guard !requests.isEmpty else { return .failure(ASAuthorizationError(.failed, failureReason: "No authorization requests.")) }
        let kinds: RequestKinds
        do { kinds = try RequestKinds(requests) } catch { return .failure(error) }
        if state.autoFill != nil { return .failure(Self.requestInProgress) }
        let immediatelyAvailableOnly = options.contains(.preferImmediatelyAvailableCredentials)
        switch (kinds.registration, kinds.assertion, kinds.password) {
        case (let registration?, _, _):
            return register(registration)
        case (nil, let assertion?, nil):
            return assert(assertion, immediatelyAvailableOnly: immediatelyAvailableOnly)
        case (nil, let assertion, let password?):
            return sheet(assertion, password, immediatelyAvailableOnly: immediatelyAvailableOnly)
        case (nil, nil, nil):
            return .failure(ASAuthorizationError(.failed, failureReason: "No authorization requests."))
        }
    }

    /// A sheet of the saved passwords of the app's domains, and of the RP's passkeys on this phone
    /// when an assertion request is beside: the person picks one (``sheetPick``), and the
    /// authorization is of the kind picked. With nothing to offer, a password request alone ends
    /// `.canceled` without UI, as iOS cancels a request that matches no credential ("No credentials
    /// available for login."); beside an assertion request the sheet is the assertion's.
    private func sheet(_ assertion: ASAuthorizationPlatformPublicKeyCredentialAssertionRequest?, _ request: ASAuthorizationPasswordRequest,
                       immediatelyAvailableOnly: Bool) -> Result<ASAuthorization, ASAuthorizationError> {
        if let assertion, let refusal = association(assertion.relyingPartyIdentifier) { return .failure(refusal) }
        let accounts = assertion.map(offeredPasskeys) ?? []
        let passkeys = !accounts.isEmpty
        // An account with a passkey here is offered as its passkey alone (measured on iOS 27: with a
        // passkey and a password of one account, "the sheet offered only the passkey").
        let passwords = offeredPasswords().filter { !accounts.contains($0.credential.user) }
        let wanted: (domain: String, credential: ASPasswordCredential)? = switch sheetPick {
        case .password(let user?): passwords.first { $0.credential.user == user } ?? (passkeys ? nil : passwords.first)
        case .password(nil): passwords.first
        case .passkey: passkeys ? nil : passwords.first
        }
        guard let picked = wanted else {
            if let assertion { return assert(assertion, immediatelyAvailableOnly: immediatelyAvailableOnly) }
            return .failure(ASAuthorizationError(.canceled, failureReason: "No credentials available for login."))
        }
        guard person.action != .cancel else { return .failure(ASAuthorizationError(.canceled)) }
        signedIn(picked.credential, at: picked.domain)
        return .success(ASAuthorization(provider: request.provider, credential: picked.credential))
    }

    /// The user names of the passkeys of this phone the sheet of `request` lists: the RP's, the
    /// allowed ones when the request names some.
    private func offeredPasskeys(_ request: ASAuthorizationPlatformPublicKeyCredentialAssertionRequest) -> Set<String> {
        let allowed = Set(request.allowedCredentials.map { Array($0.credentialID) })
        let held = (try? session.passkeys(device: device, rpId: request.relyingPartyIdentifier)) ?? []
        return Set(held.filter { !$0.hidden && (allowed.isEmpty || allowed.contains($0.id)) }.map(\.userName))
    }

    /// The automatic passkey upgrade (iOS 18, `requestStyle: .conditional`): a passkey made
    /// without UI, without asking the person (UP and UV 0), only when the app saw a password
    /// sign-in of the request's `name` within ``conditionalRegistrationWindow``, a password is
    /// saved for that name at the RP ID, and the phone holds no passkey of that name there.
    /// Otherwise it ends `.canceled` without UI, the error iOS's credential manager answers when
    /// its conditions are not met (docs/ios.md). In iOS's order: the recent sign-in first, then
    /// the phone's ability to make passkeys — iCloud Keychain's preflight, whose error a modal
    /// registration gets too (ASCAgent.mm, `_requestConditionalRegistrationOnProvider:…`) — then
    /// the password and the passkeys held.
    private func registerConditionally(_ request: ASAuthorizationPlatformPublicKeyCredentialRegistrationRequest) -> Result<ASAuthorization, ASAuthorizationError> {
        let rpID = request.relyingPartyIdentifier
        if let refusal = association(rpID) ?? Self.attestationRefusal(request) { return .failure(refusal) }
        guard signedInRecently(request.name) else { return .failure(ASAuthorizationError(.canceled)) }
        if let refusal = creationRefusal() { return .failure(refusal) }
        let held = (try? session.passkeys(device: device, rpId: rpID)) ?? []
        guard savedPasswords(domain: rpID).contains(where: { $0.user == request.name }), !held.contains(where: { $0.userName == request.name }) else {
            return .failure(ASAuthorizationError(.canceled))
        }
        do {
            let made = try session.register(RegisterRequest(
                device: device, caller: CallerContext(origin: "https://" + rpID, mediation: .conditional, recentPasswordSignIn: true, nativeApp: true),
                options: .json(Self.withoutRequiredVerification(PlatformOptions.creation(request))), person: person))
            let json = try ResponseJSON(made.json)
            let credential = ASAuthorizationPlatformPublicKeyCredentialRegistration(
                rawClientDataJSON: try json.bytes("response", "clientDataJSON"), credentialID: try json.bytes("rawId"),
                rawAttestationObject: try json.bytes("response", "attestationObject"), attachment: made.attachment.asAttachment)
            return .success(ASAuthorization(provider: request.provider, credential: credential))
        } catch {
            return .failure(Self.authorizationError(error, immediatelyAvailableOnly: false))
        }
    }

    /// Creation options whose `userVerification: required` is `preferred`: iOS does not refuse a
    /// conditional registration that requires user verification, it makes the passkey with UV 0.
    private static func withoutRequiredVerification(_ options: [UInt8]) -> [UInt8] {
        guard var object = (try? JSONSerialization.jsonObject(with: Data(options))) as? [String: Any],
              var selection = object["authenticatorSelection"] as? [String: Any],
              selection["userVerification"] as? String == "required" else { return options }
        selection["userVerification"] = "preferred"
        object["authenticatorSelection"] = selection
        return (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])).map(Array.init) ?? options
    }
}
