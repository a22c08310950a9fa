import AuthenticationServices
import Foundation
import Session
import TestSupport
import Testing

private let app = "ABCDE12345.com.example.app"

/// A phone of a throw-away account (in `directory`, PIN 1111) for the app, with these associated
/// domains; the host `current`.
@MainActor
private func phone(_ domains: AssociatedDomains, in directory: TemporaryDirectory) throws -> AuthenticationServicesHost {
    var pin = Array("1111".utf8), passphrase = Array("p".utf8)
    let session = try Session.create(AccountSpec(path: directory.path + "/vault-\(UInt32.random(in: 0...UInt32.max))",
                                                 passphrase: SecureBytes(consuming: &passphrase), kdf: .min,
                                                 devices: [AccountSpec.DeviceSpec(name: "iphone", pin: SecureBytes(consuming: &pin))],
                                                 keeping: .throwAway(storeInMemory: true)),
                                     people: KnownPeople(pins: ["iphone": "1111"], timeouts: .atOnce))
    let host = AuthenticationServicesHost(session: session, applicationIdentifier: app, associatedDomains: domains)
    AuthenticationServicesHost.current = host
    return host
}

/// A registration for `rpID` through the controller: nil when it succeeded, else its error.
@MainActor
private func registering(_ rpID: String) async -> NSError? {
    let provider = ASAuthorizationPlatformPublicKeyCredentialProvider(relyingPartyIdentifier: rpID)
    let request = provider.createCredentialRegistrationRequest(challenge: Data(repeating: 1, count: 32), name: "alice", userID: Data("alice".utf8))
    do {
        _ = try await PasskeyCoordinator().perform(request)
        return nil
    } catch {
        return error as NSError
    }
}

private func notAssociated(_ rpID: String) -> String {
    "Application with identifier \(app) is not associated with domain \(rpID)"
}

private func unverified(_ rpID: String) -> String {
    "Unable to verify webcredentials association of \(app) with domain \(rpID). Please try again in a few seconds."
}

/// The 1004 failure's reason, after checking it is one.
private func reason(_ error: NSError?) -> String? {
    guard let error else { return nil }
    #expect(error.domain == "com.apple.AuthenticationServices.AuthorizationError")
    #expect(error.code == 1004)
    return error.userInfo[NSLocalizedFailureReasonErrorKey] as? String
}

/// How many times the servers were asked for `host`'s association file.
private func fetches(of host: String, from server: SiteServer) -> Int {
    server.requests.filter { $0 == "https \(host) /.well-known/apple-app-site-association" }.count
}

extension PlatformPasskeyTests {
    /// The app's associated domains as iOS checks them: the entitlement's `webcredentials` entries,
    /// each domain's apple-app-site-association fetched over HTTPS from a real local server.
    @Suite @MainActor struct AssociatedDomainsTests {
        let server: SiteServer
        let directory: TemporaryDirectory

        init() throws {
            server = try SiteServer()
            directory = try TemporaryDirectory()
        }

        func phone(_ domains: AssociatedDomains) throws -> AuthenticationServicesHost {
            try AuthenticationServicesTests.phone(domains, in: directory)
        }

        /// Fetching from the test's server, whose CA the phone trusts, at the domains' addresses.
        func fetching() throws -> SiteAssociationFetching {
            try SiteAssociationFetching(trustingCertificatesIn: [server.caPath], addresses: server.addresses())
        }

        /// A file that lists the app associates its domain: fetched once, over HTTPS, from
        /// /.well-known/apple-app-site-association; one that does not fails with iOS's reason.
        @Test func aFileThatListsTheAppAssociatesItsDomainAndOneThatDoesNotRefusesIt() async throws {
            try server.serve("example.com", body: SiteServer.file(listing: ["OTHERTEAM1.com.example.app", app]))
            try server.serve("other.example", body: SiteServer.file(listing: ["OTHERTEAM1.com.example.app"]))
            let host = try phone(AssociatedDomains(["webcredentials:example.com", "webcredentials:other.example"], fetching: fetching()))
            defer { AuthenticationServicesHost.current = nil }

            #expect(await registering("example.com") == nil)
            #expect(reason(await registering("other.example")) == notAssociated("other.example"))
            #expect(fetches(of: "example.com", from: server) == 1)
            #expect(fetches(of: "other.example", from: server) == 1)
            #expect(host.associatedDomains.log.contains { $0.hasSuffix("webcredentials.apps does not list \(app)") })
        }

        /// A file that cannot be had or read — missing (404), not JSON, `webcredentials.apps` not a
        /// list, a redirect (not followed), over 128 KB — leaves the association unverified, with
        /// iOS's reason, and is not kept: the next request fetches again.
        @Test func aMissingOrBadFileLeavesTheAssociationUnverifiedUntilItIsFixed() async throws {
            let host = try phone(AssociatedDomains(["webcredentials:example.com"], fetching: fetching()))
            defer { AuthenticationServicesHost.current = nil }

            #expect(reason(await registering("example.com")) == unverified("example.com"))  // nothing served: 404
            try server.serve("example.com", body: "{\"webcredentials\": {\"apps\": [\"\(app)\"]")
            #expect(reason(await registering("example.com")) == unverified("example.com"))
            try server.serve("example.com", body: "{\"webcredentials\": {\"apps\": \"\(app)\"}}")
            #expect(reason(await registering("example.com")) == unverified("example.com"))
            try server.serve("example.com", status: 301, body: "", headers: ["Location": "https://other.example/.well-known/apple-app-site-association"])
            try server.serve("other.example", body: SiteServer.file(listing: [app]))
            #expect(reason(await registering("example.com")) == unverified("example.com"))
            #expect(fetches(of: "other.example", from: server) == 0)
            let listing = SiteServer.file(listing: [app])
            try server.serve("example.com", body: listing + String(repeating: " ", count: AssociatedDomains.fileLimit - listing.utf8.count + 1))
            #expect(reason(await registering("example.com")) == unverified("example.com"))
            #expect(host.associatedDomains.log.last?.hasSuffix("larger than \(AssociatedDomains.fileLimit) bytes") == true)

            // The limit itself is allowed; and the fixed file is fetched without a reinstall.
            try server.serve("example.com", body: listing + String(repeating: " ", count: AssociatedDomains.fileLimit - listing.utf8.count))
            #expect(await registering("example.com") == nil)
            #expect(fetches(of: "example.com", from: server) == 6)
        }

        /// A verdict on a fetched file is kept until the app is reinstalled, as on iOS: a file
        /// changed on the server changes nothing before.
        @Test func aVerdictIsKeptUntilTheAppIsReinstalled() async throws {
            try server.serve("example.com", body: SiteServer.file(listing: [app]))
            let host = try phone(AssociatedDomains(["webcredentials:example.com"], fetching: fetching()))
            defer { AuthenticationServicesHost.current = nil }

            #expect(await registering("example.com") == nil)
            try server.serve("example.com", body: SiteServer.file(listing: []))
            #expect(await registering("example.com") == nil)
            #expect(fetches(of: "example.com", from: server) == 1)
            host.associatedDomains.reinstallApp()
            #expect(reason(await registering("example.com")) == notAssociated("example.com"))
            #expect(fetches(of: "example.com", from: server) == 2)
        }

        /// `*.example.com` names every subdomain, with example.com's file (TN3155), but not
        /// example.com itself; the longest entry that names an RP ID decides.
        @Test func aWildcardEntryNamesTheSubdomainsWithItsDomainsFile() async throws {
            try server.serve("example.com", body: SiteServer.file(listing: [app]))
            _ = try phone(AssociatedDomains(["webcredentials:*.example.com"], fetching: fetching()))
            defer { AuthenticationServicesHost.current = nil }

            #expect(await registering("login.example.com") == nil)
            #expect(await registering("a.b.example.com") == nil)
            #expect(fetches(of: "example.com", from: server) == 1)
            #expect(fetches(of: "login.example.com", from: server) == 0)
            #expect(reason(await registering("example.com")) == notAssociated("example.com"))
            #expect(reason(await registering("notexample.com")) == notAssociated("notexample.com"))

            // login.example.com's own entry wins over the wildcard: its own file, which does not list the app.
            try server.serve("login.example.com", body: SiteServer.file(listing: []))
            _ = try phone(AssociatedDomains(["webcredentials:*.example.com", "webcredentials:login.example.com"], fetching: fetching()))
            #expect(reason(await registering("login.example.com")) == notAssociated("login.example.com"))
            #expect(await registering("www.example.com") == nil)
        }

        /// The RP ID must be an associated domain itself: an entry for a subdomain does not
        /// associate its registrable parent, as a browser's origin would (Apple forums 747334).
        @Test func theRPIDMustBeAnAssociatedDomainNotAParentOfOne() async throws {
            try server.serve("login.example.com", body: SiteServer.file(listing: [app]))
            try server.serve("example.com", body: SiteServer.file(listing: [app]))
            _ = try phone(AssociatedDomains(["webcredentials:login.example.com"], fetching: fetching()))
            defer { AuthenticationServicesHost.current = nil }

            #expect(reason(await registering("example.com")) == notAssociated("example.com"))
            #expect(fetches(of: "example.com", from: server) == 0)
            #expect(await registering("login.example.com") == nil)
        }

        /// `?mode=developer` counts only on a phone in developer mode, which fetches from the
        /// server and takes a certificate it does not trust; `?mode=managed` only on a managed one.
        @Test func developerAndManagedEntriesCountOnlyOnPhonesInThoseModes() async throws {
            try server.serve("example.com", body: SiteServer.file(listing: [app]))
            // The phone does not trust the server's CA.
            let untrusting = SiteAssociationFetching(addresses: server.addresses())
            let host = try phone(AssociatedDomains(["webcredentials:example.com?mode=developer"], fetching: untrusting))
            defer { AuthenticationServicesHost.current = nil }

            #expect(reason(await registering("example.com")) == notAssociated("example.com"))
            #expect(fetches(of: "example.com", from: server) == 0)
            host.associatedDomains.developerMode = true
            #expect(await registering("example.com") == nil)
            #expect(fetches(of: "example.com", from: server) == 1)

            // Without the mode the certificate must be trusted.
            _ = try phone(AssociatedDomains(["webcredentials:example.com"], fetching: untrusting, developerMode: true))
            #expect(reason(await registering("example.com")) == unverified("example.com"))
            #expect(fetches(of: "example.com", from: server) == 1)

            let managed = try phone(AssociatedDomains(["webcredentials:example.com?mode=managed"], fetching: fetching(), developerMode: true))
            #expect(reason(await registering("example.com")) == notAssociated("example.com"))
            managed.associatedDomains.managed = true
            #expect(await registering("example.com") == nil)
            let both = try phone(AssociatedDomains(["webcredentials:example.com?mode=developer+managed"], fetching: untrusting, managed: true))
            #expect(reason(await registering("example.com")) == notAssociated("example.com"))
            both.associatedDomains.developerMode = true
            #expect(await registering("example.com") == nil)
        }

        /// The file is fetched over TLS only: a domain whose address answers plain HTTP is not
        /// verified, and nothing is asked of it in HTTP.
        @Test func plainHTTPIsNeverSpoken() async throws {
            try server.serve("example.com", body: SiteServer.file(listing: [app]))
            let fetching = try SiteAssociationFetching(trustingCertificatesIn: [server.caPath], addresses: ["example.com": "127.0.0.1:\(server.plainPort)"])
            _ = try phone(AssociatedDomains(["webcredentials:example.com"], fetching: fetching))
            defer { AuthenticationServicesHost.current = nil }

            #expect(reason(await registering("example.com")) == unverified("example.com"))
            #expect(server.requests.filter { $0.hasPrefix("http ") }.isEmpty)
        }

        /// A file given as bytes is checked as a fetched one, and nothing is fetched.
        @Test func aFileGivenAsBytesIsCheckedAsAFetchedOne() async throws {
            let files = ["example.com": Data(SiteServer.file(listing: [app]).utf8), "other.example": Data(SiteServer.file(listing: ["X.y"]).utf8),
                         "bank.example": Data("<html>".utf8)]
            _ = try phone(AssociatedDomains(["webcredentials:example.com", "webcredentials:other.example", "webcredentials:bank.example"],
                                            files: files, fetching: fetching()))
            defer { AuthenticationServicesHost.current = nil }

            #expect(await registering("example.com") == nil)
            #expect(reason(await registering("other.example")) == notAssociated("other.example"))
            #expect(reason(await registering("bank.example")) == unverified("bank.example"))
            #expect(server.requests.isEmpty)
        }
    }
}

/// The entitlement's entries are checked as written: what cannot be an entry is refused, naming it.
@Test func associatedDomainsEntriesAreCheckedAsWritten() throws {
    let entitlement = try AssociatedDomainsEntitlement([
        "webcredentials:Example.COM", "webcredentials:*.example.com", "applinks:example.com?mode=developer+managed", "appclips:example.com",
    ])
    #expect(entitlement.entries.map(\.domain) == ["example.com", "example.com", "example.com", "example.com"])
    #expect(entitlement.entries.map(\.wildcard) == [false, true, false, false])
    #expect(entitlement.entries[2].mode == .developerAndManaged)
    for refused in ["example.com", "webcredential:example.com", "webcredentials:https://example.com", "webcredentials:example.com:443",
                    "webcredentials:example.com/path", "webcredentials:example.com?mode=production", "webcredentials:example.com.",
                    "webcredentials:*.", "webcredentials:com", "appclips:*.example.com", "webcredentials:exa mple.com"] {
        #expect(throws: AssociatedDomainsError.self, "\(refused)") { try AssociatedDomainsEntitlement([refused]) }
    }
    #expect(throws: AssociatedDomainsError.self) { try SiteAssociationFetching(trustingCertificatesIn: ["/nonexistent/ca.pem"]) }
}
