import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(CryptoKit)
import CryptoKit
#else
import CLibCrypto
#endif

/// JSON over HTTPS to the app's server, the session in the shared cookie store.
final class JSONClient: Sendable {
    struct Refused: Error { let status: Int }

    let base: URL

    init(base: URL) {
        self.base = base
    }

    func post<Answer: Decodable>(_ path: String, _ body: [String: String], as: Answer.Type) async throws -> Answer {
        var request = URLRequest(url: base.appendingPathComponent(path))
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = try JSONEncoder().encode(body)
        let (data, response) = try await URLSession.shared.data(for: request)
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        guard (200..<300).contains(status) else { throw Refused(status: status) }
        return try JSONDecoder().decode(Answer.self, from: data)
    }
}

/// An answer with nothing in it the app reads.
struct Done: Decodable {}

/// The app's account server: passkey registration for a signed-in user.
final class AuthAPIClient: Sendable {
    static let shared = AuthAPIClient(client: JSONClient(base: URL(string: "https://example.com/api")!))

    struct RegistrationBegun: Decodable { let challenge: String; let userID: String }
    private struct Challenge: Decodable { let challenge: String }
    private struct HasPasskey: Decodable { let hasPasskey: Bool }

    private let client: JSONClient

    init(client: JSONClient) {
        self.client = client
    }

    func beginPasskeyRegistration(username: String) async throws -> RegistrationBegun {
        try await client.post("passkeys/register/begin", ["username": username], as: RegistrationBegun.self)
    }

    func finishPasskeyRegistration(credentialID: String, clientDataJSON: String, attestationObject: String) async throws {
        _ = try await client.post("passkeys/register/finish", ["credentialID": credentialID, "clientDataJSON": clientDataJSON,
                                                              "attestationObject": attestationObject], as: Done.self)
    }

    func userHasPasskey(userID: String) async throws -> Bool {
        try await client.post("passkeys/exists", ["userID": userID], as: HasPasskey.self).hasPasskey
    }

    /// A discoverable sign-in's challenge (the AutoFill sign-in names no user).
    func beginPasskeySignIn() async throws -> Data {
        guard let challenge = Data(base64URLEncoded: try await client.post("passkeys/signin/begin", [:], as: Challenge.self).challenge) else {
            throw PasskeyError.invalidResponse
        }
        return challenge
    }

    func finishPasskeySignIn(_ assertion: PasskeyAssertion) async throws {
        _ = try await client.post("passkeys/signin/finish", [
            "credentialID": assertion.credentialID.base64URLEncodedString(),
            "clientDataJSON": assertion.rawClientDataJSON.base64URLEncodedString(),
            "authenticatorData": assertion.rawAuthenticatorData.base64URLEncodedString(),
            "signature": assertion.signature.base64URLEncodedString(),
            "userHandle": assertion.userID?.base64URLEncodedString() ?? ""], as: Done.self)
    }

    func fetchRegistrationChallenge() async throws -> Data {
        guard let challenge = Data(base64URLEncoded: try await client.post("passkeys/challenge", [:], as: Challenge.self).challenge) else {
            throw PasskeyError.invalidResponse
        }
        return challenge
    }

    func addPasskey(_ registration: PasskeyRegistration, forUser username: String) async throws {
        _ = try await client.post("passkeys", ["username": username] + Self.fields(registration), as: Done.self)
    }

    func addPasskeyToAccount(_ registration: PasskeyRegistration, keepPassword: Bool) async throws {
        _ = try await client.post("account/passkeys", ["keepPassword": String(keepPassword)] + Self.fields(registration), as: Done.self)
    }

    private static func fields(_ registration: PasskeyRegistration) -> [String: String] {
        ["credentialID": registration.credentialID.base64URLEncodedString(),
         "clientDataJSON": registration.rawClientDataJSON.base64URLEncodedString(),
         "attestationObject": registration.rawAttestationObject.base64URLEncodedString()]
    }
}

/// The bank's server: sign-in, token, and the transfer's verification.
final class BankingAPI: Sendable {
    static let shared = BankingAPI(client: JSONClient(base: URL(string: "https://yourbank.com/api")!))

    private struct Begun: Decodable { let challenge: String; let allowedCredentials: [String] }
    private struct Finished: Decodable { let token: String; let expiresAt: Date; let user: BankUser }

    private let client: JSONClient

    init(client: JSONClient) {
        self.client = client
    }

    func beginAuth() async throws -> (challenge: String, allowedCredentials: [String]) {
        let begun = try await client.post("auth/begin", [:], as: Begun.self)
        return (begun.challenge, begun.allowedCredentials)
    }

    func finishAuth(credentialID: String, clientDataJSON: String, authenticatorData: String,
                    signature: String) async throws -> (token: String, expiresAt: Date, user: BankUser) {
        let finished = try await client.post("auth/finish", ["credentialID": credentialID, "clientDataJSON": clientDataJSON,
                                                             "authenticatorData": authenticatorData, "signature": signature], as: Finished.self)
        return (finished.token, finished.expiresAt, finished.user)
    }

    func validateToken(_ token: String) async throws -> BankUser? {
        try await client.post("token/validate", ["token": token], as: BankUser?.self)
    }

    func verifyForTransaction(credentialID: String, clientDataJSON: String, signature: String, authenticatorData: String) async throws {
        _ = try await client.post("transfer/verify", ["credentialID": credentialID, "clientDataJSON": clientDataJSON,
                                                      "signature": signature, "authenticatorData": authenticatorData], as: Done.self)
    }

    func sendTransfer(amount: String, recipient: String) async throws {
        _ = try await client.post("transfer", ["amount": amount, "recipient": recipient], as: Done.self)
    }
}

/// Whether a password session is open, and for whom.
@MainActor
final class SessionManager {
    static let shared = SessionManager()

    var isAuthenticated = false
    var username = ""
}

/// The app's analytics. On iOS a vendor's SDK (Firebase's `Analytics.logEvent`, …), which has no
/// Linux build; here, the events this process logged.
enum Analytics {
    nonisolated(unsafe) private(set) static var events: [(name: String, parameters: [String: String])] = []
    private static let lock = NSLock()

    static func log(_ name: String, parameters: [String: String] = [:]) {
        lock.withLock { events.append((name, parameters)) }
    }
}

extension Data {
    /// The SHA-256 of these bytes (the guide derives a user handle from the user name): CryptoKit's
    /// on Apple's platforms; OpenSSL's libcrypto on Linux, which has no CryptoKit (swift-crypto's
    /// `Crypto` has the same API, for a package that may depend on it).
    func sha256() -> Data {
        #if canImport(CryptoKit)
        Data(SHA256.hash(data: self))
        #else
        var digest = [UInt8](repeating: 0, count: Int(SHA256_DIGEST_LENGTH))
        withUnsafeBytes { bytes in _ = SHA256(bytes.bindMemory(to: UInt8.self).baseAddress, bytes.count, &digest) }
        return Data(digest)
        #endif
    }
}

private func + (lhs: [String: String], rhs: [String: String]) -> [String: String] {
    lhs.merging(rhs) { _, new in new }
}
