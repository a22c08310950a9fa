import Foundation
import Glibc

/// The write end of the pipe a signal handler wakes the watcher through (-1: not installed).
nonisolated(unsafe) private var wakeFD: Int32 = -1

/// Ctrl-C, SIGTERM or a hang-up during a long command that holds something to clean up (a
/// scenario's temporary vault): the signal is caught — its handler only writes a byte to a pipe,
/// which is async-signal-safe — and a watcher thread cleans up, says so, and ends the process as
/// `canceled`, instead of the process dying with the mess left behind.
enum Interruption {
    private static let signals = [SIGINT, SIGTERM, SIGHUP, SIGQUIT]

    /// Catches the signals for the rest of the process; `cleanUp` runs on the watcher thread.
    static func onSignal(json: Bool, _ cleanUp: @escaping @Sendable () -> Void) {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { return }
        wakeFD = fds[1]
        let readFD = fds[0]
        Thread.detachNewThread {
            var signal: UInt8 = 0
            while read(readFD, &signal, 1) < 0 && errno == EINTR {}
            cleanUp()
            let error = CLIError(.canceled, "interrupted by signal \(signal); the scenario's temporary vault was removed")
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
