import CPSL
import Glibc

/// The Public Suffix List (publicsuffix.org), through libpsl: what decides whether an RP ID is a
/// registrable domain suffix of the caller's origin (HTML §7.2 "is a registrable domain suffix of
/// or is equal to"). ``system`` is the newest of libpsl's built-in list and Debian's
/// `publicsuffix` package; rules can also be given as text, in the list's own format, for tests.
/// Owns one libpsl context; lookups only read it, so a list can be shared between threads.
public final class PublicSuffixList: @unchecked Sendable {
    private let context: OpaquePointer
    /// libpsl's built-in context is static and must not be freed; loaded ones are ours.
    private let owned: Bool

    private init(context: OpaquePointer, owned: Bool) {
        self.context = context
        self.owned = owned
    }

    deinit { if owned { psl_free(context) } }

    /// Debian's list or libpsl's built-in one, whichever is newer; loaded on first use (only an RP
    /// ID that differs from the origin's host needs it).
    public static let system: PublicSuffixList = {
        if let latest = psl_latest(nil) { return PublicSuffixList(context: latest, owned: true) }
        return PublicSuffixList(context: psl_builtin(), owned: false)
    }()

    /// A list from rules written as the list writes them (`com`, `*.ck`, `!www.ck`, comments).
    /// Rules the text lacks are not there: only the implicit `*` rule remains.
    public convenience init(text: String) {
        var bytes = Array(text.utf8)
        let context: OpaquePointer? = bytes.withUnsafeMutableBytes { raw in
            guard let file = fmemopen(raw.baseAddress, max(raw.count, 1), "r") else { return nil }
            defer { fclose(file) }
            return psl_load_fp(file)
        }
        guard let context else { preconditionFailure("libpsl could not read a rule list held in memory") }
        self.init(context: context, owned: true)
    }

    /// The public suffix of a lower-case ASCII domain, by the list's algorithm and its implicit `*`
    /// rule (an unlisted top-level label is a public suffix), private-section rules included, as
    /// browsers use them.
    public func publicSuffix(of domain: String) -> String {
        domain.withCString { text in
            guard let suffix = psl_unregistrable_domain(context, text) else { return domain }
            return String(cString: suffix)
        }
    }

    /// Whether `domain` is itself a public suffix (`com`, `co.uk`, `github.io`).
    public func isPublicSuffix(_ domain: String) -> Bool {
        domain.withCString { psl_is_public_suffix(context, $0) } != 0
    }
}
