import Foundation
import Session

/// CTAP1/U2F over CTAPHID_MSG (FIDO U2F Raw Message Formats; CTAP 2.1 §11.2.9.1.1): U2F_REGISTER,
/// U2F_AUTHENTICATE and U2F_VERSION in ISO 7816-4 APDUs, short or extended length, answered with
/// the status words a U2F key gives. U2F has no keepalive: a request that needs a touch the person
/// has not given within a moment answers SW_CONDITIONS_NOT_SATISFIED and the client asks again.
extension SecurityKey {
    /// The status words (FIDO U2F Raw Message Formats §3.3).
    enum StatusWord: UInt16 {
        case noError = 0x9000
        case conditionsNotSatisfied = 0x6985
        case wrongData = 0x6A80
        case wrongLength = 0x6700
        case claNotSupported = 0x6E00
        case insNotSupported = 0x6D00

        var bytes: [UInt8] { [UInt8(rawValue >> 8), UInt8(rawValue & 0xFF)] }
    }

    /// How long one U2F request waits for a touch before it answers "not yet".
    static let u2fTouchWait: Duration = .milliseconds(250)

    /// An APDU's instruction, parameters and data (ISO 7816-4 §5.1: CLA INS P1 P2, then no body,
    /// Lc and data, or an extended Lc of three bytes; an Le of one, two or three bytes may follow).
    struct APDU {
        let instruction: UInt8
        let p1: UInt8
        let data: [UInt8]

        init(_ bytes: [UInt8]) throws(CTAPStatus) {
            guard bytes.count >= 4 else { throw .invalidLength }
            guard bytes[0] == 0 else { throw .invalidCommand }
            instruction = bytes[1]
            p1 = bytes[2]
            let body = Array(bytes[4...])
            if body.count <= 1 || (body[0] == 0 && body.count == 3) {
                data = []  // no data: at most a short or an extended Le
            } else if body[0] == 0 {
                // An extended Lc of zero carries no data (python-fido2 sends one, with an Le).
                let length = Int(body[1]) << 8 | Int(body[2])
                guard body.count == 3 + length || body.count == 3 + length + 2 else { throw .invalidLength }
                data = Array(body[3..<3 + length])
            } else {
                let length = Int(body[0])
                guard body.count == 1 + length || body.count == 2 + length else { throw .invalidLength }
                data = Array(body[1..<1 + length])
            }
        }
    }

    func u2f(_ bytes: [UInt8], _ progress: CTAPProgress) -> [UInt8] {
        let apdu: APDU
        do { apdu = try APDU(bytes) } catch {
            return (error == .invalidCommand ? StatusWord.claNotSupported : .wrongLength).bytes
        }
        do {
            switch apdu.instruction {
            case 0x01: return try u2fRegister(apdu, progress)
            case 0x02: return try u2fAuthenticate(apdu, progress)
            case 0x03: return Array("U2F_V2".utf8) + StatusWord.noError.bytes
            default: return StatusWord.insNotSupported.bytes
            }
        } catch {
            return error.bytes
        }
    }

    private func u2fRegister(_ apdu: APDU, _ progress: CTAPProgress) throws(StatusWord) -> [UInt8] {
        guard apdu.data.count == 64 else { throw .wrongLength }
        guard touch.await(progress, timeout: Self.u2fTouchWait) == .touched else { throw .conditionsNotSatisfied }
        do {
            let registration = try session.keyU2FRegister(device: device, application: Array(apdu.data[32...]),
                                                          challenge: Array(apdu.data[..<32]))
            return registration.bytes + StatusWord.noError.bytes
        } catch { throw .conditionsNotSatisfied }
    }

    private func u2fAuthenticate(_ apdu: APDU, _ progress: CTAPProgress) throws(StatusWord) -> [UInt8] {
        guard apdu.data.count >= 65, apdu.data.count == 65 + Int(apdu.data[64]) else { throw .wrongLength }
        let challenge = Array(apdu.data[..<32]), application = Array(apdu.data[32..<64]), handle = Array(apdu.data[65...])
        let holds: Bool
        do { holds = try session.keyU2FHolds(device: device, application: application, keyHandle: handle) } catch { throw .wrongData }
        guard holds else { throw .wrongData }
        let present: Bool
        switch apdu.p1 {
        case 0x07: throw .conditionsNotSatisfied  // check-only: the key handle is this key's
        case 0x03:
            guard touch.await(progress, timeout: Self.u2fTouchWait) == .touched else { throw .conditionsNotSatisfied }
            present = true
        case 0x08: present = false  // dont-enforce-user-presence-and-sign
        default: throw .wrongData
        }
        let answer: [UInt8]?
        do {
            answer = try session.keyU2FAuthenticate(device: device, application: application, challenge: challenge, keyHandle: handle,
                                                    userPresent: present)
        } catch { throw .wrongData }
        guard let answer else { throw .wrongData }
        return answer + StatusWord.noError.bytes
    }
}

extension SecurityKey.StatusWord: Error {}
