import VirtualAuthenticator

/// `authctl faults`: what `--fault NAME` can break, where, and the RP check that must catch it.
enum FaultsCommand {
    static let spec = CommandSpec(name: "faults", abstract: "list what --fault NAME can break", run: { _ throws(CLIError) in
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
    })
}
