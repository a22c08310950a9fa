import Foundation
import Synchronization

/// A request body as a Swift type: its stored properties, decoded by name, are the members the
/// route takes — the contract, which `openapi.json` states once more and the contract test holds
/// it to member by member (names, which are required, JSON types). A property that is optional
/// is a member that may be absent (or `null`); every other one is required.
///
/// Read by ``BodyDecoder`` with the server's own answers: a member of the wrong type is `400
/// badInput` naming it, one the type does not name is refused (a misspelt member would otherwise
/// be dropped without a word), and one named twice is refused before (``RequestBody``).
protocol RequestBodyType: Decodable, Sendable {
    /// Whether members the type does not name are passed over rather than refused: WebDriver's
    /// commands pass them over, as WebDriver does.
    static var takesOtherMembers: Bool { get }
    /// What a required member's absence says, where it says more than "X is required".
    static func missing(_ member: String) -> String?
    /// The largest whole number a member takes (else `Int64.max`).
    static func maximum(_ member: String) -> UInt64?
}

extension RequestBodyType {
    static var takesOtherMembers: Bool { false }
    static func missing(_: String) -> String? { nil }
    static func maximum(_: String) -> UInt64? { nil }

    /// The body a request carries, as this type; an empty body is `{}`.
    static func decode(_ bytes: [UInt8]) throws(Problem) -> Self {
        try decode(RequestBody(bytes).root, path: "")
    }

    /// An object of a body (the body itself when `path` is empty).
    static func decode(_ object: BodyNode, path: String) throws(Problem) -> Self {
        // The shape once per body (each member looked up in it, not the shape built for each).
        if !takesOtherMembers, case let known = BodyShape.of(Self.self).names,
           let unknown = object.names.filter({ !known.contains($0) }).min() {
            let names = known.sorted()
            let takes = names.isEmpty ? "none" : names.joined(separator: ", ")
            throw path.isEmpty ? Problem.input("the body has a member '\(JSONText.shown(unknown))' this route does not take (it takes \(takes))")
                : Problem.input("\(path) has a member '\(JSONText.shown(unknown))' it does not take (it takes \(takes))")
        }
        do { return try Self(from: BodyDecoder(node: object, path: path, type: Self.self)) } catch let problem as Problem {
            throw problem
        } catch {
            throw Problem.input("the body is not what \(path.isEmpty ? "this route" : path) takes: \(error)")
        }
    }
}

/// A member's value that is more than a JSON string, boolean or whole number as such: a
/// duration, a time, base64url bytes, one of a set of names, the RP's options as sent.
protocol BodyValue: Decodable, Sendable {
    /// The JSON types it is written as (`string`, `integer`, `boolean`, `object`, `array`).
    static var jsonTypes: Set<String> { get }
    /// The names it takes, when it is one of a set.
    static var names: [String]? { get }
    /// A value of it for ``BodyShape``, which reads a type without a body.
    static var placeholder: Self { get }
    /// Whether `null` is one of its values (``jsonTypes`` has `null`) rather than the member's
    /// absence, as it is for every other member.
    static var takesNull: Bool { get }
    init(_ member: BodyMember) throws(Problem)
}

extension BodyValue {
    static var names: [String]? { nil }
    static var takesNull: Bool { jsonTypes.contains("null") }

    init(from decoder: any Decoder) throws {
        guard let decoder = decoder as? BodyDecoder else { throw Problem.input("\(Self.self) is read from a request body only") }
        try self.init(BodyMember(node: decoder.node, path: decoder.path, key: decoder.path))
    }
}

/// One member as a ``BodyValue`` reads it: its value, the way to it (`request.id`), its name.
struct BodyMember {
    let node: BodyNode
    let path: String
    let key: String

    func string() throws(Problem) -> String {
        guard let text = node.string else { throw Problem.input("\(path) must be a string") }
        return text
    }

    /// A whole number from 0 to `maximum`.
    func integer(maximum: UInt64 = UInt64(Int64.max)) throws(Problem) -> UInt64 {
        guard let n = node.wholeNumber(maximum: maximum) else { throw Problem.input("\(path) must be a whole number from 0 to \(maximum)") }
        return n
    }

    func bool() throws(Problem) -> Bool {
        guard let value = node.bool else { throw Problem.input("\(path) must be true or false") }
        return value
    }
}

/// A list member: each element read as its type, at `path[i]`.
protocol BodyList {
    static var element: any Decodable.Type { get }
    static func read(_ elements: [BodyNode], path: String) throws(Problem) -> Self
}

extension Array: BodyList where Element: Decodable {
    static var element: any Decodable.Type { Element.self }

    static func read(_ elements: [BodyNode], path: String) throws(Problem) -> Self {
        var out = Self()
        for (i, value) in elements.enumerated() { out.append(try BodyDecoder.read(Element.self, value, path: "\(path)[\(i)]", key: "", in: nil)) }
        return out
    }
}

/// Reads a body's object into a ``RequestBodyType`` through its `Decodable` conformance.
struct BodyDecoder: Decoder {
    let node: BodyNode
    let path: String
    let type: (any RequestBodyType.Type)?
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy _: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard node.kind == .object else { throw Problem.input("\(path) must be a JSON object") }
        return KeyedDecodingContainer(Members<Key>(decoder: self))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer { throw Problem.input("\(path) is read as a list of its own type only") }
    func singleValueContainer() throws -> any SingleValueDecodingContainer { throw Problem.input("\(path) is read as a member of its own type only") }

    /// `value` at `path` as `T`: a string, a boolean, a whole number, a ``BodyValue``, a list, or
    /// an object of a ``RequestBodyType``.
    static func read<T: Decodable>(_: T.Type, _ value: BodyNode, path: String, key: String, in owner: (any RequestBodyType.Type)?) throws(Problem) -> T {
        let member = BodyMember(node: value, path: path, key: key)
        if T.self == String.self { return try member.string() as! T }
        if T.self == Bool.self { return try member.bool() as! T }
        if T.self == UInt64.self { return try member.integer(maximum: owner?.maximum(member.key) ?? UInt64(Int64.max)) as! T }
        if let value = T.self as? any BodyValue.Type { return try value.init(member) as! T }
        if let list = T.self as? any BodyList.Type {
            guard value.kind == .array else { throw Problem.input("\(path) must be a list") }
            return try list.read(value.elements, path: path) as! T
        }
        if let body = T.self as? any RequestBodyType.Type {
            guard value.kind == .object else { throw Problem.input("\(path) must be a JSON object") }
            return try body.decode(value, path: path) as! T
        }
        throw Problem.input("\(path) is of a type no body member has (\(T.self))")
    }

    /// An object's members, by name.
    private struct Members<Key: CodingKey>: KeyedDecodingContainerProtocol {
        let decoder: BodyDecoder
        var codingPath: [any CodingKey] { [] }
        var allKeys: [Key] { decoder.node.names.compactMap(Key.init(stringValue:)) }

        /// A member present and not `null`.
        private func value(_ key: Key) -> BodyNode? { decoder.node.member(key.stringValue).flatMap { $0.isNull ? nil : $0 } }
        /// A member present, and not `null` unless `null` is one of `T`'s values.
        private func value<T>(_ key: Key, as _: T.Type) -> BodyNode? {
            guard let node = decoder.node.member(key.stringValue) else { return nil }
            return node.isNull && (T.self as? any BodyValue.Type)?.takesNull != true ? nil : node
        }
        func contains(_ key: Key) -> Bool { value(key) != nil }
        func decodeNil(forKey key: Key) throws -> Bool { !contains(key) }

        private func path(_ key: Key) -> String { decoder.path.isEmpty ? key.stringValue : "\(decoder.path).\(key.stringValue)" }

        func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
            guard let value = value(key, as: type) else {
                throw Problem.input(decoder.type?.missing(key.stringValue) ?? "\(path(key)) is required")
            }
            return try BodyDecoder.read(type, value, path: path(key), key: key.stringValue, in: decoder.type)
        }

        func decode(_ type: String.Type, forKey key: Key) throws -> String { try decode(type, key) }
        func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try decode(type, key) }
        func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try decode(type, key) }
        func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try decode(type, key) }
        func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try decode(type, key) }
        func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try decode(type, key) }
        func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try decode(type, key) }
        func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try decode(type, key) }
        func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try decode(type, key) }
        func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try decode(type, key) }
        func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try decode(type, key) }
        func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try decode(type, key) }
        func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try decode(type, key) }
        func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try decode(type, key) }

        private func decode<T: Decodable>(_ type: T.Type, _ key: Key) throws -> T { try decode(type, forKey: key) as T }

        // An optional member looked up once (the protocol's own default asks `contains`, then
        // `decodeNil`, then `decode`: three lookups of a member present).
        func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
            guard let value = value(key, as: type) else { return nil }
            return try BodyDecoder.read(type, value, path: path(key), key: key.stringValue, in: decoder.type)
        }
        func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? { try decodeIfPresent(type, key) }
        func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? { try decodeIfPresent(type, key) }
        func decodeIfPresent(_ type: UInt64.Type, forKey key: Key) throws -> UInt64? { try decodeIfPresent(type, key) }

        private func decodeIfPresent<T: Decodable>(_ type: T.Type, _ key: Key) throws -> T? { try decodeIfPresent(type, forKey: key) as T? }

        func nestedContainer<NestedKey: CodingKey>(keyedBy _: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
            throw Problem.input("\(path(key)) is read as a member of its own type only")
        }
        func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
            throw Problem.input("\(path(key)) is read as a list of its own type only")
        }
        func superDecoder() throws -> any Decoder { decoder }
        func superDecoder(forKey _: Key) throws -> any Decoder { decoder }
    }
}
