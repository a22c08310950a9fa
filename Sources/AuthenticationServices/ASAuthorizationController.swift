import Foundation

/// Receives a controller's outcome, on the main actor. Both methods are optional, as in Apple's
/// Objective-C protocol: the extension below answers for those a delegate leaves out.
@MainActor
public protocol ASAuthorizationControllerDelegate: NSObjectProtocol {
    func authorizationController(controller: ASAuthorizationController, didCompleteWithAuthorization authorization: ASAuthorization)
    func authorizationController(controller: ASAuthorizationController, didCompleteWithError error: any Error)
}

extension ASAuthorizationControllerDelegate {
    public func authorizationController(controller: ASAuthorizationController, didCompleteWithAuthorization authorization: ASAuthorization) {}
    public func authorizationController(controller: ASAuthorizationController, didCompleteWithError error: any Error) {}
}

/// Where the system would show its sheet. Nothing is shown here: the person at the prompt is the
/// host's ``AuthenticationServicesHost/person``.
@MainActor
public protocol ASAuthorizationControllerPresentationContextProviding: NSObjectProtocol {
    func presentationAnchor(for controller: ASAuthorizationController) -> ASPresentationAnchor
}

/// A stand-in for the window a sheet is anchored to (`UIWindow` on iOS, `NSWindow` on macOS).
open class ASPresentationAnchor: NSObject {}

/// Performs a provider's requests and tells its delegate, on the main actor, how they ended.
/// `performRequests()` returns at once; the ceremony runs on the main actor afterwards, on the
/// host's device, and the delegate hears of it once.
public final class ASAuthorizationController: NSObject, @unchecked Sendable {
    /// Options for `performRequests(options:)`.
    public struct RequestOptions: OptionSet, Sendable, Hashable {
        public let rawValue: UInt
        public init(rawValue: UInt) { self.rawValue = rawValue }

        /// Sign in only with a passkey already on this device; with none, end `.canceled` without
        /// showing anything (no offer of another device).
        public static let preferImmediatelyAvailableCredentials = RequestOptions(rawValue: 1 << 0)
    }

    public let authorizationRequests: [ASAuthorizationRequest]
    public weak var delegate: (any ASAuthorizationControllerDelegate)?
    public weak var presentationContextProvider: (any ASAuthorizationControllerPresentationContextProviding)?

    /// This controller's flow: between `performRequests` and the delegate's call.
    let lock = NSLock()
    var flowPending = false
    var canceled = false

    public init(authorizationRequests: [ASAuthorizationRequest]) {
        self.authorizationRequests = authorizationRequests
    }

    public func performRequests() {
        performRequests(options: [])
    }

    public func performRequests(options: RequestOptions = []) {
        // One request at a time on the device: another one while this is pending fails, as on iOS,
        // with its reason (iOS 26.1's ASCAuthorizationTrafficController, core code 1 → 1004).
        let admitted = PendingRequest.begin()
        lock.withLock {
            flowPending = true
            canceled = false
        }
        Task { @MainActor in
            let outcome: Result<ASAuthorization, ASAuthorizationError>
            if !admitted {
                outcome = .failure(AuthenticationServicesHost.requestInProgress)
            } else {
                defer { PendingRequest.end() }
                if let host = AuthenticationServicesHost.current {
                    // A password request's sheet checks every domain a password is saved for.
                    let passwords = self.authorizationRequests.contains { $0 is ASAuthorizationPasswordRequest }
                    await host.fetchAssociations(for: self.relyingPartyIdentifiers + (passwords ? host.state.passwords.keys.sorted() : []))
                }
                outcome = self.lock.withLock({ self.canceled }) ? .failure(ASAuthorizationError(.canceled)) : self.perform(options: options)
            }
            self.lock.withLock { self.flowPending = false }
            switch outcome {
            case .success(let authorization):
                self.delegate?.authorizationController(controller: self, didCompleteWithAuthorization: authorization)
            case .failure(let error):
                self.delegate?.authorizationController(controller: self, didCompleteWithError: error)
            }
        }
    }

    /// Ends a flow not yet answered with ``ASAuthorizationError/Code/canceled``: a modal one not yet
    /// performed, or an AutoFill-assisted one that waits.
    public func cancel() {
        lock.withLock { if flowPending { canceled = true } }
        Task { @MainActor in Self.cancelAutoFill(of: self) }
    }

    /// The RP IDs of the passkey requests, whose association files are fetched before they run.
    var relyingPartyIdentifiers: [String] {
        authorizationRequests.compactMap {
            ($0 as? ASAuthorizationPlatformPublicKeyCredentialRegistrationRequest)?.relyingPartyIdentifier
                ?? ($0 as? ASAuthorizationPlatformPublicKeyCredentialAssertionRequest)?.relyingPartyIdentifier
        }
    }

    @MainActor
    private func perform(options: RequestOptions) -> Result<ASAuthorization, ASAuthorizationError> {
        guard let host = AuthenticationServicesHost.current else {
            return .failure(ASAuthorizationError(.failed, failureReason: "No device: set AuthenticationServicesHost.current first."))
        }
        return host.perform(authorizationRequests, options: options)
    }
}

/// Whether a request is pending on the device, from `performRequests` until its delegate call.
enum PendingRequest {
    private static let lock = NSLock()
    nonisolated(unsafe) private static var pending = false

    static func begin() -> Bool {
        lock.withLock {
            if pending { return false }
            pending = true
            return true
        }
    }

    /// Whether a modal request is pending now.
    static var isPending: Bool { lock.withLock { pending } }

    static func end() {
        lock.withLock { pending = false }
    }
}
