import VirtualAuthenticator

/// A small argument reader: `--name value`, `--name=value` and bare `--switch`. Each command takes
/// what it knows; whatever is left is a usage error, so a typo never passes silently.
struct Arguments {
    private var items: [String]

    init(_ items: [String]) { self.items = items }

    mutating func value(_ name: String) throws(AuthenticatorError) -> String? {
        let values = try allValues(name)
        guard values.count <= 1 else { throw AuthenticatorError(.usage, "\(name) given more than once") }
        return values.first
    }

    mutating func allValues(_ name: String) throws(AuthenticatorError) -> [String] {
        var found = [String]()
        var i = 0
        while i < items.count {
            if items[i] == name {
                guard i + 1 < items.count else { throw AuthenticatorError(.usage, "\(name) needs a value") }
                found.append(items[i + 1])
                items.removeSubrange(i...(i + 1))
            } else if items[i].hasPrefix(name + "=") {
                found.append(String(items[i].dropFirst(name.count + 1)))
                items.remove(at: i)
            } else {
                i += 1
            }
        }
        return found
    }

    mutating func flag(_ name: String) -> Bool {
        guard let i = items.firstIndex(of: name) else { return false }
        items.remove(at: i)
        return true
    }

    /// The next positional argument (not starting with `--`), if any.
    mutating func positional() -> String? {
        guard let i = items.firstIndex(where: { !$0.hasPrefix("--") }) else { return nil }
        return items.remove(at: i)
    }

    func finish() throws(AuthenticatorError) {
        if let extra = items.first {
            throw AuthenticatorError(.usage, "unexpected argument '\(extra)' (see 'authctl help')")
        }
    }
}
