import VirtualAuthenticator

/// `--fault NAME` and `authctl faults`.
enum FaultOption {
    static func read(_ args: inout Arguments) throws(AuthenticatorError) -> Fault? {
        guard let name = try args.value("--fault") else { return nil }
        guard let fault = Fault(rawValue: name) else {
            throw AuthenticatorError(.usage, "unknown fault '\(name)' (see 'authctl faults')")
        }
        return fault
    }

    /// Said on stderr whenever a response is deliberately wrong, so no one mistakes it for a bug.
    static func announce(_ fault: Fault?) {
        guard let fault else { return }
        Output.diagnostic("authctl: fault injected: \(fault.rawValue): \(fault.summary)")
    }

    static func list() {
        let width = Fault.allCases.map(\.rawValue.count).max() ?? 0
        for fault in Fault.allCases {
            let scopes = [
                fault.applies(to: .authentication) ? "sign" : nil,
                fault.applies(to: .registration) ? "register"
                    : (fault.applies(to: .registration, attestation: .packed) ? "register (packed)" : nil),
            ].compactMap { $0 }
            let name = fault.rawValue + String(repeating: " ", count: width - fault.rawValue.count)
            Output.data("\(name)  [\(scopes.joined(separator: ", "))] \(fault.summary)")
        }
    }
}
