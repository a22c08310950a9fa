import CTAP
import Foundation
import Glibc
import Session

/// `authctl bench ctap`: authenticatorGetAssertion round trips per second on a security key — in
/// process (the CBOR in, the CBOR out: ``SecurityKey/cbor(_:progress:)``), and through the wire a
/// client meets (CTAPHID reports over UDP on loopback and over a Unix socket, to `PluggedKey`, one
/// client waiting for each answer before it sends the next request), in one run, so the ratios
/// hold on one machine at one time.
package enum CTAPBenchmark {
    package struct Row: Encodable {
        package let path: String
        package let perSecond: Double
        /// The rate against the in-process one.
        package let ratio: Double
    }

    package struct Report: Encodable {
        package let seconds: Double
        package let rows: [Row]
    }

    package static func run(seconds duration: Double) throws(SessionError) -> Report {
        let directory = NSTemporaryDirectory() + "/authctl-bench-ctap-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var passphrase = Array("bench".utf8)
        let session = try Session.create(AccountSpec(path: directory, passphrase: SecureBytes(consuming: &passphrase), kdf: .min,
                                                     devices: [.securityKey()], keeping: .throwAway(storeInMemory: true)))
        try session.setProfile("security-key", device: "key")
        let key = SecurityKey(session: session, device: "key", touch: Touch(policy: .always))
        let hash = [UInt8](repeating: 0x42, count: 32)
        let made = key.cbor([0x01] + CBORValue.map([
            (.int(1), .bytes(hash)),
            (.int(2), .map([(.text("id"), .text("bench.example"))])),
            (.int(3), .map([(.text("id"), .bytes([1])), (.text("name"), .text("b"))])),
            (.int(4), .array([.map([(.text("alg"), .int(-7)), (.text("type"), .text("public-key"))])])),
        ]).encoded(), progress: CTAPProgress())
        guard made.first == 0, let registration = try? CBORValue.decode(Array(made.dropFirst())),
              let data = registration[.int(2)]?.bytesValue, data.count > 55 else {
            throw SessionError(.unknown, "the key made no credential (status \(made.first ?? 0xFF))")
        }
        let idLength = Int(data[53]) << 8 | Int(data[54])
        let id = Array(data[55..<55 + idLength])
        let request = [UInt8(0x02)] + CBORValue.map([
            (.int(1), .text("bench.example")), (.int(2), .bytes(hash)),
            (.int(3), .array([.map([(.text("id"), .bytes(id)), (.text("type"), .text("public-key"))])])),
        ]).encoded()

        let inProcess = try rate(duration) { () throws(SessionError) in
            guard key.cbor(request, progress: CTAPProgress()).first == 0 else { throw SessionError(.unknown, "a GetAssertion failed") }
        }
        var rows = [Row(path: "in process", perSecond: inProcess, ratio: 1)]
        let socketPath = directory + "/key.sock"
        let plugged: PluggedKey
        do { plugged = try PluggedKey(handler: key, udp: ("127.0.0.1", 0), socket: socketPath) } catch {
            throw SessionError(.ioError, error.message)
        }
        defer { plugged.stop() }
        for (name, client) in [("UDP (loopback)", try Client.udp(port: plugged.udpAddress?.port ?? 0)), ("Unix socket", try Client.unix(path: socketPath))] {
            defer { close(client.descriptor) }
            let channel = try client.initialize()
            let perSecond = try rate(duration) { () throws(SessionError) in try client.transact(channel, command: 0x10, request) }
            rows.append(Row(path: name, perSecond: perSecond, ratio: perSecond / inProcess))
        }
        return Report(seconds: duration, rows: rows)
    }

    /// How many times `body` runs per second, over `duration` seconds (after a short warm-up).
    static func rate(_ duration: Double, _ body: () throws(SessionError) -> Void) throws(SessionError) -> Double {
        for _ in 0..<20 { try body() }
        var count = 0
        let start = Date()
        var elapsed = 0.0
        while elapsed < duration {
            for _ in 0..<10 { try body() }
            count += 10
            elapsed = Date().timeIntervalSince(start)
        }
        return Double(count) / elapsed
    }

    /// A CTAPHID client on one socket: 64-byte reports out, whole messages back.
    struct Client {
        let descriptor: Int32

        static func udp(port: UInt16) throws(SessionError) -> Client {
            let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = port.bigEndian
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard fd >= 0, connected == 0 else { throw SessionError(.ioError, "cannot reach the key over UDP") }
            return Client(descriptor: fd)
        }

        static func unix(path: String) throws(SessionError) -> Client {
            let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            withUnsafeMutableBytes(of: &address.sun_path) { raw in
                for (i, byte) in path.utf8.prefix(raw.count - 1).enumerated() { raw[i] = byte }
            }
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
            }
            guard fd >= 0, connected == 0 else { throw SessionError(.ioError, "cannot reach the key over its Unix socket") }
            return Client(descriptor: fd)
        }

        /// CTAPHID_INIT on the broadcast channel: the channel the key allocates.
        func initialize() throws(SessionError) -> [UInt8] {
            let nonce: [UInt8] = [1, 2, 3, 4, 5, 6, 7, 8]
            let answer = try transact([0xFF, 0xFF, 0xFF, 0xFF], command: 0x06, nonce)
            guard answer.count >= 12, Array(answer[0..<8]) == nonce else { throw SessionError(.unknown, "CTAPHID_INIT was not answered") }
            return Array(answer[8..<12])
        }

        /// One message on `channel`, and its answer (KEEPALIVEs skipped).
        @discardableResult
        func transact(_ channel: [UInt8], command: UInt8, _ payload: [UInt8]) throws(SessionError) -> [UInt8] {
            var report = channel + [0x80 | command, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)] + payload.prefix(57)
            try send(report)
            var offset = min(57, payload.count), sequence: UInt8 = 0
            while offset < payload.count {
                report = channel + [sequence] + payload[offset..<min(offset + 59, payload.count)]
                try send(report)
                offset += 59
                sequence += 1
            }
            var first: [UInt8]
            repeat { first = try receive() } while first[4] == 0xBB  // KEEPALIVE
            guard first[4] == 0x80 | command else { throw SessionError(.unknown, "the key answered CTAPHID command \(first[4]) (error \(first[7]))") }
            let length = Int(first[5]) << 8 | Int(first[6])
            var message = Array(first[7..<min(64, 7 + length)])
            while message.count < length {
                let next = try receive()
                message += next[5..<min(64, 5 + length - message.count)]
            }
            return message
        }

        private func send(_ report: [UInt8]) throws(SessionError) {
            var padded = report
            padded += [UInt8](repeating: 0, count: 64 - padded.count)
            guard write(descriptor, padded, 64) == 64 else { throw SessionError(.ioError, "a report could not be sent") }
        }

        private func receive() throws(SessionError) -> [UInt8] {
            var report = [UInt8](repeating: 0, count: 64)
            var got = 0
            while got < 64 {
                let n = report.withUnsafeMutableBytes { read(descriptor, $0.baseAddress! + got, 64 - got) }
                guard n > 0 else { throw SessionError(.ioError, "the key closed the connection") }
                got += n
            }
            return report
        }
    }
}
