#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// CTAPHID over UDP, the convention of SoloKeys' simulator: the key is bound to an IPv4 address
/// and port, every datagram is one 64-byte report (no report-id byte), and every report the key
/// sends goes to the address the datagrams of that request came from. A datagram of any other
/// size is ignored. While the key has no power the datagrams are read and dropped (the socket
/// stays bound, so the port is the key's when the power comes back).
final class UDPTransport: @unchecked Sendable {
    let host: String
    /// The port bound (the one the system chose, for port 0).
    let port: UInt16
    private let socket: SocketDescriptor
    private let wake: WakePipe
    private let done = DispatchSemaphore(value: 0)
    /// Held from a datagram's read to the key's taking it, and while the power comes back: a
    /// datagram read while the key had no power is dropped, never answered after.
    private let reading = NSLock()

    /// Binds `host:port` (an IPv4 address) and reads on a thread of its own, handing each report
    /// to `key`.
    init(host: String, port: UInt16, key: HIDKey) throws(CTAPTransportError) {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        guard inet_pton(AF_INET, host, &address.sin_addr) == 1 else { throw CTAPTransportError("\(host) is not an IPv4 address") }
        let fd = Glibc.socket(AF_INET, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw CTAPTransportError("cannot make a UDP socket: \(CTAPTransportError.reason(errno))") }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else {
            let why = errno
            Glibc.close(fd)
            throw CTAPTransportError("cannot bind UDP \(host):\(port): \(CTAPTransportError.reason(why))")
        }
        var chosen = sockaddr_in(), length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &chosen) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        self.host = host
        self.port = UInt16(bigEndian: chosen.sin_port)
        socket = SocketDescriptor(fd)
        do { wake = try WakePipe() } catch {
            socket.close()
            throw error
        }
        let reader = Thread { [socket, wake, done, reading] in
            Self.read(socket, until: wake, into: key, reading: reading)
            done.signal()
        }
        reader.name = "authctl.ctap.udp"
        reader.start()
    }

    /// Each datagram of exactly one report, to the key, its sender the endpoint of the answer.
    private static func read(_ socket: SocketDescriptor, until wake: WakePipe, into key: HIDKey, reading: NSLock) {
        var report = [UInt8](repeating: 0, count: CTAPHIDPacket.reportSize)
        while let fd = socket.withOpen({ $0 }), readable(fd, unless: wake) {
            reading.lock()
            defer { reading.unlock() }
            var sender = sockaddr_in(), length = socklen_t(MemoryLayout<sockaddr_in>.size)
            // MSG_TRUNC: the datagram's whole length, so a longer one is told from a report.
            let count = withUnsafeMutablePointer(to: &sender) { address in
                address.withMemoryRebound(to: sockaddr.self, capacity: 1) { recvfrom(fd, &report, report.count, Int32(MSG_TRUNC | MSG_DONTWAIT), $0, &length) }
            }
            guard count == CTAPHIDPacket.reportSize, length == socklen_t(MemoryLayout<sockaddr_in>.size) else { continue }
            key.receive(report, from: UDPPeer(socket: socket, address: sender))
        }
    }

    /// Drops the datagrams that came while the key had no power (still queued, or being read),
    /// then runs `powerOn`: what a client sent to an unplugged key is lost, as on USB.
    func droppingQueued(_ powerOn: () -> Void) {
        reading.lock()
        defer { reading.unlock() }
        var scratch = [UInt8](repeating: 0, count: CTAPHIDPacket.reportSize)
        socket.withOpen { fd in
            while recv(fd, &scratch, scratch.count, Int32(MSG_DONTWAIT)) >= 0 {}
        }
        powerOn()
    }

    /// Stops reading and closes the socket.
    func close() {
        wake.wake()
        done.wait()
        socket.close()
    }
}

/// A client of the UDP transport: the address its datagrams came from.
final class UDPPeer: HIDEndpoint, @unchecked Sendable {
    private let socket: SocketDescriptor
    private let address: sockaddr_in

    init(socket: SocketDescriptor, address: sockaddr_in) {
        self.socket = socket
        self.address = address
    }

    func send(_ report: [UInt8]) {
        var to = address
        socket.withOpen { fd in
            _ = withUnsafePointer(to: &to) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { sendto(fd, report, report.count, Int32(MSG_DONTWAIT), $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
        }
    }
}
