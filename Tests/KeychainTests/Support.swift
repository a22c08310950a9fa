import Foundation
import KeyVault
import Keychain
import Testing
import VirtualAuthenticator

func secret(_ text: String) -> SecureBytes {
    var bytes = Array(text.utf8)
    return SecureBytes(consuming: &bytes)
}

let passphrase = "correct horse battery staple"
let pin = "4242"
let origin = "https://login.example.com"

/// A device on a new vault in `directory`, with the PIN above enrolled (cheapest KDF).
func makeDevice(in directory: String, maxPINAttempts: UInt32 = 5, pin enrolled: String? = pin) throws -> Device {
    try Device.create(at: directory + "/vault", passphrase: secret(passphrase), kdf: .min,
                      biometricPIN: enrolled.map(secret), maxPINAttempts: maxPINAttempts)
}

func creationOptions(userId: String = "AQID", userVerification: String = "preferred", exclude: [String] = []) -> [UInt8] {
    json([
        "rp": ["id": "example.com", "name": "Example"],
        "user": ["id": userId, "name": "alice@example.com", "displayName": "Alice"],
        "challenge": "Y2hhbGxlbmdlLTE",
        "pubKeyCredParams": [["type": "public-key", "alg": -7]],
        "authenticatorSelection": ["userVerification": userVerification],
        "excludeCredentials": exclude.map { ["type": "public-key", "id": $0] },
    ])
}

func requestOptions(userVerification: String = "preferred", allow: [String] = []) -> [UInt8] {
    json(["rpId": "example.com", "challenge": "Y2hhbGxlbmdlLTI", "userVerification": userVerification,
          "allowCredentials": allow.map { ["type": "public-key", "id": $0] }])
}

func json(_ object: Any) -> [UInt8] { Array(try! JSONSerialization.data(withJSONObject: object)) }

/// The response JSON a ceremony printed, parsed back.
func parsed(_ text: String) throws -> [String: Any] {
    try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
}

func member(_ object: [String: Any], _ path: String...) throws -> String {
    var current: Any = object
    for key in path { current = try #require((current as? [String: Any])?[key]) }
    return try #require(current as? String)
}

/// Expects `body` to fail with a DeviceError whose code is `code`.
func expectDeviceError<R>(_ code: DeviceError.Code, sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> R) {
    let error = #expect(throws: DeviceError.self, sourceLocation: sourceLocation) { _ = try body() }
    #expect(error?.code == code, sourceLocation: sourceLocation)
}

extension FileManager {
    func isDirectory(_ path: String) -> Bool {
        var directory: ObjCBool = false
        return fileExists(atPath: path, isDirectory: &directory) && directory.boolValue
    }
}

/// A small seeded generator (SplitMix64), so each randomized case repeats.
struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9e37_79b9_7f4a_7c15
        var z = state
        z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
        z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
        return z ^ (z >> 31)
    }
    mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }
}
