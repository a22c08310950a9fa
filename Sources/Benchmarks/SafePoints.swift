/// How a benchmark lets the front end that runs it stop it on a signal (the command line's
/// `Interruption`): `checkpoint` where the work may stop, and `hold` and `resume` around making
/// what the clean-up must know of (a scratch directory), so that a signal in between waits.
package struct SafePoints: Sendable {
    package let checkpoint: @Sendable () -> Void
    package let hold: @Sendable () -> Void
    package let resume: @Sendable () -> Void

    package init(checkpoint: @escaping @Sendable () -> Void, hold: @escaping @Sendable () -> Void,
                 resume: @escaping @Sendable () -> Void) {
        self.checkpoint = checkpoint
        self.hold = hold
        self.resume = resume
    }

    /// Nothing stops the work: for a caller that catches no signals.
    package static let none = SafePoints(checkpoint: {}, hold: {}, resume: {})
}
