import Foundation

/// The Public Suffix List (publicsuffix.org), used to decide whether an RP ID is a registrable
/// domain suffix of the caller's origin (HTML §7.2 "is a registrable domain suffix of or is equal
/// to"). Read from Debian's `publicsuffix` package; without it only the implicit `*` rule applies
/// (every top-level label is a public suffix), which misses multi-label suffixes like `co.uk`.
public struct PublicSuffixList: Sendable {
    public static let debianPath = "/usr/share/publicsuffix/public_suffix_list.dat"

    private var rules: Set<String> = []
    private var wildcards: Set<String> = []  // "*.ck" stored as "ck"
    private var exceptions: Set<String> = []  // "!www.ck" stored as "www.ck"
    public private(set) var isEmpty = true

    public init(text: String) {
        for line in text.split(whereSeparator: \.isNewline) {
            guard let token = line.split(whereSeparator: \.isWhitespace).first, !token.hasPrefix("//") else { continue }
            let rule = token.lowercased()
            if rule.hasPrefix("!") {
                exceptions.insert(String(rule.dropFirst()))
            } else if rule.hasPrefix("*.") {
                wildcards.insert(String(rule.dropFirst(2)))
            } else {
                rules.insert(rule)
            }
            isEmpty = false
        }
    }

    /// The list from `path`, or the empty list (implicit `*` only) if it cannot be read.
    public static func load(path: String = debianPath) -> PublicSuffixList {
        guard let data = FileManager.default.contents(atPath: path) else { return PublicSuffixList(text: "") }
        return PublicSuffixList(text: String(decoding: data, as: UTF8.self))
    }

    public static let system = PublicSuffixList.load()

    /// The public suffix of a lower-case domain, by the list's algorithm: an exception rule wins;
    /// otherwise the matching rule with the most labels; otherwise the last label.
    public func publicSuffix(of domain: String) -> String {
        let labels = domain.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        var best = 1
        for start in 0..<labels.count {
            let candidate = labels[start...].joined(separator: ".")
            let count = labels.count - start
            if exceptions.contains(candidate) { return labels[(start + 1)...].joined(separator: ".") }
            if rules.contains(candidate) { best = max(best, count) }
            if start > 0, wildcards.contains(candidate) { best = max(best, count + 1) }
        }
        return labels.suffix(best).joined(separator: ".")
    }
}
