import Foundation
import Session

/// Tells the credential managers of the device about an app's credentials (iOS 26.2): Apple's
/// form of the WebAuthn signal methods (WebAuthn L3 §5.1.10) for native apps. Here the credential
/// manager is the host's device, and each report is authctl's signal on it
/// (``Session/signal(device:_:optionsJSON:origin:relatedOrigins:)``) from the origin
/// `https://` + the RP ID: the device deletes, hides or renames its passkeys at once, as revisions
/// that sync to the account's other devices.
///
/// As on iOS, a report that matches nothing succeeds: "a successful call only indicates that the
/// parameters passed were well formed". It throws ``ASAuthorizationError`` when it is not
/// accepted: `.failed` with iOS's reason for a domain the app is not associated with (checked as
/// for a request, before anything changes), or with the signal's refusal.
public final class ASCredentialDataManager {
    public init() {}

    /// The passkey `credentialID` is unknown to the relying party: the device deletes it (as
    /// iCloud Keychain does).
    public func reportUnknownPublicKeyCredential(relyingPartyIdentifier: String, credentialID: Data) async throws {
        try await CredentialReport.signal(.unknownCredential, relyingPartyIdentifier: relyingPartyIdentifier,
                                          ["rpId": relyingPartyIdentifier, "credentialId": Base64URL.encode(credentialID)])
    }

    /// Every passkey the relying party accepts for the user `userHandle`: the device hides that
    /// user's others, and brings back hidden ones listed again.
    public func reportAllAcceptedPublicKeyCredentials(relyingPartyIdentifier: String, userHandle: Data, acceptedCredentialIDs: [Data]) async throws {
        try await CredentialReport.signal(.allAcceptedCredentials, relyingPartyIdentifier: relyingPartyIdentifier,
                                          ["rpId": relyingPartyIdentifier, "userId": Base64URL.encode(userHandle),
                                           "allAcceptedCredentialIds": acceptedCredentialIDs.map { Base64URL.encode($0) }])
    }

    /// The user `userHandle` is now called `newName`: the device renames that user's passkeys.
    /// Apple's report carries the user name alone, so each passkey keeps its display name.
    public func reportPublicKeyCredentialUpdate(relyingPartyIdentifier: String, userHandle: Data, newName: String) async throws {
        try await CredentialReport.rename(relyingPartyIdentifier: relyingPartyIdentifier, userHandle: userHandle, newName: newName)
    }

    /// The password of `userName` on `domain` is no longer used. The association is checked; the
    /// device keeps no passwords, so nothing else happens.
    public func reportUnusedPasswordCredential(domain: String, userName: String) async throws {
        try await CredentialReport.checkAssociation(domain)
    }
}

/// The same reports under their first name (iOS 26.0; deprecated in 26.2 for
/// ``ASCredentialDataManager``).
@available(iOS, introduced: 26.0, deprecated: 26.2, message: "Use `ASCredentialDataManager` instead")
@available(macOS, introduced: 26.0, deprecated: 26.2, message: "Use `ASCredentialDataManager` instead")
public final class ASCredentialUpdater {
    private let manager = ASCredentialDataManager()

    public init() {}

    public func reportPublicKeyCredentialUpdate(relyingPartyIdentifier: String, userHandle: Data, newName: String) async throws {
        try await manager.reportPublicKeyCredentialUpdate(relyingPartyIdentifier: relyingPartyIdentifier, userHandle: userHandle, newName: newName)
    }

    public func reportUnknownPublicKeyCredential(relyingPartyIdentifier: String, credentialID: Data) async throws {
        try await manager.reportUnknownPublicKeyCredential(relyingPartyIdentifier: relyingPartyIdentifier, credentialID: credentialID)
    }

    public func reportAllAcceptedPublicKeyCredentials(relyingPartyIdentifier: String, userHandle: Data, acceptedCredentialIDs: [Data]) async throws {
        try await manager.reportAllAcceptedPublicKeyCredentials(relyingPartyIdentifier: relyingPartyIdentifier, userHandle: userHandle,
                                                                acceptedCredentialIDs: acceptedCredentialIDs)
    }

    public func reportUnusedPasswordCredential(domain: String, userName: String) async throws {
        try await manager.reportUnusedPasswordCredential(domain: domain, userName: userName)
    }
}

/// A report performed on the host's device, on the main actor where the host lives.
@MainActor
enum CredentialReport {
    /// The host, once the app is associated with `rpID` (the same check a request makes).
    @discardableResult
    static func checkAssociation(_ rpID: String) throws(ASAuthorizationError) -> AuthenticationServicesHost {
        guard let host = AuthenticationServicesHost.current else {
            throw ASAuthorizationError(.failed, failureReason: "No device: set AuthenticationServicesHost.current first.")
        }
        if let refusal = host.association(rpID) { throw refusal }
        return host
    }

    /// authctl's signal `kind` with `options` (the JSON a page passes to the browser's method).
    static func signal(_ kind: Signal.Kind, relyingPartyIdentifier rpID: String, _ options: [String: Any]) throws(ASAuthorizationError) {
        let host = try checkAssociation(rpID)
        let json = (try? JSONSerialization.data(withJSONObject: options, options: [.sortedKeys])) ?? Data()
        do {
            try host.session.signal(device: host.device, kind, optionsJSON: Array(json), origin: "https://" + rpID)
        } catch {
            throw ASAuthorizationError(.failed, failureReason: error.message)
        }
    }

    /// `signalCurrentUserDetails` with the new name and the display name the user's newest passkey
    /// has (a user without passkeys here: nothing to rename).
    static func rename(relyingPartyIdentifier rpID: String, userHandle: Data, newName: String) throws(ASAuthorizationError) {
        let host = try checkAssociation(rpID)
        let held: [Credential]
        do { held = try host.session.passkeys(device: host.device, rpId: rpID) } catch {
            throw ASAuthorizationError(.failed, failureReason: error.message)
        }
        guard let newest = held.last(where: { $0.userHandle == Array(userHandle) }) else { return }
        try signal(.currentUserDetails, relyingPartyIdentifier: rpID,
                   ["rpId": rpID, "userId": Base64URL.encode(userHandle), "name": newName, "displayName": newest.userDisplayName])
    }
}
