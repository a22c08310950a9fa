import Foundation
import Session

// The largeBlob extension (WebAuthn L3 §10.1.5) as Apple's Swift overlay types it (iOS 17;
// the outputs' static members iOS 18): value types with static constructors, no public
// initializers. A request's input becomes the options' `extensions.largeBlob`, and the
// response's `clientExtensionResults.largeBlob` becomes the output.

/// Whether a new passkey must be able to keep a large blob (`support: "required"`) or only
/// reports whether it can (`"preferred"`).
public struct ASAuthorizationPublicKeyCredentialLargeBlobRegistrationInput {
    public enum SupportRequirement: Hashable {
        case required
        case preferred
    }

    public var supportRequirement: SupportRequirement

    init(supportRequirement: SupportRequirement) {
        self.supportRequirement = supportRequirement
    }

    public static var supportRequired: ASAuthorizationPublicKeyCredentialLargeBlobRegistrationInput { Self(supportRequirement: .required) }
    public static var supportPreferred: ASAuthorizationPublicKeyCredentialLargeBlobRegistrationInput { Self(supportRequirement: .preferred) }

    /// `AuthenticationExtensionsLargeBlobInputsJSON` of a registration.
    var json: [String: Any] {
        ["support": supportRequirement == .required ? "required" : "preferred"]
    }
}

/// A sign-in's large-blob operation: read the passkey's blob, or replace it.
public struct ASAuthorizationPublicKeyCredentialLargeBlobAssertionInput {
    public enum Operation {
        case read
        case write(Data)
    }

    public var operation: Operation

    init(operation: Operation) {
        self.operation = operation
    }

    public static var read: ASAuthorizationPublicKeyCredentialLargeBlobAssertionInput { Self(operation: .read) }

    /// Writes `data` over any blob the passkey has. WebAuthn lets a write name exactly one
    /// passkey: the request's `allowedCredentials` must hold one, else the request fails.
    public static func write(_ data: Data) -> ASAuthorizationPublicKeyCredentialLargeBlobAssertionInput {
        Self(operation: .write(data))
    }

    /// `AuthenticationExtensionsLargeBlobInputsJSON` of a sign-in.
    var json: [String: Any] {
        switch operation {
        case .read: ["read": true]
        case .write(let data): ["write": Base64URL.encode(data)]
        }
    }
}

/// Whether the new passkey can keep a large blob.
public struct ASAuthorizationPublicKeyCredentialLargeBlobRegistrationOutput {
    public var isSupported: Bool

    init(isSupported: Bool) {
        self.isSupported = isSupported
    }

    public static var supported: ASAuthorizationPublicKeyCredentialLargeBlobRegistrationOutput { Self(isSupported: true) }
    public static var unsupported: ASAuthorizationPublicKeyCredentialLargeBlobRegistrationOutput { Self(isSupported: false) }

    /// `clientExtensionResults.largeBlob` of a registration; `nil` when the response has none.
    init?(_ results: [String: Any]?) {
        guard let largeBlob = results?["largeBlob"] as? [String: Any] else { return nil }
        self.init(isSupported: largeBlob["supported"] as? Bool ?? false)
    }
}

/// What a sign-in's large-blob operation gave: the blob read (`nil`: the passkey has none), or
/// whether the write was stored.
public struct ASAuthorizationPublicKeyCredentialLargeBlobAssertionOutput {
    public enum OperationResult {
        case read(data: Data?)
        case write(success: Bool)
    }

    public var result: OperationResult

    init(result: OperationResult) {
        self.result = result
    }

    public static func read(data: Data?) -> ASAuthorizationPublicKeyCredentialLargeBlobAssertionOutput { Self(result: .read(data: data)) }
    public static func write(success: Bool) -> ASAuthorizationPublicKeyCredentialLargeBlobAssertionOutput { Self(result: .write(success: success)) }

    /// `clientExtensionResults.largeBlob` of a sign-in that asked for `operation`; `nil` when it
    /// asked for none.
    init?(_ results: [String: Any]?, operation: ASAuthorizationPublicKeyCredentialLargeBlobAssertionInput.Operation?) {
        guard let operation else { return nil }
        let largeBlob = results?["largeBlob"] as? [String: Any] ?? [:]
        switch operation {
        case .read: self.init(result: .read(data: (largeBlob["blob"] as? String).flatMap(Base64URL.decode).map { Data($0) }))
        case .write: self.init(result: .write(success: largeBlob["written"] as? Bool ?? false))
        }
    }
}
