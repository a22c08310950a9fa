import Foundation
import Session

// The prf extension (WebAuthn L3 §10.1.4) as Apple's Swift overlay types it (iOS 18). The salt
// inputs are the RP's PRF inputs, unhashed: the system hashes each into an hmac-secret salt,
// SHA-256("WebAuthn PRF" ‖ 0x00 ‖ input), as a browser does (WebKit hands a page's `eval.first`
// to `saltInput1` as it is, and Chromium passes iCloud Keychain the unhashed inputs). So the
// inputs go into the options' `extensions.prf` as they are, and authctl's client hashes them: the
// outputs are those a web page of the RP gets for the same inputs and passkey.

/// A sign-in's PRF inputs: for any passkey, and/or per passkey (by credential ID).
public struct ASAuthorizationPublicKeyCredentialPRFAssertionInput {
    /// One or two inputs, each giving one 32-byte output (`first`, `second`).
    public struct InputValues {
        public var saltInput1: Data
        public var saltInput2: Data?

        public init(saltInput1: Data, saltInput2: Data? = nil) {
            self.saltInput1 = saltInput1
            self.saltInput2 = saltInput2
        }

        public static func saltInput1(_ saltInput1: Data, saltInput2: Data? = nil) -> InputValues {
            InputValues(saltInput1: saltInput1, saltInput2: saltInput2)
        }

        /// `AuthenticationExtensionsPRFValuesJSON`.
        var json: [String: Any] {
            var values: [String: Any] = ["first": Base64URL.encode(saltInput1)]
            if let saltInput2 { values["second"] = Base64URL.encode(saltInput2) }
            return values
        }
    }

    public let inputValues: InputValues?
    /// Inputs for the passkey of each credential ID, used instead of ``inputValues`` when that
    /// passkey signs; Apple requires the request's `allowedCredentials` with them.
    public let perCredentialInputValues: [Data: InputValues]?

    public static func inputValues(_ inputValues: InputValues, perCredentialInputValues: [Data: InputValues]? = nil)
        -> ASAuthorizationPublicKeyCredentialPRFAssertionInput {
        Self(inputValues: inputValues, perCredentialInputValues: perCredentialInputValues)
    }

    public static func perCredentialInputValues(_ perCredentialInputValues: [Data: InputValues])
        -> ASAuthorizationPublicKeyCredentialPRFAssertionInput {
        Self(inputValues: nil, perCredentialInputValues: perCredentialInputValues)
    }

    /// `AuthenticationExtensionsPRFInputsJSON` of a sign-in: `eval`, `evalByCredential` keyed by
    /// the base64url credential ID, as `allowCredentials` names it.
    var json: [String: Any] {
        var prf = [String: Any]()
        if let inputValues { prf["eval"] = inputValues.json }
        if let perCredentialInputValues {
            prf["evalByCredential"] = Dictionary(uniqueKeysWithValues: perCredentialInputValues.map { (Base64URL.encode($0.key), $0.value.json) })
        }
        return prf
    }
}

/// A registration's PRF input: whether the new passkey supports PRF, and optionally its outputs
/// for inputs right away.
public struct ASAuthorizationPublicKeyCredentialPRFRegistrationInput {
    public typealias InputValues = ASAuthorizationPublicKeyCredentialPRFAssertionInput.InputValues

    public let shouldCheckForSupport: Bool
    public let inputValues: InputValues?

    public static var checkForSupport: ASAuthorizationPublicKeyCredentialPRFRegistrationInput {
        Self(shouldCheckForSupport: true, inputValues: nil)
    }

    public static func inputValues(_ inputValues: InputValues) -> ASAuthorizationPublicKeyCredentialPRFRegistrationInput {
        Self(shouldCheckForSupport: false, inputValues: inputValues)
    }

    /// `AuthenticationExtensionsPRFInputsJSON` of a registration: `{}` asks whether PRF is
    /// supported, `eval` evaluates it too.
    var json: [String: Any] {
        inputValues.map { ["eval": $0.json] } ?? [:]
    }
}

/// A sign-in's PRF outputs.
public struct ASAuthorizationPublicKeyCredentialPRFAssertionOutput {
    public let first: SymmetricKey
    public let second: SymmetricKey?

    public init(first: SymmetricKey, second: SymmetricKey?) {
        self.first = first
        self.second = second
    }

    /// `clientExtensionResults.prf.results` of a sign-in; `nil` when it gave none (no prf asked,
    /// or per-credential inputs that did not name the passkey that signed).
    init?(_ results: [String: Any]?) {
        guard let (first, second) = PRFResults.keys(results) else { return nil }
        self.init(first: first, second: second)
    }
}

/// Whether the new passkey supports PRF, and the outputs for the registration's inputs.
public struct ASAuthorizationPublicKeyCredentialPRFRegistrationOutput {
    public let isSupported: Bool
    public let first: SymmetricKey?
    public let second: SymmetricKey?

    /// Outputs of a passkey that supports PRF.
    public init(first: SymmetricKey, second: SymmetricKey?) {
        self.init(isSupported: true, first: first, second: second)
    }

    init(isSupported: Bool, first: SymmetricKey?, second: SymmetricKey?) {
        self.isSupported = isSupported
        self.first = first
        self.second = second
    }

    public static var supported: ASAuthorizationPublicKeyCredentialPRFRegistrationOutput { Self(isSupported: true, first: nil, second: nil) }
    public static var unsupported: ASAuthorizationPublicKeyCredentialPRFRegistrationOutput { Self(isSupported: false, first: nil, second: nil) }

    /// `clientExtensionResults.prf` of a registration; `nil` when it has none.
    init?(_ results: [String: Any]?) {
        guard let prf = results?["prf"] as? [String: Any] else { return nil }
        let keys = PRFResults.keys(results)
        self.init(isSupported: prf["enabled"] as? Bool ?? false, first: keys?.first, second: keys?.second)
    }
}

/// `prf.results` of a response's `clientExtensionResults`, as keys.
enum PRFResults {
    static func keys(_ results: [String: Any]?) -> (first: SymmetricKey, second: SymmetricKey?)? {
        let values = (results?["prf"] as? [String: Any])?["results"] as? [String: Any]
        guard let first = key(values?["first"]) else { return nil }
        return (first, key(values?["second"]))
    }

    private static func key(_ value: Any?) -> SymmetricKey? {
        (value as? String).flatMap(Base64URL.decode).map { SymmetricKey(data: $0) }
    }
}
