import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if os(Linux)
import Session
#endif

// ios-bank BANK_URL USERNAME [--password PASSWORD] [--cancel-sheet] [--tamper-signature]
//
// Signs USERNAME up at the bank with a password (or signs in with it if the name is taken), adds
// a passkey if the bank offers it, signs out and signs in with the passkey; one line a step:
// the step's name, then what the bank answered. --cancel-sheet dismisses the passkey sheet (the
// offer is declined); --tamper-signature flips a byte of the sign-in's signature before it is sent.
// Exit 0: every step done; 1: the bank refused a step ("refused STATUS BODY"); 2: bad usage;
// 3: the passkey request failed on the phone ("passkey-error ..."); 4: the bank could not be
// reached ("unreachable ...").

@MainActor func report(_ step: String, _ detail: String) {
    print("\(step) \(detail)")
}

var arguments = Array(CommandLine.arguments.dropFirst())
@MainActor func flag(_ name: String) -> Bool {
    guard let index = arguments.firstIndex(of: name) else { return false }
    arguments.remove(at: index)
    return true
}
@MainActor func option(_ name: String) -> String? {
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return nil }
    defer { arguments.removeSubrange(index...index + 1) }
    return arguments[index + 1]
}
let cancelSheet = flag("--cancel-sheet"), tamperSignature = flag("--tamper-signature")
let password = option("--password") ?? "correct horse battery staple"
guard arguments.count == 2, let bank = URL(string: arguments[0]), bank.scheme == "http" || bank.scheme == "https",
      !arguments[1].isEmpty, !arguments[1].hasPrefix("--") else {
    FileHandle.standardError.write(Data("usage: ios-bank BANK_URL USERNAME [--password PASSWORD] [--cancel-sheet] [--tamper-signature]\n".utf8))
    exit(2)
}
let username = arguments[1]

#if os(Linux)
let phone: LinuxPhone
do {
    phone = try LinuxPhone(person: PersonRequest(action: cancelSheet ? .cancel : .approve))
} catch {
    FileHandle.standardError.write(Data("ios-bank: no phone: \(error)\n".utf8))
    exit(3)
}
defer { phone.close() }
#endif

let service = BankAuthService(api: BankAPI(base: bank), report: report)
var status: Int32 = 0
do {
    if try await service.signUpOrSignIn(username: username, password: password) {
        if try await service.upgradeToPasskey() != nil {
            try await service.signOut()
            try await service.signInWithPasskey(username: username) { signed in
                if tamperSignature { signed.signature[signed.signature.index(before: signed.signature.endIndex)] ^= 0x01 }
            }
        }
    } else {
        report("upgrade", "not offered")
    }
} catch let refusal as BankRefusal {
    report("refused", refusal.description)
    status = 1
} catch let error as PasskeyError {
    report("passkey-error", error.description)
    status = 3
} catch let error as URLError {
    report("unreachable", "\(bank.absoluteString): URLError \(error.code.rawValue)")
    status = 4
} catch {
    report("error", "\(error)")
    status = 1
}
#if os(Linux)
phone.close()
#endif
exit(status)
