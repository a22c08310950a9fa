import Foundation
import KeyVault
@testable import Keychain
import Testing
import TestSupport
import VirtualAuthenticator

// `vault check` holds every passkey to what a registration makes (PasskeyRules), so a record an
// older `credential import` let in — a large blob over the limit, or one that does not open under
// the passkey's key — is reported rather than found by a sign-in failing with `unknown`.

private func registered(in dir: String) throws -> (Device, Credential) {
    let device = try makeDevice(in: dir)
    let made = try device.register(optionsJSON: creationOptions(userVerification: "discouraged"), origin: origin).result.credential
    return (device, made)
}

@Test func vaultCheckReportsALargeBlobOverTheLimit() throws {
    try withTemporaryDirectory { dir in
        let (device, credential) = try registered(in: dir)
        #expect(try device.check().credentialsChecked == 1)
        // As an import before these checks stored it: 100,000 bytes where a write keeps 4,096.
        try device.store().storeLargeBlob([UInt8](repeating: 7, count: 100_000), of: credential)
        let error = #expect(throws: DeviceError.self) { try device.check() }
        #expect(error?.code == .vaultCorrupted)
        #expect(error?.message.contains("the large blob is 99972 bytes") == true)
    }
}

@Test func vaultCheckReportsALargeBlobThatDoesNotOpenUnderItsKey() throws {
    try withTemporaryDirectory { dir in
        let (device, credential) = try registered(in: dir)
        try device.store().storeLargeBlob((0..<100).map { UInt8($0) }, of: credential)
        let error = #expect(throws: DeviceError.self) { try device.check() }
        #expect(error?.code == .vaultCorrupted)
        #expect(error?.message.contains("does not open under the passkey's largeBlobKey") == true)
    }
}

@Test func aLargeBlobWrittenBySignInPassesTheCheck() throws {
    try withTemporaryDirectory { dir in
        let (device, credential) = try registered(in: dir)
        let request = json(["rpId": "example.com", "challenge": "Y2hhbGxlbmdlLTI", "userVerification": "discouraged",
                            "allowCredentials": [["type": "public-key", "id": Base64URL.encode(credential.id)]],
                            "extensions": ["largeBlob": ["write": Base64URL.encode([UInt8](repeating: 1, count: 4096))]]])
        _ = try device.sign(optionsJSON: request, origin: origin)
        #expect(try device.credentials().first?.largeBlob?.count == 4096 + LargeBlob.overhead)
        #expect(try device.check().credentialsChecked == 1)
    }
}

@Test func namesAreKeptToSixtyFourBytesAtACharacterBoundary() {
    #expect(PasskeyRules.storedName("alice") == "alice")
    #expect(PasskeyRules.storedName(String(repeating: "a", count: 64)) == String(repeating: "a", count: 64))
    #expect(PasskeyRules.storedName(String(repeating: "a", count: 65)) == String(repeating: "a", count: 64))
    // 21 three-byte characters are 63 bytes: a 22nd would split.
    #expect(PasskeyRules.storedName(String(repeating: "€", count: 30)) == String(repeating: "€", count: 21))
    #expect(PasskeyRules.storedName(String(repeating: "x", count: 63) + "é").utf8.count == 63)
}
