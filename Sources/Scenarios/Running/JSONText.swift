import Foundation

/// The few JSON operations a scenario needs: write options, reach into a reply, show a value.
enum JSONText {
    static func bytes(_ object: Any) -> [UInt8] {
        (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])).map(Array.init) ?? []
    }

    /// The JSON text of the member at `path` in `document` (the whole document for an empty path).
    static func member(_ document: [UInt8], _ path: [String]) -> [UInt8]? {
        guard var value = try? JSONSerialization.jsonObject(with: Data(document), options: [.fragmentsAllowed]) else { return nil }
        for key in path {
            if let object = value as? [String: Any], let next = object[key] {
                value = next
            } else if let array = value as? [Any], let index = Int(key), array.indices.contains(index) {
                value = array[index]
            } else {
                return nil
            }
        }
        return (try? JSONSerialization.data(withJSONObject: value, options: [.fragmentsAllowed, .sortedKeys, .withoutEscapingSlashes]))
            .map(Array.init)
    }

    /// A value as a check compares it: a string's own text, anything else as JSON.
    static func display(_ json: [UInt8]) -> String {
        if let string = (try? JSONSerialization.jsonObject(with: Data(json), options: [.fragmentsAllowed])) as? String { return string }
        return String(decoding: json, as: UTF8.self)
    }
}
