/// `authctl signal accepted-credentials`: every passkey the RP accepts for a user; the others hide.
enum SignalAcceptedCredentialsCommand {
    static let spec: CommandSpec = SignalCommand.spec(
        .allAcceptedCredentials,
        abstract: "the user's passkeys the RP accepts ({rpId, userId, allAcceptedCredentialIds}): others are hidden, listed hidden ones restored",
        example: #"echo '{"rpId":"example.com","userId":"YWxpY2U","allAcceptedCredentialIds":[]}' | authctl signal accepted-credentials --origin https://example.com --options -"#)
}
