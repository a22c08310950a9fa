import Session

/// What goes wrong with a scenario before any expectation is judged: the file cannot be read, a
/// line does not parse, a step cannot run (a device that does not exist, an RP that does not
/// answer). Says where, compiler-style: `file:line:column: message`.
public struct ScenarioError: Error, Sendable, CustomStringConvertible {
    public let file: String
    public let line: Int
    public let column: Int
    public let message: String

    package init(file: String, line: Int, column: Int = 1, _ message: String) {
        self.file = file
        self.line = line
        self.column = column
        self.message = message
    }

    /// `file:line:column: message`, or `file: message` for the file as a whole.
    /// The path is echoed cut past what a path can be (``EchoedInput``).
    public var description: String {
        let file = EchoedInput.path(self.file)
        return line == 0 ? "\(file): \(message)" : "\(file):\(line):\(column): \(message)"
    }
}

extension SessionError {
    /// A scenario that cannot run is the file's fault: `badInput`, saying where.
    public init(_ error: ScenarioError) {
        self.init(.badInput, error.description)
    }
}
