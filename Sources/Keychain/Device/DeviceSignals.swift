import KeyVault
import VirtualAuthenticator

/// What a signal changed on the device (the page learns none of it: the promise resolves empty).
public struct SignalEffect: Sendable, Equatable {
    /// Passkeys deleted (`signalUnknownCredential`).
    public var removed = [Credential]()
    /// Passkeys hidden, and hidden ones restored (`signalAllAcceptedCredentials`).
    public var hidden = [Credential]()
    public var restored = [Credential]()
    /// Passkeys whose user name and display name changed (`signalCurrentUserDetails`).
    public var updated = [Credential]()

    public init() {}

    public var isEmpty: Bool { removed.isEmpty && hidden.isEmpty && restored.isEmpty && updated.isEmpty }
}

extension Device {
    /// Whether this device supports passkeys (``Account/setPasskeysSupported(_:device:)``).
    public var passkeysSupported: Bool { (try? record().passkeysSupported) ?? false }

    /// Fails with `passkeysNotSupported` when this device has no passkey support (for a hybrid
    /// sign-in, the device whose browser asks).
    package func requirePasskeySupport() throws(DeviceError) { try Self.requireSupport(try record()) }

    static func requireSupport(_ device: DeviceRecord) throws(DeviceError) {
        guard device.passkeysSupported else {
            throw DeviceError(.passkeysNotSupported,
                "device '\(device.name)' has no passkey support (a browser without WebAuthn: navigator.credentials rejects with NotSupportedError)")
        }
    }

    /// Reads `optionsJSON` as the options of signal `kind` from a page at `origin` and applies it:
    /// no passkey support first (`passkeysNotSupported`), then the client's checks (`badInput`
    /// for a member that is missing or not base64url, `securityError` for an RP ID the origin may
    /// not use), then ``signal(_:)``. A failed check changes nothing.
    @discardableResult
    public func signal(_ kind: Signal.Kind, optionsJSON: [UInt8], origin: String,
                       relatedOrigins: RelatedOrigins.Source? = nil) throws(DeviceError) -> SignalEffect {
        try requirePasskeySupport()
        let parsed: Signal
        do {
            parsed = try Signal(kind, json: optionsJSON, origin: origin, relatedOrigins: relatedOrigins, suffixes: account.suffixes())
        } catch { throw DeviceError(error) }
        return try signal(parsed)
    }

    /// Applies an RP's signal (WebAuthn L3 §5.1.10) to this device's passkeys of its RP, as iCloud
    /// Keychain and Google Password Manager do. Each change is a passkey revision, so it syncs to
    /// the account's other devices like any other:
    /// - `unknownCredential`: that passkey is deleted;
    /// - `allAcceptedCredentials`: the user's passkeys not listed are hidden (kept, offered to no
    ///   ceremony), and hidden ones listed again are restored — as Google Password Manager does,
    ///   so a list the RP got wrong can be undone by the next;
    /// - `currentUserDetails`: the user's passkeys take the new name and display name.
    /// A signal that matches nothing changes nothing and succeeds.
    @discardableResult
    public func signal(_ signal: Signal) throws(DeviceError) -> SignalEffect {
        let device = try record()
        try Self.requireSupport(device)
        let store = try store()
        var effect = SignalEffect()
        do throws(VaultError) {
            let held = try store.items(rpIds: [signal.rpId]).map(\.credential)
            switch signal {
            case .unknownCredential(_, let id):
                let matched = held.filter { $0.id == id }
                if !matched.isEmpty { try store.delete(matched) }
                effect.removed = matched
            case .allAcceptedCredentials(_, let userId, let accepted):
                let listed = Set(accepted)
                for credential in held where credential.userHandle == userId && listed.contains(credential.id) == credential.hidden {
                    let now = try store.revise(credential) { $0.hidden.toggle() }
                    if now.hidden { effect.hidden.append(now) } else { effect.restored.append(now) }
                }
            case .currentUserDetails(_, let userId, let name, let displayName):
                for credential in held where credential.userHandle == userId
                    && (credential.userName != name || credential.userDisplayName != displayName) {
                    effect.updated.append(try store.revise(credential) {
                        $0.userName = name
                        $0.userDisplayName = displayName
                    })
                }
            }
        } catch { throw DeviceError(error) }
        return effect
    }

    /// What `PublicKeyCredential.getClientCapabilities()` would give a page on this device: nothing
    /// without passkey support; user-verifying platform authenticator with a platform profile and
    /// a biometric enrolled; hybrid when another device of the account could answer over it.
    public func capabilities() throws(DeviceError) -> ClientCapabilities {
        let device = try record()
        let (profile, _) = try account.profile(of: device)
        var hybrid = false
        for other in try account.deviceRecords() where other.id != device.id && other.passkeysSupported {
            if try account.profile(of: other).0.attachment == .platform { hybrid = true }
        }
        return ClientCapabilities(supported: device.passkeysSupported, platform: profile.attachment == .platform,
                                  userVerifying: device.enrollment != nil, hybrid: hybrid)
    }
}
