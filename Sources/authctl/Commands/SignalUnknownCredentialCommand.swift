/// `authctl signal unknown-credential`: the RP does not know this passkey; the device deletes it.
enum SignalUnknownCredentialCommand {
    static let spec: CommandSpec = SignalCommand.spec(
        .unknownCredential, abstract: "the RP knows no such passkey ({rpId, credentialId}): it is deleted",
        example: #"echo '{"rpId":"example.com","credentialId":"AbCdEfGhIjKlMnOpQrStUw"}' | authctl signal unknown-credential --origin https://example.com --options -"#)
}
