#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CMicroHTTPD
import Synchronization

/// A body sent as it comes (Server-Sent Events): ``send(_:)`` queues bytes and wakes the
/// connection, which waits without a thread while there are none; ``end()`` finishes it. When
/// the connection is gone — the client left, or the server stops — `released` is called once.
/// At most ``limit`` bytes wait for a client that does not read: past that the stream ends.
/// A response holds it (a reference the server drops when it releases the stream).
public final class HTTPStream: Sendable {
    private struct State {
        var pending = [UInt8]()
        var ended = false
        var released = false
        /// The connection, suspended until there are bytes (libmicrohttpd's, as an address).
        var waiting: UInt?
    }

    public static let limit = 1 << 20
    private let state = Mutex(State())
    private let released: @Sendable () -> Void

    public init(released: @escaping @Sendable () -> Void) {
        self.released = released
    }

    /// Whether the connection is gone.
    public var isReleased: Bool { state.withLock { $0.released } }

    public func send(_ bytes: [UInt8]) {
        resume(state.withLock { s in
            guard !s.ended else { return nil }
            if s.pending.count + bytes.count > Self.limit { s.ended = true } else { s.pending += bytes }
            return s.waiting.take()
        })
    }

    public func end() {
        resume(state.withLock { s in
            s.ended = true
            return s.waiting.take()
        })
    }

    /// Outside the lock (libmicrohttpd takes its own); a suspended connection is neither timed
    /// out nor closed, so it is still there.
    private func resume(_ waiting: UInt?) {
        if let waiting { authctl_http_resume(UnsafeMutableRawPointer(bitPattern: waiting)) }
    }

    /// The next bytes into `buffer`: their count, -1 at the end, or 0 when there are none yet —
    /// the connection is then suspended (by the C core, as this returns) until bytes come.
    func pull(into buffer: UnsafeMutablePointer<UInt8>, capacity: Int, connection: UnsafeMutableRawPointer) -> Int {
        state.withLock { s in
            guard !s.pending.isEmpty else {
                if s.ended { return -1 }
                s.waiting = UInt(bitPattern: connection)
                return 0
            }
            let count = min(capacity, s.pending.count)
            s.pending.withUnsafeBufferPointer { buffer.update(from: $0.baseAddress!, count: count) }
            s.pending.removeFirst(count)
            return count
        }
    }

    /// The connection is gone: once.
    func release() {
        state.withLock { $0 = State(ended: true, released: true) }
        released()
    }
}
