import SyncStore

/// An account store's address as a front end shows it: a directory from the root, or a
/// `postgresql://` address whose password never appears in what is said.
public enum StoreAddress {
    /// The address with any password in it hidden, for messages and logs.
    public static func shown(_ address: String) -> String { PostgresAddress.redacted(address) }

    /// Whether the address is a server's that carries its password: one that other users of the
    /// machine read in the process list for as long as a command given it runs.
    public static func carriesPassword(_ address: String) -> Bool {
        PostgresAddress.names(address) && PostgresAddress.carriesPassword(address)
    }
}
