import KeyVault
import VirtualAuthenticator

/// What authctl reads from untrusted bytes, as fuzz targets. The first input byte picks the
/// target; the rest is its input. Every target must return or throw, never trap: libFuzzer
/// reports a crash, a hang or (with AddressSanitizer) a memory error as a finding.
enum FuzzTarget: UInt8, CaseIterable {
    case vaultHeader = 0, vaultBatch, creationOptions, requestOptions, cbor, authenticatorData, indexRoot, indexBucket

    static func run(_ data: [UInt8]) {
        guard let first = data.first, let target = FuzzTarget(rawValue: first % UInt8(allCases.count)) else { return }
        target.run(Array(data.dropFirst()))
    }

    func run(_ input: [UInt8]) {
        switch self {
        case .vaultHeader: _ = try? VaultDecoding.header(input)
        case .vaultBatch:
            // What decodes must re-encode to the same bytes: the format has one encoding per value.
            if let records = try? VaultDecoding.batch(input) {
                precondition(VaultDecoding.encodeBatch(records) == input, "a batch did not round-trip")
                for record in records { _ = record.fields }
            }
        case .creationOptions: _ = try? CreationOptions(json: input)
        case .requestOptions: _ = try? RequestOptions(json: input)
        case .cbor:
            // Input may be non-canonical; its canonical form must decode to the same value.
            if let value = try? CBORValue.decode(input) {
                precondition((try? CBORValue.decode(value.encoded())) == value, "canonical CBOR did not decode back")
            }
        case .indexRoot:
            if let encoded = try? VaultDecoding.indexRoot(input) {
                precondition(encoded == input, "an index root did not round-trip")
            }
        case .indexBucket:
            if let partitions = try? VaultDecoding.indexBucket(input) {
                for (_, records) in partitions { for record in records { _ = record.fields } }
            }
        case .authenticatorData:
            // Extensions and the COSE key may arrive in non-canonical CBOR, so the bytes need not
            // round-trip; what is written must parse back to the same value.
            if let parsed = try? AuthenticatorData(parsing: input) {
                precondition((try? AuthenticatorData(parsing: parsed.bytes)) == parsed, "authenticator data did not round-trip")
            }
        }
    }
}

#if FUZZING
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    FuzzTarget.run(Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
}

/// libFuzzer's driver, for programs that keep their own `main` (SwiftPM names the executable's
/// entry point after the module, so libFuzzer's own `main` is not the one that runs).
@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>, Int) -> CInt) -> CInt

@_cdecl("authctl_fuzz_main")
public func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    var count = argc
    var vector = argv
    return LLVMFuzzerRunDriver(&count, &vector) { data, size in fuzzOneInput(data, size) }
}
#endif
