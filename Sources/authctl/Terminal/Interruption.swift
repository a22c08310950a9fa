import Dispatch
import Foundation
import Glibc
import Synchronization

/// The write end of the pipe a signal handler wakes the watcher through (-1: not installed).
nonisolated(unsafe) private var wakeFD: Int32 = -1

/// Ctrl-C, SIGTERM or a hang-up during a long command that holds something to clean up (a
/// scenario's temporary vault): the signal is caught — its handler only writes a byte to a pipe,
/// which is async-signal-safe — and a watcher thread cleans up, says so, and ends the process as
/// `canceled`, instead of the process dying with the mess left behind.
///
/// The clean-up must not race the work it cleans up after (a vault write into a directory being
/// removed fails, or leaves a file behind): the watcher first marks the interruption underway and
/// waits for the main thread to stop — at its next check of `isUnderway` or on its way out, where
/// `parkIfUnderway` holds it — and only then cleans up and exits. A main thread that does not stop
/// within a few seconds (inside one long step) is not waited for.
enum Interruption {
    private static let signals = [SIGINT, SIGTERM, SIGHUP, SIGQUIT]
    private static let underway = Atomic<Bool>(false)
    private static let mainStopped = DispatchSemaphore(value: 0)

    /// A signal has come: the work in progress should stop at its next safe point.
    static var isUnderway: Bool { underway.load(ordering: .acquiring) }

    /// On the main thread, where it stops touching what the clean-up removes: once an interruption
    /// is underway, it never returns (the watcher ends the process with its own report); else it
    /// returns at once.
    static func parkIfUnderway() {
        guard isUnderway else { return }
        mainStopped.signal()
        while true { pause() }
    }

    /// Lets `duration` pass in real time, as the person at a prompt lets its timeout pass
    /// (`--user-action timeout` without `--instant-timeout`, or a call that stays pending until its
    /// timeout): Ctrl-C, SIGTERM or a hang-up meanwhile ends the command as `canceled` — the wait
    /// comes before the ceremony writes anything, so the vault is as it was — not by the signal.
    static func outwait(_ duration: Duration) {
        catchingDuringWaits.withLock { caught in
            guard !caught else { return }
            caught = true
            onSignal(json: GlobalOptions.wantsJSON(Array(CommandLine.arguments.dropFirst())),
                     done: "the ceremony ended while it waited, before writing anything") {}
        }
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: duration)
        while clock.now < deadline {
            parkIfUnderway()
            let left = clock.now.duration(to: deadline)
            let (seconds, attoseconds) = min(left, .milliseconds(100)).components
            var pause = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
            nanosleep(&pause, nil)
        }
        parkIfUnderway()
    }

    /// Whether ``outwait(_:)`` caught the signals already (once a process).
    private static let catchingDuringWaits = Mutex(false)

    /// Holds the signals back (pending, on this thread) until `resumeSignals`: between making
    /// what the clean-up removes and catching the signals, one would end the process with it left.
    static func holdSignals() {
        var set = sigset_t()
        sigemptyset(&set)
        for number in signals { sigaddset(&set, number) }
        pthread_sigmask(SIG_BLOCK, &set, nil)
    }

    /// Delivers what `holdSignals` held back, to the handler `onSignal` installed.
    static func resumeSignals() {
        var set = sigset_t()
        sigemptyset(&set)
        for number in signals { sigaddset(&set, number) }
        pthread_sigmask(SIG_UNBLOCK, &set, nil)
    }

    /// Catches the signals for the rest of the process; `stop` (what the main thread waits on, such
    /// as a child process, told to end) and then `cleanUp` run on the watcher thread; the report
    /// ends with `done`, what the clean-up did.
    static func onSignal(json: Bool, done: String = "the scenario's temporary vault was removed",
                         stop: @escaping @Sendable () -> Void = {}, _ cleanUp: @escaping @Sendable () -> Void) {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { return }
        wakeFD = fds[1]
        let readFD = fds[0]
        Thread.detachNewThread {
            var signal: UInt8 = 0
            while read(readFD, &signal, 1) < 0 && errno == EINTR {}
            underway.store(true, ordering: .releasing)
            stop()
            _ = mainStopped.wait(timeout: .now() + .seconds(5))
            cleanUp()
            let error = CLIError(.canceled, "interrupted by signal \(signal); \(done)")
            _exit(ErrorReport.emit(error, json: json))
        }
        for number in signals {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { number in
                var byte = UInt8(truncatingIfNeeded: number)
                _ = write(wakeFD, &byte, 1)
            }
            sigemptyset(&action.sa_mask)
            action.sa_flags = SA_RESTART
            sigaction(number, &action, nil)
        }
    }
}
