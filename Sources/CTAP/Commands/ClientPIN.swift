import Session

/// authenticatorClientPIN (CTAP 2.1 §6.5): a client sets, changes and proves the key's PIN,
/// sending only its hash, under a secret agreed with the key (PIN/UV auth protocol one or two),
/// and gets a pinUvAuthToken for the commands that follow. The PIN is the device's biometric PIN
/// (``KeyPIN``): its retries are the vault's failure count, so they survive a restart; the three
/// wrong PINs in a row that call for a power cycle are the key's own (``ClientPINState``).
extension SecurityKey {
    /// The subCommand values (§6.5.5).
    enum ClientPINSubcommand: Int {
        case getPINRetries = 0x01
        case getKeyAgreement = 0x02
        case setPIN = 0x03
        case changePIN = 0x04
        case getPinToken = 0x05
        case getPinUvAuthTokenUsingUvWithPermissions = 0x06
        case getUVRetries = 0x07
        case getPinUvAuthTokenUsingPinWithPermissions = 0x09
    }

    /// The request's members (§6.5.5) and the response's.
    enum ClientPINKey {
        static let pinUvAuthProtocol = 0x01, subCommand = 0x02, keyAgreement = 0x03, pinUvAuthParam = 0x04
        static let newPinEnc = 0x05, pinHashEnc = 0x06, permissions = 0x09, rpId = 0x0A
        static let keyAgreementOut = 0x01, pinUvAuthToken = 0x02, pinRetries = 0x03, powerCycleState = 0x04
    }

    /// paddedNewPin's length: a PIN is sent padded with zeros to 64 bytes (§6.5.5.5 step 7), so at
    /// most 63 bytes are a PIN.
    static let paddedPINLength = 64

    func clientPIN(_ parameters: CTAPParameters) throws(CTAPStatus) -> CBORValue? {
        let number = try parameters.required(ClientPINKey.subCommand, parameters.int)
        guard let subcommand = ClientPINSubcommand(rawValue: number) else { throw .invalidSubcommand }
        switch subcommand {
        case .getPINRetries: return try getPINRetries()
        case .getKeyAgreement: return try getKeyAgreement(parameters)
        case .setPIN: try setPIN(parameters); return nil
        case .changePIN: try changePIN(parameters); return nil
        case .getPinToken, .getPinUvAuthTokenUsingPinWithPermissions: return try getPinToken(parameters, subcommand)
        // Subcommands of built-in user verification, which the key has none of: "either invalid
        // or not implemented" (§8.2).
        case .getPinUvAuthTokenUsingUvWithPermissions, .getUVRetries: throw .invalidSubcommand
        }
    }

    // MARK: - getPINRetries, getKeyAgreement

    /// getPINRetries (§6.5.5.2): pinRetries and powerCycleState. With no PIN set,
    /// CTAP2_ERR_PIN_NOT_SET, as a YubiKey answers (python-fido2's device tests expect it).
    private func getPINRetries() throws(CTAPStatus) -> CBORValue {
        let status = try biometry()
        guard status.enrolled else { throw .pinNotSet }
        return .map([(.int(ClientPINKey.pinRetries), .int(Int(Self.pinRetries(status)))),
                     (.int(ClientPINKey.powerCycleState), .bool(pinState.needsPowerCycle))])
    }

    /// getKeyAgreement (§6.5.5.4): the protocol's key-agreement public key.
    private func getKeyAgreement(_ parameters: CTAPParameters) throws(CTAPStatus) -> CBORValue {
        let version = try pinUvAuthProtocol(parameters)
        return .map([(.int(ClientPINKey.keyAgreementOut), try pinState.protocolState(version).getPublicKey())])
    }

    // MARK: - setPIN, changePIN

    /// setPIN (§6.5.5.5): the first PIN, when none is set.
    private func setPIN(_ parameters: CTAPParameters) throws(CTAPStatus) {
        let keyAgreement = try parameters.required(ClientPINKey.keyAgreement, parameters.map)
        let pinUvAuthParam = try parameters.required(ClientPINKey.pinUvAuthParam, parameters.bytes)
        let newPinEnc = try parameters.required(ClientPINKey.newPinEnc, parameters.bytes)
        let version = try pinUvAuthProtocol(parameters)
        guard !(try biometry().enrolled) else { throw .pinAuthInvalid }
        let rules = try pinState.protocolState(version)
        let secret = try sharedSecret(rules, keyAgreement)
        guard rules.verify(key: secret, newPinEnc, signature: pinUvAuthParam) else { throw .pinAuthInvalid }
        let (pinHash, length) = try newPINHash(rules, secret, newPinEnc)
        do { try session.setKeyPIN(device: device, pinHash: pinHash) } catch {
            // Another enrolled device of the account must approve a new PIN, and did not.
            throw [.failed, .notInteractive, .biometryLockout].contains(error.name) ? .operationDenied : .other
        }
        try keyRequest { () throws(SessionError) in try session.keyPINChanged(device: device, length: length) }
        // A token of a PIN the device lost some other way (`authctl device reset`) ends too.
        pinState.resetPinUvAuthTokens()
    }

    /// changePIN (§6.5.5.6): the current PIN's hash proves the caller, then the new PIN replaces
    /// it and every token handed out stops verifying.
    private func changePIN(_ parameters: CTAPParameters) throws(CTAPStatus) {
        let keyAgreement = try parameters.required(ClientPINKey.keyAgreement, parameters.map)
        let pinUvAuthParam = try parameters.required(ClientPINKey.pinUvAuthParam, parameters.bytes)
        let newPinEnc = try parameters.required(ClientPINKey.newPinEnc, parameters.bytes)
        let pinHashEnc = try parameters.required(ClientPINKey.pinHashEnc, parameters.bytes)
        let version = try pinUvAuthProtocol(parameters)
        try requirePINUsable()
        let rules = try pinState.protocolState(version)
        let secret = try sharedSecret(rules, keyAgreement)
        guard rules.verify(key: secret, newPinEnc + pinHashEnc, signature: pinUvAuthParam) else { throw .pinAuthInvalid }
        let verification = try checkPIN(version, rules, secret, pinHashEnc)
        let (pinHash, length) = try newPINHash(rules, secret, newPinEnc)
        do { try session.changeKeyPIN(device: device, verified: verification, pinHash: pinHash) } catch { throw .other }
        // A change forced by authenticatorConfig is made.
        try keyRequest { () throws(SessionError) in try session.keyPINChanged(device: device, length: length) }
        pinState.resetPinUvAuthTokens()
    }

    /// newPinEnc's PIN, as its hash and its length (§6.5.5.5 steps 6–12): decrypted, 64 bytes,
    /// the trailing zeros dropped, at least the key's minimum PIN length (4, or what
    /// setMinPINLength raised it to) in Unicode code points (the platform sends UTF-8 in
    /// Normalization Form C; other bytes are no PIN) and at most 63 bytes.
    private func newPINHash(_ rules: PinUvAuthProtocol, _ secret: [UInt8], _ newPinEnc: [UInt8]) throws(CTAPStatus) -> (hash: [UInt8], length: Int) {
        guard let padded = rules.decrypt(key: secret, newPinEnc) else { throw .pinAuthInvalid }
        guard padded.count == Self.paddedPINLength else { throw .invalidParameter }
        let pin = padded[..<((padded.lastIndex { $0 != 0 } ?? -1) + 1)]
        let minimum = try facts().settings.minPINLength
        guard let text = String(validating: pin, as: UTF8.self), text.unicodeScalars.count >= minimum,
              pin.count < Self.paddedPINLength else { throw .pinPolicyViolation }
        return (Array(SHA256.hash(pin).prefix(KeyPIN.hashLength)), text.unicodeScalars.count)
    }

    // MARK: - getPinToken, getPinUvAuthTokenUsingPinWithPermissions

    /// getPinToken (§6.5.5.7.1: CTAP 2.0's way, the default permissions mc and ga, no RP) and
    /// getPinUvAuthTokenUsingPinWithPermissions (§6.5.5.7.2: the permissions and RP asked for):
    /// the PIN's hash for a new token, encrypted under the shared secret. Every token handed out
    /// before stops verifying.
    private func getPinToken(_ parameters: CTAPParameters, _ subcommand: ClientPINSubcommand) throws(CTAPStatus) -> CBORValue {
        let keyAgreement = try parameters.required(ClientPINKey.keyAgreement, parameters.map)
        let pinHashEnc = try parameters.required(ClientPINKey.pinHashEnc, parameters.bytes)
        let withPermissions = subcommand == .getPinUvAuthTokenUsingPinWithPermissions
        let asked = withPermissions ? try parameters.required(ClientPINKey.permissions, parameters.int) : nil
        let rpId = try parameters.text(ClientPINKey.rpId)
        let version = try pinUvAuthProtocol(parameters)
        let permissions: PinUvPermission
        if let asked {
            guard asked >= 0 else { throw .cborUnexpectedType }
            guard asked != 0 else { throw .invalidParameter }
            permissions = PinUvPermission(rawValue: UInt8(truncatingIfNeeded: asked)).intersection(.defined)
            let options = Self.getInfoOptions(try facts())
            for (permission, option) in PinUvPermission.options where permissions.contains(permission) {
                guard options[text: option]?.boolValue == true else { throw .unauthorizedPermission }
            }
        } else {
            guard !parameters.has(ClientPINKey.permissions), rpId == nil else { throw .invalidParameter }
            permissions = .default
        }
        try requirePINUsable()
        let rules = try pinState.protocolState(version)
        let secret = try sharedSecret(rules, keyAgreement)
        let verification = try checkPIN(version, rules, secret, pinHashEnc)
        // A PIN change forced by authenticatorConfig comes first: getPinToken answers
        // CTAP2_ERR_PIN_INVALID, as a YubiKey does (python-fido2's test_force_pin_change), the
        // permissions' subcommand CTAP2_ERR_PIN_POLICY_VIOLATION.
        if try facts().settings.forcePINChange { throw withPermissions ? .pinPolicyViolation : .pinInvalid }
        pinState.resetPinUvAuthTokens()
        pinState.token.beginUsing(userIsPresent: false, permissions: permissions, rpId: rpId, verification: verification, at: now())
        guard let encrypted = rules.encrypt(key: secret, try pinState.protocolState(version).pinUvAuthToken) else { throw .other }
        return .map([(.int(ClientPINKey.pinUvAuthToken), .bytes(encrypted))])
    }

    // MARK: - The steps the subcommands share

    /// pinUvAuthProtocol: present (CTAP2_ERR_MISSING_PARAMETER) and one of the key's
    /// (CTAP1_ERR_INVALID_PARAMETER).
    func pinUvAuthProtocol(_ parameters: CTAPParameters) throws(CTAPStatus) -> PinUvAuthProtocol.Version {
        let number = try parameters.required(ClientPINKey.pinUvAuthProtocol, parameters.int)
        guard let version = PinUvAuthProtocol.Version(rawValue: number) else { throw .invalidParameter }
        return version
    }

    /// `decapsulate` of the platform's key-agreement key: CTAP1_ERR_INVALID_PARAMETER when it is
    /// not a P-256 point on the curve.
    private func sharedSecret(_ rules: PinUvAuthProtocol, _ keyAgreement: [(CBORValue, CBORValue)]) throws(CTAPStatus) -> [UInt8] {
        let secret: [UInt8]?
        do { secret = try rules.decapsulate(.map(keyAgreement)) } catch { throw .other }
        guard let secret else { throw .invalidParameter }
        return secret
    }

    /// Before a PIN is checked: a PIN is set (CTAP2_ERR_PIN_NOT_SET), has retries left
    /// (CTAP2_ERR_PIN_BLOCKED), and the key was power-cycled since three wrong ones in a row
    /// (CTAP2_ERR_PIN_AUTH_BLOCKED).
    private func requirePINUsable() throws(CTAPStatus) {
        let status = try biometry()
        guard status.enrolled else { throw .pinNotSet }
        guard Self.pinRetries(status) > 0 else { throw .pinBlocked }
        guard !pinState.needsPowerCycle else { throw .pinAuthBlocked }
    }

    /// The PIN check (§6.5.5.7.1 steps 8–10): the retry is counted in the vault before the
    /// outcome shows, then pinHashEnc's plaintext, whatever it decrypts to, is the PIN's hash or
    /// not. A wrong one gives the protocol a new key agreement and answers
    /// CTAP2_ERR_PIN_BLOCKED (no retries left), CTAP2_ERR_PIN_AUTH_BLOCKED (the third in a row)
    /// or CTAP2_ERR_PIN_INVALID; a right one clears both counts.
    private func checkPIN(_ version: PinUvAuthProtocol.Version, _ rules: PinUvAuthProtocol, _ secret: [UInt8],
                          _ pinHashEnc: [UInt8]) throws(CTAPStatus) -> KeyVerification {
        // A pinHashEnc that does not decrypt is a wrong PIN all the same, and counted.
        let pinHash = rules.decrypt(key: secret, pinHashEnc) ?? []
        let check: KeyPINCheck
        do { check = try session.verifyKeyPIN(device: device, pinHash: pinHash) } catch { throw .other }
        switch check {
        case .verified(let verification):
            pinState.consecutiveMismatches = 0
            return verification
        case .wrong(let retries):
            try pinState.regenerate(version)
            pinState.consecutiveMismatches += 1
            if retries == 0 { throw .pinBlocked }
            throw pinState.needsPowerCycle ? .pinAuthBlocked : .pinInvalid
        case .blocked: throw .pinBlocked
        case .notSet: throw .pinNotSet
        }
    }

    /// The device's PIN state; a failure of the layers below is CTAP1_ERR_OTHER.
    private func biometry() throws(CTAPStatus) -> BiometryStatus {
        do { return try session.biometry(device: device) } catch { throw .other }
    }

    /// pinRetries: the PIN attempts left before the device's biometry locks out.
    static func pinRetries(_ status: BiometryStatus) -> UInt32 {
        status.maxAttempts > status.failures ? status.maxAttempts - status.failures : 0
    }
}
