import Foundation
import Glibc
import Server
import VirtualAuthenticator

/// `authctl serve`: the request layer over HTTP for test suites in any language (docs/server.md).
/// Work in progress: accounts in memory, register and sign.
enum ServeCommand {
    static let listen = OptionSpec.value("--listen", "HOST:PORT", "the IPv4 address and port to listen on (default 127.0.0.1:0, a free port)")
    static let tokenFile = OptionSpec.value("--token-file", "FILE", "the bearer token every request carries; made (mode 600) when missing")

    static let spec = CommandSpec(
        name: "serve", abstract: "serve accounts and ceremonies over HTTP",
        discussion: "Prints 'listening on URL' first, then serves until SIGTERM or SIGINT. Every request but GET /health carries "
            + "'Authorization: Bearer TOKEN': the token of --token-file, or, without it, one made for this run and printed "
            + "on the second line ('token TOKEN').",
        options: [listen, tokenFile],
        arguments: [],
        examples: ["authctl serve --listen 127.0.0.1:8321 --token-file ./token"],
        run: run)

    static func run(_ args: ParsedArguments) throws(CLIError) {
        let place = args.value(listen) ?? "127.0.0.1:0"
        guard let colon = place.lastIndex(of: ":"), let port = UInt16(place[place.index(after: colon)...]) else {
            throw CLIError(.usage, "--listen takes HOST:PORT")
        }
        let host = String(place[..<colon])
        let loopback = host.hasPrefix("127.")
        let token: String
        var printed: String?
        if let file = args.value(tokenFile) {
            if let text = try? String(contentsOfFile: file, encoding: .utf8) {
                token = text.trimmingCharacters(in: .whitespacesAndNewlines)
            } else {
                token = Base64URL.encode(RandomSource.live.bytes(32))
                let fd = open(file, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o600)
                guard fd >= 0 else { throw CLIError(.ioError, "cannot make the token file \(file): \(String(cString: strerror(errno)))") }
                let bytes = Array((token + "\n").utf8)
                let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
                close(fd)
                guard written == bytes.count else { throw CLIError(.ioError, "cannot write the token file \(file)") }
            }
            guard !token.isEmpty else { throw CLIError(.badInput, "the token file \(file) is empty") }
        } else {
            guard loopback else { throw CLIError(.usage, "listening on \(host), not loopback, needs --token-file") }
            token = Base64URL.encode(RandomSource.live.bytes(32))
            printed = token
        }
        let scratch = ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        let service = AccountService(token: token, scratch: scratch)
        var signals = sigset_t()
        sigemptyset(&signals)
        sigaddset(&signals, SIGTERM)
        sigaddset(&signals, SIGINT)
        pthread_sigmask(SIG_BLOCK, &signals, nil)  // before any thread starts: only sigwait takes them
        let server: HTTPServer
        do {
            server = try HTTPServer(address: host, port: port, threads: 4, bodyLimit: 1 << 20, timeoutSeconds: 30, connectionLimit: 1024) {
                service.handle($0)
            }
        } catch { throw CLIError(.ioError, error.message) }
        try Output.data("listening on http://\(host):\(server.port)")
        if let printed { try Output.data("token \(printed)") }
        var received: Int32 = 0
        sigwait(&signals, &received)
        server.stop()
        service.close()
    }
}
