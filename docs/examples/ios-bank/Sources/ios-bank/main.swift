import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// ios-bank FLOW BANK_URL USERNAME [--password PASSWORD] [FLOW'S OPTIONS]
// ios-bank raw USERNAME --user-id B64URL --registration-challenge B64URL --assertion-challenge B64URL
//
// Runs one story of the app against the bank, on an iPhone and an iPad of one iCloud account; one
// line a step: the step's name, then what the bank answered (or what the phone, the person or the
// app did). The flows (docs/ios.md, "An app against a bank"):
//   upgrade [--decline N] [--tamper-signature]   sign up with a password, add the passkey offered
//                      (the first N offers declined by dismissing the sheet), sign in with it by name
//   discoverable       ... and sign in with no name: the passkey's userID is the bank's userHandle
//   transfer [--amount N]   ... and a transfer verified again: Face ID fails, then matches
//   second-device      ... and sign in on the iPad: no passkey before the sync delay, then it signs in
//   exclude            ... and add a passkey again: the bank excludes the iPhone's (matchedExcludedCredential)
//   not-associated     the app's entitlement names www.yourbank.example: failed, iOS's reason
//   cancel             ... and the sign-in's sheet dismissed (canceled)
//   autofill           ... and sign in from the QuickType bar: AutoFill canceled by the app and resumed,
//                      then the passkey picked; again, ended for the sign-in sheet
//   auto-upgrade       sign up, the password saved in iCloud Keychain; the automatic upgrade after a
//                      typed password (canceled, no UI), then after the saved one picked (made, no UI)
//   no-passcode        ... on an iPhone without a passcode: deviceNotConfiguredForPasskeyCreation
//   busy               ... and the sign-in button tapped twice: the second request failed, the first signs in
//   raw                a registration and a sign-in with the given challenges, as JSON, no bank
// Exit 0: the flow ran to its end; 1: the bank refused a step ("refused STATUS BODY") or answered
// what the app cannot read ("unreadable ..."); 2: bad usage; 3: a passkey request failed and the
// flow ends there ("passkey-error {code, domain, handling, reason}", then "app ..." what the app
// does); 4: the bank could not be reached ("unreachable ..."); 5: the phone did otherwise than the
// person was scripted to ("unexpected ...", or no phone could be made).

@MainActor func report(_ step: String, _ detail: String) {
    print("\(step) \(detail)")
}

let usage = """
    usage: ios-bank FLOW BANK_URL USERNAME [--password PASSWORD]
             FLOW: upgrade [--decline N] [--tamper-signature] | discoverable | transfer [--amount N] | second-device
                   | exclude | not-associated | cancel | autofill | auto-upgrade | no-passcode | busy
           ios-bank raw USERNAME --user-id B64URL --registration-challenge B64URL --assertion-challenge B64URL

    """
let flows = ["upgrade", "discoverable", "transfer", "second-device", "exclude", "not-associated", "cancel",
             "autofill", "auto-upgrade", "no-passcode", "busy"]
/// The options each flow takes, beyond --password (every flow with a bank takes it).
let flowOptions = ["upgrade": ["--decline", "--tamper-signature"], "transfer": ["--amount"],
                   "raw": ["--user-id", "--registration-challenge", "--assertion-challenge"]]
let valued: Set = ["--password", "--decline", "--amount", "--user-id", "--registration-challenge", "--assertion-challenge"]

func refuse(_ why: String) -> Never {
    FileHandle.standardError.write(Data("ios-bank: \(why)\n\(usage)".utf8))
    exit(2)
}

var positional: [String] = [], options: [String: String] = [:]
var rest = Array(CommandLine.arguments.dropFirst())[...]
while let argument = rest.popFirst() {
    guard argument.hasPrefix("--") else { positional.append(argument); continue }
    guard valued.contains(argument) || argument == "--tamper-signature" else { refuse("no option \(argument)") }
    guard options[argument] == nil else { refuse("\(argument) given twice") }
    if valued.contains(argument) {
        guard let value = rest.popFirst() else { refuse("\(argument) needs a value") }
        options[argument] = value
    } else {
        options[argument] = ""
    }
}
guard let flow = positional.first, flows.contains(flow) || flow == "raw" else { refuse("the first argument names a flow") }
let allowed = Set(flowOptions[flow] ?? []).union(flow == "raw" ? [] : ["--password"])
if let stray = options.keys.sorted().first(where: { !allowed.contains($0) }) { refuse("\(flow) takes no \(stray)") }

/// A non-negative whole number option, at most `limit`.
@MainActor func count(_ name: String, default value: Int, limit: Int) -> Int {
    guard let text = options[name] else { return value }
    guard let number = Int(text), (0...limit).contains(number) else { refuse("\(name) takes a whole number from 0 to \(limit)") }
    return number
}

/// A base64url option that must be there.
@MainActor func bytes(_ name: String) -> Data {
    guard let text = options[name] else { refuse("raw needs \(name)") }
    guard let data = Data(base64URLEncoded: text), !data.isEmpty else { refuse("\(name) is not base64url") }
    return data
}

// Everything checked before the phone is made: a usage error leaves nothing behind.
let bank: URL?, username = positional.count > 1 ? positional[1] : ""
if flow == "raw" {
    guard positional.count == 2, !username.isEmpty else { refuse("raw takes a user name") }
    bank = nil
} else {
    guard positional.count == 3, let url = URL(string: positional[1]), url.scheme == "http" || url.scheme == "https", url.host != nil,
          !positional[2].isEmpty else { refuse("\(flow) takes a bank's URL and a user name") }
    bank = url
}
let declines = count("--decline", default: 0, limit: 10), amount = count("--amount", default: 250_000, limit: 1_000_000_000)
let raw = flow == "raw" ? (userID: bytes("--user-id"), registration: bytes("--registration-challenge"),
                          assertion: bytes("--assertion-challenge")) : nil

#if os(Linux)
let phone: LinuxPhone
do {
    // Associated Domains: the bank's domain, except for the app whose entitlement names www. only.
    // The iPhone has a passcode, except in the flow about a phone without one.
    phone = try LinuxPhone(associatedDomains: [flow == "not-associated" ? "www." + BankAuthService.relyingPartyIdentifier
                                                                        : BankAuthService.relyingPartyIdentifier],
                           passcode: flow != "no-passcode")
} catch {
    FileHandle.standardError.write(Data("ios-bank: no phone: \(error)\n".utf8))
    exit(5)
}

var status: Int32 = 0
do {
    if let raw {
        try await rawCeremonies(name: username, userID: raw.userID, registrationChallenge: raw.registration,
                                assertionChallenge: raw.assertion, report: report)
    } else if let bank {
        let run = Flows(service: BankAuthService(api: BankAPI(base: bank), report: report), phone: phone, username: positional[2],
                        password: options["--password"] ?? "correct horse battery staple", report: report)
        switch flow {
        case "upgrade": try await run.upgrade(declines: declines, tamper: options["--tamper-signature"] != nil)
        case "discoverable": try await run.discoverable()
        case "transfer": try await run.transfer(amount: amount)
        case "second-device": try await run.secondDevice()
        case "exclude": try await run.exclude()
        case "not-associated": try await run.notAssociated()
        case "autofill": try await run.autoFill()
        case "auto-upgrade": try await run.autoUpgrade()
        case "no-passcode": try await run.noPasscode()
        case "busy": try await run.busy()
        default: try await run.cancel()
        }
    }
} catch let refusal as BankRefusal {
    report("refused", refusal.description)
    status = 1
} catch let answer as UnreadableAnswer {
    report("unreadable", answer.description)
    status = 1
} catch let answer as DecodingError {
    report("unreadable", "\(answer)")
    status = 1
} catch let failure as PasskeyFailure {
    report("passkey-error", failure.description)
    report("app", failure.whatTheAppDoes)
    status = 3
} catch let error as URLError {
    report("unreachable", "\(bank?.absoluteString ?? "-"): URLError \(error.code.rawValue)")
    status = 4
} catch let unexpected as Unexpected {
    report("unexpected", unexpected.description)
    status = 5
} catch {
    report("unexpected", "\(error)")
    status = 5
}
phone.close()
exit(status)
#else
refuse("the flows script a person at an authctl phone: they run on Linux")
#endif
