import AuthenticationServices
import Foundation
import Testing

/// The bridged error as app code meets it: `error as NSError`, its user info, the words of
/// `localizedDescription` as iOS shows them, and the two ways apps catch it.
@Suite struct AuthorizationErrorTests {
    private let reason = "Application with identifier V46X94865S.app.snapauth.PassKeyExample is not associated with domain demo.snapauth.app"

    /// A `.failed` error with a failure reason: `NSError` of Apple's domain and code whose user info
    /// holds the reason, and "The operation couldn’t be completed. <reason>" (SnapAuth's print of
    /// iOS's error).
    @Test func aFailureReasonIsInTheUserInfoAndTheDescription() {
        let error = ASAuthorizationError(.failed, userInfo: [NSLocalizedFailureReasonErrorKey: reason])
        #expect(error.code == .failed)
        #expect(error.userInfo.count == 1)
        #expect(error.userInfo[NSLocalizedFailureReasonErrorKey] as? String == reason)
        #expect(error.errorUserInfo[NSLocalizedFailureReasonErrorKey] as? String == reason)

        let bridged = error as NSError
        #expect(bridged.domain == "com.apple.AuthenticationServices.AuthorizationError")
        #expect(bridged.code == 1004)
        #expect(bridged.userInfo[NSLocalizedFailureReasonErrorKey] as? String == reason)
        #expect(bridged.localizedFailureReason == reason)
        #expect(bridged.localizedDescription == "The operation couldn\u{2019}t be completed. " + reason)
        #expect(error.localizedDescription == "The operation couldn\u{2019}t be completed. " + reason)
        let any: any Error = error
        #expect(any.localizedDescription == "The operation couldn\u{2019}t be completed. " + reason)
    }

    /// Without a reason, Foundation's words for the domain and code, as apps log a dismissed sheet:
    /// "The operation couldn’t be completed. (com.apple.AuthenticationServices.AuthorizationError error 1001.)".
    @Test func withoutAReasonTheDescriptionNamesTheDomainAndCode() {
        let error = ASAuthorizationError(.canceled)
        #expect(error.userInfo.isEmpty)
        #expect((error as NSError).userInfo[NSLocalizedFailureReasonErrorKey] == nil)
        #expect(error.localizedDescription
            == "The operation couldn\u{2019}t be completed. (com.apple.AuthenticationServices.AuthorizationError error 1001.)")
        #expect((ASAuthorizationError(.unknown) as NSError).localizedDescription
            == "The operation couldn\u{2019}t be completed. (com.apple.AuthenticationServices.AuthorizationError error 1000.)")
        #expect(ASAuthorizationError(.canceled) == ASAuthorizationError(.canceled, userInfo: [:]))
        #expect(ASAuthorizationError(.failed, userInfo: [NSLocalizedFailureReasonErrorKey: reason])
            != ASAuthorizationError(.failed, userInfo: [NSLocalizedFailureReasonErrorKey: "another reason"]))
        #expect(ASAuthorizationError(.failed) != ASAuthorizationError(.canceled))
    }

    /// `catch ASAuthorizationError.canceled` matches by code; `catch let e as ASAuthorizationError
    /// where e.code == .failed` binds the error; neither matches another code.
    @Test func appsCatchItByCodeOrByType() {
        func thrown(_ error: ASAuthorizationError) -> String {
            do {
                throw error
            } catch ASAuthorizationError.canceled {
                return "canceled"
            } catch let failure as ASAuthorizationError where failure.code == .failed {
                return "failed: " + (failure.userInfo[NSLocalizedFailureReasonErrorKey] as? String ?? "")
            } catch ASAuthorizationError.matchedExcludedCredential {
                return "excluded"
            } catch {
                return "other \((error as NSError).code)"
            }
        }
        #expect(thrown(ASAuthorizationError(.canceled)) == "canceled")
        #expect(thrown(ASAuthorizationError(.failed, userInfo: [NSLocalizedFailureReasonErrorKey: reason])) == "failed: " + reason)
        #expect(thrown(ASAuthorizationError(.matchedExcludedCredential)) == "excluded")
        #expect(thrown(ASAuthorizationError(.notHandled)) == "other 1003")
    }
}
