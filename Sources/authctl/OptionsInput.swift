import Foundation
import VirtualAuthenticator

/// `--origin URL`, required by both ceremonies: the page the call would come from.
enum OriginOption {
    static func read(_ args: inout Arguments) throws(AuthenticatorError) -> String {
        guard let origin = try args.value("--origin") else {
            throw AuthenticatorError(.usage, "--origin URL is required (the web origin of the calling page)")
        }
        return origin
    }
}

/// `--options FILE` or `--options -` (stdin): the options JSON an RP server produced.
enum OptionsInput {
    static func read(_ args: inout Arguments) throws(AuthenticatorError) -> [UInt8]? {
        guard let source = try args.value("--options") else { return nil }
        if source == "-" { return Array(FileHandle.standardInput.readDataToEndOfFile()) }
        guard let data = FileManager.default.contents(atPath: source) else {
            throw AuthenticatorError(.badInput, "cannot read options file \(source)")
        }
        return Array(data)
    }

    static func serialize(_ object: [String: Any]) -> [UInt8] {
        Array(try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]))
    }
}
