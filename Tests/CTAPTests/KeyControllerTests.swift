#if canImport(Glibc)
import Glibc
#endif
import CTAP
import Foundation
import Testing
import TestSupport

/// The controller's routes on a key plugged in on a Unix socket: the button, the power, and what
/// it refuses.
@Suite struct KeyControllerTests {
    @Test func touchHoldsTheButtonAndPowerUnplugsTheKey() throws {
        try withTemporaryDirectory { directory in
            let fixture = try KeyFixture(touch: Touch(policy: .button))
            let path = directory + "/key.sock"
            let plugged = try PluggedKey(handler: fixture.key, udp: nil, socket: path)
            defer { plugged.stop() }
            let controller = KeyController(key: plugged, touch: fixture.key.touch)
            #expect(controller.answer(method: "GET", path: "/").text.hasPrefix("authctl security key, power on"))
            // The button held: a touch asked for is given at once.
            #expect(controller.answer(method: "GET", path: "/usb0/touch/on") == .init(status: 200, text: "touch on\n"))
            #expect(fixture.key.touch.await(CTAPProgress(), timeout: .seconds(30)) == .touched)
            #expect(controller.answer(method: "GET", path: "/usb12/touch/off") == .init(status: 200, text: "touch off\n"))
            #expect(fixture.key.touch.await(CTAPProgress(), timeout: .milliseconds(1)) == .timedOut)
            #expect(controller.answer(method: "GET", path: "/usb0/power/off") == .init(status: 200, text: "power off\n"))
            #expect(!plugged.isPoweredOn && access(path, F_OK) != 0)
            #expect(controller.answer(method: "GET", path: "/").text.hasPrefix("authctl security key, power off"))
            #expect(controller.answer(method: "GET", path: "/usb0/power/off").status == 200)  // again: still off
            #expect(controller.answer(method: "GET", path: "/usb0/power/on") == .init(status: 200, text: "power on\n"))
            #expect(plugged.isPoweredOn && access(path, F_OK) == 0)
        }
    }

    @Test func powerOnWithSomethingElseAtTheSocketsPathIsAConflictAndTheKeyStaysOff() throws {
        try withTemporaryDirectory { directory in
            let fixture = try KeyFixture()
            let path = directory + "/key.sock"
            let plugged = try PluggedKey(handler: fixture.key, udp: nil, socket: path)
            defer { plugged.stop() }
            let controller = KeyController(key: plugged, touch: fixture.key.touch)
            _ = controller.answer(method: "GET", path: "/usb0/power/off")
            try Data("planted".utf8).write(to: URL(fileURLWithPath: path))
            let answer = controller.answer(method: "GET", path: "/usb0/power/on")
            #expect(answer.status == 409 && answer.text.contains("it exists and is not a socket"))
            #expect(!plugged.isPoweredOn)
            #expect(try String(contentsOfFile: path, encoding: .utf8) == "planted")
        }
    }

    @Test func otherPathsMethodsPagesAndHostNamesAreRefused() throws {
        try withTemporaryDirectory { directory in
            let fixture = try KeyFixture(touch: Touch(policy: .button))
            let plugged = try PluggedKey(handler: fixture.key, udp: nil, socket: directory + "/key.sock")
            defer { plugged.stop() }
            let controller = KeyController(key: plugged, touch: fixture.key.touch)
            for path in ["/usb/touch/on", "/usbx/touch/on", "/usb0/touch", "/usb0/touch/on/", "/usb0/power/reset", "/usb0/touch/on/x", "/touch/on", "//usb0/touch/on"] {
                #expect(controller.answer(method: "GET", path: path).status == 404, "\(path)")
            }
            #expect(controller.answer(method: "POST", path: "/usb0/power/off") == .init(status: 405, text: "the controller answers GET alone\n", allow: "GET"))
            #expect(controller.answer(method: "GET", path: "/usb0/power/off", host: "127.0.0.1:80", origin: "https://evil.example").status == 403)
            #expect(controller.answer(method: "GET", path: "/usb0/power/off", host: "evil.example:8080").status == 403)
            #expect(controller.answer(method: "GET", path: "/usb0/touch/on", host: "127.0.0.1.evil.example").status == 403)
            #expect(plugged.isPoweredOn)
            #expect(fixture.key.touch.await(CTAPProgress(), timeout: .milliseconds(1)) == .timedOut)
            #expect(controller.answer(method: "GET", path: "/usb0/touch/on", host: "localhost:8111").status == 200)
            #expect(controller.answer(method: "GET", path: "/usb0/touch/off", host: "127.0.0.2:8111").status == 200)
        }
    }
}
