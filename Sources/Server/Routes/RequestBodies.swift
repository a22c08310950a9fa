import Audit
import Foundation
import Session

/// The request bodies the routes take, one type per schema of `openapi.json`'s
/// `components/schemas`, named as it is there: each stored property is a member (optional: it may
/// be absent), and the contract test holds the two to each other member by member. What the
/// members mean is docs/server.md's; the rules they obey beyond their types are the routes'.
enum Body {
    /// `POST /accounts`.
    struct NewAccount: RequestBodyType {
        struct Clock: RequestBodyType {
            let mode: Choice<ClockMode>?
            let start: Time?
        }

        enum ClockMode: String, CaseIterable, Sendable { case real, virtual }
        enum Storage: String, CaseIterable, Sendable { case memory, vault }

        let devices: [DeviceSpec]?
        let profile: String?
        let clock: Clock?
        let sync: SyncSettings?
        let storage: Choice<Storage>?
        let store: String?
    }

    /// A device of a new account.
    struct DeviceSpec: RequestBodyType {
        let name: String
        let pin: String?
        let maxPINAttempts: UInt64?
        let profile: String?
        let aaguid: String?

        static func maximum(_ member: String) -> UInt64? { member == "maxPINAttempts" ? 100 : nil }
    }

    /// `POST …/devices`: a device of an account there is, approved on one of its devices.
    struct NewDevice: RequestBodyType {
        let name: String
        let pin: String?
        let maxPINAttempts: UInt64?
        let profile: String?
        let aaguid: String?
        let approvedBy: String?
        let approverPin: String?

        static func maximum(_ member: String) -> UInt64? { member == "maxPINAttempts" ? 100 : nil }
    }

    /// `POST …/clock`: one of `advance` and `set`.
    struct ClockChange: RequestBodyType {
        let advance: Duration?
        let set: Time?
    }

    /// `PUT …/sync`, and an account's `sync`.
    struct SyncSettings: RequestBodyType {
        let upload: Delay?
        let download: Delay?
        let device: String?
        let seed: UInt64?
        let backupStateImmediate: Bool?
    }

    /// The device-state routes (`…/offline` and the rest): no member.
    struct NoMembers: RequestBodyType {}

    /// `POST …/pin`.
    struct PINRequest: RequestBodyType {
        let pin: String
        let currentPin: String?
        let reset: Bool?
        let approvedBy: String?
        let approverPin: String?
    }

    /// `PUT …/profile`.
    struct ProfileRequest: RequestBodyType {
        let profile: String
        let aaguid: String?
    }

    /// `POST …/signals/{signal}`.
    struct SignalRequest: RequestBodyType {
        let options: OptionsJSON
        let origin: String
    }

    /// `POST …/register` and `…/sign`.
    struct Ceremony: RequestBodyType {
        /// A conditional sign-in's page, as the page bridge names it.
        struct Request: RequestBodyType {
            let id: String
            let page: String?
            let url: String?

            static func missing(_ member: String) -> String? { member == "id" ? "request.id is required: the request's own id" : nil }
        }

        let options: OptionsJSON
        let origin: String
        let topOrigin: String?
        let mediation: Choice<Mediation>?
        let userAction: Choice<UserAction>?
        let pin: String?
        let fault: Choice<Fault>?
        let profile: String?
        let via: String?
        let deviceBound: Bool?
        let recentPasswordSignIn: Bool?
        let framePermission: Bool?
        let userActivation: Bool?
        let uiMode: String?
        let credentialId: Base64URLBytes?
        let user: String?
        let request: Request?
    }

    /// `POST …/person`: what the person at the device does next.
    struct Person: RequestBodyType {
        let userAction: Choice<UserAction>?
        let pin: String?
        let credentialId: Base64URLBytes?
        let user: String?
    }

    /// `POST …/autofill`: the person's pick from a conditional sign-in's list.
    struct AutofillPick: RequestBodyType {
        let credentialId: Base64URLBytes?
        let user: String?
        let cancel: Bool?
        let wait: Duration?
        let request: String?
    }

    /// `POST …/passkeys` and WebDriver's Add Credential: Credential Parameters (WebAuthn L3 §11.3).
    struct CredentialParameters: RequestBodyType {
        let credentialId: Base64URLBytes
        let isResidentCredential: Bool?
        let rpId: String
        let privateKey: Base64URLBytes
        let userHandle: Base64URLBytes
        let signCount: SignCount?
        let largeBlob: Base64URLBytes?
        let backupEligibility: Bool?
        let backupState: Bool?
        let userName: String?
        let userDisplayName: String?

        static func missing(_ member: String) -> String? {
            member == "userHandle" ? "userHandle is required (a discoverable credential has one)" : nil
        }
    }

    /// `PATCH …/passkeys/{credential}`.
    struct BackupFlags: RequestBodyType {
        let backupEligible: Bool?
        let backupState: Bool

        static func missing(_ member: String) -> String? {
            member == "backupState" ? "backupState is required (and backupEligible may be given)" : nil
        }
    }

    /// `POST …/passkeys/{credential}/export`.
    struct ExportRequest: RequestBodyType {
        let passphrase: String
        let pin: String?
    }

    /// `POST …/import`.
    struct ImportRequest: RequestBodyType {
        let envelope: Base64URLBytes
        let passphrase: String
        let pin: String?
    }

    /// `POST /session`: WebDriver's capabilities, which it passes over.
    struct NewSession: RequestBodyType {
        static var takesOtherMembers: Bool { true }
    }

    /// Add Virtual Authenticator (WebAuthn L3 §11.4); other members passed over, as WebDriver does.
    struct VirtualAuthenticator: RequestBodyType {
        enum ProtocolName: String, CaseIterable, Sendable {
            case ctap2, ctap2_1
            case ctap1 = "ctap1/u2f"
        }

        enum Transport: String, CaseIterable, Sendable {
            case usb, nfc, ble
            case smartCard = "smart-card"
            case hybrid, `internal`
        }

        let `protocol`: Choice<ProtocolName>
        let transport: Choice<Transport>
        let hasResidentKey: Bool?
        let hasUserVerification: Bool?
        let isUserConsenting: Bool?
        let isUserVerified: Bool?
        let extensions: [String]?
        let defaultBackupEligibility: Bool?
        let defaultBackupState: Bool?

        static var takesOtherMembers: Bool { true }
    }

    /// Set User Verified (§11.10).
    struct UserVerified: RequestBodyType {
        let isUserVerified: Bool

        static var takesOtherMembers: Bool { true }
    }

    /// Set Credential Properties (§11.11).
    struct CredentialProperties: RequestBodyType {
        let backupEligibility: Bool?
        let backupState: Bool?
        let signCount: SignCount?

        static var takesOtherMembers: Bool { true }
    }
}

/// One of `T`'s names (`"conditional"`, `"wrong-pin"`).
struct Choice<T: RawRepresentable & CaseIterable & Sendable>: BodyValue where T.RawValue == String {
    let value: T

    static var jsonTypes: Set<String> { ["string"] }
    static var names: [String]? { T.allCases.map(\.rawValue) }
    static var placeholder: Self { Self(value: T.allCases.first!) }

    init(value: T) { self.value = value }

    init(_ member: BodyMember) throws(Problem) {
        let text = try member.string()
        guard let value = T(rawValue: text) else {
            throw Problem.input("\(member.path) must be one of \(T.allCases.map(\.rawValue).joined(separator: ", ")), not '\(JSONText.shown(text))'")
        }
        self.value = value
    }
}

/// A credential's `signCount` as WebAuthn L3 §11 takes it (w3c/webauthn#2382): "a 32-bit unsigned
/// integer value in the range `0` to `4294967295`, inclusive, or `null`" — a signature counter
/// that starts there, or none at all.
struct SignCount: BodyValue {
    /// `nil`: `null`, no signature counter.
    let value: UInt32?

    static var jsonTypes: Set<String> { ["integer", "null"] }
    static var placeholder: Self { Self(value: 0) }

    init(value: UInt32?) { self.value = value }

    init(_ member: BodyMember) throws(Problem) {
        guard !member.node.isNull else {
            value = nil
            return
        }
        guard let n = member.node.wholeNumber(maximum: UInt64(UInt32.max)) else {
            throw Problem.input("\(member.path) must be a whole number from 0 to 4294967295, or null (no signature counter)")
        }
        value = UInt32(n)
    }

    /// The counter it sets.
    var setting: SignatureCounterSetting { value.map { .counting(from: $0) } ?? .noCounter }
}

/// Base64url bytes (unpadded, as WebAuthn's JSON writes them; padding tolerated).
struct Base64URLBytes: BodyValue {
    let bytes: [UInt8]

    static var jsonTypes: Set<String> { ["string"] }
    static var placeholder: Self { Self(bytes: []) }

    init(bytes: [UInt8]) { self.bytes = bytes }

    init(_ member: BodyMember) throws(Problem) {
        guard let bytes = Base64URL.decode(try member.string()) else { throw Problem.input("\(member.path) is not base64url") }
        self.bytes = bytes
    }
}

extension Body {
    /// A duration: `"90s"`, `"1m30s"`, `"500ms"`, or milliseconds.
    struct Duration: BodyValue {
        let milliseconds: UInt64

        static var jsonTypes: Set<String> { ["string", "integer"] }
        static var placeholder: Self { Self(milliseconds: 0) }

        init(milliseconds: UInt64) { self.milliseconds = milliseconds }

        init(_ member: BodyMember) throws(Problem) {
            if let text = member.node.string {
                guard let ms = DelayRange.milliseconds(text) else { throw Problem.input("\(member.path) must be a duration such as \"90s\", or milliseconds") }
                milliseconds = ms
            } else {
                milliseconds = try member.integer(maximum: VirtualClock.end)
            }
        }
    }

    /// A sync delay: `"2s"`, `"1s..5s"`, or milliseconds.
    struct Delay: BodyValue {
        let range: DelayRange

        static var jsonTypes: Set<String> { ["string", "integer"] }
        static var placeholder: Self { Self(range: DelayRange(lower: 0, upper: 0)) }

        init(range: DelayRange) { self.range = range }

        init(_ member: BodyMember) throws(Problem) {
            if let text = member.node.string {
                guard let range = DelayRange(parsing: text) else {
                    throw Problem.input("\(member.path) must be a delay such as \"2s\" or \"1s..5s\", or milliseconds")
                }
                self.range = range
            } else {
                let ms = try member.integer(maximum: DelayRange.maximum)
                range = DelayRange(lower: ms, upper: ms)
            }
        }
    }

    /// A time: RFC 3339 (`"2026-01-01T00:00:00Z"`) or milliseconds since the Unix epoch, from 1970 to
    /// the end of the year 9999 (RFC 3339's last: a clock past it would have no time to answer in it).
    struct Time: BodyValue {
        let milliseconds: UInt64

        static var jsonTypes: Set<String> { ["string", "integer"] }
        static var placeholder: Self { Self(milliseconds: 0) }

        init(milliseconds: UInt64) { self.milliseconds = milliseconds }

        init(_ member: BodyMember) throws(Problem) {
            guard let text = member.node.string else {
                milliseconds = try member.integer(maximum: VirtualClock.end)
                return
            }
            let formatter = ISO8601DateFormatter()
            formatter.formatOptions = [.withInternetDateTime]
            let fractional = ISO8601DateFormatter()
            fractional.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            // The formatter reads a year of five digits too, which RFC 3339 has not: past the end.
            guard let date = formatter.date(from: text) ?? fractional.date(from: text), date.timeIntervalSince1970 >= 0,
                  (date.timeIntervalSince1970 * 1000).rounded() <= Double(VirtualClock.end) else {
                throw Problem.input("\(member.path) must be an RFC 3339 time from 1970 to 9999, such as \"2026-01-01T00:00:00Z\", or milliseconds since 1970")
            }
            milliseconds = UInt64((date.timeIntervalSince1970 * 1000).rounded())
        }
    }
}

extension Body {
    /// `POST /audits`: `authctl audit`'s options (docs/audit.md).
    struct NewAudit: RequestBodyType {
        /// One of the presets `authctl audit --preset` names.
        struct Preset: BodyValue {
            let profile: AuditProfile

            static var jsonTypes: Set<String> { ["string"] }
            static var names: [String]? { AuditProfile.presets.map(\.key) }
            static var placeholder: Self { Self(profile: AuditProfile.presets.first!.value) }

            init(profile: AuditProfile) { self.profile = profile }

            init(_ member: BodyMember) throws(Problem) {
                let name = try member.string()
                guard let profile = AuditProfile.presets.first(where: { $0.key == name })?.value else {
                    throw Problem.input("\(member.path) must be one of \(Self.names!.joined(separator: ", ")), not '\(JSONText.shown(name))'")
                }
                self.profile = profile
            }
        }

        /// Requests a second: a whole number from 1 to 1000 (0 would never send one).
        struct Rate: BodyValue {
            let perSecond: Int

            static var jsonTypes: Set<String> { ["integer"] }
            static var placeholder: Self { Self(perSecond: 50) }

            init(perSecond: Int) { self.perSecond = perSecond }

            init(_ member: BodyMember) throws(Problem) {
                guard let n = member.node.wholeNumber(maximum: 1000), n >= 1 else {
                    throw Problem.input("\(member.path) must be a whole number from 1 to 1000")
                }
                perSecond = Int(n)
            }
        }

        let url: String
        let preset: Preset?
        /// A profile (docs/audit.md, "A profile for your RP"), as JSON.
        let profile: OptionsJSON?
        let origin: String?
        let only: [String]?
        let skip: [String]?
        let rate: Rate?
    }
}

/// A member that is itself a JSON object — the options an RP sends — as JSON text: its bytes as
/// sent (the body was read whole, no name repeated), so they are read once more, not written and
/// read.
struct OptionsJSON: BodyValue {
    let bytes: [UInt8]

    static var jsonTypes: Set<String> { ["object"] }
    static var placeholder: Self { Self(bytes: Array("{}".utf8)) }

    init(bytes: [UInt8]) { self.bytes = bytes }

    init(_ member: BodyMember) throws(Problem) {
        guard member.node.kind == .object else { throw Problem.input("\(member.path) must be a JSON object") }
        bytes = Array(member.node.text)
    }
}
