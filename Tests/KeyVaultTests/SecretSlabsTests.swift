@testable import KeyVault
import Testing

// Small secrets take slots of guarded slabs set up once (SecretSlabs): held at once they never
// share bytes, and a process that makes and drops them at a steady rate makes no new slab.

@Test func secretsHeldAtOnceHaveTheirOwnBytes() {
    // More than one slab's slots, of every small size and one too large for a slot.
    let sizes = (0..<600).map { [1, 32, 138, SecretSlabs.slotSize, SecretSlabs.slotSize + 1][$0 % 5] }
    let secrets = sizes.enumerated().map { i, size in
        let s = SecureBytes(count: size, allocation: i % 2 == 0 ? .guarded : .transient)
        s.withUnsafeMutableBytes { _ = $0.initializeMemory(as: UInt8.self, repeating: UInt8(truncatingIfNeeded: i)) }
        return s
    }
    for (i, s) in secrets.enumerated() {
        #expect(s.count == sizes[i])
        s.withUnsafeBytes { #expect($0.allSatisfy { $0 == UInt8(truncatingIfNeeded: i) }) }
    }
}

@Test func aSteadyStreamOfSecretsMakesNoNewSlab() {
    func churn() {
        for i in 0..<20_000 {
            let a = SecureBytes(count: 32)
            let b = SecureBytes(count: 138, allocation: .transient)
            a.withUnsafeMutableBytes { $0[0] = UInt8(truncatingIfNeeded: i) }
            b.withUnsafeMutableBytes { $0[0] = a.withUnsafeBytes { $0[0] } }
            #expect(a.withUnsafeBytes { $0[0] } == b.withUnsafeBytes { $0[0] })
        }
    }
    churn()
    let slabs = SecretSlabs.shared.slabCount
    churn()
    // Other tests of this process may hold secrets meanwhile; a few slabs at most, never one per secret.
    #expect(SecretSlabs.shared.slabCount <= slabs + 2)
}

@Test func aSecretInAReusedSlotStartsZeroed() {
    // Each secret is dropped filled; the next one, likely in the same slot, starts zeroed.
    for _ in 0..<100 {
        let s = SecureBytes(count: 64)
        s.withUnsafeBytes { #expect($0.allSatisfy { $0 == 0 }) }
        s.withUnsafeMutableBytes { _ = $0.initializeMemory(as: UInt8.self, repeating: 0xA5) }
    }
}
