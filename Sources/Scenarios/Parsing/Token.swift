/// A word of a scenario line: a bare word, a "quoted string" (JSON escapes), or a JSON object or
/// array literal, with the column it starts at.
struct Token: Equatable {
    enum Kind: Equatable { case word, string, json }
    let kind: Kind
    let text: String
    let column: Int
}
