import CMicroHTTPD
import Synchronization

/// An answer given later, from any thread (a conditional sign-in answered when the person picks a
/// passkey): the connection waits without holding a thread. ``complete(_:)`` answers once; a
/// second answer is dropped. A response holds it (a reference the server drops when the request
/// is over).
public final class HTTPDeferred: Sendable {
    private struct State {
        var answer: HTTPResponse?
        /// The request's `Origin`: the answer, whenever it comes, carries the cross-origin headers.
        var origin: String?
        /// The connection, suspended until the answer comes (libmicrohttpd's, as an address).
        var waiting: UInt?
    }

    private let state = Mutex(State())

    public init() {}

    var origin: String? {
        get { state.withLock { $0.origin } }
        set { state.withLock { $0.origin = newValue } }
    }

    public func complete(_ answer: HTTPResponse) {
        let waiting = state.withLock { s -> UInt? in
            guard s.answer == nil else { return nil }  // answered once only
            s.answer = HTTPResponse(status: answer.status, contentType: answer.contentType, body: answer.body, headers: answer.headers)
            return s.waiting.take()
        }
        if let waiting { authctl_http_resume(UnsafeMutableRawPointer(bitPattern: waiting)) }  // a suspended connection is still there
    }

    /// The answer into `response` when it has come; else the connection is suspended, under the
    /// lock, so that ``complete(_:)`` cannot resume it before it is.
    func answer(into response: UnsafeMutablePointer<authctl_http_response>, connection: UnsafeMutableRawPointer) -> Bool {
        state.withLock { s in
            guard var answer = s.answer else {
                s.waiting = UInt(bitPattern: connection)
                authctl_http_suspend(connection)
                return false
            }
            if let origin = s.origin { answer.headers += CrossOrigin.headers(origin: origin) }
            fill(response, with: answer)
            return true
        }
    }

    /// The request is over (answered, or its connection gone): an answer after this resumes nothing.
    func requestEnded() {
        state.withLock { $0.waiting = nil }
    }
}
