/// What every ``AccountStore`` refuses, the same way whatever holds it: the checks a call makes
/// before it stores anything (the contract suite's `refusesWhatNoObjectCanBe`).
package enum StoreRules {
    /// The most an object's bytes (or a metadata value) can be.
    package static let objectLimit = 1 << 20

    /// An object's id is 1 to ``StoreObject/idLimit`` bytes (`invalid`), its bytes at most
    /// ``objectLimit`` (`tooLarge`).
    package static func check(_ object: StoreObject) throws(StoreError) {
        guard (1...StoreObject.idLimit).contains(object.id.count) else {
            throw StoreError(.invalid, "a store object's id is 1 to \(StoreObject.idLimit) bytes, not \(object.id.count)")
        }
        guard object.bytes.count <= objectLimit else {
            throw StoreError(.tooLarge, "a store object of \(object.bytes.count) bytes is more than one object holds (\(objectLimit))")
        }
    }

    /// A metadata key is 1 to 64 of a-z, 0-9, '.', '_', '-', not starting with '.' (a directory
    /// store names a file after it).
    package static func checkKey(_ key: String) throws(StoreError) {
        guard (1...64).contains(key.utf8.count), !key.hasPrefix("."),
              key.utf8.allSatisfy({ (0x61...0x7a).contains($0) || (0x30...0x39).contains($0) || "._-".utf8.contains($0) })
        else { throw StoreError(.invalid, "'\(key)' is not a store metadata key (1 to 64 of a-z, 0-9, '.', '_', '-')") }
    }

    /// A metadata value is at most ``objectLimit`` bytes.
    package static func checkMetadata(_ bytes: [UInt8]) throws(StoreError) {
        guard bytes.count <= objectLimit else {
            throw StoreError(.tooLarge, "metadata of \(bytes.count) bytes is more than the store holds under one key (\(objectLimit))")
        }
    }
}
