import Foundation

/// The Public Suffix List (publicsuffix.org), used to decide whether an RP ID is a registrable
/// domain suffix of the caller's origin (HTML §7.2 "is a registrable domain suffix of or is equal
/// to"). Read from Debian's `publicsuffix` package; without it only the implicit `*` rule applies
/// (every top-level label is a public suffix), which misses multi-label suffixes like `co.uk`.
///
/// The list has ~10,000 rules and a CLI call needs the answer for one or two domains, so the list
/// is kept as bytes and scanned for the few rules that could match, rather than parsed whole.
public struct PublicSuffixList: Sendable {
    public static let debianPath = "/usr/share/publicsuffix/public_suffix_list.dat"

    private let bytes: [UInt8]

    public init(text: String) { bytes = Array(text.utf8) }

    /// The list from `path`, or the empty list (implicit `*` only) if it cannot be read.
    public static func load(path: String = debianPath) -> PublicSuffixList {
        PublicSuffixList(bytes: FileManager.default.contents(atPath: path).map(Array.init) ?? [])
    }

    private init(bytes: [UInt8]) { self.bytes = bytes }


    /// Debian's list, read on first use (only an RP ID that differs from the origin's host needs it).
    public static var system: PublicSuffixList { systemList }
    private static let systemList = PublicSuffixList.load()

    /// The public suffix of a lower-case domain, by the list's algorithm: an exception rule wins;
    /// otherwise the matching rule with the most labels; otherwise the last label.
    public func publicSuffix(of domain: String) -> String {
        let labels = domain.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        // Rules are written in Unicode; hosts arrive in Punycode (`xn--…`). Look for both forms.
        let unicodeLabels = labels.map { Punycode.decodeLabel($0) ?? $0 }
        let forms = (0..<labels.count).map { start in
            Set([labels[start...].joined(separator: "."), unicodeLabels[start...].joined(separator: ".")])
        }
        var candidates = Set<String>()
        for (start, suffixes) in forms.enumerated() {
            for suffix in suffixes {
                candidates.insert(suffix)
                candidates.insert("!" + suffix)
                if start > 0 { candidates.insert("*." + suffix) }
            }
        }
        let present = rules(among: candidates)
        func has(_ prefix: String, _ start: Int) -> Bool { forms[start].contains { present.contains(prefix + $0) } }
        var best = 1
        for start in labels.indices {
            let count = labels.count - start
            if has("!", start) { return labels[(start + 1)...].joined(separator: ".") }
            if has("", start) { best = max(best, count) }
            if start > 0, has("*.", start) { best = max(best, count + 1) }
        }
        return labels.suffix(best).joined(separator: ".")
    }

    /// Which of `candidates` appear as rules: one pass over the lines, comparing bytes only where
    /// a line's rule has the length of some candidate.
    private func rules(among candidates: Set<String>) -> Set<String> {
        let wanted = Dictionary(grouping: candidates.map { Array($0.utf8) }, by: \.count)
        var found = Set<String>()
        var start = 0
        while start < bytes.count {
            var end = start
            while end < bytes.count, bytes[end] != 0x0A { end += 1 }
            var ruleEnd = start
            while ruleEnd < end, bytes[ruleEnd] != 0x20, bytes[ruleEnd] != 0x09, bytes[ruleEnd] != 0x0D { ruleEnd += 1 }
            if let sameLength = wanted[ruleEnd - start] {
                let rule = bytes[start..<ruleEnd]
                if let match = sameLength.first(where: { $0.elementsEqual(rule) }) {
                    found.insert(String(decoding: match, as: UTF8.self))
                }
            }
            start = end + 1
        }
        return found
    }
}
