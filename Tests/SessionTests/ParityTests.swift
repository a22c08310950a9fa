import Foundation
import Keychain
import Session
import Testing
import VirtualAuthenticator

@testable import Scenarios

/// The command line's side of a parity run: an account made as a scenario makes its own (same
/// seed, same clock, same cheapest KDF), driven by `Session` requests written by hand, as
/// `authctl register`, `sign`, `delete`, … build them.
private final class Twin {
    let clock = VirtualClock(start: ScenarioRunner.epoch)
    let directory: String
    var session: Session!
    lazy var pins = KnownPeople(timeouts: .on(clock))
    var ids = [String: [UInt8]]()

    init() throws {
        directory = try ScenarioRunner.makeWorkspace()
    }

    deinit {
        session = nil
        try? Device.removeVault(at: directory + "/vault")
        ScenarioRunner.removeWorkspace(directory)
    }

    func secret(_ text: String) -> SecureBytes {
        var bytes = Array(text.utf8)
        return SecureBytes(consuming: &bytes)
    }

    func create(_ name: String, pin: String, seed: UInt64) throws {
        session = try Session.create(AccountSpec(path: directory + "/vault", passphrase: secret("scenario"), kdf: .min,
                                                 devices: [AccountSpec.DeviceSpec(name: name, pin: secret(pin))],
                                                 keeping: .throwAway(storeInMemory: true), clock: clock, seed: seed),
                                     people: pins)
        pins[name] = pin
    }

    /// The options a scenario builds for `NAME register user U`.
    func creation(_ user: String, uv: String = "preferred", exclude: [[UInt8]] = []) -> CreationOptionsBuilder {
        CreationOptionsBuilder(rpId: "example.com", rpName: "Scenario RP", userId: Array(user.utf8), userName: user,
                               algorithms: [-7], userVerification: uv, exclude: exclude, credProps: false)
    }

    func caller() -> CallerContext { CallerContext(origin: "https://example.com") }
}

/// What a device holds and what is in flight, for comparing two accounts after a step.
private func state(_ session: Session) throws -> String {
    var lines = [String]()
    for name in session.deviceNames {
        let held = try session.passkeys(device: name).map {
            "\(Base64URL.encode($0.id)) \($0.userName) count=\($0.signCount) be=\($0.backupEligible) bs=\($0.backupState) hidden=\($0.hidden)"
        }
        lines.append("\(name): " + held.joined(separator: "; "))
        let capabilities = try session.capabilities(device: name)
        lines.append("\(name) capabilities: \(capabilities)")
    }
    lines.append(JSONOutput.string(try session.syncStatus()))
    return lines.joined(separator: "\n")
}

/// A response JSON with what no seed fixes taken out: the new key pair (OpenSSL's own randomness)
/// and ECDSA's per-signature nonce. Authenticator data stays, as its typed parts (the credential's
/// public key aside), so its flags, counter, AAGUID and credential id are compared too.
private func comparable(_ json: String) throws -> [String: String] {
    let parsed = try JSONSerialization.jsonObject(with: Data(json.utf8))
    let object = try #require(parsed as? [String: Any])
    var out = [String: String]()
    for (key, value) in object where key != "response" { out[key] = "\(value)" }
    let response = try #require(object["response"] as? [String: Any])
    for (key, value) in response where !["publicKey", "attestationObject", "signature", "authenticatorData"].contains(key) {
        out["response." + key] = "\(value)"
    }
    let text = try #require(response["authenticatorData"] as? String)
    let bytes = try #require(Base64URL.decode(text))
    let data = try AuthenticatorData(parsing: bytes)
    out["authenticatorData"] = "\(data.rpIdHash) \(data.flags.rawValue) \(data.signCount) "
        + "\(data.attestedCredentialData.map { "\($0.aaguid) \($0.credentialId) \($0.publicKey.algorithm)" } ?? "-") \(data.extensions.map { "\($0)" } ?? "-")"
    return out
}

/// One step both ways: the scenario's line, and the request the command line would make for it
/// (`nil`: the same request carries no answer of its own, only a state to compare).
private struct Pair {
    let line: String
    let request: (Twin) throws -> Result<String, SessionError>?
}

private func answer(_ body: () throws(SessionError) -> String) -> Result<String, SessionError> {
    do { return .success(try body()) } catch { return .failure(error) }
}

private func done(_ body: () throws(SessionError) -> Void) -> Result<String, SessionError>? {
    do {
        try body()
        return nil
    } catch { return .failure(error) }
}

/// Every step kind of a scenario that reaches the account (all but `http`, which talks to an RP,
/// and `origin`/`rp-id`/`seed`/`sync events`, which only set the runner's own defaults), run as a
/// scenario line and as the request the command line makes, on two accounts of the same seed and
/// clock: the same response JSON, the same error, the same state after every step.
@Test func aScenarioStepAndItsRequestGiveTheSameAnswer() throws {
    let twin = try Twin()
    let pairs: [Pair] = [
        Pair(line: "device add phone pin 1111") { t in try t.create("phone", pin: "1111", seed: 5); return nil },
        Pair(line: "device add laptop pin 2222") { t in
            t.pins["laptop"] = "2222"
            return done { () throws(SessionError) in try t.session.addDevice("laptop", pin: t.secret("2222"), approvedBy: "phone") }
        },
        Pair(line: "device add key pin 3333 profile security-key") { t in
            t.pins["key"] = "3333"
            return done { () throws(SessionError) in
                try t.session.addDevice("key", pin: t.secret("3333"), approvedBy: "phone", profile: "security-key")
            }
        },
        Pair(line: "sync upload 1s..3s download 2s..9s") { t in
            done { () throws(SessionError) in try t.session.setDelays(upload: DelayRange(parsing: "1s..3s"), download: DelayRange(parsing: "2s..9s")) }
        },
        Pair(line: "sync device laptop download 1m") { t in
            done { () throws(SessionError) in try t.session.setDelays(upload: nil, download: DelayRange(parsing: "1m"), device: "laptop") }
        },
        Pair(line: "sync backup-state immediate") { t in
            done { () throws(SessionError) in try t.session.setSyncOptions(backupStateImmediate: true) }
        },
        Pair(line: "phone register user alice as alice uv required") { t in
            answer { () throws(SessionError) in
                let r = try t.session.register(RegisterRequest(device: "phone", caller: t.caller(), options: .built(t.creation("alice", uv: "required"))))
                t.ids["alice"] = r.credential.id
                return r.json
            }
        },
        Pair(line: "phone register user alice exclude alice => matchedExcludedCredential") { t in
            answer { () throws(SessionError) in
                try t.session.register(RegisterRequest(device: "phone", caller: t.caller(), options: .built(t.creation("alice", exclude: [t.ids["alice"]!])))).json
            }
        },
        Pair(line: "laptop register user bob via phone sign-counter") { t in
            answer { () throws(SessionError) in
                let r = try t.session.register(RegisterRequest(device: "laptop", via: "phone", caller: t.caller(), options: .built(t.creation("bob")),
                                                               passkey: PasskeySettings(signatureCounter: true)))
                t.ids["bob"] = r.credential.id
                return r.json
            }
        },
        Pair(line: "phone register user carol fault wrong-origin") { t in
            answer { () throws(SessionError) in
                try t.session.register(RegisterRequest(device: "phone", caller: t.caller(), options: .built(t.creation("carol")), fault: .wrongOrigin)).json
            }
        },
        Pair(line: "phone sign credential bob") { t in
            answer { () throws(SessionError) in
                try t.session.sign(SignRequest(device: "phone", caller: t.caller(), options: .built(RequestOptionsBuilder()),
                                               person: PersonRequest(account: AccountChoice(credentialId: t.ids["bob"])))).json
            }
        },
        Pair(line: "laptop sign => notHandled") { t in
            answer { () throws(SessionError) in try t.session.sign(SignRequest(device: "laptop", caller: t.caller(), options: .built(RequestOptionsBuilder()))).json }
        },
        Pair(line: "laptop sign via phone user alice uv required pin 9999 => failed") { t in
            answer { () throws(SessionError) in
                try t.session.sign(SignRequest(device: "laptop", via: "phone", caller: t.caller(),
                                               options: .built(RequestOptionsBuilder(userVerification: "required")),
                                               person: PersonRequest(account: AccountChoice(user: "alice"), pin: "9999"))).json
            }
        },
        Pair(line: "laptop sign via phone user alice action cancel => canceled") { t in
            answer { () throws(SessionError) in
                try t.session.sign(SignRequest(device: "laptop", via: "phone", caller: t.caller(), options: .built(RequestOptionsBuilder()),
                                               person: PersonRequest(action: .cancel, account: AccountChoice(user: "alice")))).json
            }
        },
        Pair(line: "laptop sign via key => notHandled") { t in
            answer { () throws(SessionError) in
                try t.session.sign(SignRequest(device: "laptop", via: "key", caller: t.caller(), options: .built(RequestOptionsBuilder()))).json
            }
        },
        Pair(line: "wait 30s") { t in done { () throws(SessionError) in try t.session.clock(.advance(milliseconds: 30_000)) } },
        Pair(line: "at 2m laptop holds => alice,bob") { t in
            done { () throws(SessionError) in
                try t.session.clock(.set(milliseconds: ScenarioRunner.epoch + 120_000))
                _ = try t.session.passkeys(device: "laptop")
            }
        },
        Pair(line: "laptop sign credential alice timeout 1m action timeout => timedOut") { t in
            answer { () throws(SessionError) in
                try t.session.sign(SignRequest(device: "laptop", caller: t.caller(), options: .built(RequestOptionsBuilder(timeout: 60_000)),
                                               person: PersonRequest(action: .timeout, account: AccountChoice(credentialId: t.ids["alice"])))).json
            }
        },
        Pair(line: "laptop sign allow bob") { t in
            answer { () throws(SessionError) in
                try t.session.sign(SignRequest(device: "laptop", caller: t.caller(), options: .built(RequestOptionsBuilder(allow: [t.ids["bob"]!])))).json
            }
        },
        Pair(line: "phone signal details user bob name robert display Rob") { t in
            done { () throws(SessionError) in
                let json = #"{"rpId":"example.com","userId":"\#(Base64URL.encode(Array("bob".utf8)))","name":"robert","displayName":"Rob"}"#
                try t.session.signal(device: "phone", .currentUserDetails, optionsJSON: Array(json.utf8), origin: "https://example.com")
            }
        },
        Pair(line: "phone signal accepted user alice none") { t in
            done { () throws(SessionError) in
                let json = #"{"rpId":"example.com","userId":"\#(Base64URL.encode(Array("alice".utf8)))","allAcceptedCredentialIds":[]}"#
                try t.session.signal(device: "phone", .allAcceptedCredentials, optionsJSON: Array(json.utf8), origin: "https://example.com")
            }
        },
        Pair(line: "phone sign user alice => notHandled") { t in
            answer { () throws(SessionError) in
                try t.session.sign(SignRequest(device: "phone", caller: t.caller(), options: .built(RequestOptionsBuilder()),
                                               person: PersonRequest(account: AccountChoice(user: "alice")))).json
            }
        },
        Pair(line: "phone signal unknown bob") { t in
            done { () throws(SessionError) in
                let json = #"{"rpId":"example.com","credentialId":"\#(Base64URL.encode(t.ids["bob"]!))"}"#
                try t.session.signal(device: "phone", .unknownCredential, optionsJSON: Array(json.utf8), origin: "https://example.com")
            }
        },
        Pair(line: "laptop delete alice") { t in done { () throws(SessionError) in try t.session.delete(device: "laptop", credentialId: t.ids["alice"]!) } },
        Pair(line: "laptop delete alice => notHandled") { t in done { () throws(SessionError) in try t.session.delete(device: "laptop", credentialId: t.ids["alice"]!) } },
        Pair(line: "device laptop offline") { t in done { () throws(SessionError) in try t.session.change(.offline, device: "laptop") } },
        Pair(line: "phone register user dave as dave") { t in
            answer { () throws(SessionError) in
                let r = try t.session.register(RegisterRequest(device: "phone", caller: t.caller(), options: .built(t.creation("dave"))))
                t.ids["dave"] = r.credential.id
                return r.json
            }
        },
        Pair(line: "sync status") { t in done { () throws(SessionError) in _ = try t.session.syncStatus() } },
        Pair(line: "wait 1h") { t in done { () throws(SessionError) in try t.session.clock(.advance(milliseconds: 3_600_000)) } },
        Pair(line: "device laptop online") { t in done { () throws(SessionError) in try t.session.change(.online, device: "laptop") } },
        Pair(line: "device laptop unsupported") { t in done { () throws(SessionError) in try t.session.change(.passkeysSupported(false), device: "laptop") } },
        Pair(line: "laptop sign via phone => passkeysNotSupported") { t in
            answer { () throws(SessionError) in
                try t.session.sign(SignRequest(device: "laptop", via: "phone", caller: t.caller(), options: .built(RequestOptionsBuilder()))).json
            }
        },
        Pair(line: "device laptop supported") { t in done { () throws(SessionError) in try t.session.change(.passkeysSupported(true), device: "laptop") } },
        Pair(line: "laptop sign action wrong-pin uv required => failed") { t in
            answer { () throws(SessionError) in
                try t.session.sign(SignRequest(device: "laptop", caller: t.caller(), options: .built(RequestOptionsBuilder(userVerification: "required")),
                                               person: PersonRequest(action: .wrongPIN))).json
            }
        },
        Pair(line: "device laptop unlock") { t in done { () throws(SessionError) in try t.session.change(.unlockBiometry, device: "laptop") } },
        Pair(line: "device laptop pin 4444") { t in
            defer { t.pins["laptop"] = "4444" }
            return done { () throws(SessionError) in try t.session.enrollPIN(t.secret("4444"), device: "laptop") }
        },
        Pair(line: "device laptop reset") { t in
            t.pins["laptop"] = nil
            return done { () throws(SessionError) in try t.session.change(.reset, device: "laptop") }
        },
        Pair(line: "device laptop pin 5555 former 4444") { t in
            defer { t.pins["laptop"] = "5555" }
            return done { () throws(SessionError) in try t.session.enrollPIN(t.secret("5555"), device: "laptop", person: PersonRequest(pin: "4444")) }
        },
        Pair(line: "device key remove") { t in done { () throws(SessionError) in try t.session.change(.remove, device: "key") } },
    ]

    var options = ScenarioRunner.Options()
    options.environment = [:]
    let runner = try ScenarioRunner(file: "parity.scn", options: options)
    for (index, pair) in pairs.enumerated() {
        let lines = try ScenarioParser(file: "parity.scn", environment: [:]).parse(pair.line).map {
            ScenarioLine(number: index + 1, text: $0.text, at: $0.at, step: $0.step, expectation: $0.expectation)
        }
        if index == 0 { _ = try runner.run(try ScenarioParser(file: "parity.scn", environment: [:]).parse("seed 5")) }
        let report = try runner.run(lines)
        #expect(report.passed, "\(pair.line): \(report.failures)")
        let expected = try pair.request(twin)
        let step = report.steps.last!
        switch expected {
        case .success(let json):
            let recorded = runner.lastAnswer?.line == index + 1 ? try runner.lastAnswer?.answer.get() : nil
            let scenario = try #require(recorded, "\(pair.line): no answer")
            let (mine, theirs) = (try comparable(scenario), try comparable(json))
            #expect(mine == theirs, "\(pair.line): the response JSON differs: \(mine.filter { theirs[$0.key] != $0.value }) against \(theirs.filter { mine[$0.key] != $0.value })")
        case .failure(let error):
            #expect(step.outcome == error.name.rawValue && step.error == error.message, "\(pair.line): \(step.outcome) \(step.error ?? "") against \(error)")
        case nil:
            #expect(step.outcome == "ok" || step.outcome.contains(",") || step.outcome == "none", "\(pair.line): \(step.outcome) \(step.error ?? "")")
        }
        let (ours, twins) = (try state(runner.session!), try state(twin.session))
        #expect(ours == twins, "\(pair.line): the accounts differ after it:\n\(ours)\n---\n\(twins)")
    }
}
