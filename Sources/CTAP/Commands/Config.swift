import Session

/// authenticatorConfig (CTAP 2.1 §6.11): toggleAlwaysUv and setMinPINLength, kept in the vault
/// with the device. enableEnterpriseAttestation is not a subcommand of this key: it has no
/// enterprise attestation (no `ep` option in authenticatorGetInfo).
extension SecurityKey {
    enum ConfigSubcommand: Int {
        case toggleAlwaysUv = 0x02, setMinPINLength = 0x03
    }

    func config(_ parameters: CTAPParameters) throws(CTAPStatus) {
        let number = try parameters.required(0x01, parameters.unsigned)
        let subParameters = try parameters.map(0x02)
        let version = try parameters.int(0x03)
        let param = try parameters.bytes(0x04)
        guard let subcommand = ConfigSubcommand(rawValue: number) else { throw .invalidSubcommand }
        let facts = try facts()
        // A key with a PIN needs a token of the `acfg` permission; so does one with alwaysUv, but
        // for turning alwaysUv off. pinUvAuthParam over 32 × 0xff ‖ 0x0d ‖ subCommand ‖ subCommandParams.
        if facts.pinSet || (facts.settings.alwaysUv && subcommand != .toggleAlwaysUv) {
            let message = [UInt8](repeating: 0xFF, count: 32) + [0x0D, UInt8(number)] + (subParameters.map { CBORValue.map($0).encoded() } ?? [])
            _ = try authorizeManagement(param, version: version, pinSet: facts.pinSet, message: message,
                                        permission: .authenticatorConfiguration)
        }
        switch subcommand {
        case .toggleAlwaysUv:
            try keyRequest { () throws(SessionError) in try session.toggleKeyAlwaysUv(device: device) }
        case .setMinPINLength:
            guard let subParameters else { throw .missingParameter }
            try setMinPINLength(CTAPParameters(.map(subParameters)), facts)
        }
    }

    /// setMinPINLength (§6.11.4): newMinPINLength (0x01) only raises the minimum
    /// (CTAP2_ERR_PIN_POLICY_VIOLATION), minPinLengthRPIDs (0x02) replaces the RP IDs the
    /// minPinLength extension reports it to (at most maxRPIDsForSetMinPINLength:
    /// CTAP1_ERR_INVALID_LENGTH), forceChangePin (0x03) forces a PIN change (CTAP2_ERR_PIN_NOT_SET
    /// without a PIN); a current PIN shorter than the new minimum has to change too.
    private func setMinPINLength(_ parameters: CTAPParameters, _ facts: KeyFacts) throws(CTAPStatus) {
        let length = try parameters.unsigned(0x01)
        let list = try parameters.array(0x02)
        let force = try parameters.bool(0x03) ?? false
        var rpIds: [String]?
        if let list {
            rpIds = []
            for item in list {
                guard let id = item.textValue else { throw .cborUnexpectedType }
                rpIds?.append(id)
            }
        }
        if let length {
            guard length >= facts.settings.minPINLength, length <= Device.maxKeyPINLength else { throw .pinPolicyViolation }
        }
        guard (rpIds?.count ?? 0) <= Device.maxRPIDsForSetMinPINLength else { throw .invalidLength }
        guard !force || facts.pinSet else { throw .pinNotSet }
        try keyRequest { () throws(SessionError) in try session.setKeyMinPINLength(device: device, length, rpIds: rpIds, forceChange: force) }
    }
}
