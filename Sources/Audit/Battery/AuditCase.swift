import Session

/// One case of the battery: exactly one thing a correct RP refuses, the spec step that says so
/// (WebAuthn L3 §7.1 for registration, §7.2 for a sign-in), and the real-world failure it stands
/// for (docs/audit.md, "The cases").
package struct AuditCase: Sendable, Encodable {
    package enum Family: String, Sendable, CaseIterable, Codable {
        case options, registration, signIn = "sign-in", binding, replay, envelope, state
    }

    /// A change to a valid response's JSON envelope (WebAuthn L3 §5.1: `id`, `rawId`, `type`).
    enum Envelope: Sendable {
        case idNotRawId, wrongType, idMissing, idNotBase64URL, rawIdNotBase64URL
        /// The signature emptied.
        case emptySignature
        /// A member added to clientDataJSON after it was signed.
        case clientDataChanged
    }

    /// A change to an honest registration's attestation object (`attestation: none`: no
    /// signature covers it).
    enum RegistrationEdit: Sendable {
        /// BS set with BE clear.
        case backupStateWithoutEligibility
        /// `fmt` "None" for "none" (matched case-sensitively).
        case formatMiscased
        /// `fmt` none with a statement (a packed self statement's `alg` and `sig`).
        case noneWithStatement
        /// The AT flag cleared, the attested credential data still there.
        case attestedDataFlagCleared
        /// One more CBOR item after the attestation object.
        case trailingBytes
        /// An extension output the RP did not ask for (credProtect), with the ED flag: the RP
        /// must take the response (ignoring it) or refuse it with a 4xx.
        case unsolicitedExtension
    }

    /// A registration of a key the audit holds (OwnPasskey), wrong in one way.
    enum OwnRegistration: Sendable {
        /// A key whose algorithm the options' pubKeyCredParams do not offer.
        case algorithmNotOffered
        /// A credential id of 1,024 bytes.
        case longCredentialId
        /// Another user's credential id, with the attacker's key.
        case credentialIdInUse
    }

    /// A sign-in with a key the audit holds, one thing changed.
    enum OwnSignIn: Sendable {
        /// A device-bound passkey's assertion with BS set (BE clear).
        case backupStateWithoutEligibility
        /// A backup-eligible passkey's assertion with BE (and BS) clear.
        case backupEligibilityChanged
        /// ECDSA's r = s = 0, as DER.
        case zeroSignature
        /// A valid DER signature over the same bytes, by another key.
        case otherKeySignature
    }

    /// A discoverable sign-in (its begin names no user: the response's userHandle does), answered
    /// with a passkey the RP knows and the userHandle changed.
    enum Discoverable: Sendable {
        /// The user's own passkey, userHandle left out.
        case userHandleAbsent
        /// The attacker's own passkey, the victim's userHandle.
        case otherUsersCredential
        /// The user's own passkey, another user's userHandle.
        case otherUsersHandle
    }

    enum Action: Sendable {
        /// A registration (or sign-in) whose response carries `Fault`, re-signed with the real
        /// key wherever a signature would otherwise stop the RP first.
        case registerFault(Fault)
        case signFault(Fault)
        case registerEnvelope(Envelope)
        case signEnvelope(Envelope)
        /// A response the RP accepted, sent to its finish once more.
        case registerReplay, signReplay
        /// A response made for one browser's begin, finished by another that never began.
        case registerWithoutBegin, signWithoutBegin
        /// A response made for one user's begin, finished in another user's session that began.
        case registerInAnotherUsersSession
        /// The attacker's own passkey answering the victim's username-first sign-in.
        case otherUsersCredential
        /// A counting passkey whose count goes back.
        case counterRegress
        /// A refused sign-in carrying the next count, then an honest one with that count.
        case refusedSignInThenHonest
        /// The user's own passkey, with another user's handle as `userHandle` (which no
        /// signature covers).
        case otherUsersHandle
        case discoverable(Discoverable)
        /// Two begins: two challenges, each at least 16 bytes.
        case distinctChallenges
        /// A user's registration begin lists the passkeys it has in `excludeCredentials`.
        case excludesExisting
        case registerEdit(RegistrationEdit)
        case registerOwn(OwnRegistration)
        case signOwn(OwnSignIn)
        /// An honest response made in a frame another site embeds (crossOrigin, topOrigin).
        case registerCrossOrigin, signCrossOrigin
        /// A sign-in begun for a user with a passkey and for a name no user has: the same answer.
        case userEnumeration
    }

    /// Whether the case's response is valid and the RP must take it (a refusal is the finding):
    /// otherwise the RP must refuse it.
    package var mustTake: Bool {
        if case .registerEdit(.unsolicitedExtension) = action { return true }
        return false
    }

    private enum CodingKeys: String, CodingKey { case id, family, spec, check, reference }

    package let id: String
    package let family: Family
    package let spec: String
    /// What the RP must check, in a line.
    package let check: String
    /// The real-world failure the case stands for.
    package let reference: String
    let action: Action

    /// The battery, in the order it runs.
    package static let battery: [AuditCase] = [
        // The options (§5.4.3 and §13.4.3: a challenge of at least 16 random bytes; §5.4.3's excludeCredentials).
        AuditCase(id: "opt-distinct-challenges", family: .options, spec: "§13.4.3", check: "each begin gives a new challenge of at least 16 bytes",
                  reference: "a fixed or short challenge makes every response replayable", action: .distinctChallenges),
        AuditCase(id: "opt-exclude-credentials", family: .options, spec: "§5.4.3 (excludeCredentials)", check: "a registration begin lists the user's passkeys to exclude",
                  reference: "a second passkey made on the same authenticator (the seeds' matchedExcludedCredential never happens)", action: .excludesExisting),
        AuditCase(id: "opt-user-enumeration", family: .options, spec: "§14.6.2", check: "a sign-in begun for a user with a passkey and for a name no user has answer alike (status and shape)",
                  reference: "an unknown username answered with an error: accounts told apart before any passkey is used", action: .userEnumeration),
        // Registration (WebAuthn L3 §7.1).
        AuditCase(id: "reg-wrong-type", family: .registration, spec: "§7.1 step 7", check: "clientDataJSON.type is webauthn.create",
                  reference: "a sign-in's client data taken for a registration", action: .registerFault(.wrongType)),
        AuditCase(id: "reg-wrong-challenge", family: .registration, spec: "§7.1 step 8", check: "clientDataJSON.challenge is the one this begin issued",
                  reference: "OneUptime CVE-2026-28787 (challenge read from the request)", action: .registerFault(.wrongChallenge)),
        AuditCase(id: "reg-wrong-origin", family: .registration, spec: "§7.1 step 9", check: "clientDataJSON.origin is the RP's",
                  reference: "web-auth CVE-2026-30964 (origin not compared)", action: .registerFault(.wrongOrigin)),
        AuditCase(id: "reg-look-alike-origin", family: .registration, spec: "§7.1 step 9", check: "the origin is the RP's exactly, not one whose host ends with the RP ID",
                  reference: "lbuchs/WebAuthn 2.2.0 (RP ID matched as a suffix: evil-example.com passed)", action: .registerFault(.lookAlikeOrigin)),
        AuditCase(id: "reg-subdomain-origin", family: .registration, spec: "§7.1 step 9", check: "the origin is one of the RP's, not any host under the RP ID",
                  reference: "an origin check that takes any subdomain (a subdomain an attacker can host content on)", action: .registerFault(.subdomainOrigin)),
        AuditCase(id: "reg-http-origin", family: .registration, spec: "§7.1 step 9", check: "the origin's scheme is the RP's",
                  reference: "web-auth CVE-2026-30964 (scheme and port ignored)", action: .registerFault(.httpOrigin)),
        AuditCase(id: "reg-other-port-origin", family: .registration, spec: "§7.1 step 9", check: "the origin's port is the RP's",
                  reference: "web-auth CVE-2026-30964 (scheme and port ignored)", action: .registerFault(.otherPortOrigin)),
        AuditCase(id: "reg-bad-cbor", family: .registration, spec: "§7.1 step 11", check: "the attestation object decodes (and a failure is a 4xx, never a 5xx)",
                  reference: "parsers that crash on malformed CBOR", action: .registerFault(.badCBOR)),
        AuditCase(id: "reg-wrong-rp-id-hash", family: .registration, spec: "§7.1 step 13", check: "rpIdHash is SHA-256 of the RP ID",
                  reference: "a credential made for another site registered here", action: .registerFault(.wrongRpIdHash)),
        AuditCase(id: "reg-up-cleared", family: .registration, spec: "§7.1 step 14", check: "the UP flag is set",
                  reference: "CVE-2021-38299 (user presence not checked)", action: .registerFault(.upCleared)),
        AuditCase(id: "reg-uv-cleared", family: .registration, spec: "§7.1 step 15", check: "the UV flag is set when the RP required user verification",
                  reference: "Spring Security CVE-2026-47841 (userVerification required lost)", action: .registerFault(.uvCleared)),
        AuditCase(id: "reg-cross-origin", family: .registration, spec: "§7.1 step 10", check: "a response made in a frame another site embeds (crossOrigin, topOrigin) is refused when the RP expects no frame",
                  reference: "lbuchs/WebAuthn #124, SimpleWebAuthn #815 (crossOrigin not checked at registration)", action: .registerCrossOrigin),
        AuditCase(id: "reg-backup-state-without-eligibility", family: .registration, spec: "§7.1 step 16", check: "BS is not set when BE is not",
                  reference: "flags taken as sent (py_webauthn refuses it: InvalidBackupFlags)", action: .registerEdit(.backupStateWithoutEligibility)),
        AuditCase(id: "reg-alg-not-offered", family: .registration, spec: "§7.1 step 19", check: "the credential key's alg is one pubKeyCredParams offered",
                  reference: "py_webauthn verifies against every algorithm it knows unless given supported_pub_key_algs: options narrowed, the check not", action: .registerOwn(.algorithmNotOffered)),
        AuditCase(id: "reg-format-miscased", family: .registration, spec: "§7.1 step 20", check: "fmt is matched case-sensitively against the formats the RP supports (\"None\" is none of them)",
                  reference: "a format looked up case-insensitively, or an unknown one taken as none", action: .registerEdit(.formatMiscased)),
        AuditCase(id: "reg-none-with-statement", family: .registration, spec: "§7.1 step 21, §8.7", check: "a none attestation's attStmt is empty",
                  reference: "a signed statement relabelled none so that nothing verifies it", action: .registerEdit(.noneWithStatement)),
        AuditCase(id: "reg-at-flag-cleared", family: .registration, spec: "§7.1 step 11, §6.1", check: "authenticator data parses by its flags: attested credential data with AT clear is refused",
                  reference: "a parser that reads attested credential data whatever AT says", action: .registerEdit(.attestedDataFlagCleared)),
        AuditCase(id: "reg-trailing-bytes", family: .registration, spec: "§7.1 step 11", check: "the attestation object is one CBOR item, nothing after it",
                  reference: "cbor2.loads ignores what follows the first item (py_webauthn 3.0.1 takes it)", action: .registerEdit(.trailingBytes)),
        AuditCase(id: "reg-long-credential-id", family: .registration, spec: "§7.1 step 24", check: "a credential id longer than 1,023 bytes is refused",
                  reference: "py_webauthn 3.0.1 takes any length the 16-bit field holds", action: .registerOwn(.longCredentialId)),
        AuditCase(id: "reg-unsolicited-extension", family: .registration, spec: "§7.1 step 27", check: "an extension output the RP did not ask for is ignored (or refused with a 4xx, never a 5xx): the RP must take this valid response",
                  reference: "security keys answer credProtect when a platform asks for it unprompted (CTAP 2.1 §12.1); an RP that refuses the ED flag locks their users out", action: .registerEdit(.unsolicitedExtension)),
        // Sign-in (WebAuthn L3 §7.2).
        AuditCase(id: "sign-wrong-type", family: .signIn, spec: "§7.2 step 11", check: "clientDataJSON.type is webauthn.get",
                  reference: "a registration's client data taken for a sign-in", action: .signFault(.wrongType)),
        AuditCase(id: "sign-wrong-challenge", family: .signIn, spec: "§7.2 step 12", check: "clientDataJSON.challenge is the one this begin issued",
                  reference: "OneUptime CVE-2026-28787", action: .signFault(.wrongChallenge)),
        AuditCase(id: "sign-wrong-origin", family: .signIn, spec: "§7.2 step 13", check: "clientDataJSON.origin is the RP's",
                  reference: "web-auth CVE-2026-30964", action: .signFault(.wrongOrigin)),
        AuditCase(id: "sign-look-alike-origin", family: .signIn, spec: "§7.2 step 13", check: "the origin is the RP's exactly, not one whose host ends with the RP ID",
                  reference: "lbuchs/WebAuthn 2.2.0", action: .signFault(.lookAlikeOrigin)),
        AuditCase(id: "sign-subdomain-origin", family: .signIn, spec: "§7.2 step 13", check: "the origin is one of the RP's, not any host under the RP ID",
                  reference: "an origin check that takes any subdomain", action: .signFault(.subdomainOrigin)),
        AuditCase(id: "sign-http-origin", family: .signIn, spec: "§7.2 step 13", check: "the origin's scheme is the RP's",
                  reference: "web-auth CVE-2026-30964", action: .signFault(.httpOrigin)),
        AuditCase(id: "sign-other-port-origin", family: .signIn, spec: "§7.2 step 13", check: "the origin's port is the RP's",
                  reference: "web-auth CVE-2026-30964", action: .signFault(.otherPortOrigin)),
        AuditCase(id: "sign-wrong-rp-id-hash", family: .signIn, spec: "§7.2 step 15", check: "rpIdHash is SHA-256 of the RP ID",
                  reference: "an assertion for another site accepted", action: .signFault(.wrongRpIdHash)),
        AuditCase(id: "sign-up-cleared", family: .signIn, spec: "§7.2 step 16", check: "the UP flag is set",
                  reference: "CVE-2021-38299", action: .signFault(.upCleared)),
        AuditCase(id: "sign-uv-cleared", family: .signIn, spec: "§7.2 step 17", check: "the UV flag is set when the RP required user verification",
                  reference: "Spring Security CVE-2026-47841", action: .signFault(.uvCleared)),
        AuditCase(id: "sign-bad-signature", family: .signIn, spec: "§7.2 step 21", check: "the signature verifies with the stored key",
                  reference: "idenplane #429 (a signature present taken for a valid one)", action: .signFault(.badSignature)),
        AuditCase(id: "sign-uv-claimed", family: .signIn, spec: "§7.2 step 21", check: "the signature covers the flags (UV set after signing)",
                  reference: "flags read without the signature checked", action: .signFault(.uvClaimedWithoutCheck)),
        AuditCase(id: "sign-counter-regress", family: .signIn, spec: "§7.2 step 22", check: "a counting passkey's count goes up",
                  reference: "a cloned authenticator not noticed", action: .counterRegress),
        AuditCase(id: "sign-cross-origin", family: .signIn, spec: "§7.2 step 14", check: "an assertion made in a frame another site embeds (crossOrigin, topOrigin) is refused when the RP expects no frame",
                  reference: "lbuchs/WebAuthn #124 (crossOrigin not checked)", action: .signCrossOrigin),
        AuditCase(id: "sign-backup-state-without-eligibility", family: .signIn, spec: "§7.2 step 18", check: "BS is not set when BE is not",
                  reference: "flags taken as sent (py_webauthn refuses it: InvalidBackupFlags)", action: .signOwn(.backupStateWithoutEligibility)),
        AuditCase(id: "sign-backup-eligibility-changed", family: .signIn, spec: "§7.2 step 19", check: "BE is what the passkey registered with (a synced passkey does not become device-bound)",
                  reference: "BE not stored at registration: a device-bound policy met by a synced passkey's claim", action: .signOwn(.backupEligibilityChanged)),
        AuditCase(id: "sign-zero-signature", family: .signIn, spec: "§7.2 step 21", check: "an ECDSA signature with r = s = 0 is refused",
                  reference: "Java 15–18's ECDSA verified r = s = 0 against any key (the \"psychic signatures\")", action: .signOwn(.zeroSignature)),
        AuditCase(id: "sign-other-key-signature", family: .signIn, spec: "§7.2 step 21", check: "the signature is the stored key's, not a valid one by another key",
                  reference: "a key taken from the response (a credential public key read from the assertion) rather than the stored one", action: .signOwn(.otherKeySignature)),
        // Binding: the credential belongs to the user signing in (§7.2 step 6).
        AuditCase(id: "sign-other-users-credential", family: .binding, spec: "§7.2 step 6",
                  check: "in a username-first sign-in, the credential is one of that user's",
                  reference: "StrongKey CVE-2025-26788, java-webauthn-server CVE-2026-46419, Flask-Security GHSA-f66q-9rf6-8795",
                  action: .otherUsersCredential),
        AuditCase(id: "sign-other-users-handle", family: .binding, spec: "§7.2 step 6",
                  check: "a userHandle, when given, is the one of the passkey's owner (no signature covers it)",
                  reference: "an account chosen by userHandle alone", action: .otherUsersHandle),
        AuditCase(id: "sign-discoverable-no-user-handle", family: .binding, spec: "§7.2 step 6",
                  check: "in a discoverable sign-in, a response without userHandle is refused: nothing names the user",
                  reference: "a userHandle compared only when present: a response without one skips the check", action: .discoverable(.userHandleAbsent)),
        AuditCase(id: "sign-discoverable-other-users-credential", family: .binding, spec: "§7.2 step 6",
                  check: "in a discoverable sign-in, the credential is one of the user its userHandle names: the attacker's passkey with the victim's handle is refused",
                  reference: "w3c/webauthn #753 (first factor: Eve's credential, Bob's user handle, Eve signed in as Bob)",
                  action: .discoverable(.otherUsersCredential)),
        AuditCase(id: "sign-discoverable-other-users-handle", family: .binding, spec: "§7.2 step 6",
                  check: "in a discoverable sign-in, a userHandle that is not the passkey's owner's is refused (no signature covers it)",
                  reference: "the user taken from userHandle, the signature verified with the credential's stored key whoever owns it",
                  action: .discoverable(.otherUsersHandle)),
        AuditCase(id: "reg-credential-id-in-use", family: .binding, spec: "§7.1 step 25", check: "a credential id another user registered is refused, and that user's key stays",
                  reference: "a registration that overwrites the record of the same credential id (the attacker's key on the victim's passkey)", action: .registerOwn(.credentialIdInUse)),
        // Replay and the challenge's life (§13.4.3: a challenge is used once).
        AuditCase(id: "reg-replay", family: .replay, spec: "§7.1 step 8, §13.4.3", check: "a registration's challenge is used once",
                  reference: "django-mfa2 CVE-2022-42731 (a replayed registration accepted)", action: .registerReplay),
        AuditCase(id: "sign-replay", family: .replay, spec: "§7.2 step 12, §13.4.3", check: "a sign-in's challenge is used once",
                  reference: "Discourse CVE-2025-53102 (challenge not consumed)", action: .signReplay),
        AuditCase(id: "reg-without-begin", family: .replay, spec: "§7.1 step 8", check: "a finish answers a begin of the same session",
                  reference: "a challenge taken from another session", action: .registerWithoutBegin),
        AuditCase(id: "reg-in-another-users-session", family: .replay, spec: "§7.1 step 8", check: "a finish answers this session's own begin, not another user's",
                  reference: "a challenge looked up globally instead of in the session", action: .registerInAnotherUsersSession),
        AuditCase(id: "sign-without-begin", family: .replay, spec: "§7.2 step 12", check: "a finish answers a begin of the same session",
                  reference: "a challenge taken from another session", action: .signWithoutBegin),
        // What a refused response leaves behind (§7.2 step 22: the count is stored once verified).
        AuditCase(id: "state-refused-sign-in-moves-count", family: .state, spec: "§7.2 steps 21–22",
                  check: "a refused assertion changes nothing stored: the honest sign-in after it is accepted",
                  reference: "state written before verification (a failed assertion locks the passkey out)", action: .refusedSignInThenHonest),
        // The JSON envelope (§5.1, §5.8.1 of the JSON encoding).
        AuditCase(id: "reg-id-not-raw-id", family: .envelope, spec: "§5.1 (id is rawId's base64url)", check: "id and rawId agree",
                  reference: "a lookup by id and a verification by rawId", action: .registerEnvelope(.idNotRawId)),
        AuditCase(id: "reg-wrong-credential-type", family: .envelope, spec: "§7.1 step 3 (type public-key)", check: "the credential's type is public-key",
                  reference: "type not checked", action: .registerEnvelope(.wrongType)),
        AuditCase(id: "reg-id-missing", family: .envelope, spec: "§5.1", check: "a response without id is refused with a 4xx",
                  reference: "a 5xx on a missing member", action: .registerEnvelope(.idMissing)),
        AuditCase(id: "sign-id-not-raw-id", family: .envelope, spec: "§5.1 (id is rawId's base64url)", check: "id and rawId agree",
                  reference: "a lookup by id and a verification by rawId", action: .signEnvelope(.idNotRawId)),
        AuditCase(id: "sign-wrong-credential-type", family: .envelope, spec: "§7.2 step 3 (type public-key)", check: "the credential's type is public-key",
                  reference: "type not checked", action: .signEnvelope(.wrongType)),
        AuditCase(id: "reg-raw-id-not-base64url", family: .envelope, spec: "§5.1", check: "a rawId that is not base64url is refused with a 4xx",
                  reference: "a 5xx on a malformed member", action: .registerEnvelope(.rawIdNotBase64URL)),
        AuditCase(id: "sign-id-missing", family: .envelope, spec: "§5.1", check: "a response without id is refused with a 4xx",
                  reference: "a 5xx on a missing member", action: .signEnvelope(.idMissing)),
        AuditCase(id: "sign-raw-id-not-base64url", family: .envelope, spec: "§5.1", check: "a rawId that is not base64url is refused with a 4xx",
                  reference: "a 5xx on a malformed member", action: .signEnvelope(.rawIdNotBase64URL)),
        AuditCase(id: "sign-empty-signature", family: .envelope, spec: "§7.2 step 21", check: "an empty signature is refused (and with a 4xx)",
                  reference: "idenplane #429 (a signature's presence taken for its validity)", action: .signEnvelope(.emptySignature)),
        AuditCase(id: "sign-client-data-changed", family: .envelope, spec: "§7.2 steps 19–21", check: "the signature covers the clientDataJSON sent (its hash)",
                  reference: "client data read but not hashed into the verification", action: .signEnvelope(.clientDataChanged)),
        AuditCase(id: "sign-id-not-base64url", family: .envelope, spec: "§5.1", check: "an id that is not base64url is refused with a 4xx",
                  reference: "a 5xx on a malformed member", action: .signEnvelope(.idNotBase64URL)),
    ]
}
