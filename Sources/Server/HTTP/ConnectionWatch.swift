#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch
import Foundation
import Synchronization

/// Every open connection, watched for two things libmicrohttpd does not do: a deadline for each
/// request's line and headers (its own timeout counts from the last byte, so a client sending a
/// byte now and then holds the connection for ever), and room for a new connection when the limit
/// is reached (libmicrohttpd then leaves new ones waiting, however long those it holds take to send
/// their requests). libmicrohttpd tells of each connection's opening, progress and closing (on its
/// threads); the reaper looks at the deadlines on a thread of its own. Times are milliseconds on a
/// monotonic clock, given, so that each rule is tried without waiting for it.
final class ConnectionWatch: Sendable {
    /// Where a connection's current request is.
    enum Progress: Int32 {
        /// A new request is awaited, from now (a new connection, or one kept alive after an answer).
        case awaiting = 0
        /// Its line and headers have come.
        case headRead = 1
        /// And its body: it is being answered, or waits for its answer or stream.
        case requestRead = 2
    }

    struct Connection: Equatable {
        var fd: Int32
        /// When it began to wait for its current request.
        var since: UInt64
        var progress = Progress.awaiting
        /// Shut down here; libmicrohttpd closes it at its next look.
        var closing = false
    }

    private struct State: ~Copyable {
        var connections = [Int: Connection]()
        var nextToken = 1
        /// Those not being closed here.
        var open = 0
    }

    /// Connections libmicrohttpd may hold past the limit, for the moment between a new connection
    /// coming and the one it makes room for being closed.
    static let reserve = 64
    /// How often the reaper looks, at most.
    static let shortestLook: UInt64 = 50

    let limit: Int
    let headerTimeout: UInt64
    /// Closes a connection from outside libmicrohttpd's loop; called under the watch's lock, which
    /// libmicrohttpd's closing notice takes before it closes the descriptor, so the descriptor is
    /// still this connection's.
    private let close: @Sendable (Int32) -> Void
    private let state = Mutex(State())
    private let wake = DispatchSemaphore(value: 0)
    private let reaped = DispatchSemaphore(value: 0)

    /// `close` by default: shutdown(2), which makes the socket readable at its end, and
    /// libmicrohttpd closes it as one its client closed.
    init(limit: Int, headerTimeout: UInt64, close: @escaping @Sendable (Int32) -> Void = { _ = shutdown($0, Int32(SHUT_RDWR)) }) {
        self.limit = limit
        self.headerTimeout = headerTimeout
        self.close = close
    }

    /// A connection opened: its token. Past the limit, a new connection closes the one that has
    /// waited longest for a request (its line, headers or body still coming, or nothing yet on a
    /// kept-alive connection; of two that began at once, the one that came first) — never one
    /// being answered; when every other is, the new one is closed. A client that sends its request
    /// at once is served however many connections trickle theirs.
    func opened(fd: Int32, now: UInt64) -> Int {
        state.withLock { s in
            let token = s.nextToken
            s.nextToken += 1
            s.connections[token] = Connection(fd: fd, since: now)
            s.open += 1
            if s.open > limit {
                var oldest: (token: Int, since: UInt64)?
                for (other, connection) in s.connections where other != token && !connection.closing && connection.progress != .requestRead {
                    if oldest.map({ (connection.since, other) < ($0.since, $0.token) }) ?? true { oldest = (other, connection.since) }
                }
                closeConnection(oldest?.token ?? token, in: &s)
            }
            return token
        }
    }

    func progress(_ token: Int, _ progress: Progress, now: UInt64) {
        state.withLock { s in
            guard s.connections[token] != nil else { return }
            s.connections[token]!.progress = progress
            if progress == .awaiting { s.connections[token]!.since = now }
        }
    }

    func closed(_ token: Int) {
        state.withLock { s in
            guard let connection = s.connections.removeValue(forKey: token) else { return }
            if !connection.closing { s.open -= 1 }
        }
    }

    /// One look: closes each connection whose request's line and headers have not all come within
    /// the deadline, counted from when it began to wait for that request. When to look next.
    func reap(now: UInt64) -> UInt64 {
        state.withLock { s in
            var next = now + headerTimeout
            for (token, connection) in s.connections where !connection.closing && connection.progress == .awaiting {
                let deadline = connection.since + headerTimeout
                if deadline <= now { closeConnection(token, in: &s) } else { next = min(next, deadline) }
            }
            return max(next, now + Self.shortestLook)
        }
    }

    /// The connections watched, by token (what the rules above decided, for a test to see).
    var connections: [Int: Connection] { state.withLock { $0.connections } }

    /// Those not being closed here.
    var open: Int { state.withLock { $0.open } }

    private func closeConnection(_ token: Int, in s: inout State) {
        s.connections[token]!.closing = true
        s.open -= 1
        if s.connections[token]!.fd >= 0 { close(s.connections[token]!.fd) }
    }

    /// Looks at the deadlines on a thread of its own until ``stopReaping()``.
    func startReaping() {
        let reaper = Thread { [self] in
            while true {
                let now = Self.now(), next = reap(now: now)
                if wake.wait(timeout: .now() + .milliseconds(Int(next - now))) == .success { break }
            }
            reaped.signal()
        }
        reaper.start()
    }

    /// Stops the reaper, once it has finished its look.
    func stopReaping() {
        wake.signal()
        reaped.wait()
    }

    /// Milliseconds on the monotonic clock.
    static func now() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1000 + UInt64(now.tv_nsec) / 1_000_000
    }
}
