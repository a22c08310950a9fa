import VirtualAuthenticator

/// One RP's passkeys on a device, as a discoverable sign-in reads them from the device's
/// ``DeviceView``: in the view's creation order, each looked up through the view's indexes, none
/// copied until asked for.
struct ViewCredentialList: CredentialList {
    let view: DeviceView

    var count: Int { view.count }
    func credential(at position: Int) -> Credential { view.item(at: position).credential }
    func positions(credentialId id: [UInt8]) -> [Int] { view.positions(credentialId: id) }
    func positions(userName name: String) -> [Int] { view.positions(userName: name) }
    func positions(userHandle handle: [UInt8]) -> [Int] { view.positions(userHandle: handle) }
}
