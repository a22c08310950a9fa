import Foundation
import Session
import Synchronization

/// An account's events, as `GET /accounts/{account}/events` sends them (Server-Sent Events):
/// what happened to its passkeys — `credentialAdded`, `credentialAsserted`, `credentialUpdated`,
/// `credentialDeleted`, as Chrome DevTools' WebAuthn domain names them — and what sync did —
/// `syncLanded` (an upload reached the account store) and `syncArrived` (a download reached a
/// device), at the time it happened on the account's clock. Events are recorded from the moment
/// the account's first stream opens (before that nothing is spent on them); the last ``kept`` are
/// kept, so a stream opened later still gets what happened before it (`?after=ID` skips those up
/// to ID). Sync is watched from then on too: after each of the account's requests, what is in
/// flight is compared with what was.
final class AccountEvents: Sendable {
    /// What happened, as the stream's `event` line names it.
    enum Kind: String, CaseIterable, Sendable {
        case credentialAdded, credentialAsserted, credentialUpdated, credentialDeleted
        case syncLanded, syncArrived
    }

    struct Event {
        let id: UInt64
        let kind: Kind
        let data: String

        /// One event in the stream's framing: `id`, `event` and one `data` line (JSON has no line
        /// break outside its strings, and the encoder escapes those).
        var framed: [UInt8] { Array("id: \(id)\nevent: \(kind.rawValue)\ndata: \(data)\n\n".utf8) }
    }

    static let kept = 1_000

    private struct State {
        var next: UInt64 = 1
        var recent = [Event]()
        var streams = [ObjectIdentifier: HTTPStream]()
        /// The transfers in flight when last looked, once a stream has opened.
        var watch: SyncWatch?
        var closed = false
        var recording = false
    }

    private let state = Mutex(State())

    /// Whether sync is being watched (a stream has opened): only then does a request look at the
    /// account's transfers after it ends.
    var watchesSync: Bool { state.withLock { $0.watch != nil } }

    /// Whether events are recorded (a stream has opened).
    var isRecording: Bool { state.withLock { $0.recording } }

    /// Records an event and sends it to every open stream.
    func emit(_ kind: Kind, _ data: some Encodable) {
        guard isRecording else { return }
        let json = JSONOutput.string(data)
        let (event, streams) = state.withLock { s -> (Event, [HTTPStream]) in
            let event = Event(id: s.next, kind: kind, data: json)
            s.next += 1
            s.recent.append(event)
            if s.recent.count > Self.kept { s.recent.removeFirst(s.recent.count - Self.kept) }
            return (event, Array(s.streams.values))
        }
        for stream in streams { stream.send(event.framed) }
    }

    /// Looks at what is in flight now: each transfer that happened since the last look is an event.
    func look(at status: SyncStatus) {
        let happened = state.withLock { s -> [SyncEvent] in
            guard s.watch != nil else { return [] }
            return s.watch!.look(status, epoch: 0, label: { $0 })
        }
        for event in happened {
            emit(event.direction == "upload" ? .syncLanded : .syncArrived,
                 SyncEventData(device: event.device, credentialId: event.passkey, removal: event.removal, time: event.time))
        }
    }

    /// A new stream: the kept events after `after` first, then (with `follow`) each as it
    /// happens. `status` starts the sync watch when it is the first stream. `nil` once the account
    /// has ended.
    func open(after: UInt64, follow: Bool, status: () -> SyncStatus?) -> HTTPStream? {
        let stream = HTTPStream(released: { [weak self] in self?.closeStream(nil) })
        let now = watchesSync ? nil : status()  // outside the lock: the account's request looks at the watch
        let ok = state.withLock { s -> Bool in
            guard !s.closed else { return false }
            if s.watch == nil, let status = now {
                var watch = SyncWatch()
                _ = watch.look(status, epoch: 0, label: { $0 })
                s.watch = watch
            }
            s.streams[ObjectIdentifier(stream)] = stream
            s.recording = true
            stream.send(Array(": authctl events\n\n".utf8) + s.recent.filter { $0.id > after }.flatMap(\.framed))
            return true
        }
        if !ok || !follow { stream.end() }
        return ok ? stream : nil
    }

    /// Drops streams whose connection is gone.
    private func closeStream(_: HTTPStream?) {
        state.withLock { s in s.streams = s.streams.filter { !$0.value.isReleased } }
    }

    /// A comment to every stream, so a client that left is noticed (a waiting connection sees no
    /// close until it writes).
    func ping() {
        for stream in state.withLock({ Array($0.streams.values) }) { stream.send(Array(": ping\n\n".utf8)) }
    }

    /// Ends every stream (the account ends, or the server stops); the streams still open.
    @discardableResult
    func close() -> [HTTPStream] {
        let streams = state.withLock { s -> [HTTPStream] in
            s.closed = true
            return Array(s.streams.values)
        }
        for stream in streams { stream.end() }
        return streams
    }
}

/// `syncLanded` / `syncArrived`: which device, which passkey (base64url id), a deletion or the
/// passkey itself, and when (milliseconds since the Unix epoch, on the account's clock).
struct SyncEventData: Encodable {
    let device: String
    let credentialId: String
    let removal: Bool
    let time: UInt64
}

/// `credentialAdded` and the rest, as Chrome DevTools' WebAuthn domain sends them: the device as
/// `authenticatorId`, the credential in WebDriver's shape (no private key), and the time.
struct CredentialEventData: Encodable {
    let authenticatorId: String
    let credential: WebDriverCredential
    let time: UInt64

    init(device: String, _ credential: Credential, time: UInt64) {
        authenticatorId = device
        self.credential = WebDriverCredential(credential)
        self.time = time
    }
}
