import VirtualAuthenticator

/// `authctl sign`: navigator.credentials.get() from the shell.
enum SignCommand {
    static func run(_ args: inout Arguments) throws {
        let vaultOptions = try VaultOptions(&args)
        let origin = try OriginOption.read(&args)
        let pickId = try args.value("--credential")
        let pickUser = try args.value("--user")
        let interaction = try InteractionOptions(&args)
        let fault = try FaultOption.read(&args)
        let optionsJSON = try OptionsInput.read(&args) ?? (try conveniencesOptions(&args))
        try args.finish()

        let options = try RequestOptions(json: optionsJSON)
        // Exclusive: a counting credential's counter, and the biometric failure count, are written
        // before anything is printed.
        let session = try Session(vault: try vaultOptions.open(.write), options: vaultOptions, interaction: interaction)
        let response = try session.client.get(options: options, origin: origin, fault: fault) { candidates in
            try pick(candidates, id: pickId, user: pickUser)
        }
        FaultOption.announce(fault)
        Output.data(ResponseJSON.encode(response.json))
    }

    /// The account picker: `--credential ID` or `--user NAME` (name or base64url user handle) when
    /// given; otherwise the most recently created candidate.
    static func pick(_ candidates: [Credential], id: String?, user: String?) throws -> Credential {
        var matching = candidates
        if let id {
            guard let raw = Base64URL.decode(id) else { throw AuthenticatorError(.badInput, "--credential: expected base64url") }
            matching = matching.filter { $0.id == raw }
        }
        if let user {
            matching = matching.filter { $0.userName == user || Base64URL.encode($0.userHandle) == user }
        }
        guard !matching.isEmpty else {
            throw AuthenticatorError(.notHandled, "no candidate passkey matches \(id.map { "--credential \($0)" } ?? "--user \(user ?? "")")")
        }
        return try GetAssertionRequest.newest(matching)
    }

    static func conveniencesOptions(_ args: inout Arguments) throws(AuthenticatorError) -> [UInt8] {
        var object: [String: Any] = [
            "challenge": try args.value("--challenge") ?? Base64URL.encode(RandomSource.live.bytes(32)),
            "userVerification": try args.value("--user-verification") ?? "preferred",
        ]
        if let rpId = try args.value("--rp-id") { object["rpId"] = rpId }
        let allowed = try args.allValues("--allow")
        if !allowed.isEmpty { object["allowCredentials"] = allowed.map { ["type": "public-key", "id": $0] } }
        return OptionsInput.serialize(object)
    }
}
