import KeyVault
import VirtualAuthenticator

/// The account's devices: found by name or id in the ``DeviceDirectory`` the vault keeps in step
/// with their records, and added, approved, removed, reset, taken offline. Each change is a device
/// record written between two syncs, so the store's directory says so at once. See docs/design.md,
/// "Keychain".
extension Account {
    /// Every device, the first (the one the vault was created with) first.
    public var deviceNames: [String] { ((try? DeviceDirectory.of(vault)).map(\.currentNames)) ?? [] }

    /// Device `name`, or the first device when `name` is `nil`.
    public func device(_ name: String? = nil) throws(DeviceError) -> Device {
        Device(account: self, record: try deviceRecord(named: name))
    }

    func deviceRecords() throws(DeviceError) -> [DeviceRecord] {
        do { return try DeviceRecord.all(in: vault) } catch { throw DeviceError(error) }
    }

    func deviceRecord(named name: String?) throws(DeviceError) -> DeviceRecord {
        let directory: DeviceDirectory
        do { directory = try DeviceDirectory.of(vault) } catch { throw DeviceError(error) }
        guard let name else { return directory.current[0] }
        guard let found = directory.currentDevice(named: name) else {
            if devicesElsewhere.contains(where: { $0.name == name }) {
                throw DeviceError(.noSuchDevice, "device '\(EchoedInput.text(name))' is in another vault of this account: run the command with that vault")
            }
            throw DeviceError(.noSuchDevice, "no device named '\(EchoedInput.text(name))' in this account (it has: \(directory.currentNames.joined(separator: ", ")))")
        }
        return found
    }

    /// The device that approves `device`'s enrollment (a new device's PIN, a reset device's, a
    /// joining device's) when none is named: the first other device enrolled with a PIN whose
    /// person `knowing` says can type it — as a new iPhone asks for the passcode of one of the
    /// account's devices.
    package func defaultApprover(for device: String, knowing: (String) -> Bool = { _ in true }) -> String? {
        ((try? deviceRecords()) ?? []).first { $0.name != device && $0.enrollment != nil && $0.removedAt == nil && knowing($0.name) }?.name
    }

    /// Whether `device` was reset while it had a PIN, and has no new one yet: its former PIN can
    /// enroll a new one.
    package func hasFormerPIN(_ device: String) throws(DeviceError) -> Bool {
        try deviceRecord(named: device).formerEnrollment != nil
    }

    func deviceRecord(id: [UInt8]) throws(DeviceError) -> DeviceRecord {
        guard let found = try deviceRecords().first(where: { $0.id == id }) else {
            throw DeviceError(.noSuchDevice, "the device was removed")
        }
        return found
    }

    /// Refuses `name` when a device of the account has it: of this vault, or of another by the
    /// store's directory (as last read, when the store cannot be used).
    func requireFreeName(_ name: String) throws(DeviceError) {
        guard (try? DeviceDirectory.of(vault).currentDevice(named: name)) == nil else {
            throw DeviceError(.invalidArgument, "the account already has a device named '\(EchoedInput.text(name))'")
        }
        guard !devicesElsewhere.contains(where: { $0.name == name }) else {
            throw DeviceError(.invalidArgument, "the account already has a device named '\(EchoedInput.text(name))', in another vault")
        }
    }

    static func checkDeviceName(_ name: String) throws(DeviceError) {
        guard (1...64).contains(name.utf8.count),
              name.unicodeScalars.allSatisfy({ ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || "._-".unicodeScalars.contains($0) }),
              !name.hasPrefix("-"), !name.allSatisfy({ $0 == "." })  // "." and "..": a URL's path would lose them
        else {
            throw DeviceError(.invalidArgument, "a device name is 1 to 64 letters, digits, '.', '_' or '-', not starting with '-' and not only dots")
        }
    }

    /// Adds device `name`, its replica empty until sync brings the account's passkeys. With `pin`,
    /// its biometric is enrolled: when the account already has a biometric key (another device is
    /// enrolled), that device approves the new one — `approver` verifies on it (as an iPhone asks
    /// for another device's passcode to join the keychain) — so passkeys made with user
    /// verification work on the new device with its own PIN.
    @discardableResult
    public func addDevice(_ name: String, pin: SecureBytes?, maxPINAttempts: UInt32 = Device.defaultMaxPINAttempts,
                          approvedBy approverName: String? = nil, approver: UserPolicy = UserPolicy(),
                          profile profileName: String? = nil, aaguid: [UInt8]? = nil) throws(DeviceError) -> Device {
        try Self.checkDeviceName(name)
        let profile = try profileName.map { name throws(DeviceError) in
            guard let profile = AuthenticatorProfile.named(name) else { throw DeviceError(.invalidArgument, "no profile named '\(EchoedInput.text(name))' (see authctl profiles)") }
            return profile
        }
        guard aaguid == nil || profile != nil else { throw DeviceError(.invalidArgument, "an AAGUID needs a profile") }
        guard aaguid == nil || aaguid!.count == 16 else { throw DeviceError(.invalidArgument, "an AAGUID is 16 bytes") }
        try requireFreeName(name)
        guard (1...100).contains(maxPINAttempts) else {
            throw DeviceError(.invalidArgument, "the number of PIN attempts before lockout must be from 1 to 100")
        }
        if let approverName { _ = try deviceRecord(named: approverName) }
        let enrollment = try pin.map { pin throws(DeviceError) in try newEnrollment(pin, for: name, approvedBy: approverName, approver: approver) }
        do {
            try sync()
            var record = DeviceRecord.newRecord(kind: .device, name: name, enrollment: enrollment, maxAttempts: maxPINAttempts,
                                                syncedFrom: eventTime)
            if let profile { DeviceRecord.setProfile(profile.name, aaguid: aaguid, in: &record) }
            try vault.commit([record])
            try sync()  // with a second device the store comes into use: what has landed uploads
        } catch { throw DeviceError(error) }
        return try device(name)
    }

    /// A new enrollment of `pin` for device `name`: a wrap of the account's biometry key (unlocked
    /// on an enrolled device, which approves), or of a new key when no device is enrolled.
    func newEnrollment(_ pin: SecureBytes, for name: String, approvedBy approverName: String?,
                       approver: UserPolicy) throws(DeviceError) -> BiometryEnrollment {
        try Device.checkNewPIN(pin)
        let enrolled = try deviceRecords().filter { $0.enrollment != nil && $0.name != name }
        var unlock: BiometricSensor.Unlock? = nil
        if !enrolled.isEmpty {
            let approving = try deviceRecord(named: approverName ?? defaultApprover(for: name) ?? enrolled[0].name)
            guard approving.enrollment != nil else {
                throw DeviceError(.invalidArgument, "device '\(approving.name)' has no biometric PIN to approve '\(name)' with")
            }
            let prompt = UserPrompt(ceremony: .registration, rpId: "approve device \(name) on \(approving.name)", userName: nil)
            do {
                unlock = try SimulatedUser(sensor: BiometricSensor(account: self, deviceId: approving.id), policy: approver).verifyUser(prompt)
            } catch { throw DeviceError(error) }
        }
        do { return try vault.enrollBiometry(pin: pin, keeping: unlock?.biometryKey).0 } catch { throw DeviceError(error) }
    }

    /// Removes device `name` (not the first): what it had uploaded by now stays part of the
    /// account; what it had not is lost with it (as are its device-bound passkeys). Its record
    /// stays, marked removed, so the times of what it uploaded stay known; its name is free again.
    public func removeDevice(_ name: String) throws(DeviceError) {
        let record = try deviceRecord(named: name)
        guard record.record.kind == .device else {
            throw DeviceError(.invalidArgument, "'\(name)' is the account's first device, which holds the account; it cannot be removed")
        }
        forgetCheckedPIN(of: record.id, everyKey: true)  // what its last right PIN established (BiometricSensor.Memory)
        do throws(VaultError) {
            try sync()
            let time = eventTime
            // Its state as a security key goes with the rest (docs/vault-format.md, "Security key record").
            let keyState = try KeyStateRecord.removal(of: record.id, in: vault).map { [$0] } ?? []
            try DeviceRecord.update(record.id, in: vault, with: try lost(from: record, at: time).map(tombstone) + keyState) { r throws(VaultError) in
                r.setField(DeviceRecord.Tag.removedAt, time.bytes)
                DeviceRecord.setEnrollment(nil, in: &r)
                DeviceRecord.setFormerEnrollment(nil, in: &r)
            }
            try sync()  // the store's directory says so at once
        } catch { throw DeviceError(error) }
    }

    /// The revisions `device` made that leave with it at `time` (a reset or its removal): those
    /// that will not have landed by then and have not been sent (a change sent before it lands,
    /// to other vaults sharing the store, keeps its landing: StoreSync.swift), and its
    /// device-bound passkeys.
    private func lost(from device: DeviceRecord, at time: Instant) throws(VaultError) -> [Revision] {
        let history = try history()
        return history.revisions.filter { r in
            guard case .local = r.source, r.originId == device.id, r.changedAt.order >= device.syncedFrom.order else { return false }
            if history.deviceBound.contains(r.itemId) { return true }
            return storeLink.landing(of: r.id) == nil && (landedAt(r, in: history).map { $0 > time } ?? true)
        }
    }

    /// A factory reset of device `name`: its replica and its biometric enrollment are gone, and
    /// with them every change it had not uploaded; the account's passkeys come back as sync
    /// delivers them, from now.
    public func resetDevice(_ name: String) throws(DeviceError) {
        let record = try deviceRecord(named: name)
        forgetCheckedPIN(of: record.id, everyKey: true)  // its enrollment is retired: forget what its last right PIN established
        do throws(VaultError) {
            useStore()
            try sync()
            let time = eventTime
            let keyState = try KeyStateRecord.removal(of: record.id, in: vault).map { [$0] } ?? []
            try DeviceRecord.update(record.id, in: vault, with: try lost(from: record, at: time).map(tombstone) + keyState) { r throws(VaultError) in
                // The enrollment is retired, not destroyed: the former PIN can recover the
                // account's key, as iCloud Keychain asks for the old iPhone's passcode.
                if let current = record.enrollment { DeviceRecord.setFormerEnrollment(current, in: &r) }
                DeviceRecord.setEnrollment(nil, in: &r)
                r.setInteger(DeviceRecord.Tag.failures, UInt32(0))
                DeviceRecord.setSyncedFrom(time, in: &r)
            }
            try sync()
        } catch { throw DeviceError(error) }
    }

    /// Takes device `name` offline (nothing uploads or downloads) or back online (what waited
    /// starts then).
    public func setOnline(_ online: Bool, device name: String) throws(DeviceError) {
        let record = try deviceRecord(named: name)
        guard record.isOnline != online else { return }
        do {
            try sync()
            let time = eventTime
            var intervals = record.offline
            if online, let open = intervals.popLast() {
                intervals.append(OfflineInterval(from: open.from, to: max(time, open.from)))
            } else {
                intervals.append(OfflineInterval(from: time, to: nil))
            }
            try DeviceRecord.update(record.id, in: vault) { r throws(VaultError) in DeviceRecord.setOffline(intervals, in: &r) }
            try sync()
        } catch { throw DeviceError(error) }
    }

    /// Switches passkey support of device `name` off (a browser without WebAuthn, a phone too old
    /// for passkeys) or back on. Its passkeys stay; while off, it has no capability and every
    /// ceremony and signal on it fails with `passkeysNotSupported`.
    public func setPasskeysSupported(_ supported: Bool, device name: String) throws(DeviceError) {
        let record = try deviceRecord(named: name)
        guard record.passkeysSupported != supported else { return }
        do {
            try DeviceRecord.update(record.id, in: vault) { r throws(VaultError) in
                r.setField(DeviceRecord.Tag.passkeysUnsupported, supported ? nil : [1])
            }
        } catch { throw DeviceError(error) }
    }
}
