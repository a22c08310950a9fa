import Foundation

/// A request's JSON body, read once (RFC 8259): UTF-8 (§8.1; a leading byte order mark passed
/// over, as §8.1 allows), an object at the top, at most 512 levels deep, numbers a `Double` can
/// hold — with Foundation's leniencies, which the server and the command line's options took
/// before: a comma before a closing bracket, and a U+FEFF that begins a string dropped — and no
/// name given twice in one object at any depth, canonically equivalent spellings included
/// (whichever one a server read, a proxy or a log that checked the body may have read the other).
/// What a route takes of it is its body type's (``RequestBodyType``), read through ``BodyNode``.
///
/// The text is kept as sent, with one node per value (a name is a node before its value): a
/// member's string is made when a route asks for it, and an object's text — the RP's options —
/// is handed on as the bytes sent, never written again.
final class RequestBody: Sendable {
    enum Kind: UInt8, Sendable { case object, array, string, number, `true`, `false`, null }

    struct Node: Sendable {
        var kind: Kind
        /// A string's text has an escape (`\n`, `\u0061`), or a U+FEFF that Foundation's reader
        /// drops (see ``unescape(_:_:)``): read by ``unescaped(_:)``.
        var escaped = false
        /// A string is ASCII, its escapes read: as a name, no other text spells it (a name with
        /// other characters may be spelt more ways: ``name(_:_:)``).
        var ascii = false
        /// Where its text starts: a string's after its quote, a container's at its bracket.
        var start: Int32
        /// Where its text ends: a string's before its quote, a container's after its bracket.
        var end: Int32 = 0
        /// A container's members or elements.
        var count: Int32 = 0
        /// The node after this value and everything in it.
        var next: Int32 = 0
    }

    let bytes: [UInt8]
    let nodes: [Node]

    /// The deepest a body may nest, as Foundation's own JSON reader allows.
    static let maximumDepth = 512

    /// The body as a JSON object; an empty body (or white space) is `{}`.
    convenience init(_ bytes: [UInt8]) throws(Problem) {
        if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) {
            self.init(checked: RequestBody.emptyObject.bytes, RequestBody.emptyObject.nodes)
            return
        }
        var failure: Reader.Failure?
        let read: [Node]? = bytes.withUnsafeBufferPointer { buffer in
            var reader = Reader(bytes: buffer)
            do throws(Reader.Failure) { return try reader.read() } catch {
                failure = error
                return nil
            }
        }
        guard let read else {
            switch failure {
            case .repeated(let path): throw Problem.input("the body has the member '\(JSONText.shown(path))' more than once")
            case .notAnObject: throw Problem.input("the body is not a JSON object")
            default: throw Problem(400, .syntaxError, "the body is not JSON")
            }
        }
        self.init(checked: bytes, read)
    }

    /// The top-level object.
    var root: BodyNode { BodyNode(body: self, index: 0) }

    /// The text of the string at `index`, its escapes read.
    func string(_ index: Int) -> String {
        bytes.withUnsafeBufferPointer { Self.name($0, nodes[index]) }
    }

    /// Whether the string at `index` is `name` as Swift's strings compare, by canonical
    /// equivalence, as the dictionaries Foundation read a body into found a member (`ascii`:
    /// whether `name` is ASCII, when two ASCII strings are compared by their bytes).
    func string(_ index: Int, is name: String, ascii: Bool) -> Bool {
        let node = nodes[index]
        guard node.ascii, ascii else { return string(index) == name }
        if node.escaped { return unescaped(index).elementsEqual(name.utf8) }
        var name = name
        return name.withUTF8 { wanted in
            bytes.withUnsafeBufferPointer { all in
                wanted.count == Int(node.end - node.start)
                    && (wanted.isEmpty || memcmp(wanted.baseAddress!, all.baseAddress! + Int(node.start), wanted.count) == 0)
            }
        }
    }

    /// A string's text as a name: a Swift string, which is another name's when the two are
    /// canonically equivalent (`"e\u0301"` is `"é"`, the Kelvin sign `K`), as in the dictionaries
    /// the authenticator reads the options into, and Foundation read bodies into before.
    static func name(_ bytes: UnsafeBufferPointer<UInt8>, _ node: Node) -> String {
        if node.escaped { return String(decoding: unescape(bytes, node), as: UTF8.self) }
        return String(decoding: UnsafeBufferPointer(rebasing: bytes[Int(node.start)..<Int(node.end)]), as: UTF8.self)
    }

    /// The UTF-8 of the string at `index` with its escapes read.
    func unescaped(_ index: Int) -> [UInt8] {
        bytes.withUnsafeBufferPointer { Self.unescape($0, nodes[index]) }
    }

    /// A string's text with its escapes read (the reader has checked them), and a U+FEFF sent as
    /// such (not as `\ufeff`) that begins the text or follows an escape dropped, once: Foundation's
    /// reader, which the server read bodies with before and the authenticator reads the options
    /// with, drops it there (`"\u{FEFF}a"` is the name `a`).
    static func unescape(_ bytes: UnsafeBufferPointer<UInt8>, _ node: Node) -> [UInt8] {
        var i = Int(node.start)
        let end = Int(node.end)
        guard node.escaped else { return Array(bytes[i..<end]) }
        var out = [UInt8]()
        out.reserveCapacity(end - i)
        func hex4(_ at: Int) -> UInt32 {
            var value: UInt32 = 0
            for k in at..<(at + 4) { value = value << 4 | UInt32(Reader.hexValue(bytes[k])!) }
            return value
        }
        if Reader.byteOrderMark(bytes, at: i, before: end) { i += 3 }
        while i < end {
            let c = bytes[i]
            guard c == UInt8(ascii: "\\") else {
                out.append(c)
                i += 1
                continue
            }
            let e = bytes[i + 1]
            i += 2
            switch e {
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "u"):
                var scalar = hex4(i)
                i += 4
                if (0xD800..<0xDC00).contains(scalar) {
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (hex4(i + 2) - 0xDC00)
                    i += 6
                }
                out.append(contentsOf: UTF8.encode(Unicode.Scalar(scalar)!)!)
            default: out.append(e)  // " \\ /
            }
            if Reader.byteOrderMark(bytes, at: i, before: end) { i += 3 }
        }
        return out
    }

    /// Reads the text into nodes, without recursion: a hostile body may nest as deep as it likes
    /// before the limit refuses it.
    private struct Reader {
        enum Failure: Error { case syntax, notAnObject, repeated(String) }

        /// An object or array being read: its node, where its names start in `names`, and, past
        /// 16 members, the set of its names (fewer are compared one by one) as ``name(_:_:)``.
        struct Open {
            let node: Int
            let isObject: Bool
            let firstName: Int
            var count: Int32 = 0
            var seen: Set<String>?
        }

        let bytes: UnsafeBufferPointer<UInt8>
        var i = 0
        var nodes = [Node]()
        var open = [Open]()
        /// The names of the objects being read, as node indexes.
        var names = [Int]()
        var nonASCII = false
        var topIsObject = false
        /// The first name repeated, refused once the rest is known to be JSON (a body that is
        /// not JSON is that first).
        var repeated: String?

        init(bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

        /// Whether U+FEFF's UTF-8 (EF BB BF) is at `at`, before `end`.
        static func byteOrderMark(_ bytes: UnsafeBufferPointer<UInt8>, at i: Int, before end: Int) -> Bool {
            end - i >= 3 && bytes[i] == 0xEF && bytes[i + 1] == 0xBB && bytes[i + 2] == 0xBF
        }

        static func hexValue(_ c: UInt8) -> UInt8? {
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
            default: nil
            }
        }

        mutating func skipSpace() {
            while i < bytes.count, case let c = bytes[i], c == 0x20 || c == 0x0A || c == 0x0D || c == 0x09 { i += 1 }
        }

        mutating func read() throws(Failure) -> [Node] {
            nodes.reserveCapacity(32)
            if bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF { i = 3 }
            skipSpace()
            guard i < bytes.count else { throw .syntax }
            // A top level that is not an object is JSON still (RFC 8259 §2): read it, then refuse it.
            topIsObject = bytes[i] == UInt8(ascii: "{")
            valueLoop: while true {
                // A value starts at `i`.
                skipSpace()
                guard i < bytes.count else { throw .syntax }
                if let top = open.indices.last, !open[top].isObject { open[top].count += 1 }
                let c = bytes[i]
                if c == UInt8(ascii: "{") || c == UInt8(ascii: "[") {
                    guard open.count < RequestBody.maximumDepth else { throw .syntax }
                    open.append(Open(node: nodes.count, isObject: c == UInt8(ascii: "{"), firstName: names.count))
                    nodes.append(Node(kind: c == UInt8(ascii: "{") ? .object : .array, start: Int32(i)))
                    i += 1
                    skipSpace()
                    guard i < bytes.count else { throw .syntax }
                    if bytes[i] != (c == UInt8(ascii: "{") ? UInt8(ascii: "}") : UInt8(ascii: "]")) {
                        if c == UInt8(ascii: "{") { try name() }
                        continue valueLoop
                    }
                    close()
                } else {
                    try scalar()
                }
                // After a value: a comma and the next, or the end of its container (and perhaps
                // of the containers around it).
                while let top = open.indices.last {
                    skipSpace()
                    guard i < bytes.count else { throw .syntax }
                    if bytes[i] == UInt8(ascii: ",") {
                        i += 1
                        skipSpace()
                        // A comma before the end (`[1,]`), as Foundation's reader — and so the
                        // options a command reads — takes it.
                        if i < bytes.count, bytes[i] == (open[top].isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")) {
                            close()
                            continue
                        }
                        if open[top].isObject { try name() }
                        continue valueLoop
                    }
                    guard bytes[i] == (open[top].isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")) else { throw .syntax }
                    close()
                }
                break
            }
            skipSpace()
            guard i == bytes.count else { throw .syntax }
            if nonASCII, String(validating: bytes, as: UTF8.self) == nil { throw .syntax }
            guard topIsObject else { throw .notAnObject }
            if let repeated { throw .repeated(repeated) }
            return nodes
        }

        /// The container at the top ends at `i` (its closing bracket).
        mutating func close() {
            let top = open.removeLast()
            i += 1
            nodes[top.node].end = Int32(i)
            nodes[top.node].count = top.count
            nodes[top.node].next = Int32(nodes.count)
            names.removeSubrange(top.firstName...)
        }

        /// A member's name and its colon; a name the object has already is refused, with the way
        /// to it.
        mutating func name() throws(Failure) {
            skipSpace()
            guard i < bytes.count, bytes[i] == UInt8(ascii: "\"") else { throw .syntax }
            let index = nodes.count
            try string()
            let top = open.count - 1
            open[top].count += 1
            if repeated == nil, topIsObject {
                let first = open[top].firstName
                if open[top].seen == nil, open[top].count > 16 {
                    open[top].seen = Set(names[first...].map { RequestBody.name(bytes, nodes[$0]) })
                }
                // The set is changed where it is, and the names compared where they are: a copy of
                // the reader held across either would copy the set or the names for each name,
                // and an object of many members would take time as their count squared.
                let again = open[top].seen != nil ? !open[top].seen!.insert(RequestBody.name(bytes, nodes[index])).inserted
                    : names[first...].contains(where: { same($0, index) })
                if again { repeated = path(to: index) }
            }
            names.append(index)
            skipSpace()
            guard i < bytes.count, bytes[i] == UInt8(ascii: ":") else { throw .syntax }
            i += 1
        }

        /// Whether the names at `a` and `b` are one name (``name(_:_:)``).
        func same(_ a: Int, _ b: Int) -> Bool {
            let (x, y) = (nodes[a], nodes[b])
            guard x.ascii, y.ascii else { return RequestBody.name(bytes, x) == RequestBody.name(bytes, y) }
            if !x.escaped, !y.escaped {
                return x.end - x.start == y.end - y.start
                    && memcmp(bytes.baseAddress! + Int(x.start), bytes.baseAddress! + Int(y.start), Int(x.end - x.start)) == 0
            }
            return unescaped(a) == unescaped(b)
        }

        /// `devices[1].name`: the way from the top to the name at `index`.
        func path(to index: Int) -> String {
            var text = ""
            for (depth, container) in open.enumerated() {
                if container.isObject {
                    let name = depth == open.count - 1 ? index : names[(open.indices.contains(depth + 1) ? open[depth + 1].firstName : names.count) - 1]
                    text += (text.isEmpty ? "" : ".") + String(decoding: unescaped(name), as: UTF8.self)
                } else {
                    text += "[\(container.count - 1)]"
                }
            }
            return text
        }

        func unescaped(_ index: Int) -> [UInt8] { RequestBody.unescape(bytes, nodes[index]) }

        /// A string, a number, `true`, `false` or `null` at `i`.
        mutating func scalar() throws(Failure) {
            let start = i
            switch bytes[i] {
            case UInt8(ascii: "\""): try string()
            case UInt8(ascii: "t"): try literal("true", .true)
            case UInt8(ascii: "f"): try literal("false", .false)
            case UInt8(ascii: "n"): try literal("null", .null)
            default:
                try number()
                nodes.append(Node(kind: .number, start: Int32(start), end: Int32(i), next: Int32(nodes.count + 1)))
            }
        }

        mutating func literal(_ word: StaticString, _ kind: Kind) throws(Failure) {
            let start = i
            let count = word.utf8CodeUnitCount
            guard bytes.count - i >= count, memcmp(bytes.baseAddress! + i, word.utf8Start, count) == 0 else { throw .syntax }
            i += count
            nodes.append(Node(kind: kind, start: Int32(start), end: Int32(i), next: Int32(nodes.count + 1)))
        }

        /// RFC 8259 §6: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`, and within a
        /// `Double`'s range (`1e400` is refused, as Foundation refuses it).
        mutating func number() throws(Failure) {
            let start = i
            func digits() -> Int {
                let from = i
                while i < bytes.count, bytes[i] >= UInt8(ascii: "0"), bytes[i] <= UInt8(ascii: "9") { i += 1 }
                return i - from
            }
            if i < bytes.count, bytes[i] == UInt8(ascii: "-") { i += 1 }
            guard i < bytes.count else { throw .syntax }
            if bytes[i] == UInt8(ascii: "0") { i += 1 } else if digits() == 0 { throw .syntax }
            if i < bytes.count, bytes[i] == UInt8(ascii: ".") {
                i += 1
                guard digits() > 0 else { throw .syntax }
            }
            var exponent = false
            if i < bytes.count, bytes[i] == UInt8(ascii: "e") || bytes[i] == UInt8(ascii: "E") {
                exponent = true
                i += 1
                if i < bytes.count, bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-") { i += 1 }
                guard digits() > 0 else { throw .syntax }
            }
            if exponent || i - start > 300 {
                guard let value = Double(String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<i]), as: UTF8.self)), value.isFinite else {
                    throw .syntax
                }
            }
        }

        /// A string at `i` (its opening quote): no control character unescaped, every escape one
        /// of §7's, a `\u` surrogate only as half of a pair.
        mutating func string() throws(Failure) {
            i += 1
            let start = i
            var escaped = false
            var ascii = true
            /// Where the text after the opening quote or the last escape starts.
            var segment = i
            func hex4() throws(Failure) -> UInt32 {
                guard bytes.count - i >= 4 else { throw .syntax }
                var value: UInt32 = 0
                for _ in 0..<4 {
                    guard let digit = Reader.hexValue(bytes[i]) else { throw .syntax }
                    value = value << 4 | UInt32(digit)
                    i += 1
                }
                return value
            }
            while true {
                guard i < bytes.count else { throw .syntax }
                let c = bytes[i]
                if c == UInt8(ascii: "\"") { break }
                if c < 0x20 { throw .syntax }
                if c >= 0x80 {
                    nonASCII = true
                    ascii = false
                    // A U+FEFF that Foundation drops: the string is read as an escaped one is.
                    if i == segment, Reader.byteOrderMark(bytes, at: i, before: bytes.count) { escaped = true }
                }
                i += 1
                guard c == UInt8(ascii: "\\") else { continue }
                escaped = true
                guard i < bytes.count else { throw .syntax }
                let e = bytes[i]
                i += 1
                defer { segment = i }
                switch e {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
                     UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                    continue
                case UInt8(ascii: "u"):
                    let unit = try hex4()
                    if unit >= 0x80 { ascii = false }
                    if (0xDC00..<0xE000).contains(unit) { throw .syntax }
                    if (0xD800..<0xDC00).contains(unit) {
                        guard bytes.count - i >= 2, bytes[i] == UInt8(ascii: "\\"), bytes[i + 1] == UInt8(ascii: "u") else { throw .syntax }
                        i += 2
                        guard (0xDC00..<0xE000).contains(try hex4()) else { throw .syntax }
                    }
                default: throw .syntax
                }
            }
            nodes.append(Node(kind: .string, escaped: escaped, ascii: ascii, start: Int32(start), end: Int32(i), next: Int32(nodes.count + 1)))
            i += 1
        }
    }

    private init(checked bytes: [UInt8], _ nodes: [Node]) {
        self.bytes = bytes
        self.nodes = nodes
    }

    /// `{}` and `[]`, for ``BodyShape``'s placeholders.
    static let emptyObject = RequestBody(checked: Array("{}".utf8), [Node(kind: .object, start: 0, end: 2, count: 0, next: 1)])
    static let emptyArray = RequestBody(checked: Array("[]".utf8), [Node(kind: .array, start: 0, end: 2, count: 0, next: 1)])
}

/// One value of a ``RequestBody``: what a body type's members are read from.
struct BodyNode {
    let body: RequestBody
    let index: Int

    private var node: RequestBody.Node { body.nodes[index] }
    var kind: RequestBody.Kind { node.kind }
    var isNull: Bool { node.kind == .null }

    /// Its text as sent.
    var text: ArraySlice<UInt8> { body.bytes[Int(node.start)..<Int(node.end)] }

    /// A string's text; `nil` for any other value.
    var string: String? { node.kind == .string ? body.string(index) : nil }

    /// A boolean; `nil` for any other value.
    var bool: Bool? {
        switch node.kind {
        case .true: true
        case .false: false
        default: nil
        }
    }

    /// A number as a whole number from 0 to `maximum` (`1.0`, `25e-1`, `1e2` and `-0` are whole);
    /// `nil` for any other number or value. Read exactly from its digits (a double would round
    /// `9007199254740993.0` to another number, and take `1e-400` for 0).
    func wholeNumber(maximum: UInt64) -> UInt64? {
        guard node.kind == .number else { return nil }
        let text = self.text
        let zero = UInt8(ascii: "0")
        // `-? int (. fraction)? ([eE] [+-]? exponent)?`, as the reader checked it.
        var i = text.startIndex
        let negative = text[i] == UInt8(ascii: "-")
        if negative { i += 1 }
        let integer = i
        while i < text.endIndex, text[i] >= zero, text[i] <= zero + 9 { i += 1 }
        let integerCount = i - integer
        var fraction = i, fractionCount = 0
        if i < text.endIndex, text[i] == UInt8(ascii: ".") {
            i += 1
            fraction = i
            while i < text.endIndex, text[i] >= zero, text[i] <= zero + 9 { i += 1 }
            fractionCount = i - fraction
        }
        var exponent = 0
        if i < text.endIndex {
            i += 1  // e or E
            let sign = text[i] == UInt8(ascii: "-") ? -1 : 1
            if text[i] == UInt8(ascii: "-") || text[i] == UInt8(ascii: "+") { i += 1 }
            // Held below 10^7: a body has fewer digits than that, so a larger exponent makes a
            // number too large, or a fraction, all the same.
            while i < text.endIndex { exponent = min(exponent * 10 + Int(text[i] - zero), 10_000_000); i += 1 }
            exponent *= sign
        }
        // The digits, as one number, times 10^scale: those past the point once scaled must be 0.
        let count = integerCount + fractionCount
        let scale = exponent - fractionCount
        let kept = count + min(scale, 0)
        var value: UInt64 = 0
        for k in 0..<count {
            let digit = UInt64((k < integerCount ? text[integer + k] : text[fraction + k - integerCount]) - zero)
            guard k < kept else {
                if digit != 0 { return nil }
                continue
            }
            let (times, over) = value.multipliedReportingOverflow(by: 10)
            let (sum, over2) = times.addingReportingOverflow(digit)
            if over || over2 { return nil }
            value = sum
        }
        if value != 0 {
            for _ in 0..<max(scale, 0) {
                let (times, over) = value.multipliedReportingOverflow(by: 10)
                if over { return nil }
                value = times
            }
        }
        if negative, value != 0 { return nil }
        return value <= maximum ? value : nil
    }

    /// An object's member named `name` (or a canonically equivalent name: ``RequestBody/name(_:_:)``).
    func member(_ name: String) -> BodyNode? {
        guard node.kind == .object else { return nil }
        var bytes = name
        let ascii = bytes.withUTF8 { $0.allSatisfy { $0 < 0x80 } }  // its bytes, not the UTF8View's iterator
        var k = index + 1
        for _ in 0..<node.count {
            if body.string(k, is: name, ascii: ascii) { return BodyNode(body: body, index: k + 1) }
            k = Int(body.nodes[k + 1].next)
        }
        return nil
    }

    /// An object's members' names, in the order sent.
    var names: [String] {
        guard node.kind == .object else { return [] }
        var out = [String]()
        var k = index + 1
        for _ in 0..<node.count {
            out.append(body.string(k))
            k = Int(body.nodes[k + 1].next)
        }
        return out
    }

    /// An array's elements.
    var elements: [BodyNode] {
        guard node.kind == .array else { return [] }
        var out = [BodyNode]()
        var k = index + 1
        for _ in 0..<node.count {
            out.append(BodyNode(body: body, index: k))
            k = Int(body.nodes[k].next)
        }
        return out
    }

}
