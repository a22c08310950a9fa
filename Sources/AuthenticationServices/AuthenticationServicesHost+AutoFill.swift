import Foundation
import Session

/// An AutoFill-assisted request waiting on a phone (`performAutoFillAssistedRequests()`): the
/// conditional sign-in under it (``ConditionalSignIn``, the ceremony `authctl sign --mediation
/// conditional` and the server run), whose candidates the QuickType bar offers, until the person
/// picks one or the app cancels it. The controller is retained
/// until then, as iOS retains it "until the flow is either completed or canceled"; the phone is
/// not: a test that lets its host go while a request waits gets the host's directory removed
/// (a throw-away phone's), and the app's `cancel()` still ends the request.
@MainActor
final class AutoFillFlow {
    /// The waiting flow of each controller, for `cancel()`.
    private static var byController = [ObjectIdentifier: AutoFillFlow]()

    let controller: ASAuthorizationController
    /// Weak: the phone holds its waiting flow (``HostState/autoFill``), not the other way round.
    private(set) weak var host: AuthenticationServicesHost?
    let request: ASAuthorizationPlatformPublicKeyCredentialAssertionRequest
    var signIn: ConditionalSignIn
    /// The person closed the QuickType bar's suggestions (they come back when the field is focused again).
    var dismissed = false

    init(controller: ASAuthorizationController, host: AuthenticationServicesHost,
         request: ASAuthorizationPlatformPublicKeyCredentialAssertionRequest, signIn: ConditionalSignIn) {
        self.controller = controller
        self.host = host
        self.request = request
        self.signIn = signIn
    }

    /// The flow `controller` has waiting, if any.
    static func waiting(of controller: ASAuthorizationController) -> AutoFillFlow? {
        byController[ObjectIdentifier(controller)]
    }

    /// Starts waiting: the phone's QuickType bar is this flow's from now.
    func start() {
        Self.byController[ObjectIdentifier(controller)] = self
        host?.state.autoFill = self
    }

    /// Ends the flow with `outcome`, told to the controller's delegate now — before what ended it
    /// goes on (the app's `cancel()`) — or, for the person's pick,
    /// after the current turn. The flow is forgotten first, so that a delegate that performs a new
    /// AutoFill-assisted request (the app resuming AutoFill after a cancel) starts one of its own.
    func end(_ outcome: Result<ASAuthorization, ASAuthorizationError>, deferred: Bool = false) {
        signIn.cancel("the AutoFill-assisted request ended")
        if Self.byController[ObjectIdentifier(controller)] === self { Self.byController[ObjectIdentifier(controller)] = nil }
        if let host, host.state.autoFill === self { host.state.autoFill = nil }
        if deferred { controller.complete(outcome) } else { controller.deliver(outcome) }
    }
}

extension AuthenticationServicesHost {
    /// A passkey the QuickType bar offers for the AutoFill-assisted request waiting on this phone.
    public struct AutoFillSuggestion: Sendable, Equatable {
        public let credentialID: Data
        public let userName: String
        public let displayName: String
        /// The passkey's user handle.
        public let userID: Data
    }

    /// Whether an AutoFill-assisted request waits on this phone (once the requests performed before
    /// this call have started).
    public func isAutoFillWaiting() async -> Bool {
        await AutoFillStarts.settled()
        return (try? waitingAutoFill()) != nil
    }

    /// What the QuickType bar offers now for the AutoFill-assisted request waiting on this phone
    /// (``ConditionalSignIn/offered()``: the RP's passkeys on the device, only the allowed ones
    /// when the request names some; nothing while the person has the suggestions dismissed).
    /// `usage` when no request waits.
    public func autoFillSuggestions() async throws(SessionError) -> [AutoFillSuggestion] {
        await AutoFillStarts.settled()
        let flow = try waitingAutoFill()
        return try flow.signIn.offered().map {
            AutoFillSuggestion(credentialID: Data($0.id), userName: $0.userName, displayName: $0.userDisplayName, userID: Data($0.userHandle))
        }
    }

    /// The person picks the passkey `credentialID` in the QuickType bar: it signs as any sign-in
    /// on this phone (``person`` at its Face ID prompt), and the request's delegate gets the
    /// assertion, or how the ceremony failed. Throws when the pick signs nothing, and the request
    /// keeps waiting, its delegate told nothing: `notHandled` when the bar does not offer that
    /// passkey, `timedOut` when the person dismisses Face ID or lets it time out (iOS verifies
    /// the person before the pick reaches the request), `canceled` when Face ID does not match and
    /// the person dismisses the passcode that follows (``passcodeFallback``; typed, the pick signs);
    /// `usage` when no request waits.
    public func pick(credentialID: Data) async throws(SessionError) {
        try await pick(credentialID: credentialID, verifiedBy: person)
    }

    private func pick(credentialID: Data, verifiedBy person: PersonRequest) async throws(SessionError) {
        await AutoFillStarts.settled()
        let flow = try waitingAutoFill()
        do {
            let signed = try flow.signIn.pick(AccountChoice(credentialId: Array(credentialID)), person: person)
            flow.end(Result { try Self.assertion(signed, for: flow.request) }.mapError { Self.authorizationError($0, immediatelyAvailableOnly: false) },
                     deferred: true)
        } catch {
            // Not picked (the bar does not offer it): nothing happened.
            guard flow.signIn.state == .picked else { throw error }
            // Face ID dismissed: the conditional sign-in stays pending past it, and so does the request.
            if error.name == .timedOut {
                flow.signIn = try session.beginConditional(flow.signIn.request)
                throw error
            }
            // Face ID did not match (or is locked out): the passcode, as on a modal sheet
            // (verifyingOwner); dismissed, the request waits on, as after a dismissed Face ID.
            if error.name == .failed || error.name == .biometryLockout {
                flow.signIn = try session.beginConditional(flow.signIn.request)
                guard passcodeFallback == .enterPasscode else { throw SessionError(.canceled, "the passcode prompt was dismissed") }
                if try session.biometry(device: device).lockedOut { try session.change(.unlockBiometry, device: try session.deviceName(device)) }
                return try await pick(credentialID: credentialID, verifiedBy: PersonRequest(action: .approve, account: person.account,
                                                                                           instantTimeout: person.instantTimeout))
            }
            flow.end(.failure(Self.authorizationError(error, immediatelyAvailableOnly: false)), deferred: true)
        }
    }

    /// The person closes the QuickType bar's suggestions without picking (types instead): the
    /// request keeps waiting, its delegate hears nothing, and the bar offers nothing until the
    /// field is focused again (``focusAutoFillField()``).
    public func dismissAutoFill() async throws(SessionError) {
        await AutoFillStarts.settled()
        let flow = try waitingAutoFill()
        try flow.signIn.dismiss()
        flow.dismissed = true
    }

    /// The person focuses the app's user name field again: the QuickType bar offers the passkeys
    /// again.
    public func focusAutoFillField() async throws(SessionError) {
        await AutoFillStarts.settled()
        let flow = try waitingAutoFill()
        guard flow.dismissed else { return }
        flow.signIn = try session.beginConditional(flow.signIn.request)
        flow.dismissed = false
    }

    /// An AutoFill-assisted request begins on this phone: its checks (the app's association with
    /// the RP ID, another request of the app already waiting, the options' own) fail it now; then
    /// the conditional sign-in waits.
    func beginAutoFill(_ request: ASAuthorizationPlatformPublicKeyCredentialAssertionRequest, for controller: ASAuthorizationController) {
        let rpID = request.relyingPartyIdentifier
        if let refusal = association(rpID) ?? signInRefusal() { return controller.complete(.failure(refusal)) }
        // One armed request per app: a second fails at once and the first waits on (measured).
        if state.autoFill != nil { return controller.complete(.failure(Self.requestInProgress)) }
        do {
            let signIn = try session.beginConditional(SignRequest(
                device: device, caller: CallerContext(origin: "https://" + rpID, mediation: .conditional, nativeApp: true),
                options: .json(PlatformOptions.request(request)), person: person))
            AutoFillFlow(controller: controller, host: self, request: request, signIn: signIn).start()
        } catch {
            controller.complete(.failure(Self.authorizationError(error, immediatelyAvailableOnly: false)))
        }
    }

    /// iOS's answer to a request while another of the app is pending or waits in the QuickType
    /// bar (iOS 26.1's ASCAuthorizationTrafficController; measured: docs/ios.md).
    static let requestInProgress = ASAuthorizationError(.failed, failureReason: "Request already in progress for specified application identifier.")

    /// The flow waiting on this phone, its conditional sign-in begun again when its WebAuthn
    /// timeout has passed (an AutoFill-assisted request has none: it waits until the person picks
    /// or the app cancels); one whose conditional sign-in another request on the device took ends
    /// `.canceled`. `usage` when none waits.
    private func waitingAutoFill() throws(SessionError) -> AutoFillFlow {
        guard let flow = state.autoFill else {
            throw SessionError(.usage, "no AutoFill-assisted request is waiting on this phone: the app calls performAutoFillAssistedRequests() first")
        }
        switch flow.signIn.state {
        case .pending, .dismissed:
            return flow
        case .timedOut:
            flow.signIn = try session.beginConditional(flow.signIn.request)
            if flow.dismissed { try flow.signIn.dismiss() }
            return flow
        case .canceled, .picked:
            flow.end(.failure(ASAuthorizationError(.canceled)), deferred: true)
            throw SessionError(.usage, "the AutoFill-assisted request on this phone was canceled: another conditional sign-in on the device took its list")
        }
    }

    /// The assertion a sign-in answered, as iOS hands it to the delegate. Its `userID` is the
    /// passkey's user handle — every passkey here is discoverable, so the response names it, but
    /// WebAuthn's `userHandle` is `null` for an empty one: that is an empty `userID`, not `nil`,
    /// which app code reading the `Data!` would trap on.
    static func assertion(_ signed: CeremonyResponse, for request: ASAuthorizationPlatformPublicKeyCredentialAssertionRequest) throws -> ASAuthorization {
        let json = try ResponseJSON(signed.json)
        let credential = ASAuthorizationPlatformPublicKeyCredentialAssertion(
            rawClientDataJSON: try json.bytes("response", "clientDataJSON"), credentialID: try json.bytes("rawId"),
            rawAuthenticatorData: try json.bytes("response", "authenticatorData"), userID: (try? json.bytes("response", "userHandle")) ?? Data(),
            signature: try json.bytes("response", "signature"), attachment: signed.attachment.asAttachment,
            largeBlob: ASAuthorizationPublicKeyCredentialLargeBlobAssertionOutput(json.clientExtensionResults, operation: request.largeBlob?.operation),
            prf: request.prf == nil ? nil : ASAuthorizationPublicKeyCredentialPRFAssertionOutput(json.clientExtensionResults))
        return ASAuthorization(provider: request.provider, credential: credential)
    }
}
