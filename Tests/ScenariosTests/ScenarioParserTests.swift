import Testing

@testable import Scenarios
import Keychain

private func parse(_ text: String, environment: [String: String] = [:]) throws(ScenarioError) -> [ScenarioLine] {
    try ScenarioParser(file: "t.scn", environment: environment).parse(text)
}

/// Where parsing `text` fails, and with what message.
private func failure(_ text: String, environment: [String: String] = [:]) -> ScenarioError? {
    do {
        _ = try parse(text, environment: environment)
        return nil
    } catch {
        return error
    }
}

@Test func everyStepFormParses() throws {
    let text = """
        # a comment, then a blank line

        seed 7
        origin https://example.com   # a trailing comment
        rp-id example.com
        device add phone pin 1234 attempts 3
        device add laptop pin 5678 approve-with phone
        device laptop offline
        device laptop online
        device laptop reset
        device laptop pin 2468 approve-with phone
        device phone unlock
        device laptop remove
        sync upload 2s download 1s..5s
        sync device phone upload 250ms
        sync backup-state immediate
        wait 1.5s
        at 2m phone register user alice display "Alice A." as a1 uv required attestation direct exclude x,y device-bound sign-counter action cancel pin 0000 timeout 30s => canceled
        phone sign credential a1 allow a1,b2 via laptop fault counter-regress => ok flags=UP,UV count=1 json.x="a b"
        phone sign options {"challenge": "AAAA", "rpId": "example.com"}
        phone sign options opts.json
        phone delete a1 => notHandled
        phone holds => a1,b2
        http POST https://rp.example/finish body {"credential": $response} => ok status=200
        http GET https://rp.example/account
        at 10m
        """
    let lines = try parse(text)
    #expect(lines.count == 24)
    #expect(lines.first?.number == 3)
    guard case .register(let device, let ceremony)? = lines[15].step else { Issue.record("not a register step"); return }
    #expect(device == "phone" && ceremony.user == "alice" && ceremony.displayName == "Alice A." && ceremony.label == "a1")
    #expect(ceremony.exclude == ["x", "y"] && ceremony.deviceBound && ceremony.signCounter && ceremony.timeout == 30_000)
    #expect(lines[15].at == 120_000 && lines[15].expectation?.outcome == "canceled")
    #expect(lines[16].expectation?.checks.map(\.key) == ["flags", "count", "json.x"])
    #expect(lines[16].expectation?.checks.last?.value == "a b")
    guard case .sign(_, let inline)? = lines[17].step, case .inline(let json)? = inline.options else {
        Issue.record("inline options not read"); return
    }
    #expect(json == #"{"challenge": "AAAA", "rpId": "example.com"}"#)
    guard case .http(let method, let url, let body)? = lines[21].step else { Issue.record("not an http step"); return }
    #expect(method == "POST" && url == "https://rp.example/finish" && body == #"{"credential": $response}"#)
    #expect(lines[23].step == nil && lines[23].at == 600_000)
}

@Test func mistakesNameTheLineAndColumn() {
    let cases: [(text: String, line: Int, column: Int, says: String)] = [
        ("device add phone\nfrobnicate now", 2, 12, "unknown step"),
        ("frobnicate", 1, 1, "unknown step"),
        ("wait soon", 1, 6, "not a duration"),
        ("at later phone holds", 1, 4, "'at' takes a time"),
        ("phone holds =>", 1, 13, "needs an expected outcome"),
        ("phone holds extra", 1, 13, "holds takes no words"),
        ("phone register uv maybe", 1, 19, "uv is required"),
        ("phone register colour blue", 1, 16, "does not take 'colour'"),
        ("phone register user", 1, 16, "needs a value"),
        ("phone sign action dance", 1, 19, "action is"),
        (#"phone register user "alice"#, 1, 21, "does not end"),
        (#"phone register user "a\qb""#, 1, 23, "unknown escape"),
        ("http POST https://x.example body {\"a\": 1", 1, 34, "JSON"),
        ("http FETCH https://x.example", 1, 6, "an HTTP method"),
        ("sync upload fast", 1, 13, "not a delay"),
        ("sync upload 5s..1s", 1, 13, "not a delay"),
        ("sync backup-state sometimes", 1, 19, "immediate or after-upload"),
        ("device phone explode", 1, 14, "a device is"),
        ("device add phone attempts many", 1, 27, "whole number"),
        ("seed -1", 1, 6, "whole number"),
        ("phone holds => a b", 1, 18, "only key=value"),
        ("\n\n=> ok", 3, 1, "needs a step"),
    ]
    for c in cases {
        guard let error = failure(c.text) else {
            Issue.record("'\(c.text)' parsed")
            continue
        }
        #expect(error.file == "t.scn" && error.line == c.line && error.column == c.column, "\(c.text): \(error)")
        #expect(error.message.contains(c.says), "\(c.text): \(error.message)")
    }
}

@Test func environmentNamesAreSubstitutedAndAnUnsetOneIsAnError() throws {
    let lines = try parse("http GET ${RP}/x", environment: ["RP": "http://127.0.0.1:9"])
    guard case .http(_, let url, _)? = lines[0].step else { Issue.record("not http"); return }
    #expect(url == "http://127.0.0.1:9/x")
    #expect(failure("http GET ${RP}/x")?.message.contains("${RP} is not set") == true)
    #expect(failure("http GET ${RP/x")?.message.contains("without its '}'") == true)
}

@Test func signalAndSupportStepsParse() throws {
    let lines = try parse("""
        device phone unsupported
        device phone supported
        phone signal unknown alice => ok removed=alice
        phone signal accepted user alice a1,a2
        phone signal accepted user alice none => ok hidden=a1
        phone signal details user alice name alice@example.com display "Alice A." => ok updated=a1
        """)
    guard case .changeDevice("phone", .unsupported) = lines[0].step, case .changeDevice("phone", .supported) = lines[1].step,
          case .signal("phone", .unknown(label: "alice")) = lines[2].step,
          case .signal("phone", .accepted(user: "alice", labels: ["a1", "a2"])) = lines[3].step,
          case .signal("phone", .accepted(user: "alice", labels: [])) = lines[4].step,
          case .signal("phone", .details(user: "alice", name: "alice@example.com", displayName: "Alice A.")) = lines[5].step
    else {
        Issue.record("unexpected steps: \(lines.map { String(describing: $0.step) })")
        return
    }
    #expect(lines[5].text == "phone signal details user alice name alice@example.com display \"Alice A.\"")
    #expect(failure("phone signal forget alice")?.message.contains("signal is: unknown LABEL") == true)
    #expect(failure("phone signal unknown")?.message.contains("signal is") == true)
    #expect(failure("phone signal details user alice name x") != nil)
    #expect(failure("phone signal unknown a b")?.message.contains("unexpected 'b'") == true)
}

@Test func substitutionStopsAtTheLimitBeforeCopyingPastIt() throws {
    var parser = ScenarioParser(file: "t.scn", environment: ["PAD": String(repeating: "p", count: 100)])
    parser.textLimit = 1000
    // 17 bytes of "device add phone\n", then "# " and nine copies fit; the tenth would not.
    do {
        _ = try parser.parse("device add phone\n# " + String(repeating: "${PAD}", count: 10_000))
        Issue.record("a scenario past its limit parsed")
    } catch {
        #expect(error.line == 2 && error.column == 3 + 9 * 100, "\(error)")
        #expect(error.message.contains("with ${NAME} replaced, the scenario would be larger than"))
    }
    #expect(try parser.parse("device add phone\n# " + String(repeating: "${PAD}", count: 9)).count == 1)
    // Lines count toward the limit together, not each alone.
    #expect(throws: ScenarioError.self) { try parser.parse(String(repeating: "# ${PAD}\n", count: 10)) }
}

@Test func everyStepWordIsUsedOrRefused() {
    let inline = #"{"challenge": "AAAA"}"#
    let cases: [(text: String, column: Int, says: String)] = [
        // Beside options given whole, the words that only shape built options would be dropped.
        ("phone register uv discouraged options \(inline)", 16, "beside 'options' it would be dropped: say it in the options (authenticatorSelection.userVerification)"),
        ("phone register options \(inline) uv discouraged", 46, "authenticatorSelection.userVerification"),
        ("phone register user bob options reply", 16, "name the passkey with 'as LABEL'"),
        ("phone register display Bob options reply", 16, "user.displayName"),
        ("phone register attestation direct options reply", 16, "(attestation)"),
        ("phone register exclude a options f.json", 16, "excludeCredentials"),
        ("phone register alg eddsa options reply", 16, "pubKeyCredParams"),
        ("phone register options reply timeout 5s", 30, "(timeout)"),
        ("phone sign uv required options reply", 12, "(userVerification)"),
        ("phone sign options \(inline) allow a", 42, "allowCredentials"),
        ("phone sign timeout 1m options reply", 12, "(timeout)"),
        // A word of the other ceremony.
        ("phone sign device-bound", 12, "sign does not take 'device-bound': it is a word of register"),
        ("phone sign as a", 12, "it is a word of register"),
        ("phone sign profile apple", 12, "it is a word of register"),
        ("phone sign recent-password-sign-in", 12, "it is a word of register"),
        ("phone register credential a", 16, "register does not take 'credential': it is a word of sign"),
        ("phone register allow a,b", 16, "it is a word of sign"),
        // Said twice: the first would be dropped.
        ("phone register uv required uv discouraged", 28, "'uv' is given twice"),
        ("phone sign user a user b", 19, "'user' is given twice"),
        ("phone register device-bound device-bound", 29, "'device-bound' is given twice"),
        ("device add phone pin 1111 pin 2222", 27, "'pin' is given twice"),
        ("sync upload 1s download 2s upload 3s", 28, "'upload' is given twice"),
        ("sync device a device b upload 1s", 15, "'device' is given twice"),
        // Words the rest of the step leaves no use for.
        ("phone register fault counter-regress as a", 38, "gets no label"),
        ("device add laptop approve-with phone", 19, "without 'pin' it would be dropped"),
        ("device phone pin 1234 former", 23, "needs a value"),
        ("device phone pin 1234 former 5678 approve-with laptop", 35, "unexpected"),
        ("device phone pin 1234 later 5678", 23, "approve-with DEVICE, or former PIN"),
        ("phone register user a recent-password-sign-in", 23, "without 'mediation conditional' it would be dropped"),
        ("phone sign allow a,,b", 18, "has an empty label"),
        ("phone register exclude a,", 24, "has an empty label"),
        ("phone signal accepted user u ,a", 30, "has an empty label"),
        // A misspelt fact would make an absence check always hold, and any check always fail.
        ("phone holds => passkey!=alice", 16, "no step reports 'passkey'"),
        ("phone sign => ok flag=UP", 18, "no step reports 'flag'"),
    ]
    for c in cases {
        guard let error = failure(c.text) else {
            Issue.record("'\(c.text)' parsed")
            continue
        }
        #expect(error.line == 1 && error.column == c.column, "\(c.text): \(error)")
        #expect(error.message.contains(c.says), "\(c.text): \(error.message)")
    }
    // What stays: the picker's words beside options, and a label for options given whole.
    #expect(failure("phone sign user a credential b options reply") == nil)
    #expect(failure("phone register as a options reply action cancel pin 1234 mediation required") == nil)
    #expect(failure("phone register user a via laptop") == nil)
    #expect(failure("device phone pin 1234 former 5678") == nil)
    #expect(failure("phone register mediation conditional recent-password-sign-in") == nil)
    #expect(failure("sync status => ok phone.uploads!=a store=ok json.a.b!=1") == nil)
    #expect(failure("device list => ok phone.passkeys=2 laptop.passkeys!=0") == nil)
    #expect(failure("device list => ok .passkeys=2")?.message.contains("no step reports '.passkeys'") == true)
}

@Test func deviceListIsAStepAndADeviceNamedListIsStillADevice() throws {
    let lines = try parse("device add list pin 1234\ndevice list\ndevice list offline")
    guard case .deviceList? = lines[1].step else { Issue.record("not a device list"); return }
    guard case .changeDevice("list", .offline)? = lines[2].step else { Issue.record("not the device named list"); return }
}

@Test func durationsMayBeCompoundEverywhereOneIsRead() throws {
    let lines = try parse("""
        at 1h30m
        wait 48h5m
        sync upload 1m30s download 2s500ms..1h0.5m
        phone sign timeout 1m30s
        sync status
        sync status device laptop
        """)
    #expect(lines[0].at == 5_400_000)
    guard case .wait(let ms)? = lines[1].step, case .delays(nil, let up?, let down?)? = lines[2].step,
          case .sign(_, let c)? = lines[3].step, case .syncStatus(nil)? = lines[4].step, case .syncStatus("laptop")? = lines[5].step
    else { Issue.record("steps: \(lines.map { String(describing: $0.step) })"); return }
    #expect(ms == 173_100_000 && up.lower == 90_000 && up.upper == 90_000 && down.lower == 2_500 && down.upper == 3_630_000)
    #expect(c.timeout == 90_000)
    for bad in ["5s1m", "1h1h", "1hm", "1m30", "m5s", "1.5.5s", "1h-5m", ""] {
        #expect(failure("wait \(bad)") != nil, "\(bad)")
        #expect(DelayRange.milliseconds(bad) == nil, "\(bad)")
    }
    #expect(failure("sync status laptop")?.message.contains("sync status takes nothing, or device NAME") == true)
    #expect(failure("sync status device")?.column == 13)
}

/// `autofill begin` takes a sign-in's words and is conditional; the person's pick is its own step,
/// so a word that would say it at the beginning is refused at its column, as is any other mistake.
@Test func autofillStepsParse() throws {
    let lines = try parse("""
        laptop autofill begin uv required allow alice,bob timeout 1m => ok
        laptop autofill offers => alice,bob
        laptop autofill pick bob => ok credential=bob
        laptop autofill dismiss => timedOut
        """)
    guard case .autofill("laptop", .begin(let c))? = lines[0].step, case .autofill("laptop", .offers)? = lines[1].step,
          case .autofill("laptop", .pick(label: "bob"))? = lines[2].step, case .autofill("laptop", .dismiss)? = lines[3].step
    else {
        Issue.record("unexpected steps: \(lines.map { String(describing: $0.step) })")
        return
    }
    #expect(c.mediation == "conditional" && c.userVerification == "required" && c.allow == ["alice", "bob"] && c.timeout == 60_000)
    let cases: [(text: String, column: Int, says: String)] = [
        ("laptop autofill", 8, "autofill is"),
        ("laptop autofill open", 17, "autofill is"),
        ("laptop autofill begin credential alice", 23, "does not take 'credential'"),
        ("laptop autofill begin mediation optional", 23, "does not take 'mediation'"),
        ("laptop autofill begin display Alice", 23, "does not take 'display'"),
        ("laptop autofill offers alice", 24, "takes no words"),
        ("laptop autofill pick", 17, "takes a passkey's label"),
        ("laptop autofill pick a b", 24, "takes a passkey's label"),
    ]
    for c in cases {
        guard let error = failure(c.text) else {
            Issue.record("'\(c.text)' parsed")
            continue
        }
        #expect(error.line == 1 && error.column == c.column, "\(c.text): \(error)")
        #expect(error.message.contains(c.says), "\(c.text): \(error.message)")
    }
}

/// Lines are found in the text's bytes as splitting its Characters at "\n" and "\r\n" finds
/// them: a lone "\r" stays in its line, "\r\r\n" leaves one, empty lines and a last line without
/// a newline are kept, and a line feed after a combining mark or inside other text splits alike.
@Test func linesAreSplitAsCharactersWouldSplitThem() throws {
    let texts = ["", "\n", "\r\n", "a", "a\n", "a\r\nb", "a\rb\n", "a\r\r\nb", "\r", "\r\r", "\n\n\r\n\n", "é\u{301}\nx\u{301}\r\n",
                 "device add phone\r\nphone register user u1 => ok\r\n", "tail\r", "🇫🇷\n🇫🇷\r\n\u{200D}\n"]
    for text in texts {
        let expected = text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" }).map(String.init)
        #expect(ScenarioParser.lines(of: text).map(String.init) == expected, "\(Array(text.utf8))")
    }
    // A file with Windows line ends is the same scenario, line for line.
    let unix = "device add phone\nphone register user u1 => ok\n\n# done\n"
    let windows = unix.split(separator: "\n", omittingEmptySubsequences: false).joined(separator: "\r\n")
    #expect(try parse(windows).map(\.text) == parse(unix).map(\.text))
}
