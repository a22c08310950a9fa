import Foundation
import Session

/// A report printed two ways from one value: JSON with `--json`, else one `key: value` line per
/// member, keys sorted (a nested object's members as `name=value` pairs, a list joined by `; `).
enum Report {
    static func print(_ value: some Encodable, json: Bool) throws(CLIError) {
        let text = JSONOutput.string(value)
        guard !json, let object = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] else {
            return try Output.data(text)
        }
        for key in object.keys.sorted() { try Output.text("\(key): \(describe(object[key]!))") }
    }

    private static func describe(_ value: Any) -> String {
        switch value {
        case let list as [Any]: list.isEmpty ? "none" : list.map(describe).joined(separator: "; ")
        case let object as [String: Any]: object.keys.sorted().map { "\($0)=\(describe(object[$0]!))" }.joined(separator: " ")
        case let number as NSNumber where String(cString: number.objCType) == "c": number.boolValue ? "true" : "false"
        default: "\(value)"
        }
    }
}
