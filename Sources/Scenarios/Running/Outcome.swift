import Session

/// What a step came to: `ok`, an error's name (with its message), or — for `holds` — the labels of
/// the passkeys; and the result's facts, in the order the timeline prints them.
struct Outcome {
    var name: String
    var error: String?
    var isList = false
    var fields: [(key: String, value: String)] = []
    /// Facts only the JSON report carries (a credential's id): the timeline stays short.
    var details: [(key: String, value: String)] = []
    /// The request's answer as every front end reports it (docs/reports.md): the JSON report's
    /// `answer`; `nil` for a step that answers nothing (a wait, a failure, a deletion). Kept as
    /// the report and written only when the run asks for answers (``answerValue``): a step of a
    /// run without them encodes nothing it does not show.
    var answer: Answer?

    enum Answer: Sendable {
        case report(any Encodable & Sendable)
        case json(String)
    }

    /// ``answer`` as JSON.
    var answerValue: JSONValue? {
        switch answer {
        case .report(let report): JSONValue(report)
        case .json(let text): JSONValue(parsing: text)
        case nil: nil
        }
    }

    static let ok = Outcome(name: "ok")

    init(name: String, error: String? = nil, isList: Bool = false) {
        self.name = name
        self.error = error
        self.isList = isList
    }

    init(_ error: SessionError) {
        self.init(name: error.name.rawValue, error: error.message)
    }

    /// A registration's or sign-in's facts, from the typed values the request layer returned.
    init(ceremony response: CeremonyResponse, credential: String) {
        self.init(name: "ok")
        answer = .json(response.json)
        details = [("id", Base64URL.encode(response.credential.id))]
        fields = [("credential", credential), ("user", response.credential.userName), ("flags", response.flags.joined(separator: ",")),
                  ("count", String(response.signCount)), ("attachment", response.attachment.rawValue)]
        if let format = response.format { fields.append(("fmt", format)) }
    }

    /// `ok`, answered with `report`.
    init(answer report: some Encodable & Sendable) {
        self.init(name: "ok")
        answer = .report(report)
    }

    init(status: Int) {
        self.init(name: "ok")
        fields = [("status", String(status))]
    }

    /// The `=> …` text the timeline prints; empty for a step with nothing to report.
    var resultText: String {
        guard name != "ok" || !fields.isEmpty || isList else { return "" }
        return ([name] + fields.map { "\($0.key)=\($0.value)" }).joined(separator: " ")
    }

    /// The value a `key=value` check compares: a field, a single flag (`uv`, `up`, `be`, `bs` as
    /// 0/1), or a member of the last HTTP reply (`json.a.b`).
    func value(of key: String, reply: [UInt8]?) -> String? {
        if key == "passkeys", isList { return name }  // what `holds` lists, for a check
        if let field = (fields + details).first(where: { $0.key == key }) { return field.value }
        if let flag = ["up": "UP", "uv": "UV", "be": "BE", "bs": "BS"][key], let flags = fields.first(where: { $0.key == "flags" }) {
            return flags.value.split(separator: ",").contains(Substring(flag)) ? "1" : "0"
        }
        if key.hasPrefix("json."), let reply {
            return JSONText.member(reply, key.dropFirst(5).split(separator: ".").map(String.init)).map(JSONText.display)
        }
        return nil
    }

    /// Whether an expected value matches: lists (flags, labels) as multisets, so that an item
    /// that is there twice is not taken for one that is there once.
    static func matches(expected want: String, actual: String?, timed: Bool = false) -> Bool {
        guard let actual = actual.map({ timed ? untimed(actual: $0, unless: want) : $0 }) else { return false }
        if want.contains(",") || actual.contains(",") { return items(want) == items(actual) }
        return want == actual
    }

    /// Whether `key` is one of `sync status`'s lists of `LABEL@TIME`.
    static func isTimed(_ key: String) -> Bool {
        ["uploads", "downloads"].contains { key == $0 || key.hasSuffix("." + $0) } && !key.hasPrefix("json.")
    }

    /// `sync status` lists `LABEL@TIME`: an expectation that names no time compares labels only.
    private static func untimed(actual: String, unless want: String) -> String {
        guard actual.contains("@"), !want.contains("@") else { return actual }
        return actual.split(separator: ",", omittingEmptySubsequences: false).map { $0.split(separator: "@").first ?? $0 }.joined(separator: ",")
    }

    /// Whether none of `unwanted`'s items is among `actual`'s (`KEY!=VALUE`); a fact the result
    /// does not have lacks everything. `none` (an empty list) is no item.
    static func lacks(_ unwanted: String, actual: String?, timed: Bool = false) -> Bool {
        guard let actual = actual.map({ timed ? untimed(actual: $0, unless: unwanted) : $0 }) else { return true }
        // The actual list is looked through once, unsorted and unhashed: it can hold every passkey
        // of a device (a dense day's `holds => passkeys!=u1` of some 900), the unwanted a few.
        let unwantedItems = items(unwanted)
        guard !unwantedItems.isEmpty, actual != "none" else { return true }
        let listed: [Substring]
        if actual.utf8.allSatisfy({ $0 < 0x80 }) {
            // ASCII (labels as a rule): a comma is a Character of its own there, so the bytes
            // split where the Characters do, without working out a thousand labels' Characters.
            listed = actual.utf8.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false).map { Substring($0) }
        } else {
            listed = actual.split(separator: ",", omittingEmptySubsequences: false)
        }
        if unwantedItems.count > 8 {
            let unwantedSet = Set(unwantedItems)
            return !listed.contains { unwantedSet.contains($0) }
        }
        return !listed.contains { item in unwantedItems.contains(item) }
    }

    /// A comma-separated list's items, sorted (a multiset's canonical form); `none` is empty.
    static func items(_ list: String) -> [Substring] {
        list == "none" ? [] : list.split(separator: ",", omittingEmptySubsequences: false).sorted()
    }
}
