import Foundation
import KeyVault
import Keychain
import Testing
import TestSupport
import VirtualAuthenticator

private let start: UInt64 = 1_800_000_000_000
private let phonePIN = "1111", laptopPIN = "2222"

/// A phone and a laptop on a virtual clock, 2 s up and 3 s down.
private func account(in dir: String) throws -> (Account, VirtualClock) {
    let clock = VirtualClock(start: start)
    let account = try Account.create(at: dir + "/vault", passphrase: secret(passphrase), kdf: .min, deviceName: "phone",
                                     biometricPIN: secret(phonePIN), clock: clock.wallClock, random: .seeded(3))
    try account.addDevice("laptop", pin: secret(laptopPIN), approver: UserPolicy(pin: secret(phonePIN)))
    try account.setDelays(upload: DelayRange(parsing: "2s"), download: DelayRange(parsing: "3s"))
    return (account, clock)
}

private func register(_ account: Account, _ userId: String, on device: String = "phone") throws -> Credential {
    try account.device(device).register(optionsJSON: creationOptions(userId: userId, userVerification: "discouraged"),
                                        origin: origin).result.credential
}

private func signal(_ kind: Signal.Kind, _ object: [String: Any], on device: Device) throws -> SignalEffect {
    try device.signal(kind, optionsJSON: json(object), origin: origin)
}

private func sign(_ device: Device, allow: [Credential] = []) throws -> Credential {
    try device.sign(optionsJSON: requestOptions(userVerification: "discouraged", allow: allow.map { Base64URL.encode($0.id) }),
                    origin: origin).result.credential
}

/// The RP's signals and the capabilities a device reports (Device+signal, Device.capabilities).
@Suite struct SignalTests {
    @Test func unknownCredentialDeletesThePasskeyAndTheDeletionSyncs() throws {
        try withTemporaryDirectory { dir in
            let (account, clock) = try account(in: dir)
            let alice = try register(account, "YWxpY2U"), bob = try register(account, "Ym9i")
            clock.advance(by: 5_000)
            #expect(try account.device("laptop").credentials().count == 2)
            let effect = try signal(.unknownCredential, ["rpId": "example.com", "credentialId": Base64URL.encode(bob.id)],
                                    on: account.device("phone"))
            #expect(effect.removed.map(\.id) == [bob.id])
            #expect(try account.device("phone").credentials().map(\.id) == [alice.id])
            #expect(try account.device("laptop").credentials().count == 2)  // not arrived yet
            clock.advance(by: 5_000)
            #expect(try account.device("laptop").credentials().map(\.id) == [alice.id])
            expectDeviceError(.authenticator(.notHandled)) { try sign(account.device("laptop"), allow: [bob]) }
        }
    }

    @Test func aSignalThatMatchesNothingChangesNothing() throws {
        try withTemporaryDirectory { dir in
            let (account, _) = try account(in: dir)
            let alice = try register(account, "YWxpY2U")
            let phone = try account.device("phone")
            let frames = try account.facts.frames
            #expect(try signal(.unknownCredential, ["rpId": "example.com", "credentialId": "AAAA"], on: phone).isEmpty)
            #expect(try signal(.allAcceptedCredentials, ["rpId": "example.com", "userId": "Ym9i", "allAcceptedCredentialIds": []], on: phone).isEmpty)
            #expect(try signal(.allAcceptedCredentials, ["rpId": "example.com", "userId": "YWxpY2U",
                                                         "allAcceptedCredentialIds": [Base64URL.encode(alice.id)]], on: phone).isEmpty)
            #expect(try signal(.currentUserDetails, ["rpId": "example.com", "userId": "YWxpY2U", "name": alice.userName,
                                                     "displayName": alice.userDisplayName], on: phone).isEmpty)
            // Another RP's passkey with the same id is not this RP's.
            #expect(try signal(.unknownCredential, ["rpId": "login.example.com", "credentialId": Base64URL.encode(alice.id)], on: phone).isEmpty)
            #expect(try account.facts.frames == frames)
        }
    }

    @Test func acceptedCredentialsHidesTheOthersAndRestoresThemWhenListedAgain() throws {
        try withTemporaryDirectory { dir in
            let (account, clock) = try account(in: dir)
            let first = try register(account, "YWxpY2U")
            clock.advance(by: 5_000)
            let bob = try register(account, "Ym9i")
            let phone = try account.device("phone")
            let hid = try signal(.allAcceptedCredentials, ["rpId": "example.com", "userId": "YWxpY2U", "allAcceptedCredentialIds": []], on: phone)
            #expect(hid.hidden.map(\.id) == [first.id])
            let held = try phone.credentials()
            #expect(held.map(\.id) == [first.id, bob.id])  // kept, for list
            #expect(held[0].hidden && !held[1].hidden)
            #expect(try sign(phone).id == bob.id)  // the hidden one is offered to no ceremony
            expectDeviceError(.authenticator(.notHandled)) { try sign(phone, allow: [first]) }
            clock.advance(by: 5_000)
            #expect(try account.device("laptop").credential(id: first.id)?.hidden == true)
            let back = try signal(.allAcceptedCredentials, ["rpId": "example.com", "userId": "YWxpY2U",
                                                            "allAcceptedCredentialIds": [Base64URL.encode(first.id)]],
                                  on: account.device("laptop"))
            #expect(back.restored.map(\.id) == [first.id])
            #expect(try sign(account.device("laptop"), allow: [first]).id == first.id)
            clock.advance(by: 5_000)
            #expect(try account.device("phone").credential(id: first.id)?.hidden == false)
        }
    }

    @Test func aNewRegistrationReplacesTheUsersHiddenPasskey() throws {
        try withTemporaryDirectory { dir in
            let (account, _) = try account(in: dir)
            let old = try register(account, "YWxpY2U")
            let phone = try account.device("phone")
            _ = try signal(.allAcceptedCredentials, ["rpId": "example.com", "userId": "YWxpY2U", "allAcceptedCredentialIds": []], on: phone)
            let new = try register(account, "YWxpY2U")
            #expect(try phone.credentials().map(\.id) == [new.id])
            #expect(old.id != new.id)
        }
    }

    @Test func currentUserDetailsRenamesTheUsersPasskeysOnEveryDevice() throws {
        try withTemporaryDirectory { dir in
            let (account, clock) = try account(in: dir)
            let alice = try register(account, "YWxpY2U"), bob = try register(account, "Ym9i")
            let effect = try signal(.currentUserDetails, ["rpId": "example.com", "userId": "YWxpY2U", "name": "alice@new.example",
                                                          "displayName": "Alice N."], on: account.device("phone"))
            #expect(effect.updated.map(\.id) == [alice.id])
            clock.advance(by: 5_000)
            let laptop = try account.device("laptop")
            #expect(try laptop.credential(id: alice.id)?.userName == "alice@new.example")
            #expect(try laptop.credential(id: alice.id)?.userDisplayName == "Alice N.")
            #expect(try laptop.credential(id: bob.id)?.userName == "alice@example.com")  // creationOptions' name, untouched
            #expect(try sign(laptop, allow: [alice]).userName == "alice@new.example")
        }
    }

    @Test func signalsAreValidatedAsTheClientDoesAndChangeNothingWhenRefused() throws {
        try withTemporaryDirectory { dir in
            let (account, _) = try account(in: dir)
            let alice = try register(account, "YWxpY2U")
            let phone = try account.device("phone")
            let frames = try account.facts.frames
            expectDeviceError(.authenticator(.badInput)) {
                try signal(.unknownCredential, ["rpId": "example.com", "credentialId": "not+base64url"], on: phone)
            }
            expectDeviceError(.authenticator(.badInput)) {
                try signal(.allAcceptedCredentials, ["rpId": "example.com", "userId": "YWxpY2U", "allAcceptedCredentialIds": ["a=b"]], on: phone)
            }
            expectDeviceError(.authenticator(.badInput)) {
                try signal(.currentUserDetails, ["rpId": "example.com", "userId": "YWxpY2U", "name": "x"], on: phone)
            }
            expectDeviceError(.authenticator(.securityError)) {
                try signal(.unknownCredential, ["rpId": "other.example", "credentialId": Base64URL.encode(alice.id)], on: phone)
            }
            expectDeviceError(.authenticator(.securityError)) {
                try phone.signal(.unknownCredential, optionsJSON: json(["rpId": "example.com", "credentialId": Base64URL.encode(alice.id)]),
                                 origin: "http://example.com")
            }
            #expect(try account.facts.frames == frames)
            #expect(try phone.credentials().map(\.id) == [alice.id])
        }
    }

    @Test func aDeviceWithoutPasskeySupportHasNoCapabilityAndRefusesEverything() throws {
        try withTemporaryDirectory { dir in
            let (account, clock) = try account(in: dir)
            let alice = try register(account, "YWxpY2U")
            let laptop = try account.device("laptop")
            let capabilities = try laptop.capabilities()
            #expect(capabilities.userVerifyingPlatformAuthenticatorAvailable && capabilities["hybridTransport"] == true)
            try account.setPasskeysSupported(false, device: "laptop")
            let none = try laptop.capabilities()
            #expect(none.values.allSatisfy { !$0.value })
            #expect(!none.userVerifyingPlatformAuthenticatorAvailable && !none.conditionalMediationAvailable)
            #expect(try account.device("phone").capabilities()["hybridTransport"] == false)  // the laptop cannot answer hybrid
            expectDeviceError(.passkeysNotSupported) { try sign(laptop) }
            expectDeviceError(.passkeysNotSupported) {
                try laptop.register(optionsJSON: creationOptions(userId: "Ym9i", userVerification: "discouraged"), origin: origin)
            }
            expectDeviceError(.passkeysNotSupported) {
                try signal(.unknownCredential, ["rpId": "example.com", "credentialId": Base64URL.encode(alice.id)], on: laptop)
            }
            clock.advance(by: 5_000)
        #expect(try laptop.credentials().map(\.id) == [alice.id])  // sync goes on; listing still works
            try account.setPasskeysSupported(true, device: "laptop")
            #expect(try laptop.capabilities() == capabilities)
        }
    }

    @Test func capabilitiesFollowBiometryAndProfile() throws {
        try withTemporaryDirectory { dir in
            let noBiometry = try makeDevice(in: dir + "/a", pin: nil)
            let a = try noBiometry.capabilities()
            #expect(!a.userVerifyingPlatformAuthenticatorAvailable && a["passkeyPlatformAuthenticator"] == false && a["conditionalGet"] == true)
            let key = try makeDevice(in: dir + "/b")
            try key.account.setProfile("security-key")
            let b = try key.capabilities()
            #expect(!b.userVerifyingPlatformAuthenticatorAvailable && b["conditionalGet"] == false && b["signalUnknownCredential"] == true)
            #expect(b["extension:prf"] == true && b["conditionalCreate"] == false && b["relatedOrigins"] == true)
        }
    }
}
