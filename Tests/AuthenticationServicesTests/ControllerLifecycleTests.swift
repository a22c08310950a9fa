import AuthenticationServices
import Dispatch
import Foundation
import Session
import TestSupport
import Testing

/// A delegate that counts its calls and checks where each arrives — on the main actor, on the
/// main queue, as UIKit code expects — and keeps no controller, so a test can see one go.
@MainActor
private final class CountingDelegate: NSObject, ASAuthorizationControllerDelegate {
    private(set) var outcomes = [Result<ASAuthorization, ASAuthorizationError>]()
    private var waiting: (count: Int, continuation: CheckedContinuation<Void, Never>)?
    var then: (() -> Void)?

    func authorizationController(controller: ASAuthorizationController, didCompleteWithAuthorization authorization: ASAuthorization) {
        hear(.success(authorization))
    }

    func authorizationController(controller: ASAuthorizationController, didCompleteWithError error: any Error) {
        hear(.failure(error as? ASAuthorizationError ?? ASAuthorizationError(.unknown)))
    }

    private func hear(_ outcome: Result<ASAuthorization, ASAuthorizationError>) {
        MainActor.assertIsolated()
        dispatchPrecondition(condition: .onQueue(.main))
        outcomes.append(outcome)
        then?()
        if let waiting, outcomes.count >= waiting.count {
            self.waiting = nil
            waiting.continuation.resume()
        }
    }

    /// Returns once `count` calls have been heard in all (the test's time limit ends a wait that lasts).
    func heard(_ count: Int) async {
        guard outcomes.count < count else { return }
        await withCheckedContinuation { waiting = (count, $0) }
    }

    var errors: [ASAuthorizationError] {
        outcomes.compactMap { if case .failure(let error) = $0 { error } else { nil } }
    }
}

/// Yields the main actor until `condition` holds, or a minute has passed.
@MainActor
private func until(_ condition: () -> Bool) async {
    let deadline = ContinuousClock.now + .seconds(60)
    while !condition(), ContinuousClock.now < deadline { await Task.yield() }
}

private let inProgress = "Request already in progress for specified application identifier."

extension PlatformPasskeyTests {
    /// A second request while one is pending fails `.failed` with iOS's reason (the traffic
    /// controller of iOS 26.1, ASCAuthorizationTrafficController.mm), and the first is answered;
    /// a request that failed or was canceled leaves nothing pending: the next one is answered.
    @Test(.timeLimit(.minutes(1)))
    func aSecondRequestWhileOneIsPendingFailsWithIOSsReasonAndAFailureLeavesNothingPending() async throws {
        let directory = try TemporaryDirectory()
        let host = try associatedPhone(in: directory.path)
        defer { AuthenticationServicesHost.current = nil }
        let alice = try await registerPasskey("alice")

        let first = CountingDelegate(), second = CountingDelegate()
        let one = ASAuthorizationController(authorizationRequests: [signInRequest("one")]), two = ASAuthorizationController(authorizationRequests: [signInRequest("two")])
        one.delegate = first
        two.delegate = second
        one.performRequests()
        two.performRequests()
        await first.heard(1)
        await second.heard(1)
        #expect(try (first.outcomes[0].get().credential as? ASAuthorizationPlatformPublicKeyCredentialAssertion)?.credentialID == alice.id)
        #expect(second.errors == [ASAuthorizationError(.failed, userInfo: [NSLocalizedFailureReasonErrorKey: inProgress])])

        // Canceled by the person, failed with no phone, canceled by the app: none leaves a request pending.
        let log = CountingDelegate()
        host.person = PersonRequest(action: .cancel)
        ASAuthorizationController.withDelegate([signInRequest()], log).performRequests()
        await log.heard(1)
        host.person = PersonRequest()
        AuthenticationServicesHost.current = nil
        ASAuthorizationController.withDelegate([signInRequest()], log).performRequests()
        await log.heard(2)
        AuthenticationServicesHost.current = host
        let canceled = ASAuthorizationController.withDelegate([signInRequest()], log)
        canceled.performRequests()
        canceled.cancel()
        await log.heard(3)
        ASAuthorizationController.withDelegate([signInRequest()], log).performRequests()
        await log.heard(4)
        #expect(log.errors.map(\.code) == [.canceled, .failed, .canceled])
        #expect(try (log.outcomes[3].get().credential as? ASAuthorizationPlatformPublicKeyCredentialAssertion)?.credentialID == alice.id)
    }

    /// Each flow is answered once, on the main actor and the main queue: a controller the app does
    /// not keep is kept until its delegate is called, then let go; `cancel()` twice, or after the
    /// answer, adds no call; `performRequests()` twice on one controller is two flows, the second
    /// refused while the first is pending.
    @Test(.timeLimit(.minutes(1)))
    func eachFlowIsAnsweredOnceOnTheMainQueueAndTheControllerIsKeptUntilThen() async throws {
        let directory = try TemporaryDirectory()
        _ = try associatedPhone(in: directory.path)
        defer { AuthenticationServicesHost.current = nil }
        _ = try await registerPasskey("alice")
        let log = CountingDelegate()

        weak var released: ASAuthorizationController?
        do {
            let controller = ASAuthorizationController.withDelegate([signInRequest()], log)
            controller.performRequests()
            released = controller
        }
        await log.heard(1)
        #expect(log.errors.isEmpty)
        await until { released == nil }
        #expect(released == nil)

        let canceled = ASAuthorizationController.withDelegate([signInRequest()], log)
        canceled.performRequests()
        canceled.cancel()
        canceled.cancel()
        await log.heard(2)
        canceled.cancel()
        let twice = ASAuthorizationController.withDelegate([signInRequest()], log)
        twice.performRequests()
        twice.performRequests()
        await log.heard(4)
        // Calls are made in order on the main queue: one more flow answered, no stray call came before it.
        let after = CountingDelegate()
        ASAuthorizationController.withDelegate([signInRequest()], after).performRequests()
        await after.heard(1)
        #expect(log.outcomes.count == 4)
        #expect(log.errors == [ASAuthorizationError(.canceled), ASAuthorizationError(.failed, userInfo: [NSLocalizedFailureReasonErrorKey: inProgress])])
    }

    /// A delegate may perform the next request from its callback (the request before is no longer
    /// pending then): a chain of three is answered in order, none refused.
    @Test(.timeLimit(.minutes(1)))
    func aDelegateMayPerformTheNextRequestFromItsCallback() async throws {
        let directory = try TemporaryDirectory()
        _ = try associatedPhone(in: directory.path)
        defer { AuthenticationServicesHost.current = nil }
        _ = try await registerPasskey("alice")
        let log = CountingDelegate()
        var started = 1
        log.then = {
            guard started < 3 else { return }
            started += 1
            ASAuthorizationController.withDelegate([signInRequest("next \(started)")], log).performRequests()
        }
        ASAuthorizationController.withDelegate([signInRequest()], log).performRequests()
        await log.heard(3)
        #expect(log.errors.isEmpty && log.outcomes.count == 3)
    }
}

extension ASAuthorizationController {
    /// A controller of `requests` whose delegate is `delegate`.
    @MainActor
    fileprivate static func withDelegate(_ requests: [ASAuthorizationRequest], _ delegate: some ASAuthorizationControllerDelegate) -> ASAuthorizationController {
        let controller = ASAuthorizationController(authorizationRequests: requests)
        controller.delegate = delegate
        return controller
    }
}
