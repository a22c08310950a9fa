import Keychain
import VirtualAuthenticator

/// What a registration or sign-in answered: the response JSON a browser hands the page, and the
/// facts a front end reports, read from the typed values the ceremony returned.
public struct CeremonyResponse: Sendable {
    public enum Ceremony: Sendable, Equatable { case registration, authentication }

    public let ceremony: Ceremony
    /// RegistrationResponseJSON or AuthenticationResponseJSON, as the page would POST it.
    public let json: String
    /// What the browser accepts but the RP should fix (an empty challenge, …).
    public let warnings: [String]
    /// The deliberate defect the response carries, if one was asked for.
    public let fault: Fault?
    /// The passkey that answered (a registration's new one).
    public let credential: Credential
    /// The authenticator data's flags among UP, UV, BE, BS, in that order.
    public let flags: [String]
    /// The authenticator data's signature counter.
    public let signCount: UInt32
    public let attachment: AuthenticatorAttachment
    /// A registration's attestation statement format.
    public let format: String?

    init(_ response: RegistrationResponse, fault: Fault?) {
        self.init(.registration, json: response.json, warnings: response.warnings, fault: fault, credential: response.result.credential,
                  authenticatorData: response.result.authenticatorData, attachment: response.authenticatorAttachment,
                  format: response.result.attestationObject.format.rawValue)
    }

    init(_ response: AuthenticationResponse, fault: Fault?) {
        self.init(.authentication, json: response.json, warnings: response.warnings, fault: fault, credential: response.result.credential,
                  authenticatorData: response.result.authenticatorData, attachment: response.authenticatorAttachment, format: nil)
    }

    private init(_ ceremony: Ceremony, json: String, warnings: [String], fault: Fault?, credential: Credential,
                 authenticatorData: [UInt8], attachment: AuthenticatorAttachment, format: String?) {
        self.ceremony = ceremony
        self.json = json
        self.warnings = warnings
        self.fault = fault
        self.credential = credential
        self.attachment = attachment
        self.format = format
        // Faults change authenticator data as a typed value before it is encoded, so what a
        // ceremony returns always parses.
        let data = try? AuthenticatorData(parsing: authenticatorData)
        let flags = data?.flags ?? []
        self.flags = [(AuthenticatorFlags.userPresent, "UP"), (.userVerified, "UV"), (.backupEligible, "BE"), (.backupState, "BS")]
            .filter { flags.contains($0.0) }.map(\.1)
        signCount = data?.signCount ?? 0
    }
}
