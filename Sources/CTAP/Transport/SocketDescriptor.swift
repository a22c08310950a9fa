#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// A socket several threads use: one reads, others send the key's reports, and one closes it.
/// The number is used only while the descriptor is open and under its lock, so a report sent late
/// (the key finishing after a client went) never reaches a descriptor the system has given to
/// another file since.
final class SocketDescriptor: @unchecked Sendable {
    private let lock = NSLock()
    private var fd: Int32

    init(_ fd: Int32) { self.fd = fd }

    /// `body` with the descriptor, unless it is closed.
    @discardableResult
    func withOpen<T>(_ body: (Int32) -> T) -> T? {
        lock.lock()
        defer { lock.unlock() }
        return fd >= 0 ? body(fd) : nil
    }

    /// Wakes a thread blocked reading it (end of file); the reader closes it.
    func shutDown() { withOpen { _ = shutdown($0, Int32(SHUT_RDWR)) } }

    func close() {
        lock.lock()
        defer { lock.unlock() }
        if fd >= 0 { _ = Glibc.close(fd) }
        fd = -1
    }
}

/// A pipe whose write end wakes a thread polling its read end (a listener's or a UDP reader's,
/// which `shutdown` does not reliably wake): the way a transport is told to stop.
final class WakePipe: @unchecked Sendable {
    let readEnd: Int32
    private let writeEnd: SocketDescriptor

    init() throws(CTAPTransportError) {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { throw CTAPTransportError("cannot make a pipe: \(CTAPTransportError.reason(errno))") }
        for end in ends {
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
        }
        readEnd = ends[0]
        writeEnd = SocketDescriptor(ends[1])
    }

    func wake() { writeEnd.withOpen { fd in var byte: UInt8 = 1; _ = write(fd, &byte, 1) } }

    deinit {
        Glibc.close(readEnd)
        writeEnd.close()
    }
}

/// Waits until `fd` can be read or `wake` was woken: `false` once woken.
func readable(_ fd: Int32, unless wake: WakePipe) -> Bool {
    var fds = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0), pollfd(fd: wake.readEnd, events: Int16(POLLIN), revents: 0)]
    while true {
        let ready = poll(&fds, 2, -1)
        if ready < 0 && errno == EINTR { continue }
        return ready > 0 && fds[1].revents == 0
    }
}

/// Why a transport cannot listen, in words for the person who started it.
public struct CTAPTransportError: Error, Sendable, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }

    static func reason(_ code: Int32) -> String { String(cString: strerror(code)) }
}
