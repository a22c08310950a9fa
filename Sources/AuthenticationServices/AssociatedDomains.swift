import Curl
import Foundation

/// How the phone fetches a domain's `apple-app-site-association`: over HTTPS from
/// `https://<domain>/.well-known/apple-app-site-association`, as a device in an alternate mode does
/// (Apple's CDN, which fetches for the others, is not there: every mode fetches from the server).
/// Through libcurl, which trusts the CAs given besides the system's and reaches a domain where a
/// test says, since a test cannot own DNS.
public struct SiteAssociationFetching: Sendable {
    /// PEM certificates of CAs trusted besides the system's: a test server's own CA.
    public var trustedCertificates: [Data]
    /// Where a domain's port 443 is reached instead of where DNS says: `"example.com":
    /// "127.0.0.1:8443"`. The request still names the domain (SNI, `Host`), and the certificate is
    /// checked against it.
    public var addresses: [String: String]
    /// How long a fetch may take, in seconds.
    public var timeoutSeconds: Int

    public init(trustedCertificates: [Data] = [], addresses: [String: String] = [:], timeoutSeconds: Int = 10) {
        self.trustedCertificates = trustedCertificates
        self.addresses = addresses
        self.timeoutSeconds = timeoutSeconds
    }

    /// The same, trusting the CAs in the PEM files at `paths`; a file that cannot be read, or holds
    /// no certificate, is refused.
    public init(trustingCertificatesIn paths: [String], addresses: [String: String] = [:], timeoutSeconds: Int = 10)
        throws(AssociatedDomainsError) {
        var certificates = [Data]()
        for path in paths {
            guard let pem = FileManager.default.contents(atPath: path), String(decoding: pem, as: UTF8.self).contains("-----BEGIN CERTIFICATE-----")
            else { throw AssociatedDomainsError("no PEM certificate could be read from \(path)") }
            certificates.append(pem)
        }
        self.init(trustedCertificates: certificates, addresses: addresses, timeoutSeconds: timeoutSeconds)
    }
}

/// The app's Associated Domains on the phone: its entitlement, where each domain's association
/// file comes from (fetched, or given), the device's alternate modes, and the verdicts the phone
/// keeps. iOS checks a passkey request's RP ID against them before anything is shown.
public struct AssociatedDomains: Sendable {
    /// The most an association file may hold, uncompressed (Apple: "no greater than 128 KB").
    public static let fileLimit = 128 * 1024

    public var entitlement: AssociatedDomainsEntitlement
    /// Files given instead of fetched, by domain (the domain that would serve it): what the
    /// server would answer with, checked as a fetched file is.
    public var files: [String: Data]
    public var fetching: SiteAssociationFetching
    /// Developer Mode on, Associated Domains Development on, the app signed for development:
    /// `?mode=developer` entries count.
    public var developerMode: Bool
    /// The device managed by MDM, with the administrator's consent: `?mode=managed` entries count.
    public var managed: Bool
    /// What the phone found, a line per fetch or refusal, oldest first (the last 100): iOS's
    /// `swcd` log, for a test that asks why.
    public private(set) var log: [String] = []
    /// The verdicts of fetched files, kept until the app is reinstalled, by the domain and how
    /// it was fetched.
    private var verdicts: [String: Bool] = [:]
    /// Domains taken as listing the app, with no file (``init(presuming:)``).
    private var presumed: Set<String> = []
    /// Replies fetched off the main actor, by the key of their verdict, for the next check.
    private var fetched: [String: Result<HTTPSFetch.Reply, HTTPSFetch.Failure>] = [:]

    public init(entitlement: AssociatedDomainsEntitlement, files: [String: Data] = [:], fetching: SiteAssociationFetching = SiteAssociationFetching(),
                developerMode: Bool = false, managed: Bool = false) {
        self.entitlement = entitlement
        self.files = files
        self.fetching = fetching
        self.developerMode = developerMode
        self.managed = managed
    }

    /// The entitlement's entries as written (`"webcredentials:example.com"`, `"webcredentials:*.example.com"`,
    /// `"webcredentials:example.com?mode=developer"`), refused when one is not an entry.
    public init(_ entitlement: [String], files: [String: Data] = [:], fetching: SiteAssociationFetching = SiteAssociationFetching(),
                developerMode: Bool = false, managed: Bool = false) throws(AssociatedDomainsError) {
        self.init(entitlement: try AssociatedDomainsEntitlement(entitlement), files: files, fetching: fetching, developerMode: developerMode,
                  managed: managed)
    }

    /// A `webcredentials` entry for each of `domains`, each taken as listing the app without a
    /// file: for a test that is not about association.
    public init(presuming domains: Set<String>) {
        let entries = domains.sorted().map {
            AssociatedDomainsEntitlement.Entry(text: "webcredentials:" + $0, service: .webcredentials, domain: $0.lowercased(), wildcard: false, mode: nil)
        }
        self.init(entitlement: AssociatedDomainsEntitlement(entries: entries))
        presumed = Set(domains.map { $0.lowercased() })
    }

    /// Forgets the verdicts: the next request fetches each domain's file again, as reinstalling an
    /// app does on iOS (TN3155: "To download a newer version of the AASA file, reinstall the app").
    public mutating func reinstallApp() {
        verdicts = [:]
        note("the app was reinstalled: association files are fetched again")
    }

    // MARK: - The check

    enum Approval: Equatable {
        case approved
        /// The file does not list the app (or lists no `webcredentials` apps).
        case denied
        /// No file could be had or read: not kept, the next request tries again.
        case unverified
    }

    /// Whether `app` may make passkey requests for `rpID`: the entry that names it, then that
    /// entry's file (a wildcard's is its domain's: TN3155).
    mutating func approval(of app: String, for rpID: String) -> Approval {
        guard let entry = entitlement.webCredentialsEntry(for: rpID, developerMode: developerMode, managed: managed) else {
            note("\(rpID): no webcredentials entry of the entitlement names it (entries of an alternate mode count only on a device in that mode)")
            return .denied
        }
        let domain = entry.domain
        if presumed.contains(domain) { return .approved }
        if let given = files.first(where: { $0.key.lowercased() == domain })?.value {
            return judge(Array(given), of: app, from: "the file given for \(domain)")
        }
        let key = domain + "#" + (entry.mode?.rawValue ?? "cdn")
        if let kept = verdicts[key] { return kept ? .approved : .denied }
        let verdict: Approval
        switch fetchRequest(domain, trustingAnyCertificate: entry.mode == .developer || entry.mode == .developerAndManaged) {
        case .failure(let problem):
            note(problem.text)
            verdict = .unverified
        case .success(let request):
            // What a fetch off the main actor brought for this request (``fetchNeeded(of:for:)``), else now.
            let reply = fetched.removeValue(forKey: key) ?? Result { () throws(HTTPSFetch.Failure) in try HTTPSFetch.get(request) }
            verdict = judge(reply, of: app, from: request.url)
        }
        if verdict != .unverified { verdicts[key] = verdict == .approved }
        return verdict
    }

    /// The fetch `rpID`'s check would make now, if any (nothing kept, given or presumed), and the
    /// key its reply is kept under: so that a request can fetch off the main actor before its
    /// check, as iOS fetches in another process.
    mutating func fetchNeeded(for rpID: String) -> (key: String, request: HTTPSFetch.Request)? {
        guard let entry = entitlement.webCredentialsEntry(for: rpID, developerMode: developerMode, managed: managed) else { return nil }
        let domain = entry.domain
        let key = domain + "#" + (entry.mode?.rawValue ?? "cdn")
        guard !presumed.contains(domain), !files.keys.contains(where: { $0.lowercased() == domain }), verdicts[key] == nil,
              case .success(let request) = fetchRequest(domain, trustingAnyCertificate: entry.mode == .developer || entry.mode == .developerAndManaged)
        else { return nil }
        return (key, request)
    }

    /// A reply fetched off the main actor, taken by the next check of its domain.
    mutating func keep(_ reply: Result<HTTPSFetch.Reply, HTTPSFetch.Failure>, for key: String) {
        fetched[key] = reply
    }

    private struct Problem: Error { let text: String }

    private func fetchRequest(_ domain: String, trustingAnyCertificate: Bool) -> Result<HTTPSFetch.Request, Problem> {
        let url = "https://\(domain)/.well-known/apple-app-site-association"
        var request = HTTPSFetch.Request(url: url, limit: Self.fileLimit)
        request.trustedCertificates = fetching.trustedCertificates.map { Array($0) }
        // Developer mode: "you can use any valid SSL certificate on your web server, including a
        // certificate the system doesn't trust" (its name is still checked).
        request.verifyChain = !trustingAnyCertificate
        request.timeoutSeconds = max(1, fetching.timeoutSeconds)
        for (mapped, address) in fetching.addresses.sorted(by: { $0.key < $1.key }) {
            guard Self.isAddress(address), (try? AssociatedDomainsEntitlement(["webcredentials:" + mapped])) != nil else {
                return .failure(Problem(text: "\(url): the address of \(mapped), \(address), is not DOMAIN: HOST:PORT"))
            }
            request.connectTo.append("\(mapped.lowercased()):443:\(address)")
        }
        return .success(request)
    }

    private mutating func judge(_ fetched: Result<HTTPSFetch.Reply, HTTPSFetch.Failure>, of app: String, from url: String) -> Approval {
        let reply: HTTPSFetch.Reply
        switch fetched {
        case .failure(let error):
            note("\(url): \(error)")
            return .unverified
        case .success(let got): reply = got
        }
        guard reply.status == 200 else {
            // A redirect is not followed ("with no redirects"); a 404 or 403 is no file.
            note("\(url): answered \(reply.status)" + (reply.location.map { " to \($0) (redirects are not followed)" } ?? ""))
            return .unverified
        }
        return judge(reply.body, of: app, from: url)
    }

    /// The file's word on `app`: `webcredentials.apps` lists it, or not. A file that is not such
    /// JSON says nothing.
    private mutating func judge(_ bytes: [UInt8], of app: String, from source: String) -> Approval {
        guard bytes.count <= Self.fileLimit else {
            note("\(source): larger than \(Self.fileLimit) bytes")
            return .unverified
        }
        guard let file = (try? JSONSerialization.jsonObject(with: Data(bytes))) as? [String: Any] else {
            note("\(source): not a JSON object")
            return .unverified
        }
        guard let service = file["webcredentials"] else {
            note("\(source): no webcredentials")
            return .denied
        }
        guard let apps = (service as? [String: Any])?["apps"] as? [Any], apps.allSatisfy({ $0 is String }) else {
            note("\(source): webcredentials.apps is not a list of app identifiers")
            return .unverified
        }
        let listed = apps.contains { ($0 as? String) == app }
        note("\(source): webcredentials.apps \(listed ? "lists" : "does not list") \(app)")
        return listed ? .approved : .denied
    }

    private static func isAddress(_ address: String) -> Bool {
        guard let colon = address.lastIndex(of: ":"), let port = Int(address[address.index(after: colon)...]), (1...65535).contains(port)
        else { return false }
        let host = address[..<colon]
        return !host.isEmpty && host.allSatisfy { $0.isLetter || $0.isNumber || ".-:[]".contains($0) }
    }

    private mutating func note(_ line: String) {
        log.append(line)
        if log.count > 100 { log.removeFirst(log.count - 100) }
    }
}

extension AuthenticationServicesHost {
    /// Fetches, off the main actor, the association files the checks of `rpIDs` would fetch now,
    /// and keeps each reply for its check: a server that is slow or never answers holds this
    /// request (up to `timeoutSeconds`), not the app's main actor, as iOS fetches in another process.
    func fetchAssociations(for rpIDs: [String]) async {
        for rpID in Set(rpIDs).sorted() {
            guard let (key, request) = associatedDomains.fetchNeeded(for: rpID) else { continue }
            let reply = await Task.detached { Result { () throws(HTTPSFetch.Failure) in try HTTPSFetch.get(request) } }.value
            associatedDomains.keep(reply, for: key)
        }
    }

    /// The app and `rpID` as iOS judges them, with its reasons: not associated when no entry names
    /// the RP ID or its file does not list the app (SnapAuth's debugger print: "Application with
    /// identifier … is not associated with domain …"); unverified when no file could be had or read
    /// (react-native-passkey issue #96: "Unable to verify webcredentials association of … with
    /// domain …. Please try again in a few seconds.").
    func associationRefusal(_ rpID: String) -> ASAuthorizationError? {
        let app = applicationIdentifier
        switch associatedDomains.approval(of: app, for: rpID) {
        case .approved:
            return nil
        case .denied:
            return ASAuthorizationError(.failed, failureReason: "Application with identifier \(app) is not associated with domain \(rpID)")
        case .unverified:
            return ASAuthorizationError(
                .failed, failureReason: "Unable to verify webcredentials association of \(app) with domain \(rpID). Please try again in a few seconds.")
        }
    }
}
