import Keychain
import VirtualAuthenticator

/// The one hybrid rule, for both ceremonies and every front end: the page runs on `client`'s
/// browser; without `via` its own platform authenticator answers, with `via` another device of
/// the account answers over hybrid (QR code and Bluetooth, as a phone answers a laptop): that
/// device's passkeys, its PIN, its store, and `authenticatorAttachment: "cross-platform"`. A
/// device cannot reach itself over hybrid, and neither side may lack passkey support — the
/// browser asking (checked first) nor the device answering.
struct Hybrid {
    let client: Device
    let authenticator: Device

    /// The attachment the response reports: the answering profile's own, or cross-platform over hybrid.
    var attachment: AuthenticatorAttachment? { client === authenticator ? nil : .crossPlatform }
    var isHybrid: Bool { client !== authenticator }

    /// Resolves a request's devices: `device` (the first when `nil`) and `via`.
    static func resolve(device: String?, via: String?, in account: Account) throws(SessionError) -> Hybrid {
        let client: Device
        do { client = try account.device(device) } catch { throw SessionError(error) }
        guard let via else { return Hybrid(client: client, authenticator: client) }
        guard via != client.name else {
            throw SessionError(.usage, "via \(via) names the device the call comes from: hybrid needs another device")
        }
        do { return Hybrid(client: client, authenticator: try account.device(via)) } catch { throw SessionError(error) }
    }

    /// The browser asking over hybrid needs passkey support too; the answering device's own is
    /// checked by its ceremony.
    func requireClientSupport() throws(DeviceError) {
        if isHybrid { try client.requirePasskeySupport() }
    }
}
