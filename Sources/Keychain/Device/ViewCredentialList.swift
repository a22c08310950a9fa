import VirtualAuthenticator

/// One RP's passkeys on a device, as a discoverable sign-in reads them from the device's
/// ``DeviceView``: in the view's creation order, each looked up through the view's indexes, none
/// copied until asked for. Or, read newest first (``NewestFirst``), the default account found
/// without the view, which is made only when a picker asks for more than that.
struct ViewCredentialList: CredentialList {
    private let held: DeviceView?
    private let newestFirst: NewestFirst?

    init(view: DeviceView) {
        held = view
        newestFirst = nil
    }

    init(newestFirst: NewestFirst) {
        held = nil
        self.newestFirst = newestFirst
    }

    /// The device's view of the RP: the one held, or the one made when first asked for.
    var view: DeviceView { held ?? newestFirst!.whole }

    var count: Int { view.count }
    func credential(at position: Int) -> Credential { view.item(at: position).credential }
    func positions(credentialId id: [UInt8]) -> [Int] { view.positions(credentialId: id) }
    func positions(userName name: String) -> [Int] { view.positions(userName: name) }
    func positions(userHandle handle: [UInt8]) -> [Int] { view.positions(userHandle: handle) }

    func newest(where wanted: (Credential) -> Bool) throws(AuthenticatorError) -> Credential? {
        if let newestFirst {
            do { return try newestFirst.newest(where: wanted)?.credential } catch { throw AuthenticatorError(error) }
        }
        let view = view
        var position = view.count - 1
        while position >= 0 {
            let credential = view.item(at: position).credential
            if wanted(credential) { return credential }
            position -= 1
        }
        return nil
    }
}
