/// What the simulated user does when the authenticator asks: approve (and give the PIN when
/// asked), dismiss the prompt, let it time out, or present the wrong finger.
public enum UserAction: String, CaseIterable, Sendable {
    case approve, cancel, timeout
    case wrongPIN = "wrong-pin"
}
