import Foundation
import Testing
@testable import Server

/// What `authctl webdriver` changes in New Session: WebKitGTK's browser made authctl-webkit with
/// the session's user script, and the answer's `webauthn:` capabilities made authctl's.
struct NewSessionCapabilitiesTests {
    static func json(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    static func text(_ object: [String: Any]) throws -> String {
        String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]), as: UTF8.self)
    }

    @Test func webKitGTKIsNamedByItsBrowserOptionsInAnyCapabilitySet() throws {
        #expect(NewSessionCapabilities.namesWebKitGTK(try Self.json(#"{"capabilities":{"alwaysMatch":{"webkitgtk:browserOptions":{}}}}"#)))
        #expect(NewSessionCapabilities.namesWebKitGTK(try Self.json(#"{"capabilities":{"firstMatch":[{},{"webkitgtk:browserOptions":{"args":[]}}]}}"#)))
        #expect(!NewSessionCapabilities.namesWebKitGTK(try Self.json(#"{"capabilities":{"alwaysMatch":{"goog:chromeOptions":{}}}}"#)))
        #expect(!NewSessionCapabilities.namesWebKitGTK(try Self.json(#"{"capabilities":"webkitgtk:browserOptions"}"#)))
        #expect(!NewSessionCapabilities.namesWebKitGTK([:]))
    }

    @Test func theWebKitBrowserIsAuthctlWebKitUnderAutomationWithTheSessionsUserScript() throws {
        let body = try Self.json(#"""
            {"capabilities":{"alwaysMatch":{"acceptInsecureCerts":true,
              "webkitgtk:browserOptions":{"binary":"/usr/lib/MiniBrowser","args":["--user-script=/elsewhere.js","--proxy=socks5://127.0.0.1:1","--user-script","/other.js"]}},
             "firstMatch":[{"pageLoadStrategy":"eager"},{"webkitgtk:browserOptions":{"args":["--automation"]}},"not a set"]}}
            """#)
        let sent = NewSessionCapabilities.launchingWebKit(body, browser: "/opt/authctl-webkit", userScript: "/tmp/s/user-script.js")
        #expect(try Self.text(sent) == #"""
            {"capabilities":{"alwaysMatch":{"acceptInsecureCerts":true,"webkitgtk:browserOptions":{"args":["--automation","--proxy=socks5://127.0.0.1:1","--user-script=/tmp/s/user-script.js"],"binary":"/opt/authctl-webkit"}},\#
            "firstMatch":[{"pageLoadStrategy":"eager"},{"webkitgtk:browserOptions":{"args":["--automation","--user-script=/tmp/s/user-script.js"],"binary":"/opt/authctl-webkit"}},"not a set"]}}
            """#)
    }

    @Test func argumentsAuthctlWebKitWouldRefuseAreNamedBeforeTheDriverWaitsOnIt() throws {
        func why(_ args: String) throws -> String? {
            NewSessionCapabilities.untakenArguments(try Self.json(#"{"capabilities":{"firstMatch":[{},{"webkitgtk:browserOptions":{"args":"# + args + "}}]}}"))
        }
        #expect(try why(#"["--automation","--proxy","socks5://127.0.0.1:1","--ignore-host=localhost","--user-script","/x.js"]"#) == nil)
        #expect(try why(#"["--automation","--gtk-module=/tmp/evil.so"]"#) == "not " + JSONText.shown("--gtk-module=/tmp/evil.so"))
        #expect(try why(#"["--enable-webgl"]"#) == "not " + JSONText.shown("--enable-webgl"))
        #expect(try why(#"["--automation","--proxy"]"#) == "--proxy without its value")
        #expect(try why(#"["--automation",1]"#) == "an argument is not a string")
        #expect(try why(#""--automation""#) == "args is not a list")
        #expect(NewSessionCapabilities.untakenArguments(try Self.json(#"{"capabilities":{"alwaysMatch":{"webkitgtk:browserOptions":{}}}}"#)) == nil)
    }

    @Test func theAnswersWebAuthnCapabilitiesAreAuthctlsAndTheRestTheDriversAsSent() throws {
        let answer = try Self.json(#"""
            {"value":{"sessionId":"6cfd","capabilities":{"browserName":"chrome","goog:chromeOptions":{"debuggerAddress":"localhost:1"},
              "acceptInsecureCerts":false,"timeouts":{"script":30000},"webauthn:virtualAuthenticators":true,
              "webauthn:extension:minPinLength":true,"webauthn:extension:cmtgKey":true,"webauthn:extension:prf":true}}}
            """#)
        let made = try #require(NewSessionCapabilities.answered(answer, extensions: ["webauthn:virtualAuthenticators": true, "webauthn:extension:prf": true,
                                                                                      "webauthn:extension:largeBlob": true]))
        #expect(made.sessionId == "6cfd" && made.chromium)
        #expect(try Self.text(made.body) == #"""
            {"value":{"capabilities":{"acceptInsecureCerts":false,"browserName":"chrome","goog:chromeOptions":{"debuggerAddress":"localhost:1"},\#
            "timeouts":{"script":30000},"webauthn:extension:largeBlob":true,"webauthn:extension:prf":true,"webauthn:virtualAuthenticators":true},"sessionId":"6cfd"}}
            """#, "false stays false, numbers numbers: the JSON is re-written, not re-typed")
        let webKit = try Self.json(#"{"value":{"sessionId":"a-b","capabilities":{"browserName":"MiniBrowser"}}}"#)
        #expect(NewSessionCapabilities.answered(webKit, extensions: [:])?.chromium == false)
    }

    @Test func anAnswerThatMadeNoSessionIsNotTracked() throws {
        for text in [#"{"value":{"error":"session not created","message":"no"}}"#, #"{"value":{"sessionId":"","capabilities":{}}}"#,
                     #"{"value":{"sessionId":"x"}}"#, #"{"value":[]}"#, #"{}"#] {
            #expect(NewSessionCapabilities.answered(try Self.json(text), extensions: [:]) == nil, "\(text)")
        }
    }
}

/// The hosts a WebDriver command may name through the intermediary: loopback's alone (a page's
/// name made to resolve to 127.0.0.1 is refused).
struct LoopbackHostTests {
    @Test func loopbacksNamesAndAddressesWithOrWithoutAPort() {
        for host in ["localhost", "LOCALHOST:4444", "127.0.0.1", "127.0.0.1:9515", "127.255.0.9:1", "[::1]", "[::1]:4444"] {
            #expect(WebDriverIntermediary.isLoopback(host), "\(host)")
        }
    }

    @Test func everyOtherHostIsNot() {
        for host in ["", "evil.example", "evil.example:4444", "localhost.evil.example", "127.0.0.1.evil.example", "127.0.0.256", "128.0.0.1",
                     "127.0.0", "[::1]x", "[::2]:1", "[::1]evil", "0.0.0.0", "127.0.0.1:4444:1"] {
            #expect(!WebDriverIntermediary.isLoopback(host), "\(host)")
        }
    }
}
