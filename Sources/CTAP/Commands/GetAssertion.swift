import Foundation
import Session

/// authenticatorGetAssertion and authenticatorGetNextAssertion (CTAP 2.1 §6.2, §6.3).
extension SecurityKey {
    /// How long the credentials after the first stay available to GetNextAssertion (§6.3: 30 s).
    static let nextAssertionWindow: TimeInterval = 30

    /// What GetNextAssertion answers from: the request, the credentials left, and until when.
    struct PendingAssertions {
        var request: KeyGetAssertion
        var remaining: [[UInt8]]
        var authorization: PinUvAuthorization?
        var expires: Date
    }

    func getAssertion(_ parameters: CTAPParameters, _ progress: CTAPProgress) throws(CTAPStatus) -> CBORValue {
        let rpId = try parameters.required(0x01, parameters.text)
        let clientDataHash = try parameters.required(0x02, parameters.bytes)
        let allowList = try Self.descriptors(parameters.array(0x03) ?? [])
        let extensions = try getAssertionExtensions(parameters.map(0x04) ?? [])
        let options = try Self.options(parameters.map(0x05) ?? [])
        let param = try parameters.bytes(0x06)
        let version = try parameters.int(0x07)
        guard clientDataHash.count == 32 else { throw .invalidLength }
        // hmac-secret answers only a request the person touches for (§12.5).
        if extensions.hmacSecretSealed != nil && options.userPresence == false { throw .unsupportedOption }

        let facts = try facts()
        if let param { try precheck(param, version: version, pinSet: facts.pinSet, progress) }
        let authorization: PinUvAuthorization?
        if let param, let version {
            guard facts.pinSet else { throw .pinNotSet }
            authorization = try authorize(param, version: version, message: clientDataHash, permission: .getAssertion, rpId: rpId)
        } else {
            if options.userVerification == true { throw .invalidOption }
            // alwaysUv: a sign-in that asks for a touch needs a token (§6.11.2).
            if facts.settings.alwaysUv && options.userPresence != false { throw .puatRequired }
            authorization = nil
        }
        var request = KeyGetAssertion(clientDataHash: clientDataHash, rpId: rpId, allowList: allowList,
                                      userVerified: authorization != nil, userPresence: options.userPresence ?? true)
        request.extensions = extensions
        // Step 7: the applicable credentials; with an allow list, any one of them answers.
        let candidates: [Credential]
        do { candidates = try session.keyCandidates(device: device, request) } catch { throw CTAPStatus(rawValue: error.name.ctapStatus ?? 0x7F) }
        guard let first = candidates.first else {
            // The touch still comes first when asked for, so an RP cannot probe silently (§6.2.2 step 9 note).
            if request.userPresence { try waitForTouch(progress) }
            throw .noCredentials
        }
        let rest = allowList.isEmpty ? candidates.dropFirst().map(\.id) : []
        pending = nil
        let answer = try assertion(request, credentialId: first.id, progress, authorization: authorization,
                                   count: rest.isEmpty ? nil : rest.count + 1, next: false)
        if !rest.isEmpty {
            pending = PendingAssertions(request: request, remaining: rest, authorization: authorization,
                                        expires: Date().addingTimeInterval(Self.nextAssertionWindow))
        }
        return answer
    }

    func getNextAssertion() throws(CTAPStatus) -> CBORValue {
        guard var next = pending, Date() < next.expires, !next.remaining.isEmpty else {
            pending = nil
            throw .notAllowed
        }
        let id = next.remaining.removeFirst()
        pending = next.remaining.isEmpty ? nil : next
        // The person touched for the first; the next ones carry the same flags, with no touch.
        return try assertion(next.request, credentialId: id, CTAPProgress(), authorization: next.authorization, count: nil, next: true)
    }

    /// One assertion's response map (§6.2.2 step 13): the credential, the authenticator data, the
    /// signature, the user (its id; its name and display name only with several to choose from,
    /// after user verification), and numberOfCredentials for the first of several.
    private func assertion(_ request: KeyGetAssertion, credentialId: [UInt8], _ progress: CTAPProgress,
                           authorization: PinUvAuthorization?, count: Int?, next: Bool) throws(CTAPStatus) -> CBORValue {
        let response = try perform(progress, touched: next, with: authorization) { person throws(SessionError) in
            try session.keyGetAssertion(device: device, request, credentialId: credentialId, person: person)
        }
        var user: [(CBORValue, CBORValue)] = [(.text("id"), .bytes(response.credential.userHandle))]
        if authorization != nil && (count != nil || next) {
            if !response.credential.userName.isEmpty { user.append((.text("name"), .text(response.credential.userName))) }
            if !response.credential.userDisplayName.isEmpty {
                user.append((.text("displayName"), .text(response.credential.userDisplayName)))
            }
        }
        var members: [(CBORValue, CBORValue)] = [
            (.int(0x01), .map([(.text("id"), .bytes(response.credential.id)), (.text("type"), .text("public-key"))])),
            (.int(0x02), .bytes(response.authenticatorData)),
            (.int(0x03), .bytes(response.signature)),
        ]
        members.append((.int(0x04), .map(user)))
        if let count { members.append((.int(0x05), .int(count))) }
        if let key = response.largeBlobKey { members.append((.int(0x07), .bytes(key))) }
        return .map(members)
    }
}
