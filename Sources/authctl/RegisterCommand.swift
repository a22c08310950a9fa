import VirtualAuthenticator

/// `authctl register`: navigator.credentials.create() from the shell.
enum RegisterCommand {
    static func run(_ args: inout Arguments) throws {
        let vaultOptions = try VaultOptions(&args)
        let origin = try OriginOption.read(&args)
        let optionsJSON = try OptionsInput.read(&args) ?? (try conveniencesOptions(&args))
        let deviceBound = args.flag("--device-bound")
        let counter = args.flag("--sign-counter")
        let interaction = try InteractionOptions(&args)
        let fault = try FaultOption.read(&args)
        try args.finish()

        let options = try CreationOptions(json: optionsJSON)
        let session = try Session(vault: try vaultOptions.open(.write), options: vaultOptions, interaction: interaction,
                                  configuration: .init(backupEligible: !deviceBound, backupState: !deviceBound,
                                                       signatureCounter: counter))
        let response = try session.client.create(options: options, origin: origin, fault: fault)
        FaultOption.announce(fault)
        Output.data(ResponseJSON.encode(response.json))
    }

    /// Options built from flags, random where absent.
    static func conveniencesOptions(_ args: inout Arguments) throws(AuthenticatorError) -> [UInt8] {
        let rpId = try args.value("--rp-id")
        let userName = try args.value("--user-name") ?? "user"
        var object: [String: Any] = [
            "rp": rpId.map { ["id": $0, "name": $0] } ?? ["name": "authctl"],
            "user": [
                "id": try args.value("--user-id") ?? Base64URL.encode(RandomSource.live.bytes(16)),
                "name": userName,
                "displayName": try args.value("--display-name") ?? userName,
            ],
            "challenge": try args.value("--challenge") ?? Base64URL.encode(RandomSource.live.bytes(32)),
            "pubKeyCredParams": [["type": "public-key", "alg": -7]],
            "attestation": try args.value("--attestation") ?? "none",
            "authenticatorSelection": [
                "residentKey": "required",
                "userVerification": try args.value("--user-verification") ?? "preferred",
            ],
            "extensions": ["credProps": true],
        ]
        let excluded = try args.allValues("--exclude")
        if !excluded.isEmpty { object["excludeCredentials"] = excluded.map { ["type": "public-key", "id": $0] } }
        return OptionsInput.serialize(object)
    }
}
