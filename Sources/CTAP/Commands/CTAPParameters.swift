import Session

/// A command's parameters: the CBOR map of integer keys that follows the command byte (CTAP 2.1
/// §6), read with the spec's status codes — a map that is not one is CTAP2_ERR_INVALID_CBOR or
/// CTAP2_ERR_CBOR_UNEXPECTED_TYPE, a required member absent CTAP2_ERR_MISSING_PARAMETER, a member
/// of the wrong type CTAP2_ERR_CBOR_UNEXPECTED_TYPE.
struct CTAPParameters {
    let members: [Int: CBORValue]

    init(members: [Int: CBORValue]) { self.members = members }

    /// The parameters in `bytes` (empty: a command without parameters).
    init(_ bytes: ArraySlice<UInt8>) throws(CTAPStatus) {
        guard !bytes.isEmpty else { self.init(members: [:]); return }
        let value: CBORValue
        do { value = try CBORValue.decode(Array(bytes)) } catch { throw .invalidCBOR }
        try self.init(value)
    }

    init(_ value: CBORValue) throws(CTAPStatus) {
        guard case .map(let pairs) = value else { throw .cborUnexpectedType }
        var members = [Int: CBORValue]()
        for (key, member) in pairs {
            guard let number = key.intValue else { throw .cborUnexpectedType }
            guard members[number] == nil else { throw .invalidCBOR }
            members[number] = member
        }
        self.init(members: members)
    }

    func has(_ key: Int) -> Bool { members[key] != nil }

    func bytes(_ key: Int) throws(CTAPStatus) -> [UInt8]? {
        guard let value = members[key] else { return nil }
        guard let bytes = value.bytesValue else { throw .cborUnexpectedType }
        return bytes
    }

    func text(_ key: Int) throws(CTAPStatus) -> String? {
        guard let value = members[key] else { return nil }
        guard let text = value.textValue else { throw .cborUnexpectedType }
        return text
    }

    func int(_ key: Int) throws(CTAPStatus) -> Int? {
        guard let value = members[key] else { return nil }
        guard let number = value.intValue else { throw .cborUnexpectedType }
        return number
    }

    /// An unsigned integer (a negative one is of the wrong type); one beyond `Int.max` reads as
    /// `Int.max`, past every limit a command has.
    func unsigned(_ key: Int) throws(CTAPStatus) -> Int? {
        guard let value = members[key] else { return nil }
        guard case .unsigned(let number) = value else { throw .cborUnexpectedType }
        return number > UInt64(Int.max) ? Int.max : Int(number)
    }

    func bool(_ key: Int) throws(CTAPStatus) -> Bool? {
        guard let value = members[key] else { return nil }
        guard let flag = value.boolValue else { throw .cborUnexpectedType }
        return flag
    }

    func map(_ key: Int) throws(CTAPStatus) -> [(CBORValue, CBORValue)]? {
        guard let value = members[key] else { return nil }
        guard case .map(let pairs) = value else { throw .cborUnexpectedType }
        return pairs
    }

    func array(_ key: Int) throws(CTAPStatus) -> [CBORValue]? {
        guard let value = members[key] else { return nil }
        guard case .array(let items) = value else { throw .cborUnexpectedType }
        return items
    }

    func required<T>(_ key: Int, _ read: (Int) throws(CTAPStatus) -> T?) throws(CTAPStatus) -> T {
        guard let value = try read(key) else { throw .missingParameter }
        return value
    }
}

extension [(CBORValue, CBORValue)] {
    /// The member named `name` of a text-keyed map (an entity, an options map).
    subscript(text name: String) -> CBORValue? { first { $0.0.textValue == name }?.1 }
}
