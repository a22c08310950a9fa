import Foundation

extension ASAuthorizationController {
    /// Waits, without UI, for the person to pick a passkey in the QuickType bar of the app's user
    /// name field (iOS 16). Only platform assertion requests support it: any other request fails it
    /// `.failed` ("… does not support AutoFill assistance."). Returns at once; the request then
    /// waits on the host's phone until the person picks (``AuthenticationServicesHost/pick(credentialID:)``:
    /// the delegate gets the assertion) or the app calls ``cancel()`` (`.canceled`). While it waits,
    /// another request of the app — modal or AutoFill-assisted — fails `.failed` ("Request already
    /// in progress …") and this one waits on, as iOS answers. Nothing blocks while it waits.
    public func performAutoFillAssistedRequests() {
        AutoFillStarts.begin()
        // One request of the app at a time: a modal one pending now (it may still be fetching its
        // association files) refuses it at once, as iOS does.
        let refused = PendingRequest.isPending
        // Until it waits in the QuickType bar (its association files fetched), `cancel()` is
        // remembered here, as for a modal request not yet performed.
        lock.withLock {
            flowPending = true
            canceled = false
        }
        Task { @MainActor in
            defer { AutoFillStarts.end() }
            if !refused { await AuthenticationServicesHost.current?.fetchAssociations(for: self.relyingPartyIdentifiers) }
            let canceled = self.lock.withLock {
                self.flowPending = false
                return self.canceled
            }
            if refused { return self.complete(.failure(AuthenticationServicesHost.requestInProgress)) }
            if canceled { return self.complete(.failure(ASAuthorizationError(.canceled))) }
            self.startAutoFill()
        }
    }

    @MainActor
    private func startAutoFill() {
        guard let host = AuthenticationServicesHost.current else {
            return complete(.failure(ASAuthorizationError(.failed, failureReason: "No device: set AuthenticationServicesHost.current first.")))
        }
        // iOS checks each request's support of the style before anything else (ASAuthorizationController.m).
        if let unsupported = authorizationRequests.first(where: { !($0 is ASAuthorizationPlatformPublicKeyCredentialAssertionRequest) }) {
            return complete(.failure(ASAuthorizationError(.failed, failureReason: "\(type(of: unsupported)) does not support AutoFill assistance.")))
        }
        guard let request = authorizationRequests.first as? ASAuthorizationPlatformPublicKeyCredentialAssertionRequest else {
            return complete(.failure(ASAuthorizationError(.failed, failureReason: "No authorization requests.")))
        }
        guard authorizationRequests.count == 1 else {
            return complete(.failure(ASAuthorizationError(.failed, failureReason: RequestKinds.duplicates)))
        }
        host.beginAutoFill(request, for: self)
    }

    /// Tells the delegate how a flow ended, on the main actor, after the current turn (iOS
    /// dispatches the call to the main queue).
    @MainActor
    func complete(_ outcome: Result<ASAuthorization, ASAuthorizationError>) {
        Task { @MainActor in self.deliver(outcome) }
    }

    /// Tells the delegate how a flow ended, now.
    @MainActor
    func deliver(_ outcome: Result<ASAuthorization, ASAuthorizationError>) {
        switch outcome {
        case .success(let authorization):
            delegate?.authorizationController(controller: self, didCompleteWithAuthorization: authorization)
        case .failure(let error):
            delegate?.authorizationController(controller: self, didCompleteWithError: error)
        }
    }

    /// `cancel()` of an AutoFill-assisted request that waits: it ends `.canceled`.
    @MainActor
    static func cancelAutoFill(of controller: ASAuthorizationController) {
        AutoFillFlow.waiting(of: controller)?.end(.failure(ASAuthorizationError(.canceled)))
    }
}

/// The AutoFill-assisted requests performed and not yet started on the main actor, so that what a
/// test asks the host about them waits for them to start, not for a guess of time.
enum AutoFillStarts {
    private static let lock = NSLock()
    nonisolated(unsafe) private static var starting = 0
    nonisolated(unsafe) private static var waiters = [CheckedContinuation<Void, Never>]()

    static func begin() {
        lock.withLock { starting += 1 }
    }

    static func end() {
        let ready = lock.withLock { () -> [CheckedContinuation<Void, Never>] in
            starting -= 1
            guard starting == 0 else { return [] }
            defer { waiters = [] }
            return waiters
        }
        ready.forEach { $0.resume() }
    }

    /// Returns once every request performed so far has started.
    static func settled() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = lock.withLock { () -> Bool in
                if starting == 0 { return true }
                waiters.append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }
}
