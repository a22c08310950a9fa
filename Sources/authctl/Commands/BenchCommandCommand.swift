import Foundation
import Glibc
import Synchronization
import VirtualAuthenticator

/// `authctl bench command -- ARGS...`: `authctl ARGS` run as a process, timed from outside: wall
/// time from spawn to exit, CPU time and peak resident memory from `wait4`. The command is
/// started by this small process, not by a large one: Linux counts the memory of the process a
/// child was spawned from into the child's peak (the high-water mark of the address space it
/// executed from), so `bench vault`, which holds whole vaults of keys, times each command through
/// this one.
enum BenchCommandCommand {
    static let runs = OptionSpec.value("--runs", "N", "how many times to run it (1-1000, default 10)")

    struct Report: Encodable {
        let runs: Int
        let medianMs, p90Ms, cpuMs, maxRssMiB: Double
        let wallMs: [Double]
    }

    static let spec = CommandSpec(
        name: "command", abstract: "run an authctl command as a process and print its time and peak memory",
        discussion: "Runs this same binary with ARGS (after '--') --runs times, one after the other, with the environment as it is, "
            + "stdin and stdout /dev/null; prints the median and 90th-percentile wall time, the median CPU time and the largest "
            + "peak resident memory. A run that fails stops it (unknown, with the command's message).",
        options: [runs],
        arguments: [ArgumentSpec(name: "ARGS", help: "the command and its arguments, after '--'", variadic: true)],
        examples: ["AUTHCTL_PASSPHRASE=bench authctl bench command --runs 30 -- --vault /tmp/kept sign --origin https://target.example",
                   "authctl --json bench command --runs 5 -- list"],
        run: run)

    static func run(_ args: ParsedArguments) throws(CLIError) {
        let arguments = args.positionals
        guard !arguments.isEmpty else { throw CLIError(.usage, "authctl bench command needs the command to run, after '--'") }
        let count = try args.integer(runs, in: 1...1000) ?? 10
        let executable = try TimedProcess.ownExecutable()
        let base = ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        var template = Array((base + "/authctl-bench-XXXXXX").utf8CString)
        // Interrupted (Ctrl-C, SIGTERM, a hang-up), it stops the command it is running (which,
        // another bench command or a scenario, cleans up after itself) and leaves no scratch
        // directory behind: canceled, never a signal death with a command still running. A signal
        // that comes while the directory is being made waits until it is caught.
        Interruption.holdSignals()
        guard let made = mkdtemp(&template) else {
            Interruption.resumeSignals()
            throw CLIError(.ioError, "cannot make a directory in \(EchoedInput.path(base)): \(String(cString: strerror(errno)))")
        }
        let scratch = String(cString: made)
        defer { rmdir(scratch) }
        Interruption.onSignal(json: args.flag(GlobalOptions.json), done: "the command it ran was stopped",
                              stop: { TimedProcess.stopRunning() }) { TimedProcess.removeScratch(scratch) }
        Interruption.resumeSignals()
        defer { Interruption.parkIfUnderway() }
        let environment = TimedProcess.environment(keepingAuthctl: true)
        var samples = [TimedProcess.Sample]()
        for _ in 0..<count {
            Interruption.parkIfUnderway()
            samples.append(try TimedProcess.run(executable, arguments, environment: environment, scratch: scratch))
        }
        let walls = samples.map(\.wallMs)
        let report = Report(runs: count, medianMs: BenchVaultCommand.median(walls), p90Ms: BenchVaultCommand.percentile90(walls),
                            cpuMs: BenchVaultCommand.median(samples.map(\.cpuMs)), maxRssMiB: samples.map(\.maxRssMiB).max() ?? 0,
                            wallMs: walls)
        if args.flag(GlobalOptions.json) {
            try Output.data(JSONOutput.string(report))
            return
        }
        let f = BenchVaultCommand.format
        try Output.data("authctl \(arguments.joined(separator: " ")): \(count) run(s): median \(f(report.medianMs, 2)) ms, "
            + "p90 \(f(report.p90Ms, 2)) ms, CPU \(f(report.cpuMs, 2)) ms (median), max RSS \(f(report.maxRssMiB, 1)) MiB")
    }

    /// One run of `authctl ARGS` measured by a `bench command` child of this process (so that this
    /// process's own memory is not counted in the command's): its figures.
    static func timedFromOutside(_ executable: String, _ arguments: [String], environment: [String], scratch: String) throws(CLIError) -> TimedProcess.Sample {
        let reportFile = scratch + "/measured.json"
        defer { unlink(reportFile) }
        _ = try TimedProcess.run(executable, ["--json", "bench", "command", "--runs", "1", "--"] + arguments,
                                 environment: environment, scratch: scratch, stdout: reportFile)
        let bytes = TimedProcess.readAll(reportFile)
        guard let object = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any],
              let wall = object["medianMs"] as? Double, let cpu = object["cpuMs"] as? Double, let rss = object["maxRssMiB"] as? Double else {
            throw CLIError(.unknown, "authctl bench command printed no report: \(String(decoding: bytes.prefix(200), as: UTF8.self))")
        }
        return TimedProcess.Sample(wallMs: wall, cpuMs: cpu, maxRssMiB: rss)
    }
}

/// A command of this binary run as a child process and measured from the outside: wall time from
/// spawn to exit, CPU time and peak resident set from `wait4`'s resource usage.
enum TimedProcess {
    struct Sample {
        let wallMs, cpuMs, maxRssMiB: Double
    }

    /// The child being waited for (0: none); its pid stays its own until it is reaped, which
    /// happens only after this is cleared, so `stopRunning` never signals a stranger.
    private static let running = Atomic<Int32>(0)

    /// Tells the child being waited for, if any, to end (SIGTERM).
    static func stopRunning() {
        let pid = running.load(ordering: .acquiring)
        if pid > 0 { kill(pid, SIGTERM) }
    }

    /// Removes what `run` leaves in `scratch` while a child runs, and the directory.
    static func removeScratch(_ scratch: String) {
        unlink(scratch + "/stderr")
        unlink(scratch + "/measured.json")
        rmdir(scratch)
    }

    /// This binary's own path (`/proc/self/exe`), so the children are the same build.
    static func ownExecutable() throws(CLIError) -> String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard n > 0 else { throw CLIError(.ioError, "cannot find this program's own path: \(String(cString: strerror(errno)))") }
        return String(decoding: buffer.prefix(n).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// This process's environment; without authctl's own variables unless `keepingAuthctl`, so
    /// that no secret, vault or device of the caller reaches a child.
    static func environment(keepingAuthctl: Bool = false) -> [String] {
        var out = [String]()
        var entry = environ
        while let pointer = entry.pointee {
            let text = String(cString: pointer)
            if keepingAuthctl || !text.hasPrefix("AUTHCTL_") { out.append(text) }
            entry += 1
        }
        return out
    }

    static func write(_ bytes: [UInt8], to path: String) throws(CLIError) {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw CLIError(.ioError, "cannot write \(EchoedInput.path(path)): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        guard written == bytes.count else { throw CLIError(.ioError, "cannot write \(EchoedInput.path(path)): \(String(cString: strerror(errno)))") }
    }

    /// Runs `executable` with `arguments` (stdin /dev/null, stdout /dev/null or the file `stdout`,
    /// stderr kept in `scratch` for the message when it fails): a child that does not exit 0 is an
    /// error, never a figure.
    static func run(_ executable: String, _ arguments: [String], environment: [String], scratch: String,
                    stdout: String? = nil) throws(CLIError) -> Sample {
        let errorFile = scratch + "/stderr"
        defer { unlink(errorFile) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        if let stdout {
            posix_spawn_file_actions_addopen(&actions, 1, stdout, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        } else {
            posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        }
        posix_spawn_file_actions_addopen(&actions, 2, errorFile, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        // The child starts with default signal handling and nothing blocked, whatever this
        // process has set up.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t(), all = sigset_t()
        sigemptyset(&none)
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp: [UnsafeMutablePointer<CChar>?] = environment.map { strdup($0) } + [nil]
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp { free(pointer) }
        }
        let clock = ContinuousClock()
        let start = clock.now
        var pid = pid_t()
        let spawned = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
        guard spawned == 0 else { throw CLIError(.ioError, "cannot run \(executable): \(String(cString: strerror(spawned)))") }
        running.store(pid, ordering: .releasing)
        // Waited for without reaping, so that the pid cannot be reused while `running` names it.
        var info = siginfo_t()
        while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) < 0 && errno == EINTR {}
        running.store(0, ordering: .releasing)
        var status: Int32 = 0
        var usage = rusage()
        while wait4(pid, &status, 0, &usage) < 0 {
            guard errno == EINTR else { throw CLIError(.ioError, "cannot wait for \(executable): \(String(cString: strerror(errno)))") }
        }
        let wall = milliseconds(clock.now - start)
        Interruption.parkIfUnderway()  // a child stopped by an interruption is no figure and no failure
        let exited = status & 0x7f == 0
        let code = (status >> 8) & 0xff
        guard exited, code == 0 else {
            // The command's message, without the line end it printed it with.
            var said = String(decoding: readAll(errorFile), as: UTF8.self)
            while let last = said.last, last.isNewline { said.removeLast() }
            let how = exited ? "exit \(code)" : "signal \(status & 0x7f)"
            throw CLIError(.unknown, "authctl \(arguments.joined(separator: " ")) failed (\(how)): \(said)")
        }
        let cpu = Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1000 + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1000
        return Sample(wallMs: wall, cpuMs: cpu, maxRssMiB: Double(usage.ru_maxrss) / 1024)
    }

    static func readAll(_ path: String) -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return [] }
        defer { close(fd) }
        var out = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while out.count < 64 * 1024 {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n <= 0 { break }
            out += buffer.prefix(n)
        }
        return out
    }

    static func milliseconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) * 1000 + Double(attoseconds) / 1e15
    }
}
