import Foundation
import Session

/// authenticatorMakeCredential (CTAP 2.1 §6.1): a new credential for an RP, after a touch.
extension SecurityKey {
    /// How long the key waits for a touch before it answers CTAP2_ERR_USER_ACTION_TIMEOUT (a
    /// YubiKey waits 30 s).
    static let touchTimeout: Duration = .seconds(30)

    func makeCredential(_ parameters: CTAPParameters, _ progress: CTAPProgress) throws(CTAPStatus) -> CBORValue {
        // §6.1.1: the parameters, each of its type; the required ones present.
        let clientDataHash = try parameters.required(0x01, parameters.bytes)
        let rp = try parameters.required(0x02, parameters.map)
        let user = try parameters.required(0x03, parameters.map)
        let credentialParameters = try parameters.required(0x04, parameters.array)
        let excludeList = try Self.descriptors(parameters.array(0x05) ?? [])
        let options = try Self.options(parameters.map(0x07) ?? [])
        let param = try parameters.bytes(0x08)
        let version = try parameters.int(0x09)
        let extensions = try Self.makeCredentialExtensions(parameters.map(0x06) ?? [])
        guard let rpId = rp[text: "id"] else { throw .missingParameter }
        guard let rpIdText = rpId.textValue else { throw .cborUnexpectedType }
        guard let userId = user[text: "id"] else { throw .missingParameter }
        guard let userHandle = userId.bytesValue else { throw .cborUnexpectedType }
        guard userHandle.count <= 64 else { throw .invalidLength }
        let userName = try Self.optionalText(user[text: "name"]) ?? ""
        let displayName = try Self.optionalText(user[text: "displayName"]) ?? ""
        let algorithms = try Self.algorithms(credentialParameters)
        guard clientDataHash.count == 32 else { throw .invalidLength }

        // Steps 1–2: an empty pinUvAuthParam asks for a touch, to pick this key (CTAP 2.1).
        let facts = try facts()
        if let param {
            try precheck(param, version: version, pinSet: facts.pinSet, progress)
        }
        // Step 3: an algorithm this model makes.
        guard facts.profile.algorithm(for: algorithms) != nil else { throw .unsupportedAlgorithm }
        // Step 5: options. `up` false is not for a registration; this key has no built-in UV.
        if options.userPresence == false { throw .invalidOption }
        // A largeBlobKey is for a credential the key keeps for discovery (§12.3).
        if extensions.largeBlobKey && options.residentKey != true { throw .invalidOption }
        let authorization: PinUvAuthorization?
        if let param, let version {
            // Steps 6–11: the token authorizes a registration for this RP.
            guard facts.pinSet else { throw .pinNotSet }
            authorization = try authorize(param, version: version, message: clientDataHash, permission: .makeCredential, rpId: rpIdText)
        } else {
            if options.userVerification == true { throw .invalidOption }
            // alwaysUv: every registration needs a token (§6.11.2).
            if facts.settings.alwaysUv { throw .puatRequired }
            // makeCredUvNotRqd: a credential it keeps needs the PIN once one is set; one it does
            // not keep does not (§6.1.2 step 6).
            if facts.pinSet && options.residentKey == true { throw .puatRequired }
            authorization = nil
        }
        var request = KeyMakeCredential(clientDataHash: clientDataHash, rpId: rpIdText, userHandle: userHandle, userName: userName,
                                        userDisplayName: displayName, algorithms: algorithms, excludeList: excludeList,
                                        userVerified: authorization != nil)
        request.attestation = .direct
        // §6.1.2 step 17: `rk` absent is a credential the key does not offer undiscovered.
        request.discoverable = options.residentKey ?? false
        request.extensions = extensions
        let response = try perform(progress, with: authorization) { person throws(SessionError) in
            try session.keyMakeCredential(device: device, request, person: person)
        }
        var members: [(CBORValue, CBORValue)] = [
            (.int(0x01), .text(response.attestationObject.format.rawValue)),
            (.int(0x02), .bytes(response.attestationObject.authenticatorData)),
            (.int(0x03), response.attestationObject.statement),
        ]
        if let key = response.largeBlobKey { members.append((.int(0x05), .bytes(key))) }
        return .map(members)
    }

    /// §6.1.2 steps 1–2 (and §6.2.2's): a zero-length pinUvAuthParam is a client asking the person
    /// to touch this key among several: after the touch, PIN_NOT_SET or PIN_INVALID; a non-empty one
    /// needs a protocol this key speaks.
    func precheck(_ param: [UInt8], version: Int?, pinSet: Bool, _ progress: CTAPProgress) throws(CTAPStatus) {
        if param.isEmpty {
            try waitForTouch(progress)
            throw pinSet ? .pinInvalid : .pinNotSet
        }
        guard let version else { throw .missingParameter }
        guard version == 1 || version == 2 else { throw .invalidParameter }
    }

    /// Waits for the person's touch: CTAP2_ERR_KEEPALIVE_CANCEL when the client cancels,
    /// CTAP2_ERR_USER_ACTION_TIMEOUT when nobody touches in time.
    func waitForTouch(_ progress: CTAPProgress) throws(CTAPStatus) {
        switch touch.await(progress, timeout: Self.touchTimeout) {
        case .touched: return
        case .canceled: throw .keepaliveCancel
        case .timedOut: throw .userActionTimeout
        }
    }

    /// A ceremony on the device with the person at the key: their touch (`touched`: already
    /// given, for the same request's next credential), and what the token established. A canceled
    /// or timed-out touch answers as the touch ended, whatever the layers below made of it. Once
    /// the person touched for a request made with a token, the token serves no other
    /// makeCredential or getAssertion (§6.1.2 step 14, §6.2.2 step 9).
    func perform<T>(_ progress: CTAPProgress, touched: Bool = false, with authorization: PinUvAuthorization?,
                    _ body: (KeyPerson) throws(SessionError) -> T) throws(CTAPStatus) -> T {
        var ended: CTAPStatus?
        var present = false
        defer { if present && authorization != nil { consumePinUvAuthTokenAfterPresence() } }
        let person = KeyPerson(touch: { [touch] prompt throws(AuthenticatorError) in
            if touched { return }
            switch touch.await(progress, timeout: Self.touchTimeout) {
            case .touched:
                present = true
                return
            case .canceled:
                ended = .keepaliveCancel
                throw AuthenticatorError(.canceled, "the client canceled the request while the key waited for a touch")
            case .timedOut:
                ended = .userActionTimeout
                throw AuthenticatorError(.timedOut, "nobody touched the key")
            }
        }, verification: authorization?.verification)
        do { return try body(person) } catch {
            if let ended { throw ended }
            throw CTAPStatus(rawValue: error.name.ctapStatus ?? CTAPStatus.other.rawValue)
        }
    }

    // MARK: - Reading the parameters

    /// PublicKeyCredentialDescriptors (an allow or exclude list): the ids of the public-key ones.
    static func descriptors(_ items: [CBORValue]) throws(CTAPStatus) -> [[UInt8]] {
        var ids = [[UInt8]]()
        for item in items {
            guard case .map(let members) = item else { throw .cborUnexpectedType }
            guard let type = members[text: "type"], let id = members[text: "id"] else { throw .missingParameter }
            guard let typeName = type.textValue, let bytes = id.bytesValue else { throw .cborUnexpectedType }
            if typeName == "public-key" { ids.append(bytes) }
        }
        return ids
    }

    /// PublicKeyCredentialParameters: the algorithms of the public-key ones, in order.
    static func algorithms(_ items: [CBORValue]) throws(CTAPStatus) -> [Int] {
        var algorithms = [Int]()
        for item in items {
            guard case .map(let members) = item else { throw .cborUnexpectedType }
            guard let type = members[text: "type"], let alg = members[text: "alg"] else { throw .missingParameter }
            guard let typeName = type.textValue, let number = alg.intValue else { throw .cborUnexpectedType }
            if typeName == "public-key" { algorithms.append(number) }
        }
        return algorithms
    }

    /// The options map: `rk`, `up`, `uv`, each a boolean when present.
    struct Options {
        var residentKey: Bool?
        var userPresence: Bool?
        var userVerification: Bool?
    }

    static func options(_ members: [(CBORValue, CBORValue)]) throws(CTAPStatus) -> Options {
        var options = Options()
        for (key, value) in members {
            guard let name = key.textValue else { throw .cborUnexpectedType }
            guard let flag = value.boolValue else { throw .cborUnexpectedType }
            switch name {
            case "rk": options.residentKey = flag
            case "up": options.userPresence = flag
            case "uv": options.userVerification = flag
            default: continue  // an option this key does not know is ignored (§6.1.1)
            }
        }
        return options
    }

    static func optionalText(_ value: CBORValue?) throws(CTAPStatus) -> String? {
        guard let value else { return nil }
        guard let text = value.textValue else { throw .cborUnexpectedType }
        return text
    }
}
