import Foundation

/// The one JSON encoder for everything authctl writes (responses, listings, reports, errors):
/// compact, one line, members sorted so the same value always gives the same bytes, slashes
/// unescaped (origins stay readable).
package enum JSONOutput {
    package static func string(_ value: some Encodable) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        do {
            return String(decoding: try encoder.encode(value), as: UTF8.self)
        } catch {
            // JSONEncoder fails only on non-finite floating-point numbers, which no type written
            // here holds.
            preconditionFailure("JSONEncoder refused a value: \(error)")
        }
    }
}
