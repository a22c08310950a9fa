import Foundation

/// A security key plugged in: one ``HIDKey`` reached through a UDP socket, a Unix socket, or both
/// (one device state: a channel allocated over one is good over the other, and one transaction
/// runs at a time across both), and its power line — what `authctl ctap serve` runs and its
/// controller switches.
///
///     let plugged = try PluggedKey(handler: key, udp: ("127.0.0.1", 8111), socket: "/run/user/1000/key.sock")
///     plugged.powerOff()   // channels dropped, the request in flight canceled, the socket gone
///     try plugged.powerOn()
public final class PluggedKey: @unchecked Sendable {
    public let key: HIDKey
    private let udp: UDPTransport?
    private let unix: UnixTransport?
    private let lock = NSLock()
    private var stopped = false

    /// Listens where it is told (at least one of the two): `udp` an IPv4 address and a port (0:
    /// one the system chooses), `socket` an absolute path.
    public init(handler: any CTAPHIDHandler, udp: (host: String, port: UInt16)?, socket: String?) throws(CTAPTransportError) {
        guard udp != nil || socket != nil else { throw CTAPTransportError("a key listens on UDP, a Unix socket, or both") }
        let key = HIDKey(handler: handler)
        do {
            self.udp = try udp.map { address throws(CTAPTransportError) in try UDPTransport(host: address.host, port: address.port, key: key) }
        } catch {
            key.stop()
            throw error
        }
        do {
            unix = try socket.map { path throws(CTAPTransportError) in try UnixTransport(path: path, key: key) }
        } catch {
            self.udp?.close()
            key.stop()
            throw error
        }
        self.key = key
    }

    /// The UDP address and port listened on (the port the system chose, for 0).
    public var udpAddress: (host: String, port: UInt16)? { udp.map { ($0.host, $0.port) } }
    /// The Unix socket's path.
    public var socketPath: String? { unix?.path }
    public var isPoweredOn: Bool { key.isPoweredOn }

    /// The power is cut: the key forgets its channels and cancels what it was doing, UDP datagrams
    /// are dropped unanswered, and the Unix socket is closed and its path removed (its
    /// connections with it).
    public func powerOff() {
        lock.withLock {
            key.powerOff()
            unix?.close()
        }
    }

    /// The power comes back: the Unix socket listening again, the key told
    /// (``CTAPHIDHandler/powerCycled()``) and answering. Fails, the key left without power, when
    /// the socket cannot be made again (something else was put at its path meanwhile).
    public func powerOn() throws(CTAPTransportError) {
        lock.lock()
        defer { lock.unlock() }
        guard !stopped, !key.isPoweredOn else { return }
        try unix?.listen()
        if let udp { udp.droppingQueued(key.powerOn) } else { key.powerOn() }
    }

    /// Stops for good: the key and both transports, the socket's path removed.
    public func stop() {
        lock.withLock {
            guard !stopped else { return }
            stopped = true
            key.stop()
            unix?.stop()
            udp?.close()
        }
    }
}
