import Foundation
import VirtualAuthenticator

/// A JSON document already written (a ceremony's response JSON, which the client encodes itself),
/// as a value another report can carry and the one encoder (``JSONOutput``) writes again
/// unchanged: members sorted, as every report's are.
public indirect enum JSONValue: Codable, Sendable, Equatable {
    case null
    case bool(Bool)
    case integer(Int64)
    /// A whole number past `Int64` (a seed, up to 2⁶⁴−1).
    case unsigned(UInt64)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    /// The document `text` holds; `nil` when it is not JSON.
    public init?(parsing text: String) {
        guard let value = try? JSONDecoder().decode(JSONValue.self, from: Data(text.utf8)) else { return nil }
        self = value
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        if c.decodeNil() { self = .null }
        else if let b = try? c.decode(Bool.self) { self = .bool(b) }
        else if let n = try? c.decode(Int64.self) { self = .integer(n) }
        else if let n = try? c.decode(UInt64.self) { self = .unsigned(n) }
        else if let n = try? c.decode(Double.self) { self = .number(n) }
        else if let s = try? c.decode(String.self) { self = .string(s) }
        else if let a = try? c.decode([JSONValue].self) { self = .array(a) }
        else { self = .object(try c.decode([String: JSONValue].self)) }
    }

    /// Any report as the value its JSON is.
    public init(_ report: some Encodable) {
        self = JSONValue(parsing: JSONOutput.string(report)) ?? .null
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        switch self {
        case .null: try c.encodeNil()
        case .bool(let b): try c.encode(b)
        case .integer(let n): try c.encode(n)
        case .unsigned(let n): try c.encode(n)
        case .number(let n): try c.encode(n)
        case .string(let s): try c.encode(s)
        case .array(let a): try c.encode(a)
        case .object(let o): try c.encode(o)
        }
    }
}
