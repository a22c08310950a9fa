/// What the user is being asked about, as an authenticator's prompt would say it.
public struct UserPrompt: Sendable, Equatable {
    public enum Ceremony: String, Sendable { case registration, authentication }
    public let ceremony: Ceremony
    public let rpId: String
    /// The account in question; `nil` while the user is still choosing one.
    public let userName: String?
    /// How long the RP lets the prompt stay up (the options' `timeout`), in milliseconds.
    public let timeoutMilliseconds: Int?

    public init(ceremony: Ceremony, rpId: String, userName: String?, timeoutMilliseconds: Int? = nil) {
        self.ceremony = ceremony
        self.rpId = rpId
        self.userName = userName
        self.timeoutMilliseconds = timeoutMilliseconds
    }
}
