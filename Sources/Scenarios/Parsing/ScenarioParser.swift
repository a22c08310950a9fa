import Session

/// Reads a scenario: one step per line, `#` comments, `${NAME}` replaced from the environment,
/// an optional `at DURATION` before a step and `=> expectation` after it. Every mistake is a
/// `ScenarioError` that names the file, line and column.
struct ScenarioParser {
    let file: String
    let environment: [String: String]

    /// The most JSON one step carries (options, a body): what the command line reads as options.
    static let jsonLimit = 1 << 20

    /// The most text a scenario may be, with every `${NAME}` replaced: what a scenario file may be.
    var textLimit = 4 << 20

    func parse(_ text: String) throws(ScenarioError) -> [ScenarioLine] {
        var lines = [ScenarioLine]()
        var budget = textLimit
        // A line ends at "\n" or at "\r\n", which a String holds as one Character: a file saved with
        // Windows line ends is the same scenario, line for line.
        for (index, raw) in Self.lines(of: text).enumerated() {
            let number = index + 1
            let expanded = try substitute(raw, line: number, budget: &budget)
            let tokens: [Token]
            do { tokens = try Tokenizer.tokens(expanded) } catch { throw ScenarioError(file: file, line: number, column: error.column, error.message) }
            guard !tokens.isEmpty else { continue }
            // Options and bodies say so in their own words (below); any other word is no longer.
            for (i, token) in tokens.enumerated() where token.text.utf8.count > Self.jsonLimit {
                guard i > 0, ["options", "body"].contains(tokens[i - 1].text) else { throw fail(number, token, "a word is at most 1 MiB") }
            }
            lines.append(try line(tokens, number: number))
        }
        return lines
    }

    /// `text` split at each "\n" and each "\r\n", empty lines kept — as splitting its Characters
    /// at those two would, found in its UTF-8 bytes rather than by grapheme breaking (a dense
    /// scenario's thousands of lines cost more to split by Character than to run some of them): a
    /// line feed is always a Character of its own, or the end of "\r\n", so a piece that ends in
    /// a carriage return had it just before the line feed, and it goes with the separator.
    static func lines(of text: String) -> [Substring] {
        let utf8 = text.utf8
        var out = [Substring]()
        var start = utf8.startIndex
        var index = start
        while index != utf8.endIndex {
            if utf8[index] == 0x0A {
                var end = index
                if end != start, utf8[utf8.index(before: end)] == 0x0D { end = utf8.index(before: end) }
                out.append(text[start..<end])
                start = utf8.index(after: index)
            }
            index = utf8.index(after: index)
        }
        out.append(text[start..<utf8.endIndex])
        return out
    }

    /// Whether `line` has a "${" in it (a byte scan; most lines have none).
    private static func hasPlaceholder(_ line: Substring) -> Bool {
        var previous: UInt8 = 0
        for byte in line.utf8 {
            if previous == 0x24 && byte == 0x7B { return true }
            previous = byte
        }
        return false
    }

    private func fail(_ line: Int, _ token: Token?, _ message: String) -> ScenarioError {
        ScenarioError(file: file, line: line, column: token?.column ?? 1, message)
    }

    /// `${NAME}` from the environment; an unset name is an error, not an empty string. `budget`
    /// is what the scenario may still grow to, in bytes, this line and its newline included: a
    /// value that would pass it is refused before it is copied, so no file of a few `${NAME}`s can
    /// make gigabytes in memory.
    private func substitute(_ line: Substring, line number: Int, budget: inout Int) throws(ScenarioError) -> String {
        guard Self.hasPlaceholder(line) else {
            // Nothing to replace: the line and its newline are spent at once, as below.
            let size = line.utf8.count + 1
            guard size <= budget else {
                throw ScenarioError(file: file, line: number, column: 1,
                                    "with ${NAME} replaced, the scenario would be larger than \(textLimit >> 20) MiB")
            }
            budget -= size
            return String(line)
        }
        var out = ""
        var rest = line
        var column = 1  // of the next character of `out`, in Unicode scalars, as the tokenizer counts
        func spend(_ text: some StringProtocol) throws(ScenarioError) {
            let size = text.utf8.count
            guard size <= budget else {
                throw ScenarioError(file: file, line: number, column: column,
                                    "with ${NAME} replaced, the scenario would be larger than \(textLimit >> 20) MiB")
            }
            budget -= size
            column += text.unicodeScalars.count
        }
        while let open = rest.range(of: "${") {
            try spend(rest[..<open.lowerBound])
            out += rest[..<open.lowerBound]
            guard let close = rest[open.upperBound...].firstIndex(of: "}") else {
                throw ScenarioError(file: file, line: number, "'${' without its '}'")
            }
            let name = String(rest[open.upperBound..<close])
            guard let value = environment[name] else {
                throw ScenarioError(file: file, line: number, "${\(EchoedInput.text(name))} is not set in the environment")
            }
            try spend(value)
            out += value
            rest = rest[rest.index(after: close)...]
        }
        try spend(rest + "\n")
        return out + rest
    }

    private func line(_ all: [Token], number: Int) throws(ScenarioError) -> ScenarioLine {
        var tokens = all
        var at: UInt64? = nil
        if tokens.first?.text == "at", tokens.count >= 2 {
            guard let t = DelayRange.milliseconds(tokens[1].text) else { throw fail(number, tokens[1], "'at' takes a time like 30s, 1m or 1h30m") }
            at = t
            tokens.removeFirst(2)
        }
        var expectation: Expectation? = nil
        if let arrow = tokens.firstIndex(where: { $0.kind == .word && $0.text == "=>" }) {
            expectation = try self.expectation(Array(tokens[(arrow + 1)...]), number: number, arrow: tokens[arrow])
            tokens = Array(tokens[..<arrow])
        }
        let text = tokens.map { $0.kind == .string ? quoted($0.text) : $0.text }.joined(separator: " ")
        guard !tokens.isEmpty else {
            guard at != nil, expectation == nil else { throw fail(number, all.first, "an expectation needs a step before its '=>'") }
            return ScenarioLine(number: number, text: "", at: at, step: nil, expectation: nil)
        }
        return ScenarioLine(number: number, text: text, at: at, step: try step(tokens, number: number), expectation: expectation)
    }

    private func quoted(_ s: String) -> String {
        "\"" + s.replacingOccurrences("\\", "\\\\").replacingOccurrences("\"", "\\\"").replacingOccurrences("\n", "\\n") + "\""
    }

    private func expectation(_ tokens: [Token], number: Int, arrow: Token) throws(ScenarioError) -> Expectation {
        guard let first = tokens.first else { throw fail(number, arrow, "'=>' needs an expected outcome: ok, an error name, or key=value") }
        var checks = [Expectation.Check]()
        var outcome: String? = nil
        for (i, token) in tokens.enumerated() {
            if let equals = token.text.firstIndex(of: "="), token.kind == .word {
                var key = String(token.text[..<equals]), value = String(token.text[token.text.index(after: equals)...])
                let absent = key.hasSuffix("!")
                if absent { key.removeLast() }
                guard !key.isEmpty else { throw fail(number, token, "a check is key=value, or key!=value") }
                // A misspelt fact would never be there: `key!=value` would always hold.
                // `json.` names no member, `.uploads` no device.
                guard Self.facts.contains(key) || (key.hasPrefix("json.") && key.count > 5) || (Outcome.isTimed(key) && !key.hasPrefix("."))
                        || (key.hasSuffix(".passkeys") && !key.hasPrefix(".")) else {
                    throw fail(number, token, "no step reports '\(EchoedInput.text(key))': a check names \(Self.facts.sorted().joined(separator: ", ")), json.MEMBER, or NAME.uploads|downloads|passkeys")
                }
                checks.append(Expectation.Check(key: key, value: value, column: token.column, absent: absent))
            } else if i == 0 {
                outcome = first.text
            } else if token.kind == .string || token.kind == .json, let last = checks.last, last.value.isEmpty {
                checks[checks.count - 1].value = token.text  // key="a b", key={"a": 1}
            } else {
                throw fail(number, token, "after the outcome, only key=value checks")
            }
        }
        // `KEY!=` with nothing after it, or an empty item (`a,,b`), names nothing that could be
        // there: the check would always hold.
        for check in checks where check.absent && check.value.split(separator: ",", omittingEmptySubsequences: false).contains("") {
            throw ScenarioError(file: file, line: number, column: check.column,
                                "'\(EchoedInput.text(check.key))!=\(EchoedInput.text(check.value))' has an empty item: an absence check names what must not be there")
        }
        return Expectation(outcome: outcome, checks: checks)
    }

    private func step(_ t: [Token], number: Int) throws(ScenarioError) -> Step {
        func word(_ i: Int, _ what: String) throws(ScenarioError) -> String {
            guard i < t.count else { throw fail(number, t.last, "'\(EchoedInput.text(t[0].text))' needs \(what)") }
            return t[i].text
        }
        func none(after i: Int) throws(ScenarioError) {
            if i < t.count { throw fail(number, t[i], "unexpected '\(EchoedInput.text(t[i].text))'") }
        }
        func duration(_ i: Int) throws(ScenarioError) -> UInt64 {
            guard let ms = DelayRange.milliseconds(try word(i, "a duration")) else {
                throw fail(number, t[i], "'\(EchoedInput.text(t[i].text))' is not a duration (250ms, 30s, 2m, 1h, 1m30s)")
            }
            return ms
        }
        switch t[0].text {
        case "seed":
            guard let n = UInt64(try word(1, "a number")) else { throw fail(number, t[1], "a seed is a whole number") }
            try none(after: 2)
            return .seed(n)
        case "origin":
            let o = try word(1, "a URL")
            try none(after: 2)
            return .origin(o)
        case "rp-id":
            let id = try word(1, "an RP ID")
            try none(after: 2)
            return .rpId(id)
        case "wait":
            let d = try duration(1)
            try none(after: 2)
            return .wait(d)
        case "device":
            return try device(t, number: number)
        case "sync":
            return try sync(t, number: number)
        case "http":
            let method = try word(1, "a method")
            guard ["GET", "POST", "PUT", "DELETE", "PATCH"].contains(method) else { throw fail(number, t[1], "an HTTP method: GET, POST, PUT, DELETE or PATCH") }
            let url = try word(2, "a URL")
            var body: String? = nil
            if t.count > 3 {
                guard t[3].text == "body", t.count == 5 else { throw fail(number, t[3], "after the URL: body JSON") }
                guard t[4].text.utf8.count <= Self.jsonLimit else { throw fail(number, t[4], "a body is at most 1 MiB") }
                body = t[4].kind == .string ? quoted(t[4].text) : t[4].text
            }
            return .http(method: method, url: url, body: body)
        default:
            return try deviceStep(t, number: number)
        }
    }

    private func device(_ t: [Token], number: Int) throws(ScenarioError) -> Step {
        if t.count == 2, t[1].text == "list" { return .deviceList }
        guard t.count >= 3 else {
            throw fail(number, t.last, "device add NAME …, device list, or device NAME offline|online|reset|remove|unlock|unsupported|supported|pin PIN")
        }
        if t[1].text == "add" {
            let name = t[2].text
            var pin: String? = nil, attempts: UInt32? = nil, approver: String? = nil, profile: String? = nil
            var seen = [String: Token]()
            var i = 3
            while i < t.count {
                if seen[t[i].text] != nil { throw fail(number, t[i], "'\(EchoedInput.text(t[i].text))' is given twice") }
                seen[t[i].text] = t[i]
                switch t[i].text {
                case "pin": pin = try value(t, i, number); i += 2
                case "attempts":
                    guard let n = UInt32(try value(t, i, number)) else { throw fail(number, t[i + 1], "attempts is a whole number") }
                    attempts = n
                    i += 2
                case "approve-with": approver = try value(t, i, number); i += 2
                case "profile":
                    let name = try value(t, i, number)
                    guard AuthenticatorProfile.named(name) != nil else {
                        throw fail(number, t[i + 1], "no profile named '\(EchoedInput.text(name))' (authctl profiles lists them)")
                    }
                    profile = name
                    i += 2
                default: throw fail(number, t[i], "device add takes: pin PIN, attempts N, approve-with DEVICE, profile NAME")
                }
            }
            if pin == nil, let token = seen["approve-with"] {
                throw fail(number, token, "approve-with approves a new device's PIN: without 'pin' it would be dropped")
            }
            return .addDevice(name, pin: pin, attempts: attempts, approver: approver, profile: profile)
        }
        let name = t[1].text
        switch t[2].text {
        case "offline", "online", "reset", "remove", "unlock", "unsupported", "supported":
            guard t.count == 3 else { throw fail(number, t[3], "unexpected '\(EchoedInput.text(t[3].text))'") }
            let change: Step.DeviceChange = switch t[2].text {
            case "offline": .offline
            case "online": .online
            case "reset": .reset
            case "remove": .remove
            case "unsupported": .unsupported
            case "supported": .supported
            default: .unlock
            }
            return .changeDevice(name, change)
        case "pin":
            let pin = try value(t, 2, number)
            var approver: String? = nil, former: String? = nil
            if t.count > 4 {
                guard ["approve-with", "former"].contains(t[4].text) else { throw fail(number, t[4], "after the PIN: approve-with DEVICE, or former PIN") }
                let v = try value(t, 4, number)
                try none(after: 6, in: t, number)
                if t[4].text == "former" { former = v } else { approver = v }
            }
            return .changeDevice(name, .pin(pin, approver: approver, former: former))
        default:
            throw fail(number, t[2], "a device is: offline, online, reset, remove, unlock, unsupported, supported, or pin PIN")
        }
    }

    private func sync(_ t: [Token], number: Int) throws(ScenarioError) -> Step {
        if t.count >= 2, t[1].text == "events" {
            guard t.count == 3, ["on", "off"].contains(t[2].text) else { throw fail(number, t.count > 2 ? t[2] : t[1], "sync events is on or off") }
            return .syncEvents(on: t[2].text == "on")
        }
        if t.count >= 2, t[1].text == "status" {
            guard t.count == 2 || (t.count == 4 && t[2].text == "device") else {
                throw fail(number, t.count > 2 ? t[2] : t[1], "sync status takes nothing, or device NAME")
            }
            return .syncStatus(device: t.count == 4 ? t[3].text : nil)
        }
        if t.count == 3, t[1].text == "backup-state" {
            guard ["immediate", "after-upload"].contains(t[2].text) else { throw fail(number, t[2], "backup-state is immediate or after-upload") }
            return .backupState(immediate: t[2].text == "immediate")
        }
        var device: String? = nil, upload: DelayRange? = nil, download: DelayRange? = nil
        var seen = Set<String>()
        var i = 1
        while i < t.count {
            let key = t[i].text
            guard seen.insert(key).inserted else { throw fail(number, t[i], "'\(EchoedInput.text(key))' is given twice") }
            let v = try value(t, i, number)
            switch key {
            case "device": device = v
            case "upload", "download":
                guard let range = DelayRange(parsing: v) else { throw fail(number, t[i + 1], "'\(EchoedInput.text(v))' is not a delay (2s, 1m30s, or 1s..5s)") }
                if key == "upload" { upload = range } else { download = range }
            default: throw fail(number, t[i], "sync takes: device NAME, upload DELAY, download DELAY; or backup-state immediate|after-upload; or status [device NAME]; or events on|off")
            }
            i += 2
        }
        guard upload != nil || download != nil else { throw fail(number, t[0], "sync needs upload or download") }
        return .delays(device: device, upload: upload, download: download)
    }

    /// `signal unknown LABEL`, `signal accepted user U L1,L2|none`, `signal details user U name N display D`.
    private func signal(_ t: [Token], number: Int) throws(ScenarioError) -> SignalStep {
        let usage = "signal is: unknown LABEL, accepted user U LABEL1,LABEL2 (or none), or details user U name N display D"
        guard t.count >= 4 else { throw fail(number, t.last, usage) }
        switch t[2].text {
        case "unknown":
            guard t.count == 4 else { throw fail(number, t[4], "unexpected '\(EchoedInput.text(t[4].text))'") }
            return .unknown(label: t[3].text)
        case "accepted":
            guard t.count == 6, t[3].text == "user" else { throw fail(number, t.count > 3 ? t[3] : t[2], usage) }
            let list = t[5].text
            return .accepted(user: t[4].text, labels: list == "none" ? [] : try labels(t[5], number))
        case "details":
            guard t.count == 9, t[3].text == "user", t[5].text == "name", t[7].text == "display" else {
                throw fail(number, t[3], usage)
            }
            return .details(user: t[4].text, name: t[6].text, displayName: t[8].text)
        default:
            throw fail(number, t[2], usage)
        }
    }

    /// `L1,L2`: labels, none of them empty (`a,,b` or `a,` would drop a word silently).
    private func labels(_ token: Token, _ number: Int) throws(ScenarioError) -> [String] {
        let list = token.text.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        guard !list.contains("") else { throw fail(number, token, "'\(EchoedInput.text(token.text))' has an empty label: labels are separated by single commas") }
        return list
    }

    private func none(after i: Int, in t: [Token], _ number: Int) throws(ScenarioError) {
        if i < t.count { throw fail(number, t[i], "unexpected '\(EchoedInput.text(t[i].text))'") }
    }

    private func value(_ t: [Token], _ i: Int, _ number: Int) throws(ScenarioError) -> String {
        guard i + 1 < t.count else { throw fail(number, t[i], "'\(EchoedInput.text(t[i].text))' needs a value") }
        return t[i + 1].text
    }

    /// The facts of a result a check can name (docs/scenarios.md, "Expectations").
    static let facts: Set<String> = ["credential", "id", "user", "flags", "up", "uv", "be", "bs", "count", "attachment", "fmt", "alg",
                                     "aaguid", "profile", "status", "removed", "hidden", "restored", "updated", "passkeys", "uploads",
                                     "downloads", "store", "storeProblem"]

    /// The words `NAME register` and `NAME sign` take (docs/scenarios.md, "Ceremonies").
    static let registerWords: Set<String> = ["user", "display", "as", "uv", "attestation", "exclude", "device-bound", "sign-counter",
                                             "profile", "alg", "counter", "mediation", "recent-password-sign-in", "top-origin", "options",
                                             "action", "pin", "fault", "via", "timeout"]
    static let signWords: Set<String> = ["user", "credential", "uv", "allow", "mediation", "top-origin", "options", "action", "pin",
                                         "fault", "via", "timeout"]

    /// The words that only shape the options a scenario builds, with the member they set.
    static let registerBuilders: KeyValuePairs<String, String> = [
        "user": "user.name and user.id", "display": "user.displayName", "uv": "authenticatorSelection.userVerification",
        "attestation": "attestation", "exclude": "excludeCredentials", "alg": "pubKeyCredParams", "timeout": "timeout",
    ]
    static let signBuilders: KeyValuePairs<String, String> = [
        "uv": "userVerification", "allow": "allowCredentials", "timeout": "timeout",
    ]

    /// `NAME register …`, `NAME sign …`, `NAME delete LABEL`, `NAME holds`, `NAME show LABEL`,
    /// `NAME capabilities`.
    private func deviceStep(_ t: [Token], number: Int) throws(ScenarioError) -> Step {
        guard t.count >= 2 else { throw fail(number, t[0], "unknown step '\(EchoedInput.text(t[0].text))' (see docs/scenarios.md)") }
        let device = t[0].text
        switch t[1].text {
        case "holds":
            guard t.count == 2 else { throw fail(number, t[2], "holds takes no words: the expectation after '=>' lists the passkeys") }
            return .holds(device)
        case "delete":
            guard t.count == 3 else { throw fail(number, t.count > 3 ? t[3] : t[1], "delete takes a passkey's label") }
            return .delete(device, label: t[2].text)
        case "show":
            guard t.count == 3 else { throw fail(number, t.count > 3 ? t[3] : t[1], "show takes a passkey's label") }
            return .show(device, label: t[2].text)
        case "capabilities":
            guard t.count == 2 else { throw fail(number, t[2], "capabilities takes no words") }
            return .capabilities(device)
        case "signal":
            return .signal(device, try signal(t, number: number))
        case "autofill":
            return .autofill(device, try autofill(t, number: number))
        case "register", "sign":
            let kind = t[1].text
            let words = kind == "register" ? Self.registerWords : Self.signWords
            var c = Step.Ceremony()
            var seen = [String: Token]()
            var i = 2
            while i < t.count {
                let key = t[i].text
                // Every word is used or refused: one the step kind does not take, or one said twice
                // (the first would be dropped), is an error at its column.
                guard words.contains(key) else {
                    let other = kind == "register" ? Self.signWords : Self.registerWords
                    throw fail(number, t[i], other.contains(key) ? "\(kind) does not take '\(EchoedInput.text(key))': it is a word of \(kind == "register" ? "sign" : "register")"
                        : "\(kind) does not take '\(EchoedInput.text(key))' (see docs/scenarios.md)")
                }
                guard seen[key] == nil else { throw fail(number, t[i], "'\(EchoedInput.text(key))' is given twice") }
                seen[key] = t[i]
                switch key {
                case "device-bound": c.deviceBound = true; i += 1; continue
                case "sign-counter": c.signCounter = true; i += 1; continue
                case "recent-password-sign-in": c.recentPasswordSignIn = true; i += 1; continue
                default: break
                }
                let v = try value(t, i, number)
                switch key {
                case "user": c.user = v
                case "display": c.displayName = v
                case "as": c.label = v
                case "credential": c.credential = v
                case "uv":
                    guard ["required", "preferred", "discouraged"].contains(v) else { throw fail(number, t[i + 1], "uv is required, preferred or discouraged") }
                    c.userVerification = v
                case "attestation": c.attestation = v
                case "profile":
                    guard AuthenticatorProfile.named(v) != nil else { throw fail(number, t[i + 1], "no profile named '\(EchoedInput.text(v))' (authctl profiles lists them)") }
                    c.profile = v
                case "alg":
                    guard COSEAlgorithm(name: v) != nil else { throw fail(number, t[i + 1], "alg is es256, eddsa or rs256") }
                    c.algorithm = v
                case "mediation":
                    guard Mediation(rawValue: v) != nil else {
                        throw fail(number, t[i + 1], "mediation is \(Mediation.allCases.map(\.rawValue).joined(separator: ", "))")
                    }
                    c.mediation = v
                case "top-origin": c.topOrigin = v
                case "counter":
                    guard SignCounter(rawValue: v) != nil else { throw fail(number, t[i + 1], "counter is zero, per-credential or global") }
                    c.counter = v
                case "exclude": c.exclude = try labels(t[i + 1], number)
                case "allow": c.allow = try labels(t[i + 1], number)
                case "options":
                    guard v.utf8.count <= Self.jsonLimit else { throw fail(number, t[i + 1], "options are at most 1 MiB, as at the command line") }
                    if t[i + 1].kind == .json {
                        c.options = .inline(v)
                    } else if v == "reply" || v.hasPrefix("reply.") {
                        c.options = .reply(path: v.split(separator: ".").dropFirst().map(String.init))
                    } else {
                        c.options = .file(v)
                    }
                case "action":
                    guard let action = UserAction(rawValue: v) else { throw fail(number, t[i + 1], "action is approve, cancel, timeout or wrong-pin") }
                    c.action = action
                case "pin": c.pin = v
                case "fault": c.fault = v
                case "via":
                    // Hybrid is another device's authenticator; NAME's own is asked without it.
                    guard v != device else { throw fail(number, t[i + 1], "via names another device: \(EchoedInput.text(device)) cannot reach itself over hybrid") }
                    c.via = v
                case "timeout":
                    guard let ms = DelayRange.milliseconds(v) else { throw fail(number, t[i + 1], "timeout is a duration") }
                    c.timeout = Int(ms)
                default:
                    throw fail(number, t[i], "\(EchoedInput.text(t[1].text)) does not take '\(EchoedInput.text(key))' (see docs/scenarios.md)")
                }
                i += 2
            }
            // Words that shape the options the scenario builds mean nothing beside options given
            // whole: refused, not dropped.
            if c.options != nil {
                let builders = kind == "register" ? Self.registerBuilders : Self.signBuilders
                if let (key, member) = builders.first(where: { seen[$0.key] != nil }), let token = seen[key] {
                    throw fail(number, token, "'\(EchoedInput.text(key))' shapes the options the scenario builds; beside 'options' it would be dropped: say it in the options (\(member))"
                        + (kind == "register" && key == "user" ? ", and name the passkey with 'as LABEL'" : ""))
                }
            }
            if c.recentPasswordSignIn, c.mediation != "conditional", let token = seen["recent-password-sign-in"] {
                throw fail(number, token, "recent-password-sign-in allows a conditional create: without 'mediation conditional' it would be dropped")
            }
            if c.fault != nil, let token = seen["as"] {
                throw fail(number, token, "a passkey made with a fault gets no label: 'as' would be dropped")
            }
            return kind == "register" ? .register(device, c) : .sign(device, c)
        default:
            throw fail(number, t[1], "unknown step '\(EchoedInput.text(t[0].text)) \(EchoedInput.text(t[1].text))': a line is seed, origin, rp-id, device, sync, wait, http, or DEVICE register|sign|delete|holds|show|capabilities|signal|autofill (see docs/scenarios.md)")
        }
    }

    /// `autofill begin WORDS` — a sign-in's words, less the person's pick and the mediation,
    /// which is conditional — `autofill offers`, `autofill pick LABEL`, `autofill dismiss`.
    private func autofill(_ t: [Token], number: Int) throws(ScenarioError) -> AutofillStep {
        let usage = "autofill is: begin (with a sign-in's words), offers, pick LABEL, or dismiss"
        guard t.count >= 3 else { throw fail(number, t[1], usage) }
        switch t[2].text {
        case "begin":
            guard case .sign(_, var c) = try deviceStep([t[0], Token(kind: .word, text: "sign", column: t[2].column)] + t.dropFirst(3), number: number) else {
                throw fail(number, t[2], usage)
            }
            for (word, given) in [("credential", c.credential), ("user", c.user), ("mediation", c.mediation)] where given != nil {
                if let token = t.dropFirst(3).first(where: { $0.text == word }) {
                    throw fail(number, token, "autofill begin does not take '\(word)': the request is conditional, and the person picks with 'autofill pick LABEL'")
                }
            }
            c.mediation = Mediation.conditional.rawValue
            return .begin(c)
        case "offers", "dismiss":
            guard t.count == 3 else { throw fail(number, t[3], "autofill \(t[2].text) takes no words") }
            return t[2].text == "offers" ? .offers : .dismiss
        case "pick":
            guard t.count == 4 else { throw fail(number, t.count > 4 ? t[4] : t[2], "autofill pick takes a passkey's label") }
            return .pick(label: t[3].text)
        default:
            throw fail(number, t[2], usage)
        }
    }
}

extension String {
    func replacingOccurrences(_ target: String, _ replacement: String) -> String {
        split(separator: target, omittingEmptySubsequences: false).joined(separator: replacement)
    }
}
