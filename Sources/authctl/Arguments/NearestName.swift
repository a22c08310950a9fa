/// "Did you mean …?": the known name closest to a mistyped one, by edit distance (Levenshtein),
/// when it is close enough to be a typo.
enum NearestName {
    static func to(_ typed: String, among names: [String]) -> String? {
        let best = names.map { ($0, distance(typed.lowercased(), $0.lowercased())) }.min { $0.1 < $1.1 }
        guard let (name, d) = best, d <= max(2, typed.count / 3) else { return nil }
        return name
    }

    static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a.utf8), b = Array(b.utf8)
        var previous = Array(0...b.count)
        for i in 1...max(a.count, 1) where !a.isEmpty {
            var current = [i] + [Int](repeating: 0, count: b.count)
            for j in stride(from: 1, through: b.count, by: 1) {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            previous = current
        }
        return a.isEmpty ? b.count : previous[b.count]
    }

    /// " (did you mean 'x'?)", or nothing.
    static func hint(_ typed: String, among names: [String]) -> String {
        to(typed, among: names).map { " (did you mean '\($0)'?)" } ?? ""
    }
}
