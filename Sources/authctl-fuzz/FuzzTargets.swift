import CTAP
import KeyVault
import VirtualAuthenticator

/// What authctl reads from untrusted bytes, as fuzz targets. The first input byte picks the
/// target; the rest is its input. Every target must return or throw, never trap: libFuzzer
/// reports a crash, a hang or (with AddressSanitizer) a memory error as a finding.
enum FuzzTarget: UInt8, CaseIterable {
    case vaultHeader = 0, vaultBatch, creationOptions, requestOptions, cbor, authenticatorData, indexRoot, indexBucket, ctapHID, ctapKey

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
        case .ctapHID: CTAPHIDSession.run(input)
        case .ctapKey: CTAPKeySession.run(input)
        }
    }
}

/// A session of clients with a key's CTAPHID framing: the input is steps — a report from one of
/// four clients, time passing, the key answering, a keepalive, a client gone, the power going. What must hold:
/// every report the device sends is 64 bytes, each client's reports make whole messages, a
/// request is handed over only while none is in flight and never longer than the key takes, and
/// a channel given is neither 0 nor broadcast.
enum CTAPHIDSession {
    static func run(_ input: [UInt8]) {
        var drawn: UInt32 = 0
        // Channels counted up from 0 (0 is redrawn): numbers a fuzzer finds, unlike random ones.
        var device = CTAPHIDDevice<UInt8>(capabilities: input.first ?? 0, maxMessageSize: 1200, random: {
            drawn &+= 1
            return drawn &- 1
        })
        var now: UInt64 = 0, rest = input.dropFirst()
        while let step = rest.first {
            rest = rest.dropFirst()
            let before = device.transactionInFlight
            var outputs: [CTAPHIDDevice<UInt8>.Output]
            switch step % 8 {
            case 0, 1, 2, 3:
                let report = Array(rest.prefix(CTAPHIDPacket.reportSize))
                rest = rest.dropFirst(CTAPHIDPacket.reportSize)
                outputs = device.receive(report + [UInt8](repeating: 0, count: CTAPHIDPacket.reportSize - report.count), from: step % 4, now: now)
            case 4:
                now += UInt64(step >> 3) * 50
                outputs = device.expire(now: now)
            case 5:
                outputs = before.map { device.answered($0, with: [UInt8](repeating: step, count: Int(step >> 3) * 40)) } ?? []
            case 6:
                outputs = device.keepalive(.upNeeded)
            default:
                let gone = step >> 4 & 3
                outputs = step & 0x08 == 0 ? device.powerOff() : device.disconnected { $0 == gone }
            }
            check(outputs, device, before)
        }
    }

    static func check(_ outputs: [CTAPHIDDevice<UInt8>.Output], _ device: CTAPHIDDevice<UInt8>, _ before: UInt64?) {
        var reports = [UInt8: [[UInt8]]]()
        for output in outputs {
            switch output {
            case .report(let report, let client): reports[client, default: []].append(report)
            case .handle(let request):
                precondition(before == nil, "a request handed over while another was in flight")
                precondition(request.payload.count <= device.maxMessageSize, "a request longer than the key takes")
                precondition(device.transactionInFlight == request.transaction, "the request handed over is not the one in flight")
            case .cancel: break
            }
        }
        for (_, sent) in reports {
            var index = 0
            while index < sent.count {
                guard case .initialization(let channel, let command, let length, let data)? = CTAPHIDPacket(sent[index]) else {
                    preconditionFailure("a message that does not start with an initialization packet")
                }
                precondition(length <= CTAPHIDPacket.longestMessage, "a message longer than 64-byte reports carry")
                var received = data.count, sequence: UInt8 = 0
                index += 1
                while received < length {
                    guard index < sent.count, case .continuation(channel, sequence, let more)? = CTAPHIDPacket(sent[index]) else {
                        preconditionFailure("a message cut short or out of sequence")
                    }
                    received += more.count
                    sequence += 1
                    index += 1
                }
                if command == CTAPHIDCommand.initialize.rawValue {
                    let given = data.dropFirst(8).prefix(4).reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
                    precondition(length == 17 && given != 0 && given != CTAPHIDPacket.broadcastChannel, "a channel given that cannot be one")
                }
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
