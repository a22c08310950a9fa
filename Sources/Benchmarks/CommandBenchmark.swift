import Foundation
import Glibc
import Session
import VirtualAuthenticator

/// `authctl bench command -- ARGS...`: `authctl ARGS` run as a process, timed from outside: wall
/// time from spawn to exit, CPU time and peak resident memory from `wait4`. The command is
/// started by this small process, not by a large one: Linux counts the memory of the process a
/// child was spawned from into the child's peak (the high-water mark of the address space it
/// executed from), so `bench vault`, which holds whole vaults of keys, times each command through
/// this one.
package enum CommandBenchmark {
    package struct Report: Encodable {
        let runs: Int
        let medianMs, p90Ms, cpuMs, maxRssMiB: Double
        let wallMs: [Double]
    }

    /// A new directory for what a run leaves while its child runs (its stderr), under `$TMPDIR`.
    package static func makeScratch() throws(SessionError) -> String {
        let base = ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        var template = Array((base + "/authctl-bench-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else {
            throw SessionError(.ioError, "cannot make a directory in \(EchoedInput.path(base)): \(String(cString: strerror(errno)))")
        }
        return String(cString: made)
    }

    /// `executable ARGUMENTS` (this binary, `TimedProcess.ownExecutable`) run `runs` times, one
    /// after the other, with the environment as it is.
    package static func run(_ executable: String, _ arguments: [String], runs count: Int, scratch: String,
                            safePoints: SafePoints) throws(SessionError) -> Report {
        let environment = TimedProcess.environment(keepingAuthctl: true)
        var samples = [TimedProcess.Sample]()
        for _ in 0..<count {
            safePoints.checkpoint()
            samples.append(try TimedProcess.run(executable, arguments, environment: environment, scratch: scratch, safePoints: safePoints))
        }
        let walls = samples.map(\.wallMs)
        return Report(runs: count, medianMs: VaultBenchmark.median(walls), p90Ms: VaultBenchmark.percentile90(walls),
                      cpuMs: VaultBenchmark.median(samples.map(\.cpuMs)), maxRssMiB: samples.map(\.maxRssMiB).max() ?? 0,
                      wallMs: walls)
    }

    /// The report for people, one line.
    package static func text(_ report: Report, arguments: [String]) -> String {
        let f = VaultBenchmark.format
        return "authctl \(arguments.joined(separator: " ")): \(report.runs) run(s): median \(f(report.medianMs, 2)) ms, "
            + "p90 \(f(report.p90Ms, 2)) ms, CPU \(f(report.cpuMs, 2)) ms (median), max RSS \(f(report.maxRssMiB, 1)) MiB"
    }

    /// One run of `authctl ARGS` measured by a `bench command` child of this process (so that this
    /// process's own memory is not counted in the command's): its figures.
    static func timedFromOutside(_ executable: String, _ arguments: [String], environment: [String], scratch: String,
                                 safePoints: SafePoints) throws(SessionError) -> TimedProcess.Sample {
        let reportFile = scratch + "/measured.json"
        defer { unlink(reportFile) }
        _ = try TimedProcess.run(executable, ["--json", "bench", "command", "--runs", "1", "--"] + arguments,
                                 environment: environment, scratch: scratch, stdout: reportFile, safePoints: safePoints)
        let bytes = TimedProcess.readAll(reportFile)
        guard let object = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any],
              let wall = object["medianMs"] as? Double, let cpu = object["cpuMs"] as? Double, let rss = object["maxRssMiB"] as? Double else {
            throw SessionError(.unknown, "authctl bench command printed no report: \(String(decoding: bytes.prefix(200), as: UTF8.self))")
        }
        return TimedProcess.Sample(wallMs: wall, cpuMs: cpu, maxRssMiB: rss)
    }
}
