import Synchronization

/// The members a ``RequestBodyType`` takes, read from the type itself — its `Decodable`
/// conformance run against a decoder that answers every member and notes how it was asked for:
/// `decode` is a required member, `decodeIfPresent` (an optional property) one that may be
/// absent. What the server refuses unknown members by, and what the contract test compares with
/// `openapi.json`.
struct BodyShape: Sendable, Equatable {
    struct Member: Sendable, Equatable {
        let name: String
        let required: Bool
        let value: Value
    }

    indirect enum Value: Sendable, Equatable {
        /// A string, boolean, whole number or ``BodyValue``: its JSON types, and its names when it
        /// is one of a set.
        case scalar(Set<String>, names: [String]?)
        case list(Value)
        case object(BodyShape)
    }

    let type: String
    let members: [Member]
    let takesOtherMembers: Bool
    /// The members' names.
    let names: Set<String>

    init(type: String, members: [Member], takesOtherMembers: Bool) {
        (self.type, self.members, self.takesOtherMembers) = (type, members, takesOtherMembers)
        names = Set(members.map(\.name))
    }

    private static let known = Mutex([ObjectIdentifier: BodyShape]())

    static func of(_ type: any RequestBodyType.Type) -> BodyShape {
        if let shape = known.withLock({ $0[ObjectIdentifier(type)] }) { return shape }
        let notes = Notes()
        _ = try? type.init(from: Probe(notes: notes))
        let shape = BodyShape(type: "\(type)", members: notes.members, takesOtherMembers: type.takesOtherMembers)
        known.withLock { $0[ObjectIdentifier(type)] = shape }
        return shape
    }

    static func value(of type: any Decodable.Type) -> Value {
        if type == String.self { return .scalar(["string"], names: nil) }
        if type == Bool.self { return .scalar(["boolean"], names: nil) }
        if type == UInt64.self { return .scalar(["integer"], names: nil) }
        if let value = type as? any BodyValue.Type { return .scalar(value.jsonTypes, names: value.names) }
        if let list = type as? any BodyList.Type { return .list(Self.value(of: list.element)) }
        if let body = type as? any RequestBodyType.Type { return .object(of(body)) }
        return .scalar([], names: nil)
    }

    /// What the probe noted, member by member, in the order the type asked.
    private final class Notes: @unchecked Sendable {
        var members = [Member]()
    }

    private struct Probe: Decoder {
        let notes: Notes
        var codingPath: [any CodingKey] { [] }
        var userInfo: [CodingUserInfoKey: Any] { [:] }

        func container<Key: CodingKey>(keyedBy _: Key.Type) throws -> KeyedDecodingContainer<Key> {
            KeyedDecodingContainer(Members<Key>(notes: notes))
        }
        func unkeyedContainer() throws -> any UnkeyedDecodingContainer { throw Problem.input("no list") }
        func singleValueContainer() throws -> any SingleValueDecodingContainer { throw Problem.input("no value") }
    }

    /// Any value of `T` (a member's placeholder), for the probe to hand the type.
    private static func placeholder<T: Decodable>(_: T.Type) throws -> T {
        if T.self == String.self { return "" as! T }
        if T.self == Bool.self { return false as! T }
        if T.self == UInt64.self { return UInt64(0) as! T }
        if let value = T.self as? any BodyValue.Type { return value.placeholder as! T }
        if let list = T.self as? any BodyList.Type { return try list.read([], path: "") as! T }
        if let body = T.self as? any RequestBodyType.Type { return try body.init(from: Probe(notes: Notes())) as! T }
        throw Problem.input("\(T.self) is of a type no body member has")
    }

    private struct Members<Key: CodingKey>: KeyedDecodingContainerProtocol {
        let notes: Notes
        var codingPath: [any CodingKey] { [] }
        var allKeys: [Key] { [] }

        func contains(_: Key) -> Bool { true }
        func decodeNil(forKey _: Key) throws -> Bool { false }

        private func note<T: Decodable>(_ type: T.Type, _ key: Key, required: Bool) {
            notes.members.append(Member(name: key.stringValue, required: required, value: BodyShape.value(of: type)))
        }

        func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
            note(type, key, required: true)
            return try BodyShape.placeholder(type)
        }

        func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
            note(type, key, required: false)
            return nil
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

        func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? { try present(type, key) }
        func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? { try present(type, key) }
        func decodeIfPresent(_ type: UInt64.Type, forKey key: Key) throws -> UInt64? { try present(type, key) }
        func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? { try present(type, key) }
        func decodeIfPresent(_ type: Float.Type, forKey key: Key) throws -> Float? { try present(type, key) }
        func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? { try present(type, key) }
        func decodeIfPresent(_ type: Int8.Type, forKey key: Key) throws -> Int8? { try present(type, key) }
        func decodeIfPresent(_ type: Int16.Type, forKey key: Key) throws -> Int16? { try present(type, key) }
        func decodeIfPresent(_ type: Int32.Type, forKey key: Key) throws -> Int32? { try present(type, key) }
        func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? { try present(type, key) }
        func decodeIfPresent(_ type: UInt.Type, forKey key: Key) throws -> UInt? { try present(type, key) }
        func decodeIfPresent(_ type: UInt8.Type, forKey key: Key) throws -> UInt8? { try present(type, key) }
        func decodeIfPresent(_ type: UInt16.Type, forKey key: Key) throws -> UInt16? { try present(type, key) }
        func decodeIfPresent(_ type: UInt32.Type, forKey key: Key) throws -> UInt32? { try present(type, key) }
        private func present<T: Decodable>(_ type: T.Type, _ key: Key) throws -> T? { try decodeIfPresent(type, forKey: key) as T? }

        func nestedContainer<NestedKey: CodingKey>(keyedBy _: NestedKey.Type, forKey _: Key) throws -> KeyedDecodingContainer<NestedKey> {
            throw Problem.input("no nested container")
        }
        func nestedUnkeyedContainer(forKey _: Key) throws -> any UnkeyedDecodingContainer { throw Problem.input("no list") }
        func superDecoder() throws -> any Decoder { Probe(notes: notes) }
        func superDecoder(forKey _: Key) throws -> any Decoder { Probe(notes: notes) }
    }
}
