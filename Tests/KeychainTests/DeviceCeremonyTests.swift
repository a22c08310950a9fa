import KeyVault
import Keychain
import Synchronization
import Testing
import TestSupport
import VirtualAuthenticator

@Test func aDeviceRegistersAndSignsAndOpenSSLVerifiesTheSignature() throws {
    try withTemporaryDirectory { dir in
        let device = try makeDevice(in: dir)
        let user = UserPolicy(pin: secret(pin))
        let registration = try device.register(optionsJSON: creationOptions(), origin: origin, user: user)
        let assertion = try device.sign(optionsJSON: requestOptions(), origin: origin, user: user)

        // Judge the JSON a caller receives, not the Swift values: decode what was printed.
        let reg = try parsed(registration.json), sig = try parsed(assertion.json)
        #expect(try member(sig, "id") == member(reg, "id"))
        #expect(try member(reg, "type") == "public-key")
        let spki = try #require(Base64URL.decode(try member(reg, "response", "publicKey")))
        let authData = try #require(Base64URL.decode(try member(sig, "response", "authenticatorData")))
        let clientData = try #require(Base64URL.decode(try member(sig, "response", "clientDataJSON")))
        let signature = try #require(Base64URL.decode(try member(sig, "response", "signature")))
        #expect(SignatureVerifier.verify(signature: signature, message: authData + SHA256.hash(clientData), spki: spki))
        // A verifier that can say no: one flipped bit of the signed data fails.
        var tampered = authData
        tampered[32] ^= 0x01
        #expect(!SignatureVerifier.verify(signature: signature, message: tampered + SHA256.hash(clientData), spki: spki))
        #expect(authData[32] & 0x05 == 0x05)  // UP and UV: the PIN was checked
        #expect(String(decoding: clientData, as: UTF8.self).contains(#""origin":"https://login.example.com""#))
    }
}

@Test func passkeysOutliveTheDeviceObject() throws {
    try withTemporaryDirectory { dir in
        let id: [UInt8]
        do {
            let device = try makeDevice(in: dir)
            id = try device.register(optionsJSON: creationOptions(userVerification: "discouraged"), origin: origin).result.credential.id
        }
        #expect(Device.exists(at: dir + "/vault"))
        let reopened = try Device.open(at: dir + "/vault", passphrase: secret(passphrase))
        #expect(try reopened.credentials().map(\.id) == [id])
        #expect(try reopened.credentials(rpId: "example.com").map(\.id) == [id])
        #expect(try reopened.credentials(rpId: "other.example").isEmpty)
        let signed = try reopened.sign(optionsJSON: requestOptions(userVerification: "discouraged"), origin: origin)
        #expect(signed.result.credential.id == id)
        try reopened.delete(credentialId: id)
        #expect(try reopened.credentials().isEmpty)
        expectDeviceError(.noSuchCredential) { try reopened.delete(credentialId: id) }
    }
}

@Test func theVaultRefusesAWrongPassphraseAndAMissingVault() throws {
    try withTemporaryDirectory { dir in
        _ = try makeDevice(in: dir)
        expectDeviceError(.vaultLocked) { try Device.open(at: dir + "/vault", passphrase: secret("wrong")) }
        expectDeviceError(.vaultNotFound) { try Device.open(at: dir + "/nothing", passphrase: secret(passphrase)) }
        #expect(!Device.exists(at: dir + "/nothing"))
    }
}

@Test func excludedCredentialsAreRefusedThroughTheDevice() throws {
    try withTemporaryDirectory { dir in
        let device = try makeDevice(in: dir)
        let user = UserPolicy(pin: secret(pin))
        let first = try device.register(optionsJSON: creationOptions(), origin: origin, user: user)
        let id = Base64URL.encode(first.result.credential.id)
        expectDeviceError(.authenticator(.matchedExcludedCredential)) {
            try device.register(optionsJSON: creationOptions(userId: "BAUG", exclude: [id]), origin: origin, user: user)
        }
        #expect(try device.credentials().count == 1)
    }
}

@Test func theAccountChoiceDecidesWhichPasskeySigns() throws {
    try withTemporaryDirectory { dir in
        let device = try makeDevice(in: dir, pin: nil)
        let alice = try device.register(optionsJSON: creationOptions(userId: "AQID"), origin: origin).result.credential
        let bob = try device.register(optionsJSON: creationOptions(userId: "BAUG"), origin: origin).result.credential
        #expect(try device.sign(optionsJSON: requestOptions(), origin: origin).result.credential.id == bob.id)
        let pickAlice = UserPolicy(account: AccountChoice(credentialId: alice.id))
        #expect(try device.sign(optionsJSON: requestOptions(), origin: origin, user: pickAlice).result.credential.id == alice.id)
        let pickByHandle = UserPolicy(account: AccountChoice(user: "AQID"))
        #expect(try device.sign(optionsJSON: requestOptions(), origin: origin, user: pickByHandle).result.credential.id == alice.id)
        expectDeviceError(.authenticator(.notHandled)) {
            try device.sign(optionsJSON: requestOptions(), origin: origin, user: UserPolicy(account: AccountChoice(user: "carol")))
        }
    }
}

@Test func malformedOptionsAreBadInputAndAnInsecureOriginASecurityError() throws {
    try withTemporaryDirectory { dir in
        let device = try makeDevice(in: dir)
        expectDeviceError(.authenticator(.badInput)) { try device.register(optionsJSON: Array("{".utf8), origin: origin) }
        expectDeviceError(.authenticator(.securityError)) {
            try device.register(optionsJSON: creationOptions(), origin: "http://login.example.com")
        }
        #expect(try device.credentials().isEmpty)
    }
}

@Test func anAAGUIDOfTheWrongLengthIsAnErrorNotATrap() throws {
    try withTemporaryDirectory { dir in
        let device = try makeDevice(in: dir, pin: nil)
        expectDeviceError(.invalidArgument) {
            try device.register(optionsJSON: creationOptions(), origin: origin, passkey: PasskeySettings(aaguid: [1, 2, 3]))
        }
        #expect(try device.credentials().isEmpty)
    }
}

/// A registration whose ceremony crosses a second boundary (the passkey made at the end of one
/// second, committed in the next — a slow touch, a loaded machine) is still the newest: the list,
/// and so the default passkey and a security key's enumeration, keep the order they were made in.
@Test func passkeysListInTheOrderTheyWereMadeWhenACeremonyCrossesASecond() throws {
    try withTemporaryDirectory { dir in
        let ms = Mutex<UInt64>(1_800_000_000_000)
        let device = try makeDevice(in: dir)
        // Every read of the clock is 170 ms later: some ceremonies start in one second and commit in the next.
        device.clock = WallClock { ms.withLock { $0 += 170; return $0 } }
        var made = [[UInt8]]()
        for n in 0 ..< 12 {
            let userId = Base64URL.encode(Array("user-\(n)".utf8))
            made.append(try device.register(optionsJSON: creationOptions(userId: userId, userVerification: "discouraged"),
                                            origin: origin).result.credential.id)
        }
        #expect(try device.credentials(rpId: "example.com").map(\.id) == made)
    }
}
