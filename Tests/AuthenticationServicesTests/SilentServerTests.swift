import AuthenticationServices
import Foundation
import Session
import TestSupport
import Testing

/// A TCP port on 127.0.0.1 that takes connections (the kernel completes them) and never answers:
/// a domain's server that hangs.
private final class SilentListener {
    let port: Int
    private let socket: Int32

    init() throws {
        let fd = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
        let named = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        guard fd >= 0, bound == 0, listen(fd, 16) == 0, named == 0 else {
            if fd >= 0 { close(fd) }
            throw ListenerDidNotStart()
        }
        socket = fd
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    struct ListenerDidNotStart: Error {}

    /// The app's entitlement naming `domain`, whose file is fetched from this listener, 2 s at most.
    func associating(_ domain: String) throws -> AssociatedDomains {
        try AssociatedDomains(["webcredentials:" + domain],
                              fetching: SiteAssociationFetching(addresses: [domain: "127.0.0.1:\(port)"], timeoutSeconds: 2))
    }

    deinit { close(socket) }
}

extension PlatformPasskeyTests {
    /// A domain whose server takes the connection and never answers leaves the association
    /// unverified, with iOS's reason, once the fetch's timeout has passed — not before, and
    /// not never; the app's main actor runs meanwhile (the fetch is off it, as iOS's is in
    /// another process): a task queued on it runs while the request waits.
    @Test(.timeLimit(.minutes(1)))
    func aServerThatNeverAnswersLeavesTheAssociationUnverifiedAtItsTimeout() async throws {
        let directory = try TemporaryDirectory()
        let host = try associatedPhone(in: directory.path)
        defer { AuthenticationServicesHost.current = nil }
        let silent = try SilentListener()
        host.associatedDomains = try silent.associating("example.com")
        let log = DelegateLog()
        let started = ContinuousClock.now
        ASAuthorizationController.with([signInRequest()], log).performRequests()
        // A task on the main actor queued behind the request: it runs while the request waits for
        // the server (nothing answered yet) only if the fetch does not hold the main actor.
        let ranWhileWaiting = Task { @MainActor in log.calls == 0 }
        let outcome = await log.next()
        let waited = ContinuousClock.now - started
        #expect(await ranWhileWaiting.value, "the main actor was held until the request was answered")
        #expect(outcome.error?.userInfo[NSLocalizedFailureReasonErrorKey] as? String
            == "Unable to verify webcredentials association of TEAM123456.com.example.app with domain example.com. Please try again in a few seconds.")
        #expect(waited >= .seconds(2), "\(waited)")
        #expect(host.associatedDomains.log.last?.hasSuffix("Timeout was reached") == true, "\(host.associatedDomains.log)")
    }
}

extension PlatformPasskeyTests {
    /// While a request still fetches its association file, the one-request rule and `cancel()`
    /// hold as after: an AutoFill-assisted request performed while a modal one fetches fails
    /// "Request already in progress …", and an AutoFill-assisted request canceled before it
    /// waits in the QuickType bar ends `.canceled`, once.
    @Test(.timeLimit(.minutes(1)))
    func theOneRequestRuleAndCancelHoldWhileARequestFetches() async throws {
        let directory = try TemporaryDirectory()
        let host = try associatedPhone(in: directory.path)
        defer { AuthenticationServicesHost.current = nil }
        let silent = try SilentListener()
        host.associatedDomains = try silent.associating("example.com")
        let log = DelegateLog()
        let modal = ASAuthorizationController.with([signInRequest()], log)
        modal.performRequests()
        let autoFill = ASAuthorizationController.with([signInRequest()], log)
        autoFill.performAutoFillAssistedRequests()
        let first = await log.next(), second = await log.next()
        let refused = first.controller === autoFill ? first : second
        #expect(refused.controller === autoFill)
        #expect(refused.error?.userInfo[NSLocalizedFailureReasonErrorKey] as? String == "Request already in progress for specified application identifier.")

        let canceled = ASAuthorizationController.with([signInRequest()], log)
        canceled.performAutoFillAssistedRequests()
        canceled.cancel()
        let ended = await log.next()
        #expect(ended.controller === canceled && ended.error == ASAuthorizationError(.canceled))
        #expect(await !host.isAutoFillWaiting())
        #expect(log.calls == 3)
    }
}
