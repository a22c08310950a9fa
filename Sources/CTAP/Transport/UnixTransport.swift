#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import POSIXSockets

/// CTAPHID over a Unix stream socket: each connection is like one open hidraw handle of the key,
/// 64-byte reports back to back both ways. The socket is made at an absolute path, mode 600, over
/// nothing or a stale socket alone (``UnixSocket``). While the key has no power there is no
/// socket: the listener is closed and its path removed, so a client's connect() fails as opening
/// an unplugged key's device node does.
final class UnixTransport: @unchecked Sendable {
    let path: String
    /// The most connections open at once: past it a new one is closed as soon as it is accepted.
    static let connectionLimit = 64

    private let key: HIDKey
    private let lock = NSLock()
    private var listening: Listening?
    private var connections = [ObjectIdentifier: UnixConnection]()
    private let threads = DispatchGroup()

    /// The listener while the key has power: its socket, the file it made (to remove that one
    /// and nothing put there since), and what stops its accepting.
    private struct Listening {
        let socket: SocketDescriptor
        let file: (device: dev_t, inode: ino_t)
        let wake: WakePipe
        let done: DispatchSemaphore
    }

    init(path: String, key: HIDKey) throws(CTAPTransportError) {
        self.path = path
        self.key = key
        try listen()
    }

    /// Makes the socket and accepts connections on a thread of its own (a no-op when listening).
    func listen() throws(CTAPTransportError) {
        lock.lock()
        defer { lock.unlock() }
        guard listening == nil else { return }
        let fd: Int32
        do { fd = try UnixSocket.listen(at: path) } catch { throw CTAPTransportError(error.message) }
        var made = stat()
        guard lstat(path, &made) == 0 else {
            let why = errno
            Glibc.close(fd)
            throw CTAPTransportError("cannot look at \(path): \(CTAPTransportError.reason(why))")
        }
        let wake: WakePipe
        do { wake = try WakePipe() } catch {
            unlink(path)
            Glibc.close(fd)
            throw error
        }
        let socket = SocketDescriptor(fd), done = DispatchSemaphore(value: 0)
        listening = Listening(socket: socket, file: (made.st_dev, made.st_ino), wake: wake, done: done)
        let acceptor = Thread { [weak self] in
            while readable(fd, unless: wake) {
                let connection = accept(fd, nil, nil)
                guard connection >= 0 else { continue }
                _ = fcntl(connection, F_SETFD, FD_CLOEXEC)
                self?.serve(connection)
            }
            done.signal()
        }
        acceptor.name = "authctl.ctap.unix"
        acceptor.start()
    }

    /// Closes the listener, removes its socket file (if it is still the one made), and closes
    /// every connection: nothing can reach the key through the path until ``listen()``.
    func close() {
        lock.lock()
        let stopping = listening
        listening = nil
        let open = Array(connections.values)
        lock.unlock()
        if let stopping {
            stopping.wake.wake()
            stopping.done.wait()
            stopping.socket.close()
            var found = stat()
            if lstat(path, &found) == 0, found.st_mode & S_IFMT == S_IFSOCK, found.st_dev == stopping.file.device,
               found.st_ino == stopping.file.inode {
                unlink(path)
            }
        }
        for connection in open { connection.socket.shutDown() }
    }

    /// Closes everything and waits for the connections' readers to end.
    func stop() {
        close()
        _ = threads.wait(timeout: .now() + 5)
    }

    /// A connection accepted: its reports read on a thread of its own until it closes.
    private func serve(_ fd: Int32) {
        lock.lock()
        guard listening != nil, connections.count < Self.connectionLimit else {
            lock.unlock()
            Glibc.close(fd)
            return
        }
        let connection = UnixConnection(socket: SocketDescriptor(fd))
        connections[ObjectIdentifier(connection)] = connection
        threads.enter()
        lock.unlock()
        let reader = Thread { [weak self, key, threads] in
            connection.read(into: key)
            self?.lock.withLock { _ = self?.connections.removeValue(forKey: ObjectIdentifier(connection)) }
            threads.leave()
        }
        reader.name = "authctl.ctap.connection"
        reader.start()
    }
}

/// One connection to the Unix socket: the reports read from it go to the key, the key's answers
/// come back on it.
final class UnixConnection: HIDEndpoint {
    let socket: SocketDescriptor

    init(socket: SocketDescriptor) { self.socket = socket }

    /// Reads 64-byte reports until the client closes (or the connection is shut down), then
    /// closes it. A partial report at the end is dropped. Only this reader closes the descriptor,
    /// so it reads it without the lock the key's sends take.
    func read(into key: HIDKey) {
        guard let fd = socket.withOpen({ $0 }) else { return }
        var buffer = [UInt8](repeating: 0, count: 4096), pending = [UInt8]()
        while true {
            let count = recv(fd, &buffer, buffer.count, 0)
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { break }
            pending += buffer.prefix(count)
            var offset = 0
            while pending.count - offset >= CTAPHIDPacket.reportSize {
                key.receive(Array(pending[offset..<offset + CTAPHIDPacket.reportSize]), from: self)
                offset += CTAPHIDPacket.reportSize
            }
            pending.removeFirst(offset)
        }
        socket.close()
        key.disconnected(self)
    }

    /// Writes the report without blocking; a client that leaves it no room (it reads nothing) or
    /// takes part of it is cut off, as a report half-written would misalign every later one.
    func send(_ report: [UInt8]) {
        socket.withOpen { fd in
            // MSG_NOSIGNAL: a client gone is an error here, not a SIGPIPE.
            let sent = Glibc.send(fd, report, report.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL))
            if sent != report.count { _ = shutdown(fd, Int32(SHUT_RDWR)) }
        }
    }
}
