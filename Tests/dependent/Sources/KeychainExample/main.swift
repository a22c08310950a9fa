// The README's "As a Swift library" examples as a program of another package, which depends on
// the Keychain product and imports nothing of authctl but `Keychain`: every type below —
// SecureBytes, KDFLevel (KeyVault), Credential, AuthenticatorError (VirtualAuthenticator) — is
// named through that one import.
//
//   KeychainExample DIR ORIGIN CREATION_OPTIONS REQUEST_OPTIONS
//
// DIR: an empty directory for the vaults; the options: files of WebAuthn options JSON. Prints one
// line a step, `<step> <value>`: the responses as JSON, errors by name.
import Foundation
import Keychain

func secret(_ text: String) -> SecureBytes {
    var bytes = Array(text.utf8)
    return SecureBytes(consuming: &bytes)  // the array is wiped
}

let arguments = CommandLine.arguments
guard arguments.count == 5,
      let creationFile = FileManager.default.contents(atPath: arguments[3]),
      let requestFile = FileManager.default.contents(atPath: arguments[4]) else {
    FileHandle.standardError.write(Data("usage: KeychainExample DIR ORIGIN CREATION_OPTIONS REQUEST_OPTIONS\n".utf8))
    exit(64)
}
let dir = arguments[1], origin = arguments[2]
let creationOptions = [UInt8](creationFile), requestOptions = [UInt8](requestFile)
let passphrase = secret("correct horse battery staple"), pin = secret("4242")

do throws(DeviceError) {
    // One device: register, sign in, and a user who cancels.
    let device = try Device.create(at: dir + "/single", passphrase: passphrase, kdf: .min, biometricPIN: pin)
    let user = UserPolicy(pin: pin)
    let registration = try device.register(optionsJSON: creationOptions, origin: origin, user: user)
    print("register", registration.json)
    let assertion = try device.sign(optionsJSON: requestOptions, origin: origin, user: user)
    print("sign", assertion.json)
    let passkeys: [Credential] = try device.credentials()
    print("passkeys", passkeys.count)
    do throws(DeviceError) {
        _ = try device.sign(optionsJSON: requestOptions, origin: origin, user: UserPolicy(action: .cancel, pin: pin))
        print("cancel", "signed")
    } catch let error where error.code == .authenticator(.canceled) {
        let code: AuthenticatorError.Code = .canceled
        print("cancel", error.name, code.domException)
    }

    // Two devices of one account, on a virtual clock: the laptop has the phone's passkey only
    // once it has been uploaded (2 s) and downloaded (3 s).
    let clock = VirtualClock(start: 1_800_000_000_000)
    let laptopPIN = secret("5678")
    let account = try Account.create(at: dir + "/account", passphrase: passphrase, kdf: KDFLevel.min, deviceName: "phone",
                                     biometricPIN: pin, clock: clock.wallClock, random: .seeded(7))
    try account.addDevice("laptop", pin: laptopPIN, approver: UserPolicy(pin: pin))
    try account.setDelays(upload: DelayRange(parsing: "2s"), download: DelayRange(parsing: "3s"))
    print("phone-register", try account.device("phone").register(optionsJSON: creationOptions, origin: origin, user: UserPolicy(pin: pin)).json)
    do throws(DeviceError) {
        _ = try account.device("laptop").sign(optionsJSON: requestOptions, origin: origin, user: UserPolicy(pin: laptopPIN))
        print("laptop-early", "signed")
    } catch {
        print("laptop-early", error.name)
    }
    clock.advance(by: 5_000)
    print("laptop", try account.device("laptop").sign(optionsJSON: requestOptions, origin: origin, user: UserPolicy(pin: laptopPIN)).json)
} catch {
    FileHandle.standardError.write(Data("KeychainExample: \(error.name): \(error.message)\n".utf8))
    exit(1)
}
