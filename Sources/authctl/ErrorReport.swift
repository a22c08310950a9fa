import Foundation
import KeyVault
import VirtualAuthenticator

/// The boundary where every failure becomes one name of the product's vocabulary, one line on
/// stderr (or a JSON object with `--json`), and that name's exit code. stdout stays empty.
enum ErrorReport {
    static func vocabulary(_ error: any Error) -> AuthenticatorError {
        switch error {
        case let e as AuthenticatorError: return e
        case let e as VaultError:
            let name: AuthenticatorError.Name = switch e.kind {
            case .notFound: .vaultNotFound
            case .exists: .vaultExists
            case .locked: .vaultLocked
            case .corrupted: .vaultCorrupted
            case .io: .ioError
            case .invalid: .badInput
            }
            return AuthenticatorError(name, e.message)
        case let e as OpenSSLFailure: return AuthenticatorError(.unknown, "OpenSSL: \(e)")
        default: return AuthenticatorError(.unknown, "\(error)")
        }
    }

    static func emit(_ error: AuthenticatorError, json: Bool) -> Int32 {
        if json {
            let object: [String: Any] = [
                "error": error.name.rawValue, "message": error.message,
                "domException": error.name.domException,
                "appleCode": error.name.appleCode.map { $0 as Any } ?? NSNull(),
                "ctapStatus": error.name.ctapStatus.map { Int($0) as Any } ?? NSNull(),
                "exitCode": Int(error.name.exitCode),
            ]
            Output.diagnostic(ResponseJSON.encode(object))
        } else {
            Output.diagnostic("authctl: error: \(error.name.rawValue): \(error.message)")
        }
        return error.name.exitCode
    }
}
