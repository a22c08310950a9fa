import Session

/// A registration response taken apart — its JSON, the attestation object's `fmt`, `attStmt` and
/// authenticator data (WebAuthn L3 §6.5.4) — changed, and put back together with the project's
/// CBOR encoder. Every response the audit registers asks for `attestation: none`, whose statement
/// signs nothing (§8.7): what is changed here needs no signature, and the rest stays what the
/// authenticator made.
struct RegistrationForgery {
    var members: [String: JSONValue]
    var response: [String: JSONValue]
    var format: String
    var statement: CBORValue
    var authenticatorData: AuthenticatorData
    /// Bytes after the attestation object's one CBOR item.
    var trailing: [UInt8] = []

    init(_ json: JSONValue) throws(AuditRunner.Stop) {
        guard case .object(let members) = json, case .object(let response)? = members["response"],
              case .string(let text)? = response["attestationObject"], let bytes = Base64URL.decode(text),
              let object = try? CBORValue.decode(bytes), let format = object[.text("fmt")]?.textValue,
              let statement = object[.text("attStmt")], let data = object[.text("authData")]?.bytesValue,
              let authenticatorData = try? AuthenticatorData(parsing: data) else {
            throw AuditRunner.Stop("the authenticator's registration response has no attestation object to change")
        }
        (self.members, self.response, self.format, self.statement, self.authenticatorData) = (members, response, format, statement, authenticatorData)
    }

    /// The credential's id in the response (its attested credential data's).
    var credentialId: [UInt8] { authenticatorData.attestedCredentialData?.credentialId ?? [] }

    /// The credential made another one: `key`'s public key under `id`, in the attested credential
    /// data and in the JSON members that repeat it (`id`, `rawId`, `publicKey`, `publicKeyAlgorithm`).
    mutating func replaceCredential(id: [UInt8], key: PrivateKey) {
        guard var attested = authenticatorData.attestedCredentialData else { return }
        attested.credentialId = id
        attested.publicKey = key.publicKey
        authenticatorData.attestedCredentialData = attested
        members["id"] = .string(Base64URL.encode(id))
        members["rawId"] = .string(Base64URL.encode(id))
        if response["publicKey"] != nil { response["publicKey"] = .string(Base64URL.encode(key.publicKey.subjectPublicKeyInfo)) }
        if response["publicKeyAlgorithm"] != nil { response["publicKeyAlgorithm"] = .integer(Int64(key.algorithm.rawValue)) }
    }

    /// The response as JSON, its attestation object (and `authenticatorData`, which repeats its
    /// authenticator data) re-encoded.
    var json: JSONValue {
        let data = authenticatorData.bytes
        let object = CBORValue.map([(.text("fmt"), .text(format)), (.text("attStmt"), statement), (.text("authData"), .bytes(data))]).encoded()
        var response = response, members = members
        response["attestationObject"] = .string(Base64URL.encode(object + trailing))
        if response["authenticatorData"] != nil { response["authenticatorData"] = .string(Base64URL.encode(data)) }
        members["response"] = .object(response)
        return .object(members)
    }
}

/// A passkey whose private key the audit holds — what an attacker's own authenticator is — so a
/// sign-in can carry any flags, count or signature, signed (or not) as the case needs.
struct OwnPasskey {
    let key: PrivateKey
    let credentialId: [UInt8]
    /// The rpIdHash its registration carried (the RP's: taken from the authenticator's response).
    let rpIdHash: [UInt8]
    /// BE and BS as its registration said.
    let flags: AuthenticatorFlags
    /// The user handle to answer with (the registration options' `user.id`).
    var userHandle: String?

    var id: String { Base64URL.encode(credentialId) }

    /// What a sign-in's response may have changed.
    struct Assertion {
        var flags: AuthenticatorFlags
        var signCount: UInt32 = 0
        /// The signature in place of the key's over authenticatorData ‖ SHA-256(clientDataJSON).
        var signature: (([UInt8]) throws -> [UInt8])? = nil
    }

    /// The assertion an honest authenticator holding this key makes (UP and UV set, BE and BS as
    /// registered).
    var honest: Assertion { Assertion(flags: flags.union([.userPresent, .userVerified])) }

    /// A sign-in response (AuthenticationResponseJSON, §5.1) to `challenge` from `origin`.
    func respond(challenge: [UInt8], origin: String, _ assertion: Assertion) throws -> JSONValue {
        let clientData = CollectedClientData(type: .get, challenge: challenge, origin: origin).json
        var data = AuthenticatorData(rpId: "", flags: assertion.flags, signCount: assertion.signCount)
        data.rpIdHash = rpIdHash
        let signed = data.bytes + SHA256.hash(clientData)
        let signature = try assertion.signature?(signed) ?? key.sign(signed)
        var response: [String: JSONValue] = [
            "clientDataJSON": .string(Base64URL.encode(clientData)), "authenticatorData": .string(Base64URL.encode(data.bytes)),
            "signature": .string(Base64URL.encode(signature)),
        ]
        if let userHandle { response["userHandle"] = .string(userHandle) }
        return .object(["id": .string(id), "rawId": .string(id), "type": .string("public-key"), "response": .object(response),
                        "authenticatorAttachment": .string("platform"), "clientExtensionResults": .object([:])])
    }
}
