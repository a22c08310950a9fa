import Foundation
import Session

/// The WebAuthn options JSON a request stands for: what iOS hands iCloud Keychain for it, built
/// from the request's properties (a platform authenticator, a discoverable credential, ES256).
enum PlatformOptions {
    static func creation(_ request: ASAuthorizationPlatformPublicKeyCredentialRegistrationRequest) -> [UInt8] {
        var options: [String: Any] = [
            "rp": ["id": request.relyingPartyIdentifier, "name": request.relyingPartyIdentifier],
            "user": ["id": Base64URL.encode(request.userID), "name": request.name, "displayName": request.displayName ?? request.name],
            "challenge": Base64URL.encode(request.challenge),
            "pubKeyCredParams": [["type": "public-key", "alg": -7]],
            "authenticatorSelection": ["authenticatorAttachment": "platform", "residentKey": "required", "requireResidentKey": true,
                                       "userVerification": request.userVerificationPreference.rawValue],
            "attestation": request.attestationPreference.rawValue,
        ]
        if let excluded = request.excludedCredentials, !excluded.isEmpty {
            options["excludeCredentials"] = excluded.map { ["type": "public-key", "id": Base64URL.encode($0.credentialID)] }
        }
        if let extensions = extensions(request) { options["extensions"] = extensions }
        return serialized(options)
    }

    static func request(_ request: ASAuthorizationPlatformPublicKeyCredentialAssertionRequest) -> [UInt8] {
        var options: [String: Any] = [
            "rpId": request.relyingPartyIdentifier,
            "challenge": Base64URL.encode(request.challenge),
            "userVerification": request.userVerificationPreference.rawValue,
        ]
        if !request.allowedCredentials.isEmpty {
            options["allowCredentials"] = request.allowedCredentials.map { ["type": "public-key", "id": Base64URL.encode($0.credentialID)] }
        }
        if let extensions = extensions(request) { options["extensions"] = extensions }
        return serialized(options)
    }

    private static func serialized(_ options: [String: Any]) -> [UInt8] {
        // Strings, numbers, booleans, arrays and dictionaries of them: always serializable.
        Array((try? JSONSerialization.data(withJSONObject: options, options: [.sortedKeys])) ?? Data("{}".utf8))
    }
}

/// A response JSON a ceremony answered, read for its base64url members.
struct ResponseJSON {
    struct Missing: Error, CustomStringConvertible {
        let description: String
    }

    let object: [String: Any]

    init(_ json: String) throws(Missing) {
        guard let object = (try? JSONSerialization.jsonObject(with: Data(json.utf8))) as? [String: Any] else {
            throw Missing(description: "the response is not a JSON object")
        }
        self.object = object
    }

    func bytes(_ path: String...) throws(Missing) -> Data {
        var value: Any? = object
        for key in path { value = (value as? [String: Any])?[key] }
        guard let text = value as? String, let bytes = Base64URL.decode(text) else {
            throw Missing(description: "the response has no base64url \(path.joined(separator: "."))")
        }
        return Data(bytes)
    }
}
