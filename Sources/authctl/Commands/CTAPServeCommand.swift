import CTAP
import Foundation
import Glibc
import Server
import Session

/// `authctl ctap serve`: a device answering as a USB security key, CTAPHID reports over UDP or a
/// Unix socket, with a controller to press its button and pull its power (docs/ctap.md).
enum CTAPServeCommand {
    static let udp = OptionSpec.value("--udp", "HOST:PORT",
                                      "take CTAPHID reports as UDP datagrams, one 64-byte report each, at a loopback IPv4 address and port (0: a free one); answers go to the sender")
    static let socket = OptionSpec.value("--socket", "PATH",
                                         "take CTAPHID reports on a Unix stream socket at an absolute PATH (made mode 600; never over an existing file but a socket nobody listens on, which a killed key left)",
                                         completion: .files)
    static let controller = OptionSpec.value("--controller", "HOST:PORT",
                                             "serve the controller over HTTP at a loopback IPv4 address and port (0: a free one): GET /usbN/touch/on|off, /usbN/power/on|off")
    static let touch = OptionSpec.value("--touch", "always|never|button|MS",
                                        "what the person does when the key asks for a touch: touch at once (the default), never, only while the controller holds the button, or after MS milliseconds (1 to 600000)",
                                        suggestions: ["always", "never", "button"])

    static let spec = CommandSpec(
        name: "serve", abstract: "answer as a USB security key (CTAP2 over CTAPHID) on UDP or a Unix socket",
        discussion: """
        With the global --vault option a device of that vault answers (--device, else the first), its credentials and PIN
        kept in the vault, which it holds until it ends; without, a throw-away account in memory with one device 'key'
        of the security-key profile, gone when it ends. Prints one line per place it listens ('ctap udp HOST:PORT',
        'ctap unix PATH', 'controller http://HOST:PORT'), then serves until SIGTERM or SIGINT, which remove the socket.
        Clients find it through AUTHCTL_CTAP (udp:HOST:PORT and unix:PATH entries, comma-separated), which is also
        where it listens when given neither --udp nor --socket. The wire, the controller and what the key answers are
        in docs/ctap.md.
        """,
        options: [udp, socket, controller, touch],
        arguments: [],
        examples: ["authctl ctap serve --udp 127.0.0.1:8111",
                   "authctl ctap serve --socket /run/user/1000/authctl-key.sock --controller 127.0.0.1:0 --touch button",
                   "authctl --vault ./vault --passphrase-file ./pass --device key ctap serve --udp 127.0.0.1:0"],
        run: run)

    static func run(_ args: ParsedArguments) throws(CLIError) {
        var udpAddress = try args.value(udp).map { text throws(CLIError) in try loopback(text, udp.name) }
        var socketPath = args.value(socket)
        if let socketPath, !socketPath.hasPrefix("/") {
            throw CLIError(.usage, "--socket takes an absolute path, not '\(EchoedInput.path(socketPath))'")
        }
        if udpAddress == nil && socketPath == nil, let listed = EnvironmentVariable.ctap.value, !listed.isEmpty {
            (udpAddress, socketPath) = try places(listed)
        }
        guard udpAddress != nil || socketPath != nil else {
            throw CLIError(.usage, "give where the key listens: --udp HOST:PORT, --socket PATH, or both (or AUTHCTL_CTAP)")
        }
        let controllerAddress = try args.value(controller).map { text throws(CLIError) in try loopback(text, controller.name) }
        let policy = try touchPolicy(args.value(touch))
        try Output.requireStdout()

        // SIGTERM and SIGINT are taken by sigwait alone, blocked before any thread starts — and
        // before a throw-away key's directory is made, so that a signal meanwhile still ends the
        // run through its cleanup. A vault's passphrase prompt keeps its own Ctrl-C until it is open.
        var signals = sigset_t()
        sigemptyset(&signals)
        sigaddset(&signals, SIGTERM)
        sigaddset(&signals, SIGINT)
        let session: Session, device: String?, scratch: String?
        if args.value(GlobalOptions.vault) != nil {
            let vault = try VaultSelection(args)
            session = try vault.session(.write, people: Nobody())
            VaultSelection.warn(session)
            device = vault.deviceName
            scratch = nil
            pthread_sigmask(SIG_BLOCK, &signals, nil)
        } else {
            if let named = args.value(GlobalOptions.device), named != "key" {
                throw CLIError(.usage, "--device names a device of --vault's account; without --vault the key is a throw-away device named 'key'")
            }
            pthread_sigmask(SIG_BLOCK, &signals, nil)
            (session, scratch) = try throwAwayKey()
            device = "key"
        }
        defer { if let scratch { try? FileManager.default.removeItem(atPath: scratch) } }
        // The device is checked before anything listens: an unknown name fails here, with its name.
        _ = try session.keyFacts(device: device)
        let key = SecurityKey(session: session, device: device, touch: Touch(policy: policy))

        let plugged: PluggedKey
        do { plugged = try PluggedKey(handler: key, udp: udpAddress, socket: socketPath) } catch { throw CLIError(.ioError, error.message) }
        var server: HTTPServer?
        defer {
            server?.stop()
            plugged.stop()
        }
        if let controllerAddress {
            let routes = KeyController(key: plugged, touch: key.touch)
            do {
                server = try HTTPServer(address: controllerAddress.host, port: controllerAddress.port, threads: 2, bodyLimit: 4096, timeoutSeconds: 30,
                                        headerTimeoutSeconds: 30, connectionLimit: 64) { request in
                    let answer = routes.answer(method: request.method, path: request.path, host: request.host, origin: request.origin)
                    return HTTPResponse(status: answer.status, contentType: .text, body: Array(answer.text.utf8),
                                        headers: answer.allow.map { [("Allow", $0)] } ?? [])
                }
            } catch { throw CLIError(.ioError, error.message) }
        }
        if let address = plugged.udpAddress { try Output.data("ctap udp \(address.host):\(address.port)") }
        if let path = plugged.socketPath { try Output.data("ctap unix \(path)") }
        if let server, let controllerAddress { try Output.data("controller http://\(controllerAddress.host):\(server.port)") }
        var received: Int32 = 0
        sigwait(&signals, &received)
    }

    /// `HOST:PORT` with an IPv4 loopback address (127.0.0.0/8) and a port (0: a free one): the key
    /// and its controller have no secret a client must show, so nothing off this machine may
    /// reach them.
    static func loopback(_ text: String, _ source: String) throws(CLIError) -> (host: String, port: UInt16) {
        guard let colon = text.lastIndex(of: ":"), let port = UInt16(text[text.index(after: colon)...]) else {
            throw CLIError(.usage, "\(source) takes HOST:PORT (a loopback IPv4 address and a port, 0 for a free one), not '\(EchoedInput.text(text))'")
        }
        let host = String(text[..<colon])
        var address = in_addr()
        guard inet_pton(AF_INET, host, &address) == 1 else {
            throw CLIError(.usage, "\(source) takes an IPv4 address such as 127.0.0.1, not '\(EchoedInput.text(host))'")
        }
        guard UInt32(bigEndian: address.s_addr) >> 24 == 127 else {
            throw CLIError(.usage, "\(source) \(EchoedInput.text(host)) is not a loopback address: the key answers anyone who reaches it, so it listens on 127.0.0.0/8 alone")
        }
        return (host, port)
    }

    /// The places `AUTHCTL_CTAP` lists — the clients' list of keys — as this key's: one
    /// `udp:HOST:PORT` entry, one `unix:PATH` entry, or one of each.
    static func places(_ listed: String) throws(CLIError) -> ((host: String, port: UInt16)?, String?) {
        var udpAddress: (host: String, port: UInt16)?, socketPath: String?
        for entry in listed.split(separator: ",", omittingEmptySubsequences: false).map(String.init) {
            if entry.hasPrefix("udp:"), udpAddress == nil {
                udpAddress = try loopback(String(entry.dropFirst(4)), "AUTHCTL_CTAP's udp: entry")
            } else if entry.hasPrefix("unix:/"), socketPath == nil {
                socketPath = String(entry.dropFirst(5))
            } else {
                throw CLIError(.usage, "AUTHCTL_CTAP lists one key's places for ctap serve: one udp:HOST:PORT entry, one unix:/ABSOLUTE/PATH entry, or one of each, "
                               + "comma-separated; not '\(EchoedInput.text(entry))' (or give --udp and --socket)")
            }
        }
        return (udpAddress, socketPath)
    }

    /// `--touch`: always (the default), never, button, or a number of milliseconds.
    static func touchPolicy(_ text: String?) throws(CLIError) -> Touch.Policy {
        switch text {
        case nil, "always": return .always
        case "never": return .never
        case "button": return .button
        case let text?:
            guard let milliseconds = Int(text), (1...600_000).contains(milliseconds) else {
                throw CLIError(.usage, "--touch takes always, never, button or a number of milliseconds from 1 to 600000, not '\(EchoedInput.text(text))'")
            }
            return .after(milliseconds: milliseconds)
        }
    }

    /// A throw-away account in a private temporary directory, its one device "key" a security key.
    static func throwAwayKey() throws(CLIError) -> (Session, String) {
        let base = ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        var template = Array((base + "/authctl-key-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else {
            throw CLIError(.ioError, "cannot make a temporary directory in \(EchoedInput.path(base)) ($TMPDIR): \(String(cString: strerror(errno)))")
        }
        let directory = String(cString: made)
        var passphrase = RandomSource.live.bytes(32)
        do {
            let session = try Session.create(AccountSpec(path: directory + "/vault", passphrase: SecureBytes(consuming: &passphrase), kdf: .min,
                                                         devices: [.securityKey()],
                                                         keeping: .throwAway(storeInMemory: true)))
            try session.setProfile("security-key", device: "key")
            return (session, directory)
        } catch {
            try? FileManager.default.removeItem(atPath: directory)
            throw error
        }
    }
}
