import Foundation
import Glibc
import Server
import Session

/// `authctl webdriver --upstream URL`: `serve` in front of a browser's driver, answering WebAuthn
/// L3 §11's commands with authctl's devices in that browser's pages (docs/browser.md, "WebDriver's
/// virtual authenticators for any browser").
enum WebDriverCommand {
    static let upstream = OptionSpec.value("--upstream", "URL", "the browser's driver: chromedriver's or WebKitWebDriver's http://HOST:PORT (and any base path)",
                                           required: true)
    static let listen = OptionSpec.value("--listen", "HOST:PORT", "the loopback address and port to listen on (default 127.0.0.1:0, a free port)")
    static let webKitBrowser = OptionSpec.value("--webkit-browser", "PATH",
                                                "authctl-webkit, which WebKitWebDriver is made to launch (default $AUTHCTL_WEBKIT_BROWSER, else authctl-webkit beside authctl)",
                                                completion: .files)

    static let spec = CommandSpec(
        name: "webdriver", abstract: "stand in front of a browser's WebDriver, answering WebAuthn's virtual-authenticator commands with authctl's devices",
        discussion: """
        Prints 'listening on URL' and 'token TOKEN' first, as serve does; point the WebDriver client (Selenium, WebdriverIO) at
        URL instead of the driver's. Every command goes on to --upstream unchanged, but WebAuthn L3 §11's (Add Virtual
        Authenticator, Add Credential, Get Credentials, Remove Credential(s), Set User Verified, Set Credential Properties),
        which are answered here: each virtual authenticator is a device of its own, and the session's pages loaded from then
        on get the page bridge of its newest one — through CDP for chromedriver, and for WebKitWebDriver by launching
        authctl-webkit (when New Session names webkitgtk:browserOptions) with a user script this command writes. New Session's
        answer carries webauthn:virtualAuthenticators and the extensions authctl supports. WebDriver's commands carry no
        token, as a driver's take none, so it listens on loopback only; serve's own routes (/accounts, /bridge.js) are there
        too, with the token. Serves until SIGTERM or SIGINT, which end every authenticator.
        """,
        options: [upstream, listen, webKitBrowser, ServeCommand.tokenFile, ServeCommand.threads, ServeCommand.headerTimeout, ServeCommand.scratch],
        arguments: [],
        examples: ["chromedriver --port=9515 & authctl webdriver --upstream http://127.0.0.1:9515 --listen 127.0.0.1:4444",
                   "xvfb-run -a WebKitWebDriver --port=9516 & authctl webdriver --upstream http://127.0.0.1:9516"],
        run: run)

    static func run(_ args: ParsedArguments) throws(CLIError) {
        let given = args.value(upstream) ?? ""
        guard let url = URLComponents(string: given), url.scheme == "http", url.host?.isEmpty == false, url.query == nil, url.fragment == nil,
              url.user == nil, url.password == nil else {
            throw CLIError(.usage, "--upstream takes the driver's http://HOST:PORT (and any base path), not \(EchoedInput.text(given))")
        }
        try ServeCommand.serve(args, intermediary: WebDriverIntermediary(upstream: given, webKitBrowser: try browser(args)))
    }

    /// authctl-webkit: --webkit-browser, else $AUTHCTL_WEBKIT_BROWSER, else beside this program
    /// (`nil`: none there; a WebKitGTK session is then refused with a message that says so).
    private static func browser(_ args: ParsedArguments) throws(CLIError) -> String? {
        let named = args.value(webKitBrowser) ?? EnvironmentVariable.webKitBrowser.value.flatMap { $0.isEmpty ? nil : $0 }
        if let named {
            let path = named.hasPrefix("/") ? named : FileManager.default.currentDirectoryPath + "/" + named
            guard access(path, X_OK) == 0 else { throw CLIError(.usage, "the WebKit browser \(EchoedInput.path(named)) is not a program this user can run") }
            return path
        }
        guard let program = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") else { return nil }
        let beside = URL(fileURLWithPath: program).deletingLastPathComponent().appendingPathComponent("authctl-webkit").path
        return access(beside, X_OK) == 0 ? beside : nil
    }
}
