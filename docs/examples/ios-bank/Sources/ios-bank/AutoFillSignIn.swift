import AuthenticationServices
import Foundation

/// The sign-in screen's passkey AutoFill (conditional UI): while the screen shows, an
/// AutoFill-assisted request of the bank's discoverable options waits under the user name field,
/// and the passkey the person picks in the QuickType bar signs them in. Its delegate has the
/// app's switch: `.canceled` resumes AutoFill with fresh options (the guide's
/// `handleUserCanceled`), unless the app canceled the request itself to show its sign-in sheet.
@MainActor
final class AutoFillSignIn: NSObject, ASAuthorizationControllerDelegate {
    private let service: BankAuthService
    private var controller: ASAuthorizationController?
    /// The app canceled the request for its modal sheet: AutoFill is not resumed meanwhile.
    private var yieldingToSheet = false
    /// How the app's handling of each delegate call ended, for the flows to await in order.
    private var handled = [Result<Void, any Error>]()
    private var awaiting: CheckedContinuation<Void, any Error>?

    init(service: BankAuthService) {
        self.service = service
    }

    /// The guide's `beginConditionalSignIn()`: the bank's discoverable options, performed as an
    /// AutoFill-assisted request, which returns at once and waits for the person.
    func begin() async throws {
        let controller = ASAuthorizationController(authorizationRequests: [try await service.signInRequest(username: nil)])
        controller.delegate = self
        self.controller = controller
        controller.performAutoFillAssistedRequests()
    }

    /// The app ends its waiting request itself (`cancel()`), to begin it again with fresh options:
    /// its delegate hears `.canceled`, and the switch resumes AutoFill.
    func refresh() {
        service.report("app", "cancel(): the sign-in options are a minute old")
        controller?.cancel()
    }

    /// The screen's passkey button: iOS lets an app have one request at a time, so the app ends
    /// its AutoFill request first and waits for its delegate's `.canceled` before showing the sheet.
    func yieldToSheet() async throws {
        guard let controller else { return }
        yieldingToSheet = true
        defer { yieldingToSheet = false }
        service.report("app", "cancel(): one request at a time, the AutoFill request ends before the sheet")
        controller.cancel()
        try await handledNext()
    }

    /// Returns once the app has handled the next call of the request's delegate (a pick sent to
    /// the bank, AutoFill resumed after a cancel); throws what the handling threw.
    func handledNext() async throws {
        if !handled.isEmpty { return try handled.removeFirst().get() }
        try await withCheckedThrowingContinuation { awaiting = $0 }
    }

    func authorizationController(controller: ASAuthorizationController, didCompleteWithAuthorization authorization: ASAuthorization) {
        self.controller = nil
        guard case .signed(let signed)? = try? Answer(authorization) else { return done(.failure(PasskeyFailure.notExpected)) }
        Task {
            do {
                try await service.finishSignIn(signed)
                done(.success(()))
            } catch {
                done(.failure(error))
            }
        }
    }

    func authorizationController(controller: ASAuthorizationController, didCompleteWithError error: any Error) {
        self.controller = nil
        let failure = PasskeyFailure(error)
        guard failure.handling == .userCanceled else { return done(.failure(failure)) }
        service.report("passkey-error", failure.description)
        if yieldingToSheet {
            service.report("app", "AutoFill ended: the sheet has the screen, AutoFill is not resumed")
            return done(.success(()))
        }
        service.report("app", failure.whatTheAppDoes)
        Task {
            do {
                try await begin()
                done(.success(()))
            } catch {
                done(.failure(error))
            }
        }
    }

    private func done(_ result: Result<Void, any Error>) {
        if let awaiting {
            self.awaiting = nil
            awaiting.resume(with: result)
        } else {
            handled.append(result)
        }
    }
}
