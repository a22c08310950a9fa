#if canImport(Glibc)
import Glibc
#endif
import CTAP
import Foundation
import Testing

/// A key plugged in on UDP, and its power line.
@Suite struct PluggedKeyTests {
    /// A UDP client of the key at 127.0.0.1:`port`, reading with a generous deadline.
    final class Client {
        let fd: Int32

        init(port: UInt16) throws {
            fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
            var timeout = timeval(tv_sec: 30, tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = port.bigEndian
            address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            try #require(connected == 0)
        }

        deinit { close(fd) }

        func send(_ report: [UInt8]) { _ = Glibc.send(fd, report, report.count, 0) }

        func receive() -> [UInt8]? {
            var report = [UInt8](repeating: 0, count: 64)
            return recv(fd, &report, report.count, 0) == 64 ? report : nil
        }
    }

    @Test func datagramsSentWhileTheKeyIsOffAreNeverAnsweredAfterItComesBack() throws {
        let fixture = try KeyFixture()
        let plugged = try PluggedKey(handler: fixture.key, udp: (host: "127.0.0.1", port: 0), socket: nil)
        defer { plugged.stop() }
        let client = try Client(port: try #require(plugged.udpAddress?.port))
        plugged.powerOff()
        // Many, so that some are still queued, unread, as the power comes back.
        for _ in 0..<500 { client.send(CTAPHIDFramingTests.initialization(0xFFFF_FFFF, 0x06, length: 8, Array("unplugd!".utf8))) }
        try plugged.powerOn()
        client.send(CTAPHIDFramingTests.initialization(0xFFFF_FFFF, 0x06, length: 8, Array("plugged!".utf8)))
        let first = try #require(client.receive())
        #expect(String(decoding: first[7..<15], as: UTF8.self) == "plugged!")
    }
}
