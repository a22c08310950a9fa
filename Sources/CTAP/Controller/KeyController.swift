/// The key's controller: what a test does with its hands — holds the button down and lets it go,
/// pulls the key out and plugs it back in — as HTTP GETs, the routes of the Pico controller
/// python-fido2's device tests drive: `GET /`, `GET /usbN/touch/on|off`, `GET /usbN/power/on|off`
/// (any N: one key here). The routes only; `authctl ctap serve` serves them over HTTP.
///
///     let controller = KeyController(key: plugged, touch: key.touch)
///     controller.answer(method: "GET", path: "/usb0/touch/on")   // 200, "touch on"
public struct KeyController: Sendable {
    /// An answer: its HTTP status, a line of text, and for 405 the methods allowed.
    public struct Answer: Equatable, Sendable {
        public let status: Int
        public let text: String
        public var allow: String?

        public init(status: Int, text: String, allow: String? = nil) {
            self.status = status
            self.text = text
            self.allow = allow
        }
    }

    public let key: PluggedKey
    public let touch: Touch

    public init(key: PluggedKey, touch: Touch) {
        self.key = key
        self.touch = touch
    }

    /// The answer to `method` `path`. A request a page sends (one with `Origin`), or one whose
    /// `Host` is not a loopback address or `localhost` (a page's own name bound to 127.0.0.1, as a
    /// DNS rebinding does), is refused 403 and changes nothing: the controller is for the
    /// programs of this machine, not for the pages its browser opens.
    public func answer(method: String, path: String, host: String? = nil, origin: String? = nil) -> Answer {
        guard origin == nil, host.map(Self.isLoopback) ?? true else {
            return Answer(status: 403, text: "the controller answers this machine's programs alone, not a page (Origin) or another host name\n")
        }
        let parts = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
        let route: [Substring]? = path == "/" ? [] : parts.count == 3 && isPort(parts[parts.startIndex]) ? Array(parts.dropFirst()) : nil
        guard let route, route.isEmpty || [["touch", "on"], ["touch", "off"], ["power", "on"], ["power", "off"]].contains(route.map(String.init)) else {
            return Answer(status: 404, text: "no such route: the controller answers GET /, /usbN/touch/on|off and /usbN/power/on|off\n")
        }
        guard method == "GET" else { return Answer(status: 405, text: "the controller answers GET alone\n", allow: "GET") }
        switch (route.first, route.last) {
        case ("touch", "on"):
            touch.press()
            return Answer(status: 200, text: "touch on\n")
        case ("touch", "off"):
            touch.release()
            return Answer(status: 200, text: "touch off\n")
        case ("power", "off"):
            key.powerOff()
            return Answer(status: 200, text: "power off\n")
        case ("power", "on"):
            do { try key.powerOn() } catch {
                return Answer(status: 409, text: "the key stays off: \(error.message)\n")
            }
            return Answer(status: 200, text: "power on\n")
        default:
            return Answer(status: 200, text: "authctl security key, power \(key.isPoweredOn ? "on" : "off"): "
                          + "GET /usbN/touch/on|off holds or lets go its button, GET /usbN/power/on|off plugs it in or out\n")
        }
    }

    /// Whether a `Host` header names this machine: `localhost` or an IPv4 loopback address, with
    /// any port.
    static func isLoopback(_ host: String) -> Bool {
        let name = host.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)[0].lowercased()
        if name == "localhost" { return true }
        let octets = name.split(separator: ".", omittingEmptySubsequences: false)
        return octets.count == 4 && octets[0] == "127" && octets.allSatisfy { $0.count <= 3 && UInt8($0) != nil }
    }

    /// `usbN`: the key's place on the controller's hub, any number.
    private func isPort(_ part: Substring) -> Bool {
        part.hasPrefix("usb") && part.count > 3 && part.dropFirst(3).allSatisfy { $0.isASCII && $0.isNumber }
    }
}
