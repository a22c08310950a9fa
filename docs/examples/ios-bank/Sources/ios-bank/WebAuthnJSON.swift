import Foundation

/// The bank speaks WebAuthn's JSON (PublicKeyCredentialCreationOptionsJSON and its kin, WebAuthn
/// L3 §5.1.8–§5.1.10): binary members are base64url without padding.
extension Data {
    init?(base64URLEncoded text: String) {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        self.init(base64Encoded: base64)
    }

    func base64URLEncodedString() -> String {
        base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}

struct CredentialDescriptorJSON: Codable, Sendable {
    let id: String
}

/// What `POST /register/begin` answers under "publicKey": the members the app passes on.
struct CreationOptionsJSON: Decodable, Sendable {
    struct RelyingParty: Decodable, Sendable { let id: String }
    struct User: Decodable, Sendable { let id: String; let name: String; let displayName: String }
    struct Selection: Decodable, Sendable { let userVerification: String? }
    let rp: RelyingParty
    let user: User
    let challenge: String
    let excludeCredentials: [CredentialDescriptorJSON]?
    let authenticatorSelection: Selection?
    let attestation: String?
}

/// What `POST /login/begin` answers under "publicKey".
struct RequestOptionsJSON: Decodable, Sendable {
    let challenge: String
    let rpId: String?
    let allowCredentials: [CredentialDescriptorJSON]?
    let userVerification: String?
}

struct Begun<Options: Decodable & Sendable>: Decodable, Sendable {
    let publicKey: Options
}

/// RegistrationResponseJSON (§5.1.8), as a browser's `toJSON()` writes it.
struct RegistrationResponseJSON: Encodable, Sendable {
    struct Response: Encodable, Sendable { let clientDataJSON: String; let attestationObject: String; let transports: [String] }
    let id: String
    let rawId: String
    let response: Response
    let type = "public-key"
    let authenticatorAttachment: String
    let clientExtensionResults: [String: String] = [:]

    init(_ passkey: CreatedPasskey) {
        id = passkey.credentialID.base64URLEncodedString()
        rawId = id
        response = Response(clientDataJSON: passkey.rawClientDataJSON.base64URLEncodedString(),
                            attestationObject: passkey.rawAttestationObject.base64URLEncodedString(), transports: ["internal", "hybrid"])
        authenticatorAttachment = passkey.attachment
    }
}

/// AuthenticationResponseJSON (§5.1.9).
struct AuthenticationResponseJSON: Encodable, Sendable {
    struct Response: Encodable, Sendable {
        let clientDataJSON: String; let authenticatorData: String; let signature: String; let userHandle: String?
    }
    let id: String
    let rawId: String
    let response: Response
    let type = "public-key"
    let authenticatorAttachment: String
    let clientExtensionResults: [String: String] = [:]

    init(_ signed: PasskeySignature) {
        id = signed.credentialID.base64URLEncodedString()
        rawId = id
        response = Response(clientDataJSON: signed.rawClientDataJSON.base64URLEncodedString(),
                            authenticatorData: signed.rawAuthenticatorData.base64URLEncodedString(),
                            signature: signed.signature.base64URLEncodedString(), userHandle: signed.userID?.base64URLEncodedString())
        authenticatorAttachment = signed.attachment
    }
}

/// A finish endpoint's body: the response under "credential".
struct Finish<Credential: Encodable & Sendable>: Encodable, Sendable {
    let credential: Credential
}
