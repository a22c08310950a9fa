import Session

/// One step as it ran: when, what, and what came of it.
public struct StepReport: Encodable, Sendable {
    public let line: Int
    /// Milliseconds since the scenario began.
    public let time: UInt64
    public let step: String
    public let outcome: String
    public let error: String?
    public let result: [String: String]
    /// The request's answer, the JSON the command line prints and the server answers for it
    /// (docs/reports.md); `null` for a step that answers nothing. Only in a run with answers
    /// (`--answers`).
    public let answer: JSONValue?

    init(line: Int, time: UInt64, step: String, outcome: Outcome, answered: Bool = false) {
        self.answered = answered
        self.line = line
        self.time = time
        self.step = step
        self.outcome = outcome.name
        self.error = outcome.error
        self.result = Dictionary((outcome.fields + outcome.details).map { ($0.key, $0.value) }, uniquingKeysWith: { $1 })
        self.answer = answered ? outcome.answerValue : nil
        self.resultText = outcome.resultText
    }

    let resultText: String
    /// Whether the run asked for answers (`--answers`): only then is `answer` a member.
    let answered: Bool
    enum CodingKeys: String, CodingKey { case line, time, step, outcome, error, result, answer }

    /// Every member always: `"error": null` for a step that came to `ok` (and, in a run with
    /// answers, `"answer": null` for one that answers nothing), so a consumer reads `step["error"]`
    /// without asking first whether it is there.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(line, forKey: .line)
        try c.encode(time, forKey: .time)
        try c.encode(step, forKey: .step)
        try c.encode(outcome, forKey: .outcome)
        if let error { try c.encode(error, forKey: .error) } else { try c.encodeNil(forKey: .error) }
        try c.encode(result, forKey: .result)
        if answered { if let answer { try c.encode(answer, forKey: .answer) } else { try c.encodeNil(forKey: .answer) } }
    }

    /// `at 2.5s  laptop sign => ok credential=alice …`: a line that reads back as a step with its
    /// expectation.
    public var timelineLine: String {
        let head = "at \(DelayRange.text(milliseconds: time))"
        let padded = head + String(repeating: " ", count: max(1, 10 - head.count)) + step
        return resultText.isEmpty ? padded : padded + " => " + resultText
    }
}

/// An expectation a step did not meet: where, what was expected, what happened.
public struct ScenarioFailure: Encodable, Sendable, CustomStringConvertible {
    public let file: String
    public let line: Int
    public var column: Int = 1
    public let step: String
    public let expected: String
    public let actual: String

    /// One line, the step cut to 200 characters and what was expected (the scenario's words) as
    /// every echoed value is, ``EchoedInput``; the JSON report has both whole.
    public var description: String {
        let shown = step.count > 200 ? step.prefix(200) + "…" : Substring(step)
        return "\(EchoedInput.path(file)):\(line):\(column): \(shown): expected \(EchoedInput.text(expected)), got \(actual)"
    }
}

/// What a run came to: the timeline, and every unmet expectation.
public struct ScenarioReport: Encodable, Sendable {
    public let file: String
    public var seed: UInt64 = 0
    public private(set) var steps: [StepReport] = []
    public private(set) var failures: [ScenarioFailure] = []
    /// What `sync events on` saw happen, in the order of the timeline.
    public private(set) var events: [SyncEvent] = []
    /// Changes a deletion made before them outranks (``DroppedChange``), as they were made.
    public private(set) var dropped: [DroppedChange] = []
    /// The timeline's lines after the heading, steps and events as they came.
    private var lines: [String] = []

    init(file: String) { self.file = file }

    public var passed: Bool { failures.isEmpty }

    mutating func record(_ step: StepReport, failures: [ScenarioFailure]) {
        steps.append(step)
        lines.append(step.timelineLine)
        self.failures += failures
    }

    mutating func record(_ event: SyncEvent) {
        events.append(event)
        lines.append(event.timelineLine)
    }

    mutating func record(_ change: DroppedChange) {
        dropped.append(change)
        lines.append(change.timelineLine)
    }

    /// The timeline: a heading, one line per step, and a summary. A line can hold text an RP
    /// supplied (a user name): a program that shows it to a person escapes it.
    public var timelineLines: [String] {
        ["scenario \(file) (seed \(seed))"] + lines
            + [passed ? "passed: \(steps.count) steps" : "failed: \(failures.count) unmet expectation(s) in \(steps.count) steps"]
    }

    public var timeline: String { timelineLines.joined(separator: "\n") }

    enum CodingKeys: String, CodingKey { case file, seed, steps, events, dropped, failures, passed }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(file, forKey: .file)
        try c.encode(seed, forKey: .seed)
        try c.encode(steps, forKey: .steps)
        try c.encode(events, forKey: .events)
        try c.encode(dropped, forKey: .dropped)
        try c.encode(failures, forKey: .failures)
        try c.encode(passed, forKey: .passed)
    }
}
