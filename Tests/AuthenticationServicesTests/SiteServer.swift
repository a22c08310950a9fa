import Foundation
import TestSupport
import Testing

/// A real HTTPS server for a domain's `apple-app-site-association`: Python's `ssl` with a leaf
/// certificate for the test's domains, issued by a CA of its own (both made by the `openssl`
/// command), on 127.0.0.1 — and a plain HTTP one beside it. What it answers is `routes`, read at
/// every request (`"HOST/PATH": {"status", "body", "headers"}`, else 404); what it was asked is
/// `requests` (`"https HOST PATH"`, a line each).
final class SiteServer {
    let directory: TemporaryDirectory
    /// The CA that issued the server's certificate, as a PEM file.
    let caPath: String
    let tlsPort: Int
    let plainPort: Int
    private let process: Process
    /// The server's stdin: it ends when this process does, and the server with it.
    private let lifeline = Pipe()

    /// The names the certificate carries.
    static let names = ["example.com", "*.example.com", "other.example", "bank.example"]

    init() throws {
        directory = try TemporaryDirectory("authctl-aasa")
        let dir = directory.path
        caPath = dir + "/ca.pem"
        try Self.openssl(["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", dir + "/ca.key",
                          "-out", caPath, "-days", "2", "-subj", "/CN=authctl test CA",
                          "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign"])
        try Self.openssl(["req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", dir + "/leaf.key",
                          "-out", dir + "/leaf.csr", "-subj", "/CN=example.com"])
        let extensions = "subjectAltName=" + Self.names.map { "DNS:" + $0 }.joined(separator: ",")
            + "\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n"
        try extensions.write(toFile: dir + "/leaf.ext", atomically: true, encoding: .utf8)
        try Self.openssl(["x509", "-req", "-in", dir + "/leaf.csr", "-CA", caPath, "-CAkey", dir + "/ca.key", "-CAcreateserial",
                          "-out", dir + "/leaf.pem", "-days", "2", "-extfile", dir + "/leaf.ext"])
        try "{}".write(toFile: dir + "/routes.json", atomically: true, encoding: .utf8)

        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", Self.script, dir]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        process.standardInput = lifeline
        try process.run()
        // The first line is the two ports; an ended pipe is a server that did not start.
        var line = Data()
        while !line.contains(0x0A) {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            line += chunk
        }
        let ports = String(decoding: line, as: UTF8.self).split(whereSeparator: \.isWhitespace).compactMap { Int($0) }
        guard ports.count == 2 else {
            Self.stop(process)
            throw ServerDidNotStart()
        }
        (tlsPort, plainPort) = (ports[0], ports[1])
    }

    deinit { Self.stop(process) }

    /// SIGKILL: a child of this process may have SIGTERM blocked, as the thread that spawned it had.
    private static func stop(_ process: Process) {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    struct ServerDidNotStart: Error {}

    /// Answers `status` with `body` for `host`'s association file from now.
    func serve(_ host: String, status: Int = 200, body: String, headers: [String: String] = ["Content-Type": "application/json"]) throws {
        var routes = (try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: directory.path + "/routes.json")))) as? [String: Any] ?? [:]
        routes[host + "/.well-known/apple-app-site-association"] = ["status": status, "body": body, "headers": headers]
        try JSONSerialization.data(withJSONObject: routes).write(to: URL(fileURLWithPath: directory.path + "/routes.json"))
    }

    /// A file whose `webcredentials.apps` lists `apps`.
    static func file(listing apps: [String]) -> String {
        String(decoding: try! JSONSerialization.data(withJSONObject: ["webcredentials": ["apps": apps]]), as: UTF8.self)
    }

    /// What the servers were asked so far, a line each.
    var requests: [String] {
        ((try? String(contentsOfFile: directory.path + "/requests.log", encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    /// Where each of the certificate's domains (and `more`) is reached: the TLS server.
    func addresses(_ domains: [String] = ["example.com", "login.example.com", "other.example", "bank.example"]) -> [String: String] {
        Dictionary(uniqueKeysWithValues: domains.map { ($0, "127.0.0.1:\(tlsPort)") })
    }

    private static func openssl(_ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["openssl"] + arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        try #require(process.terminationStatus == 0, "openssl \(arguments.prefix(2).joined(separator: " ")) failed")
    }

    private static let script = #"""
import http.server, json, os, ssl, sys, threading
root = sys.argv[1]

class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self):
        host = (self.headers.get("Host") or "").split(":")[0]
        with open(os.path.join(root, "requests.log"), "a") as log:
            log.write(f"{self.server.kind} {host} {self.path}\n")
        with open(os.path.join(root, "routes.json")) as f:
            route = json.load(f).get(host + self.path, {"status": 404, "body": "no such file", "headers": {}})
        body = route["body"].encode()
        self.send_response(route["status"])
        for name, value in route["headers"].items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass

tls = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
tls.kind = "https"
context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
context.load_cert_chain(os.path.join(root, "leaf.pem"), os.path.join(root, "leaf.key"))
tls.socket = context.wrap_socket(tls.socket, server_side=True)
plain = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
plain.kind = "http"
print(tls.server_address[1], plain.server_address[1], flush=True)
threading.Thread(target=plain.serve_forever, daemon=True).start()
threading.Thread(target=tls.serve_forever, daemon=True).start()
sys.stdin.read()  # until the test process is gone
"""#
}
