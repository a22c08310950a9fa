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
    /// `performRequests(options:)` of a controller on this phone: the sheet is modal, it takes the
    /// place of the AutoFill-assisted request waiting here, and offers what the requests ask for
    /// together — a passkey or a saved password, whichever the person picks.
    func perform(_ requests: [ASAuthorizationRequest], options: ASAuthorizationController.RequestOptions) -> Result<ASAuthorization, ASAuthorizationError> {
        guard !requests.isEmpty else { return .failure(ASAuthorizationError(.failed, failureReason: "No authorization requests.")) }
        let kinds: RequestKinds
        do { kinds = try RequestKinds(requests) } catch { return .failure(error) }
        endAutoFillForModal()
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
        let passwords = offeredPasswords()
        let passkeys = assertion.map(offeredPasskeys) ?? false
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
        return .success(ASAuthorization(provider: request.provider, credential: picked.credential))
    }

    /// Whether the sheet of `request` lists a passkey of this phone: one of the RP's, an allowed
    /// one when the request names some.
    private func offeredPasskeys(_ request: ASAuthorizationPlatformPublicKeyCredentialAssertionRequest) -> Bool {
        let allowed = Set(request.allowedCredentials.map { Array($0.credentialID) })
        let held = (try? session.passkeys(device: device, rpId: request.relyingPartyIdentifier)) ?? []
        return held.contains { !$0.hidden && (allowed.isEmpty || allowed.contains($0.id)) }
    }
}
