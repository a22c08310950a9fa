#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Why a Unix socket cannot be made at a path, in words for the person who gave the path.
package struct UnixSocketError: Error, Sendable {
    package let message: String
    package init(message: String) { self.message = message }
}

/// A Unix socket listening at an absolute path (`serve --socket`, `ctap serve --socket`), made
/// mode 600 (under the umask, so never reachable by others even for a moment), over nothing or
/// over a stale socket — never over anything else: a file, a directory or a link planted at the
/// path is refused and left as it is, never followed or removed. The directory is locked (flock)
/// from the look to the bind, so two servers starting on one path cannot each take the other's
/// socket for stale.
package enum UnixSocket {
    /// What is at the path before the socket is made there.
    package enum Found: Equatable {
        /// Nothing: the socket can be made.
        case nothing
        /// A socket of this user's that nobody listens on (tried with connect), as a SIGKILLed
        /// server leaves it: it is removed, and the socket made in its place.
        case staleSocket
    }

    /// How long ``listen(at:lockWait:)`` waits for the directory's lock. Another server holds it
    /// only from its look to its bind; but any process that can open the directory (anyone, in
    /// `/tmp`) can take it and keep it, and the server, which takes SIGTERM only once it serves,
    /// would wait for ever.
    package static let lockWait = Duration.seconds(5)

    /// A listening socket's descriptor (the caller's to close), or why there can be none.
    package static func listen(at path: String, lockWait: Duration = lockWait) throws(UnixSocketError) -> Int32 {
        let address = try self.address(path)
        let directory = open(parent(of: path), O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        defer { if directory >= 0 { close(directory) } }  // and its lock
        if directory >= 0 { try lock(directory, of: path, waiting: lockWait) }
        if try look(at: path, address: address) == .staleSocket, unlink(path) != 0, errno != ENOENT {
            throw UnixSocketError(message: "cannot remove the stale socket \(path): \(reason(errno))")
        }
        let listening = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard listening >= 0 else { throw UnixSocketError(message: "cannot make a socket: \(reason(errno))") }
        let before = umask(0o177)
        let bound = withSocketAddress(address) { bind(listening, $0, $1) }
        let why = errno
        umask(before)
        guard bound == 0 else {
            close(listening)
            throw UnixSocketError(message: "cannot listen on \(path): \(reason(why))")
        }
        guard startListening(listening) == 0 else {
            let why = errno
            unlink(path)
            close(listening)
            throw UnixSocketError(message: "cannot listen on \(path): \(reason(why))")
        }
        return listening
    }

    /// Takes the directory's lock, waiting up to `waiting` while another process holds it. A lock
    /// the system cannot give (no flock on this file system) is gone without, as before the look.
    private static func lock(_ directory: Int32, of path: String, waiting: Duration) throws(UnixSocketError) {
        let clock = ContinuousClock(), deadline = clock.now + waiting
        while flock(directory, LOCK_EX | LOCK_NB) != 0, errno == EWOULDBLOCK || errno == EINTR {
            guard clock.now < deadline else {
                throw UnixSocketError(message: "cannot listen on \(path): another process has held the lock on its directory "
                    + "(flock) for \(waiting.components.seconds) s")
            }
            usleep(10_000)
        }
    }

    /// What is at `path`: nothing, or a stale socket of this user's; anything else is refused with
    /// its reason — a file, a directory, a link (looked at, not followed), another user's socket,
    /// or one a server listens on.
    package static func look(at path: String, address: sockaddr_un) throws(UnixSocketError) -> Found {
        var found = stat()
        guard lstat(path, &found) == 0 else {
            if errno == ENOENT { return .nothing }
            throw UnixSocketError(message: "cannot look at \(path): \(reason(errno))")
        }
        guard found.st_mode & S_IFMT == S_IFSOCK else {
            throw UnixSocketError(message: "cannot listen on \(path): it exists and is not a socket (it is left as it is)")
        }
        guard found.st_uid == geteuid() else { throw UnixSocketError(message: "cannot listen on \(path): it is another user's socket") }
        // Without blocking: a live server whose backlog is full answers EAGAIN, not at all.
        let probe = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard probe >= 0 else { throw UnixSocketError(message: "cannot make a socket: \(reason(errno))") }
        let connected = withSocketAddress(address) { connect(probe, $0, $1) }
        let why = errno
        close(probe)
        if connected == 0 || why == EAGAIN || why == EINPROGRESS {
            throw UnixSocketError(message: "cannot listen on \(path): a server listens there already")
        }
        guard why == ECONNREFUSED else {
            throw UnixSocketError(message: "cannot listen on \(path): it is a socket that cannot be tried (\(reason(why)))")
        }
        return .staleSocket
    }

    /// The socket address of `path`: refused when it has a NUL byte, or is too long for one.
    package static func address(_ path: String) throws(UnixSocketError) -> sockaddr_un {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8), room = MemoryLayout.size(ofValue: address.sun_path)
        guard !bytes.contains(0) else { throw UnixSocketError(message: "the socket path has a NUL byte") }
        guard bytes.count < room else { throw UnixSocketError(message: "the socket path is longer than \(room - 1) bytes") }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        return address
    }

    /// The directory an absolute path is in (`/` for a path at the root).
    package static func parent(of path: String) -> String {
        let bytes = Array(path.utf8)
        guard let slash = bytes.lastIndex(of: UInt8(ascii: "/")), slash > 0 else { return "/" }
        return String(decoding: bytes[..<slash], as: UTF8.self)
    }

    private static func withSocketAddress(_ address: sockaddr_un, _ body: (UnsafePointer<sockaddr>, socklen_t) -> Int32) -> Int32 {
        withUnsafePointer(to: address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
    }

    private static func reason(_ code: Int32) -> String { String(cString: strerror(code)) }
}

/// listen(2), where `UnixSocket.listen(at:)` does not hide it.
private func startListening(_ socket: Int32) -> Int32 { listen(socket, 128) }
