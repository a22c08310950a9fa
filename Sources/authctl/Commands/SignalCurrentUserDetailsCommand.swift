/// `authctl signal current-user-details`: the user's current name and display name at the RP.
enum SignalCurrentUserDetailsCommand {
    static let spec: CommandSpec = SignalCommand.spec(
        .currentUserDetails, abstract: "the user's current names ({rpId, userId, name, displayName}): the user's passkeys take them",
        example: #"echo '{"rpId":"example.com","userId":"YWxpY2U","name":"alice@example.com","displayName":"Alice"}' | authctl signal current-user-details --origin https://example.com --options -"#)
}
