import Foundation

/// A request's JSON body as JSON: UTF-8 (RFC 8259 §8.1), an object, no name given twice in one
/// object at any depth (whichever one this reads, a proxy or a log that checked the body may have
/// read the other). What the route takes of it is its body type's (``RequestBodyType``).
struct RequestBody {
    let object: [String: Any]

    /// The body as a JSON object; an empty body is `{}`.
    init(_ bytes: [UInt8]) throws(Problem) {
        if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) {
            object = [:]
        } else {
            // UTF-8 only (RFC 8259 §8.1): JSONSerialization would read UTF-16 and UTF-32 as well,
            // which no other reading of the body here (the options as sent, repeated names) does.
            guard !bytes.contains(0), String(validating: bytes, as: UTF8.self) != nil,
                  let parsed = try? JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed]) else {
                throw Problem(400, .syntaxError, "the body is not JSON")
            }
            guard let parsed = parsed as? [String: Any] else { throw Problem.input("the body is not a JSON object") }
            if let repeated = RawJSON.repeatedMember(in: bytes) {
                throw Problem.input("the body has the member '\(JSONText.shown(repeated))' more than once")
            }
            object = parsed
        }
    }
}

/// Where a top-level member's value lies in a JSON object's text that `JSONSerialization` has
/// read already (so it is well-formed): found by skipping values, never by reading them.
enum RawJSON {
    /// The first name an object of the text repeats, with the way to it (`devices[0].name`), or
    /// `nil`. JSON leaves what a repeated name means to each parser (RFC 8259 §4: the first wins,
    /// the last, or both), and `JSONSerialization` keeps the last without a word. Names are
    /// compared as their unescaped UTF-8, so `"a"` and `"\u0061"` are one name. Read without
    /// recursion: the text may nest as deep as the parser allowed.
    static func repeatedMember(in bytes: [UInt8]) -> String? {
        struct Frame {
            var isObject: Bool
            var seen = Set<[UInt8]>()
            var expectingName = true
            var name: [UInt8] = []  // the member whose value is being read (an object's)
            var index = 0           // the element being read (an array's)
        }
        var stack = [Frame]()
        var i = 0
        func path(_ last: [UInt8]) -> String {
            var text = ""
            for frame in stack.dropLast() {
                if frame.isObject { text += (text.isEmpty ? "" : ".") + String(decoding: frame.name, as: UTF8.self) } else { text += "[\(frame.index)]" }
            }
            return text + (text.isEmpty ? "" : ".") + String(decoding: last, as: UTF8.self)
        }
        while i < bytes.count {
            switch bytes[i] {
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                stack.append(Frame(isObject: bytes[i] == UInt8(ascii: "{")))
                i += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                _ = stack.popLast()
                i += 1
            case UInt8(ascii: ",") where !stack.isEmpty:
                if stack[stack.count - 1].isObject { stack[stack.count - 1].expectingName = true } else { stack[stack.count - 1].index += 1 }
                i += 1
            case UInt8(ascii: "\""):
                let start = i + 1
                var escaped = false
                i += 1
                while i < bytes.count, bytes[i] != UInt8(ascii: "\"") {
                    if bytes[i] == UInt8(ascii: "\\") { escaped = true; i += 1 }
                    i += 1
                }
                i += 1
                // By index, never a copy of the frame: a copy would make each insert copy the set.
                let top = stack.count - 1
                guard top >= 0, stack[top].isObject, stack[top].expectingName, i <= bytes.count else { continue }
                var name = Array(bytes[start..<(i - 1)])
                if escaped, let text = (try? JSONSerialization.jsonObject(with: Data(bytes[(start - 1)..<i]), options: [.fragmentsAllowed])) as? String {
                    name = Array(text.utf8)
                }
                guard stack[top].seen.insert(name).inserted else { return path(name) }
                stack[top].name = name
                stack[top].expectingName = false
            default:
                i += 1  // white space, ':', and the bytes of numbers, true, false and null
            }
        }
        return nil
    }

    /// The span of the value of the last member named `key` (the one `JSONSerialization` keeps);
    /// `nil` when there is none, or when a member's name is written with escapes (then the caller
    /// writes the value again).
    static func lastMember(_ key: String, in bytes: [UInt8]) -> Range<Int>? {
        let wanted = Array(key.utf8)
        var i = 0
        func skipSpace() { while i < bytes.count, [0x20, 0x0A, 0x0D, 0x09].contains(bytes[i]) { i += 1 } }
        /// Past a string starting at `i` (its opening quote); whether it had an escape.
        func skipString() -> Bool {
            var escaped = false
            i += 1
            while i < bytes.count, bytes[i] != UInt8(ascii: "\"") {
                if bytes[i] == UInt8(ascii: "\\") { escaped = true; i += 1 }
                i += 1
            }
            i += 1
            return escaped
        }
        func skipValue() {
            var depth = 0
            repeat {
                skipSpace()
                guard i < bytes.count else { return }
                switch bytes[i] {
                case UInt8(ascii: "\""): _ = skipString()
                case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1; i += 1
                case UInt8(ascii: "}"), UInt8(ascii: "]"): depth -= 1; i += 1
                case UInt8(ascii: ","), UInt8(ascii: ":"): i += 1
                default: while i < bytes.count, !",:{}[]\" \n\r\t".utf8.contains(bytes[i]) { i += 1 }
                }
            } while depth > 0
        }
        skipSpace()
        guard i < bytes.count, bytes[i] == UInt8(ascii: "{") else { return nil }
        i += 1
        var found: Range<Int>?
        while true {
            skipSpace()
            guard i < bytes.count, bytes[i] == UInt8(ascii: "\"") else { return found }
            let nameStart = i + 1
            if skipString() { return nil }
            let name = bytes[nameStart..<(i - 1)]
            skipSpace()
            guard i < bytes.count, bytes[i] == UInt8(ascii: ":") else { return nil }
            i += 1
            skipSpace()
            let start = i
            skipValue()
            if name.elementsEqual(wanted) { found = start..<i }
            skipSpace()
            guard i < bytes.count, bytes[i] == UInt8(ascii: ",") else { return found }
            i += 1
        }
    }
}
