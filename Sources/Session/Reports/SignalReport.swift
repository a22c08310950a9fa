import Keychain
import VirtualAuthenticator

/// What an RP's signal changed, passkey ids by change:
/// what `authctl signal … --json` prints, `POST …/signals/…` answers and a scenario's `signal` step
/// carries (docs/reports.md, "Signal").
public struct SignalReport: Encodable, Sendable {
    public let removed, hidden, restored, updated: [String]

    public init(_ e: SignalEffect) {
        removed = e.removed.map { Base64URL.encode($0.id) }
        hidden = e.hidden.map { Base64URL.encode($0.id) }
        restored = e.restored.map { Base64URL.encode($0.id) }
        updated = e.updated.map { Base64URL.encode($0.id) }
    }
}
