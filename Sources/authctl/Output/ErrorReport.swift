import Session

/// Where every failure ends: one line on stderr (`authctl: error: NAME: message`), or with `--json`
/// one JSON object, and the name's exit code. stdout stays empty.
enum ErrorReport {
    /// The `--json` form of an error.
    struct Document: Encodable {
        let error: CLIError

        enum Key: String, CodingKey { case error, message, domException, appleCode, ctapStatus, exitCode }

        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: Key.self)
            try c.encode(error.name.rawValue, forKey: .error)
            try c.encode(error.message, forKey: .message)
            try c.encode(error.name.domException, forKey: .domException)
            try c.encode(error.name.appleCode, forKey: .appleCode)  // null where Apple has none
            try c.encode(error.name.ctapStatus, forKey: .ctapStatus)
            try c.encode(error.name.exitCode, forKey: .exitCode)
        }
    }

    static func emit(_ error: CLIError, json: Bool) -> Int32 {
        if json {
            Output.diagnosticJSON(JSONOutput.string(Document(error: error)))
        } else {
            Output.diagnostic("authctl: error: \(error.name.rawValue): \(error.message)")
        }
        return error.name.exitCode
    }
}
