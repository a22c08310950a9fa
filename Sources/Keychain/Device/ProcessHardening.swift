import CProcess
import Glibc

/// What a process that holds keys does before it holds one, as ssh-agent and gpg-agent do: no core
/// dump (a crash would otherwise write unwrapped keys to disk) and not dumpable (no ptrace attach
/// or /proc/PID/mem reading by the same user's other processes).
package enum ProcessHardening {
    /// Applies both; returns what could not be done, for the caller to report.
    @discardableResult
    package static func apply() -> [String] {
        var failures = [String]()
        var none = rlimit(rlim_cur: 0, rlim_max: 0)
        if setrlimit(__rlimit_resource_t(RLIMIT_CORE.rawValue), &none) != 0 {
            failures.append("cannot disable core dumps: \(String(cString: strerror(errno)))")
        }
        if authctl_set_not_dumpable() != 0 {
            failures.append("cannot mark the process not dumpable: \(String(cString: strerror(errno)))")
        }
        return failures
    }
}
