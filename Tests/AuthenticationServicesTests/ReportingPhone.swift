import AuthenticationServices
import Foundation
import Session
import TestSupport

/// A phone of a throw-away account (device `phone`, PIN 1111, the person knows it) that is the
/// device the app `TEAM123456.com.example.app` runs on, associated with example.com.
@MainActor
func associatedPhone(in directory: String) throws -> AuthenticationServicesHost {
    var pin = Array("1111".utf8), passphrase = Array("p".utf8)
    let session = try Session.create(AccountSpec(path: directory + "/vault", passphrase: SecureBytes(consuming: &passphrase), kdf: .min,
                                                 devices: [AccountSpec.DeviceSpec(name: "phone", pin: SecureBytes(consuming: &pin))]),
                                     people: KnownPeople(pins: ["phone": "1111"], timeouts: .atOnce))
    let host = AuthenticationServicesHost(session: session, device: "phone", applicationIdentifier: "TEAM123456.com.example.app",
                                          associatedDomains: ["example.com"])
    AuthenticationServicesHost.current = host
    return host
}

/// `clientExtensionResults` of a ceremony Session answered directly (not through the module).
func extensionResults(_ json: String) throws -> [String: Any] {
    let object = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any]
    return object?["clientExtensionResults"] as? [String: Any] ?? [:]
}
