/// The page bridge (docs/browser.md): a script a test injects into a page before the page's own
/// scripts run. It answers the page's WebAuthn calls — `navigator.credentials.create/get` for
/// `publicKey` requests, the availability checks, `getClientCapabilities()` and the three
/// signals — with a device of `authctl serve`, and hands the page objects of the browser's own
/// shape: no own properties, the members the prototypes' attributes and operations (with their
/// names, lengths and property attributes), ArrayBuffers that are the same object at every read,
/// not cloneable. A conditional sign-in belongs to its page: withdrawn when the page aborts it or
/// goes away. `__AUTHCTL_CONFIG__` becomes `{"server", "token", "account", "device"}`.
///
/// It is `bridge.js` beside this file, which the build embeds in the binary (Package.swift:
/// `.embedInCode`), so that an installed binary serves it with no file beside it; CI checks it
/// with `node --check` (`Tests/interop/test_serve_contract.py`).
enum PageBridgeScript {
    static var text: String { String(decoding: PackageResources.bridge_js, as: UTF8.self) }
}
