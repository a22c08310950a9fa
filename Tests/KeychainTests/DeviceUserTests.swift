import KeyVault
import Keychain
import Testing
import TestSupport
import VirtualAuthenticator

@Test func cancelWrongPINAndLockoutThroughTheSwiftAPI() throws {
    try withTemporaryDirectory { dir in
        let device = try makeDevice(in: dir, maxPINAttempts: 2)
        let good = UserPolicy(pin: secret(pin))
        let made = try device.register(optionsJSON: creationOptions(userVerification: "required"), origin: origin, user: good)
        let before = try device.credentials()

        expectDeviceError(.authenticator(.canceled)) {
            try device.sign(optionsJSON: requestOptions(), origin: origin, user: UserPolicy(action: .cancel, pin: secret(pin)))
        }
        #expect(device.biometry.failures == 0)

        // A wrong PIN typed, then the wrong finger: each counted, the second locks out.
        expectDeviceError(.authenticator(.failed)) {
            try device.sign(optionsJSON: requestOptions(), origin: origin, user: UserPolicy(pin: secret("0000")))
        }
        #expect(device.biometry.failures == 1 && device.biometry.maxAttempts == 2 && !device.biometry.lockedOut)
        expectDeviceError(.authenticator(.failed)) {
            try device.sign(optionsJSON: requestOptions(), origin: origin, user: UserPolicy(action: .wrongPIN))
        }
        #expect(device.biometry.lockedOut)

        // Locked out: even the right PIN is refused, and is not asked for.
        var asked = false
        let watching = UserPolicy(pin: { _ throws(AuthenticatorError) in asked = true; return secret(pin) })
        expectDeviceError(.authenticator(.biometryLockout)) {
            try device.sign(optionsJSON: requestOptions(), origin: origin, user: watching)
        }
        #expect(!asked)
        #expect(try device.credentials() == before)

        // The passphrase (which opened this device) clears the lockout.
        try device.unlockBiometry()
        let signed = try device.sign(optionsJSON: requestOptions(), origin: origin, user: good)
        #expect(signed.result.credential.id == made.result.credential.id)
        #expect(device.biometry.failures == 0)
    }
}

@Test func theLockoutIsInTheVaultNotInTheObject() throws {
    try withTemporaryDirectory { dir in
        do {
            let device = try makeDevice(in: dir, maxPINAttempts: 1)
            _ = try device.register(optionsJSON: creationOptions(), origin: origin, user: UserPolicy(pin: secret(pin)))
            expectDeviceError(.authenticator(.failed)) {
                try device.sign(optionsJSON: requestOptions(), origin: origin, user: UserPolicy(action: .wrongPIN))
            }
        }
        let reopened = try Device.open(at: dir + "/vault", passphrase: secret(passphrase))
        #expect(reopened.biometry.lockedOut)
    }
}

@Test func aPasskeyMadeWithVerificationNeedsThePINOnEveryUse() throws {
    try withTemporaryDirectory { dir in
        let device = try makeDevice(in: dir)
        _ = try device.register(optionsJSON: creationOptions(userVerification: "required"), origin: origin,
                                user: UserPolicy(pin: secret(pin)))
        // Discouraged, yet the key is sealed under the biometry key: the PIN is asked for anyway.
        expectDeviceError(.authenticator(.notInteractive)) {
            try device.sign(optionsJSON: requestOptions(userVerification: "discouraged"), origin: origin)
        }
        let signed = try device.sign(optionsJSON: requestOptions(userVerification: "discouraged"), origin: origin,
                                     user: UserPolicy(pin: secret(pin)))
        #expect(signed.result.authenticatorData[32] & 0x04 == 0x04)
    }
}

@Test func aTimeoutWaitsThroughTheInjectedClock() throws {
    try withTemporaryDirectory { dir in
        let device = try makeDevice(in: dir)
        var waited: [Duration] = []
        let patient = UserPolicy(action: .timeout, wait: { waited.append($0) })
        var options = try #require(String(validating: creationOptions(), as: UTF8.self))
        options.removeLast()
        options += #","timeout":15000}"#
        expectDeviceError(.authenticator(.timedOut)) { try device.register(optionsJSON: Array(options.utf8), origin: origin, user: patient) }
        #expect(waited == [.milliseconds(15000)])
        options.removeLast(6)
        options += #"1500}"#  // below Chrome's ten seconds: raised to them
        expectDeviceError(.authenticator(.timedOut)) { try device.register(optionsJSON: Array(options.utf8), origin: origin, user: patient) }
        #expect(waited == [.milliseconds(15000), .milliseconds(10000)])
        #expect(try device.credentials().isEmpty)
    }
}

@Test func anEnrolledPINCanBeChangedAndAForgottenOneReset() throws {
    try withTemporaryDirectory { dir in
        let device = try makeDevice(in: dir)
        let uvMade = try device.register(optionsJSON: creationOptions(userVerification: "required"), origin: origin,
                                         user: UserPolicy(pin: secret(pin)))
        _ = try device.register(optionsJSON: creationOptions(userId: "BAUG", userVerification: "discouraged"), origin: origin)

        expectDeviceError(.authenticator(.failed)) { try device.enrollBiometricPIN(secret("9999"), user: UserPolicy(pin: secret("0000"))) }
        expectDeviceError(.invalidArgument) { try device.enrollBiometricPIN(secret("12"), user: UserPolicy(pin: secret(pin))) }
        try device.enrollBiometricPIN(secret("9999"), user: UserPolicy(pin: secret(pin)))
        // The same biometry key under the new PIN: the passkey made with UV still signs.
        let signed = try device.sign(optionsJSON: requestOptions(allow: [Base64URL.encode(uvMade.result.credential.id)]),
                                     origin: origin, user: UserPolicy(pin: secret("9999")))
        #expect(signed.result.credential.id == uvMade.result.credential.id)

        // Forgotten: a new key; what was sealed under the old one is deleted with it.
        #expect(try device.enrollBiometricPIN(secret("5555"), reset: true) == 1)
        #expect(try device.credentials().map(\.userHandle) == [[4, 5, 6]])
        let check = try device.check()
        #expect(check.credentialsChecked == 1 && check.sealedUnderBiometry == 0)
    }
}
