/// Splits a scenario line into tokens: whitespace separates words; `"…"` is one string (with
/// `\"`, `\\`, `\n`, `\t` and `\uXXXX` escapes); `{…}` and `[…]` are one JSON literal, braces
/// balanced outside its strings; `#` outside those starts a comment.
enum Tokenizer {
    struct Failure: Error {
        let column: Int
        let message: String
    }

    static func tokens(_ line: String) throws(Failure) -> [Token] {
        let scalars = line.unicodeScalars
        let chars = Array(scalars)
        // Where each scalar starts in `line` (and its end): a word or a JSON literal is copied
        // out of the line in one piece, not appended scalar by scalar (a scenario of thousands of
        // lines spent most of its parsing there).
        var starts = Array(scalars.indices)
        starts.append(scalars.endIndex)
        func text(_ range: Range<Int>) -> String {
            String(Substring(scalars[starts[range.lowerBound]..<starts[range.upperBound]]))
        }
        var out = [Token]()
        var i = 0
        while i < chars.count {
            let c = chars[i]
            if c == " " || c == "\t" || c == "\r" { i += 1; continue }
            if c == "#" { break }
            let start = i
            if c == "\"" {
                var text = ""
                i += 1
                while true {
                    guard i < chars.count else { throw Failure(column: start + 1, message: "a string that does not end") }
                    let d = chars[i]
                    if d == "\"" { i += 1; break }
                    if d == "\\" {
                        guard i + 1 < chars.count else { throw Failure(column: i + 1, message: "a string that ends in a backslash") }
                        let e = chars[i + 1]
                        switch e {
                        case "\"", "\\", "/": text.unicodeScalars.append(e); i += 2
                        case "n": text += "\n"; i += 2
                        case "t": text += "\t"; i += 2
                        case "u":
                            guard i + 6 <= chars.count, let value = UInt32(String(String.UnicodeScalarView(chars[(i + 2)..<(i + 6)])), radix: 16),
                                  let scalar = Unicode.Scalar(value)
                            else { throw Failure(column: i + 1, message: "a \\u escape needs four hexadecimal digits") }
                            text.unicodeScalars.append(scalar)
                            i += 6
                        default: throw Failure(column: i + 1, message: "unknown escape \\\(e)")
                        }
                        continue
                    }
                    text.unicodeScalars.append(d)
                    i += 1
                }
                out.append(Token(kind: .string, text: text, column: start + 1))
            } else if c == "{" || c == "[" {
                var depth = 0, inString = false
                while i < chars.count {
                    let d = chars[i]
                    if inString {
                        if d == "\\" { i += 2; continue }
                        if d == "\"" { inString = false }
                    } else if d == "\"" {
                        inString = true
                    } else if d == "{" || d == "[" {
                        depth += 1
                    } else if d == "}" || d == "]" {
                        depth -= 1
                        if depth == 0 { i += 1; break }
                    }
                    i += 1
                }
                guard depth == 0, !inString else { throw Failure(column: start + 1, message: "a JSON literal that does not close") }
                out.append(Token(kind: .json, text: text(start..<i), column: start + 1))
            } else {
                // A word ends at white space, or before a string or JSON literal right after `=`
                // (`key="a b"`, `key={…}`).
                while i < chars.count {
                    let d = chars[i]
                    if d == " " || d == "\t" || d == "\r" { break }
                    if i > start, chars[i - 1] == "=", d == "\"" || d == "{" || d == "[" { break }
                    i += 1
                }
                out.append(Token(kind: .word, text: text(start..<i), column: start + 1))
            }
        }
        return out
    }
}
