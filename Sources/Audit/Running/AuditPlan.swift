import Session

/// What an audit would send, without sending it (`authctl audit --dry-run`): the profile's
/// requests as they go out, the baseline's order, and each selected case's requests in order —
/// by the profile's names for them. The URL and profile are checked as a run checks them.
package struct AuditPlan: Encodable, Sendable {
    /// One of the profile's requests, as it goes out (`${…}` still in it: filled per user).
    package struct Request: Encodable, Sendable {
        let name: String
        let method: String
        let url: String
        let encoding: String
        let headers: [String: String]?
        let body: String?
    }

    package struct Case: Encodable, Sendable {
        let id: String
        /// The profile's requests in the order the case sends them; `*` marks the one that carries
        /// the case's change, `(probe)` one sent only after a refusal (`(if …)` when else).
        let requests: [String]
    }

    let target: String
    let origin: String
    let rate: Int
    let requests: [Request]
    let baseline: [String]
    let cases: [Case]

    package init(base: String, profile: AuditProfile, options: AuditRunner.Options) throws(AuditError) {
        let (base, profile) = try AuditRunner.checked(base: base, profile: profile)
        target = base
        origin = profile.origin
        rate = options.rate
        let named: [(String, AuditProfile.Request?)] = [("signUp", profile.signUp), ("logIn", profile.logIn),
                                                        ("register.begin", profile.register.begin), ("register.finish", profile.register.finish),
                                                        ("signIn.begin", profile.signIn.begin), ("signIn.finish", profile.signIn.finish),
                                                        ("discoverableSignIn.begin", profile.discoverableSignIn?.begin),
                                                        ("discoverableSignIn.finish", profile.discoverableSignIn?.finish),
                                                        ("signedIn", profile.signedIn)]
        requests = named.compactMap { name, request in
            request.map {
                Request(name: name, method: $0.method, url: base + $0.path, encoding: ($0.encoding ?? .json).rawValue, headers: $0.headers,
                        body: $0.body.map { JSONOutput.string($0) })
            }
        }
        let steps = Steps(profile: profile)
        let signedIn = steps.probeSignIn.map { $0.replacingOccurrences(of: " (probe)", with: "") }
        baseline = steps.user + steps.passkey + steps.signIn + signedIn
            + (profile.discoverableSignIn == nil ? [] : steps.discoverableSignIn + signedIn)
        cases = try AuditRunner.selected(options).map { Case(id: $0.id, requests: steps.plan($0.action)) }
    }

    /// The lines `authctl audit --dry-run` prints.
    package var lines: [String] {
        var out = ["dry run: nothing is sent. \(target) is reached and nothing else (no redirect followed), at most \(rate) requests a second; "
                   + "responses claim the origin \(origin)."]
        out.append("the profile's requests (${user}, ${password} and ${response} filled for each user):")
        for r in requests {
            let headers = (r.headers ?? [:]).sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", ")
            out.append("  \(r.name): \(r.method) \(r.url)" + (headers.isEmpty ? "" : " [\(headers)]") + (r.body.map { " \(r.encoding) \($0)" } ?? ""))
        }
        out.append("baseline: " + baseline.joined(separator: ", "))
        out.append("\(cases.count) cases (* carries the change; a probe is sent only after a refusal):")
        let width = cases.map(\.id.count).max() ?? 0
        for c in cases { out.append("  " + c.id.padding(toLength: width, withPad: " ", startingAt: 0) + "  " + c.requests.joined(separator: ", ")) }
        return out
    }

    /// The request names each part of a case sends, for this profile (no signUp: a user comes into
    /// being at its registration's begin; no signedIn: no probe of a session).
    private struct Steps {
        let profile: AuditProfile

        var user: [String] { profile.signUp == nil ? [] : ["signUp"] }
        var passkey: [String] { ["register.begin", "register.finish"] }
        var userWithPasskey: [String] { user + passkey }
        var signIn: [String] { ["signIn.begin", "signIn.finish"] }
        var changedRegistration: [String] { ["register.begin", "register.finish*"] }
        var changedSignIn: [String] { ["signIn.begin", "signIn.finish*"] }
        var probeSignIn: [String] { profile.signedIn == nil ? [] : ["signedIn (probe)"] }
        var probeRegistration: [String] { ["signIn.begin (probe)", "signIn.finish (probe)"] }
        var discoverableSignIn: [String] { ["discoverableSignIn.begin", "discoverableSignIn.finish"] }

        func plan(_ action: AuditCase.Action) -> [String] {
            switch action {
            case .registerFault: user + changedRegistration
            case .registerEnvelope, .registerCrossOrigin: user + changedRegistration + probeRegistration
            case .registerEdit(let edit):
                user + changedRegistration + (edit == .unsolicitedExtension ? [] : probeRegistration)
            case .registerOwn(.credentialIdInUse):
                user + user + passkey + changedRegistration + probeRegistration + probeRegistration
                    + ["signIn.begin (probe)", "signIn.finish (probe: the first user's own key)"]
            case .registerOwn: user + changedRegistration + probeRegistration
            case .registerReplay: userWithPasskey + ["register.finish* (again)"]
            case .registerWithoutBegin:
                profile.logIn == nil ? user + ["(no more: the profile has no logIn)"]
                    : user + ["logIn", "register.begin", "register.finish* (in the logIn's session)"] + probeRegistration
            case .registerInAnotherUsersSession:
                user + user + ["register.begin", "register.begin (the other user)", "register.finish* (in the other user's session)"] + probeRegistration
            case .signFault, .signEnvelope, .signCrossOrigin: userWithPasskey + changedSignIn + probeSignIn
            case .signReplay: userWithPasskey + signIn + ["signIn.finish* (again)"]
            case .signWithoutBegin: userWithPasskey + ["signIn.begin", "signIn.finish* (in another session)"] + probeSignIn
            case .otherUsersCredential: userWithPasskey + userWithPasskey + ["signIn.begin", "signIn.finish* (the other user's passkey)"] + probeSignIn
            case .otherUsersHandle: userWithPasskey + userWithPasskey + ["signIn.begin", "signIn.finish* (the other user's handle)"] + probeSignIn
            case .counterRegress: userWithPasskey + signIn + changedSignIn + probeSignIn
            case .refusedSignInThenHonest: userWithPasskey + changedSignIn + ["signIn.begin (if refused)", "signIn.finish (if refused: honest)"]
            case .signOwn: user + passkey + signIn + changedSignIn + probeSignIn
            case .distinctChallenges: userWithPasskey + ["signIn.begin*", "signIn.begin*"]
            case .excludesExisting: userWithPasskey + ["register.begin*"]
            case .userEnumeration: userWithPasskey + ["signIn.begin* (the user)", "signIn.begin* (a name no user has)"]
            case .discoverable where profile.discoverableSignIn == nil: ["(nothing: the profile has no discoverableSignIn)"]
            case .discoverable(.userHandleAbsent):
                userWithPasskey + ["discoverableSignIn.begin", "discoverableSignIn.finish* (no userHandle)"] + probeSignIn
            case .discoverable(.otherUsersCredential):
                userWithPasskey + userWithPasskey
                    + ["discoverableSignIn.begin", "discoverableSignIn.finish* (the first user's passkey, the second's handle)"] + probeSignIn
            case .discoverable(.otherUsersHandle):
                userWithPasskey + userWithPasskey
                    + ["discoverableSignIn.begin", "discoverableSignIn.finish* (the first user's own passkey, the second's handle)"] + probeSignIn
            }
        }
    }
}
