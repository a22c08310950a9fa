import Session

/// `authctl faults`: what `--fault NAME` can break, where, and the RP check that must catch it.
enum FaultsCommand {
    static let spec = CommandSpec(name: "faults", abstract: "list what --fault NAME can break", run: run)

    static func run(_ args: ParsedArguments) throws(CLIError) {
        let width = Fault.allCases.map(\.rawValue.count).max() ?? 0
        for fault in Fault.allCases {
            let scopes = [
                fault.applies(to: .authentication) ? "sign" : nil,
                fault.applies(to: .registration) ? "register"
                    : (fault.applies(to: .registration, attestation: .packed) ? "register (signed attestation)" : nil),
            ].compactMap { $0 }
            let name = fault.rawValue + String(repeating: " ", count: width - fault.rawValue.count)
            try Output.data("\(name)  [\(scopes.joined(separator: ", "))] \(fault.summary)")
        }
    }
}
