import Session

/// The discoverable sign-in's cases (WebAuthn L3 §7.2 step 6, its second branch): the begin names
/// no user, so the response's `userHandle` must be there and must name the user whose account
/// holds the credential. Each answers with a passkey the RP knows, signed by its own key: only the
/// userHandle, which no signature covers, is changed.
extension AuditRunner {
    func judgeDiscoverable(_ kind: AuditCase.Discoverable, exchanges: inout [RPSession.Exchange]) throws -> (AuditReport.Verdict, String) {
        // Before any user is made: a profile without one sends nothing for these cases.
        guard let ceremony = profile.discoverableSignIn else { throw Stop(AuditProfile.Lack.discoverableSignIn.reason) }
        switch kind {
        case .userHandleAbsent:
            let user = try userWithPasskey()
            let browser = try RPSession(base: base, pacer: pacer)
            defer { exchanges += browser.exchanges }
            let options = try beginDiscoverableSignIn(in: browser)
            let made = try respond(toSignIn: options, credential: user.credential, fault: nil)
            let answer = try finish(ceremony, Self.withUserHandle(made.json, nil), in: browser)
            return try verdict(of: answer, "\(user.name)'s passkey with no userHandle") ?? probeSignIn(browser, user, refusal: answer)
        case .otherUsersCredential:
            let attacker = try userWithPasskey(), victim = try userWithPasskey()
            guard let handle = victim.handle else { throw Stop("the RP's registration options name no user.id") }
            let browser = try RPSession(base: base, pacer: pacer)
            defer { exchanges += browser.exchanges }
            let options = try beginDiscoverableSignIn(in: browser)
            let made = try respond(toSignIn: options, credential: attacker.credential, fault: nil)
            let answer = try finish(ceremony, Self.withUserHandle(made.json, handle), in: browser)
            return try verdict(of: answer, "\(attacker.name)'s passkey with \(victim.name)'s userHandle")
                ?? probeSignIn(browser, victim, refusal: answer)
        case .otherUsersHandle:
            let owner = try userWithPasskey(), other = try userWithPasskey()
            guard let handle = other.handle else { throw Stop("the RP's registration options name no user.id") }
            let browser = try RPSession(base: base, pacer: pacer)
            defer { exchanges += browser.exchanges }
            let options = try beginDiscoverableSignIn(in: browser)
            let made = try respond(toSignIn: options, credential: owner.credential, fault: nil)
            let answer = try finish(ceremony, Self.withUserHandle(made.json, handle), in: browser)
            return try verdict(of: answer, "\(owner.name)'s passkey with \(other.name)'s userHandle")
                ?? probeSignIn(browser, other, refusal: answer)
        }
    }

    /// The options of a sign-in whose begin names no user (no `${user}` to fill: the profile's
    /// checks refuse one there).
    func beginDiscoverableSignIn(in browser: RPSession) throws -> BeginOptions {
        guard let ceremony = profile.discoverableSignIn else { throw Stop(AuditProfile.Lack.discoverableSignIn.reason) }
        return try options(of: try browser.send(ceremony.begin, [:]), ceremony)
    }

    /// An honest discoverable sign-in with `credential`, the user's own passkey (the baseline's).
    func signInDiscoverably(credential: String, in browser: RPSession) throws -> Ceremony {
        guard let ceremony = profile.discoverableSignIn else { throw Stop(AuditProfile.Lack.discoverableSignIn.reason) }
        let options = try beginDiscoverableSignIn(in: browser)
        let made = try respond(toSignIn: options, credential: credential, fault: nil)
        let answer = try finish(ceremony, made.json, in: browser)
        return Ceremony(options: options.json, response: made, answer: answer, answerIsYes: isYes(answer, profile.success))
    }

    /// A response with its `userHandle` set to `handle`, or left out for `nil`.
    static func withUserHandle(_ json: JSONValue, _ handle: String?) -> JSONValue {
        guard case .object(var members) = json, case .object(var response)? = members["response"] else { return json }
        response["userHandle"] = handle.map { JSONValue.string($0) }
        members["response"] = .object(response)
        return .object(members)
    }
}
