import Keychain
import VirtualAuthenticator

/// One passkey a conditional sign-in's autofill list offers, as `authctl sign --offers` prints it
/// and `GET …/autofill` answers it: the id a pick names, and what the list shows of its user.
public struct AutofillOfferReport: Encodable, Sendable, Equatable {
    public let credentialId, userName, userDisplayName, userHandle: String

    public init(_ c: Credential) {
        credentialId = Base64URL.encode(c.id)
        userName = c.userName
        userDisplayName = c.userDisplayName
        userHandle = Base64URL.encode(c.userHandle)
    }
}
