import Foundation

// A request's extension inputs as the options JSON's `extensions`, and a response's
// `clientExtensionResults`, which the results' extension outputs are read from.

extension PlatformOptions {
    /// `extensions` of a registration's options; `nil` when the request asks for none.
    static func extensions(_ request: ASAuthorizationPlatformPublicKeyCredentialRegistrationRequest) -> [String: Any]? {
        var extensions = [String: Any]()
        if let largeBlob = request.largeBlob { extensions["largeBlob"] = largeBlob.json }
        if let prf = request.prf { extensions["prf"] = prf.json }
        return extensions.isEmpty ? nil : extensions
    }

    /// `extensions` of a sign-in's options; `nil` when the request asks for none.
    static func extensions(_ request: ASAuthorizationPlatformPublicKeyCredentialAssertionRequest) -> [String: Any]? {
        var extensions = [String: Any]()
        if let largeBlob = request.largeBlob { extensions["largeBlob"] = largeBlob.json }
        if let prf = request.prf { extensions["prf"] = prf.json }
        return extensions.isEmpty ? nil : extensions
    }
}

extension ResponseJSON {
    /// The response's `clientExtensionResults`.
    var clientExtensionResults: [String: Any]? { object["clientExtensionResults"] as? [String: Any] }
}
