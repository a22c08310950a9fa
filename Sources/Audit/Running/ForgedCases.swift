import Session

/// The cases that change what the authenticator's own faults do not reach: a registration's
/// attestation object taken apart (`RegistrationForgery`), a key the audit holds (`OwnPasskey`),
/// a response made in another site's frame, and the begin's answer to a name no user has.
extension AuditRunner {
    /// The site whose page embeds the RP's in a frame, for the crossOrigin cases.
    static let embeddingSite = "https://attacker.example"

    func judgeForgery(_ c: AuditCase, exchanges: inout [RPSession.Exchange]) throws -> (AuditReport.Verdict, String) {
        switch c.action {
        case .registerCrossOrigin:
            let user = try newUser()
            defer { exchanges += user.browser.exchanges }
            let options = try beginRegistration(user, in: user.browser)
            let made = try respond(toRegistration: options, fault: nil, topOrigin: Self.embeddingSite)
            let answer = try finish(profile.register, made.json, in: user.browser)
            if let judged = verdict(of: answer, "a registration made in a frame of \(Self.embeddingSite)") { return judged }
            return try probeRegistration(user, credential: made.credentialId, refusal: answer)
        case .signCrossOrigin:
            let user = try userWithPasskey()
            let browser = try RPSession(base: base, pacer: pacer)
            defer { exchanges += browser.exchanges }
            let options = try beginSignIn(user, in: browser)
            let made = try respond(toSignIn: options, credential: user.credential, fault: nil, topOrigin: Self.embeddingSite)
            let answer = try finish(profile.signIn, made.json, in: browser)
            return try verdict(of: answer, "a sign-in made in a frame of \(Self.embeddingSite)") ?? probeSignIn(browser, user, refusal: answer)
        case .registerEdit(let edit):
            let user = try newUser()
            defer { exchanges += user.browser.exchanges }
            let options = try beginRegistration(user, in: user.browser)
            let made = try respond(toRegistration: options, fault: nil)
            var forgery = try RegistrationForgery(made.json)
            Self.apply(edit, to: &forgery)
            let answer = try finish(profile.register, forgery.json, in: user.browser)
            if edit == .unsolicitedExtension {
                // A valid response: the RP takes it (ignoring the output) or refuses it by policy
                // (§7.1 lets it) — reported, as it locks out the authenticators that send one.
                if answer.status >= 500 { return (.serverError, "a registration with an extension output not asked for: \(answer.shown)") }
                if isYes(answer, profile.success) { return (.taken, "the RP took it: \(answer.shown)") }
                return (.refused, "a valid registration with an extension output not asked for (credProtect) was refused: \(answer.shown)")
            }
            if let judged = verdict(of: answer, "the finish") { return judged }
            return try probeRegistration(user, credential: made.credentialId, refusal: answer)
        case .registerOwn(let kind):
            return try judge(kind, exchanges: &exchanges)
        case .signOwn(let kind):
            return try judge(kind, exchanges: &exchanges)
        case .userEnumeration:
            let known = try userWithPasskey()
            let first = try RPSession(base: base, pacer: pacer), second = try RPSession(base: base, pacer: pacer)
            defer { exchanges += first.exchanges + second.exchanges }
            let nobody = User(name: "audit-\(runId)-nobody", password: "pw-\(runId)-nobody-A9!", browser: second)
            let answers = [try first.send(profile.signIn.begin, values(known)), try second.send(profile.signIn.begin, values(nobody))]
            if let crashed = answers.first(where: { $0.status >= 500 }) { return (.serverError, "a sign-in begin: \(crashed.shown)") }
            let shapes = answers.map { Self.shape(status: $0.status, $0.json) }
            if shapes[0] != shapes[1] {
                return (.accepted, "a user with a passkey: \(shapes[0]); a name no user has: \(answers[1].shown)")
            }
            return (.rejected, "both answered \(answers[0].status) with options of the same shape")
        default:
            throw Stop("not a case of this kind")
        }
    }

    // MARK: - The audit's own key

    private func judge(_ kind: AuditCase.OwnRegistration, exchanges: inout [RPSession.Exchange]) throws -> (AuditReport.Verdict, String) {
        switch kind {
        case .algorithmNotOffered:
            let user = try newUser()
            defer { exchanges += user.browser.exchanges }
            let options = try beginRegistration(user, in: user.browser)
            let offered = Self.offeredAlgorithms(options)
            guard let algorithm = [COSEAlgorithm.edDSA, .es256, .rs256].first(where: { !offered.contains($0.rawValue) }) else {
                throw Stop("the RP offers every algorithm the audit makes keys of (EdDSA, ES256, RS256)")
            }
            let (answer, own) = try registerOwn(user, options: options, algorithm: algorithm)
            if let judged = verdict(of: answer, "a key of \(algorithm), pubKeyCredParams offering \(offered)") { return judged }
            return try probe(user, own, refusal: answer)
        case .longCredentialId:
            let user = try newUser()
            defer { exchanges += user.browser.exchanges }
            let options = try beginRegistration(user, in: user.browser)
            let (answer, own) = try registerOwn(user, options: options, algorithm: try preferredAlgorithm(options), id: Self.randomBytes(1024))
            if let judged = verdict(of: answer, "a credential id of 1,024 bytes") { return judged }
            return try probe(user, own, refusal: answer)
        case .credentialIdInUse:
            let victim = try newUser(), attacker = try newUser()
            defer { exchanges += victim.browser.exchanges + attacker.browser.exchanges }
            let victimOptions = try beginRegistration(victim, in: victim.browser)
            let (made, victimPasskey) = try registerOwn(victim, options: victimOptions, algorithm: try preferredAlgorithm(victimOptions))
            guard isYes(made, profile.success) else { throw Stop("the RP refused an honest registration of the audit's own key: \(made.shown)") }
            let attackerOptions = try beginRegistration(attacker, in: attacker.browser)
            let (answer, attackerPasskey) = try registerOwn(attacker, options: attackerOptions, algorithm: try preferredAlgorithm(attackerOptions),
                                                            id: victimPasskey.credentialId)
            if let judged = verdict(of: answer, "\(attacker.name) registered \(victim.name)'s credential id with a key of its own") { return judged }
            // Refused, the registration must leave the victim's record as it was: the attacker's
            // key signs in as neither user, and the victim's own key still does.
            var anonymous = attackerPasskey
            anonymous.userHandle = nil
            for user in [victim, attacker] {
                let probed = try probe(user, anonymous, refusal: answer)
                if probed.0 != .rejected { return probed }
            }
            let browser = try RPSession(base: base, pacer: pacer)
            let after = try signIn(victim, with: victimPasskey, victimPasskey.honest, in: browser)
            if !isYes(after, profile.success) {
                return (.accepted, "the refused registration (\(answer.shown)) changed \(victim.name)'s passkey: its own sign-in is refused (\(after.shown))")
            }
            return (.rejected, answer.shown)
        }
    }

    private func judge(_ kind: AuditCase.OwnSignIn, exchanges: inout [RPSession.Exchange]) throws -> (AuditReport.Verdict, String) {
        let user = try newUser()
        let first = try RPSession(base: base, pacer: pacer), browser = try RPSession(base: base, pacer: pacer)
        defer { exchanges += user.browser.exchanges + first.exchanges + browser.exchanges }
        let options = try beginRegistration(user, in: user.browser)
        let algorithm: COSEAlgorithm
        if kind == .zeroSignature {
            guard Self.offeredAlgorithms(options).contains(COSEAlgorithm.es256.rawValue) else { throw Stop("the RP does not offer ES256: r = s = 0 is ECDSA's") }
            algorithm = .es256
        } else {
            algorithm = try preferredAlgorithm(options)
        }
        let flags: AuthenticatorFlags = kind == .backupStateWithoutEligibility ? [] : [.backupEligible, .backupState]
        let (made, own) = try registerOwn(user, options: options, algorithm: algorithm, flags: flags)
        guard isYes(made, profile.success) else { throw Stop("the RP refused an honest registration of the audit's own key: \(made.shown)") }
        // The audit's own passkey signs in honestly first: what is refused after is the change.
        let honest = try signIn(user, with: own, own.honest, in: first)
        guard isYes(honest, profile.success) else { throw Stop("the RP refused an honest sign-in with the audit's own key: \(honest.shown)") }
        var assertion = own.honest
        switch kind {
        case .backupStateWithoutEligibility: assertion.flags.insert(.backupState)
        case .backupEligibilityChanged: assertion.flags.remove([.backupEligible, .backupState])
        case .zeroSignature: assertion.signature = { _ in Self.zeroECDSASignature }
        case .otherKeySignature:
            let other = try PrivateKey.generate(own.key.algorithm)
            assertion.signature = { message in try other.sign(message) }
        }
        let answer = try signIn(user, with: own, assertion, in: browser)
        return try verdict(of: answer, "the finish") ?? probeSignIn(browser, user, refusal: answer)
    }

    /// ECDSA-Sig-Value (RFC 3279 §2.2.3) SEQUENCE { r INTEGER 0, s INTEGER 0 } in DER.
    static let zeroECDSASignature: [UInt8] = [0x30, 0x06, 0x02, 0x01, 0x00, 0x02, 0x01, 0x00]

    /// An honest registration answering `options`, its credential replaced by a key the audit
    /// makes (`algorithm`, under `id` or 16 random bytes), with BE and BS as `flags` says.
    private func registerOwn(_ user: User, options: BeginOptions, algorithm: COSEAlgorithm, id: [UInt8]? = nil,
                             flags: AuthenticatorFlags = [.backupEligible, .backupState]) throws -> (RPSession.Answer, OwnPasskey) {
        let made = try respond(toRegistration: options, fault: nil)
        var forgery = try RegistrationForgery(made.json)
        let key = try PrivateKey.generate(algorithm)
        forgery.replaceCredential(id: id ?? Self.randomBytes(16), key: key)
        forgery.authenticatorData.flags.remove([.backupEligible, .backupState])
        forgery.authenticatorData.flags.formUnion(flags.intersection([.backupEligible, .backupState]))
        var handle: String?
        if case .string(let id)? = options.json.member("user.id") { handle = id }
        let own = OwnPasskey(key: key, credentialId: forgery.credentialId, rpIdHash: forgery.authenticatorData.rpIdHash,
                             flags: flags, userHandle: handle)
        return (try finish(profile.register, forgery.json, in: user.browser), own)
    }

    /// A username-first sign-in as `user` answered by `own` with `assertion`.
    private func signIn(_ user: User, with own: OwnPasskey, _ assertion: OwnPasskey.Assertion, in browser: RPSession) throws -> RPSession.Answer {
        let options = try beginSignIn(user, in: browser)
        guard case .string(let text)? = options.json.member("challenge"), let challenge = Base64URL.decode(text) else {
            throw Stop("the sign-in options have no base64url challenge")
        }
        return try finish(profile.signIn, try own.respond(challenge: challenge, origin: profile.origin, assertion), in: browser)
    }

    /// After a refused registration of the audit's own key: that key must not sign in.
    private func probe(_ user: User, _ own: OwnPasskey, refusal: RPSession.Answer) throws -> (AuditReport.Verdict, String) {
        let browser = try RPSession(base: base, pacer: pacer)
        let answer: RPSession.Answer
        do { answer = try signIn(user, with: own, own.honest, in: browser) } catch let stop as Stop {
            return (.rejected, "\(refusal.shown) (and no sign-in begins for \(user.name): \(stop.reason))")
        }
        if isYes(answer, profile.success) {
            return (.accepted, "the RP refused the registration (\(refusal.shown)) but then signed \(user.name) in with its key (\(answer.shown))")
        }
        return (.rejected, refusal.shown)
    }

    /// The algorithms `options` offer (pubKeyCredParams; absent: ES256 and RS256, the client's default, §5.4).
    static func offeredAlgorithms(_ options: BeginOptions) -> [Int] {
        guard case .array(let params)? = options.json.member("pubKeyCredParams") else { return [COSEAlgorithm.es256.rawValue, COSEAlgorithm.rs256.rawValue] }
        return params.compactMap { param -> Int? in
            switch param.member("alg") {
            case .integer(let n)?: Int(n)
            case .unsigned(let n)?: Int(exactly: n)
            case .number(let n)?: Int(exactly: n)
            default: nil
            }
        }
    }

    /// The first algorithm the options offer that the audit makes keys of.
    private func preferredAlgorithm(_ options: BeginOptions) throws -> COSEAlgorithm {
        let offered = Self.offeredAlgorithms(options)
        guard let algorithm = offered.lazy.compactMap(COSEAlgorithm.init(rawValue:)).first else {
            throw Stop("the RP offers no algorithm the audit makes keys of (EdDSA, ES256, RS256): \(offered)")
        }
        return algorithm
    }

    static func randomBytes(_ count: Int) -> [UInt8] { (0..<count).map { _ in UInt8.random(in: 0...255) } }

    /// One change to an honest registration's attestation object.
    static func apply(_ edit: AuditCase.RegistrationEdit, to forgery: inout RegistrationForgery) {
        switch edit {
        case .backupStateWithoutEligibility:
            forgery.authenticatorData.flags.remove(.backupEligible)
            forgery.authenticatorData.flags.insert(.backupState)
        case .formatMiscased:
            forgery.format = forgery.format.prefix(1).uppercased() + forgery.format.dropFirst()
        case .noneWithStatement:
            // A signed statement relabelled none; to an RP that asked for none, a packed one's form.
            if forgery.format == "none" {
                forgery.statement = .map([(.text("alg"), .int(COSEAlgorithm.es256.rawValue)), (.text("sig"), .bytes(randomBytes(70)))])
            }
            forgery.format = "none"
        case .attestedDataFlagCleared:
            forgery.authenticatorData.flags.remove(.attestedCredentialData)
        case .trailingBytes:
            forgery.trailing = CBORValue.int(0).encoded()
        case .unsolicitedExtension:
            // credProtect's authenticator output (CTAP 2.1 §12.1): the protection level, 2.
            var outputs: [(CBORValue, CBORValue)] = []
            if case .map(let pairs)? = forgery.authenticatorData.extensions { outputs = pairs }
            outputs.removeAll { $0.0 == .text("credProtect") }
            outputs.append((.text("credProtect"), .int(2)))
            forgery.authenticatorData.extensions = .map(outputs)
            forgery.authenticatorData.flags.insert(.extensionData)
        }
    }

    /// An answer's form, values left out: its status, each object's member names, and each
    /// value's kind (an array: empty, or its first element's form).
    static func shape(status: Int, _ json: JSONValue?) -> String {
        func form(_ value: JSONValue) -> String {
            switch value {
            case .null: "null"
            case .bool: "bool"
            case .integer, .unsigned, .number: "number"
            case .string: "string"
            case .array(let items): items.first.map { "[\(form($0))]" } ?? "[]"
            case .object(let members): "{" + members.keys.sorted().map { "\($0): \(form(members[$0]!))" }.joined(separator: ", ") + "}"
            }
        }
        return "\(status) \(json.map(form) ?? "not JSON")"
    }
}
