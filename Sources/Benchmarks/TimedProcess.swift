import Glibc
import Session
import Synchronization
import VirtualAuthenticator

/// A command of this binary run as a child process and measured from the outside: wall time from
/// spawn to exit, CPU time and peak resident set from `wait4`'s resource usage.
package enum TimedProcess {
    package struct Sample {
        package let wallMs, cpuMs, maxRssMiB: Double
    }

    /// The child being waited for (0: none); its pid stays its own until it is reaped, which
    /// happens only after this is cleared, so `stopRunning` never signals a stranger.
    private static let running = Atomic<Int32>(0)

    /// Tells the child being waited for, if any, to end (SIGTERM).
    package static func stopRunning() {
        let pid = running.load(ordering: .acquiring)
        if pid > 0 { kill(pid, SIGTERM) }
    }

    /// Removes what `run` leaves in `scratch` while a child runs, and the directory.
    package static func removeScratch(_ scratch: String) {
        unlink(scratch + "/stderr")
        unlink(scratch + "/measured.json")
        rmdir(scratch)
    }

    /// This binary's own path (`/proc/self/exe`), so the children are the same build.
    package static func ownExecutable() throws(SessionError) -> String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard n > 0 else { throw SessionError(.ioError, "cannot find this program's own path: \(String(cString: strerror(errno)))") }
        return String(decoding: buffer.prefix(n).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// This process's environment; without authctl's own variables unless `keepingAuthctl`, so
    /// that no secret, vault or device of the caller reaches a child.
    package static func environment(keepingAuthctl: Bool = false) -> [String] {
        var out = [String]()
        var entry = environ
        while let pointer = entry.pointee {
            let text = String(cString: pointer)
            if keepingAuthctl || !text.hasPrefix("AUTHCTL_") { out.append(text) }
            entry += 1
        }
        return out
    }

    package static func write(_ bytes: [UInt8], to path: String) throws(SessionError) {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw SessionError(.ioError, "cannot write \(EchoedInput.path(path)): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        guard written == bytes.count else { throw SessionError(.ioError, "cannot write \(EchoedInput.path(path)): \(String(cString: strerror(errno)))") }
    }

    /// Runs `executable` with `arguments` (stdin /dev/null, stdout /dev/null or the file `stdout`,
    /// stderr kept in `scratch` for the message when it fails): a child that does not exit 0 is an
    /// error, never a figure.
    package static func run(_ executable: String, _ arguments: [String], environment: [String], scratch: String,
                            stdout: String? = nil, safePoints: SafePoints) throws(SessionError) -> Sample {
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
        guard spawned == 0 else { throw SessionError(.ioError, "cannot run \(executable): \(String(cString: strerror(spawned)))") }
        running.store(pid, ordering: .releasing)
        // Waited for without reaping, so that the pid cannot be reused while `running` names it.
        var info = siginfo_t()
        while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) < 0 && errno == EINTR {}
        running.store(0, ordering: .releasing)
        var status: Int32 = 0
        var usage = rusage()
        while wait4(pid, &status, 0, &usage) < 0 {
            guard errno == EINTR else { throw SessionError(.ioError, "cannot wait for \(executable): \(String(cString: strerror(errno)))") }
        }
        let wall = milliseconds(clock.now - start)
        safePoints.checkpoint()  // a child stopped by an interruption is no figure and no failure
        let exited = status & 0x7f == 0
        let code = (status >> 8) & 0xff
        guard exited, code == 0 else {
            // The command's message, without the line end it printed it with.
            var said = String(decoding: readAll(errorFile), as: UTF8.self)
            while let last = said.last, last.isNewline { said.removeLast() }
            let how = exited ? "exit \(code)" : "signal \(status & 0x7f)"
            throw SessionError(.unknown, "authctl \(arguments.joined(separator: " ")) failed (\(how)): \(said)")
        }
        let cpu = Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1000 + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1000
        return Sample(wallMs: wall, cpuMs: cpu, maxRssMiB: Double(usage.ru_maxrss) / 1024)
    }

    package static func readAll(_ path: String) -> [UInt8] {
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

    package static func milliseconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) * 1000 + Double(attoseconds) / 1e15
    }
}
