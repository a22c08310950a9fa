import Benchmarks

/// `authctl bench join`: the first sync of a device joining an account of many passkeys
/// (`JoinBenchmark` measures; this parses and prints).
enum BenchJoinCommand {
    static let store = OptionSpec.value(
        "--store", "STORE", "the store to make the account on: a postgresql:// address (a new #account each run) or a directory from the root (required)")
    static let passkeys = OptionSpec.value("--passkeys", "N", "passkeys in the account (default 100000), spread over 1,000 RPs")
    static let directory = OptionSpec.value("--dir", "DIR", "where the throw-away vaults go (default /tmp)", completion: .directories)

    static let spec = CommandSpec(
        name: "join", abstract: "time the first sync of a device joining an account of many passkeys on a shared store",
        discussion: """
        Makes an account on --store whose first device holds --passkeys real P-256 passkeys, then
        times: the first device's upload of them all; a second vault joining with the recovery
        secret and its first sync (reading the whole account from the store); its first listing;
        and a sign-in on it. Each step runs once, in this process; the vaults are removed after.
        """,
        options: [store, passkeys, directory],
        examples: [".build/release/authctl bench join --store 'postgresql://localhost/authctl' --passkeys 100000"],
        run: run)

    static func run(_ args: ParsedArguments) throws(CLIError) {
        guard let base = args.value(store) else { throw CLIError(.usage, "bench join needs --store") }
        let count = try args.integer(passkeys, in: 10...1_000_000) ?? 100_000
        let lines = try JoinBenchmark.run(store: base, passkeys: count, directory: args.value(directory) ?? "/tmp", safePoints: .interruption)
        for line in lines { try Output.data(line) }
    }
}
