import Dispatch
import Foundation
import Session
import Synchronization

/// Audits run side by side, each on a thread of its own — what `authctl serve` runs for
/// `/audits` (docs/server.md) — their progress and then their reports kept until deleted. At most
/// ``running`` run at once, and ``kept`` are kept (the oldest finished go first).
package final class AuditJobs: Sendable {
    package enum State: String, Encodable, Sendable {
        case running, done, failed, canceled
    }

    /// What `GET /audits/{audit}` answers.
    package struct Status: Encodable, Sendable {
        package let id: String
        package let state: State
        package let target: String
        /// Cases ended, of how many.
        package let done: Int
        package let total: Int
        /// The report, once done.
        package let report: AuditReport?
        /// Why it failed or stopped (the error table's name, and what happened).
        package let error: Failure?
    }

    package struct Failure: Encodable, Sendable {
        package let name: String
        package let detail: String
    }

    private struct Job {
        var status: Status
        let order: Int
        var cancel = false
        /// The runner's throw-away vault, while it runs.
        var workspace: String?
    }

    package static let running = 4
    package static let kept = 64

    package init() {}

    private let jobs = Mutex([String: Job]())
    private let counter = Atomic(0)
    /// Audits whose thread has not ended: the server waits for them before it exits (a thread at
    /// work in libcurl or OpenSSL while the process tears them down crashes it).
    private let live = Atomic(0)

    /// Starts an audit of `base`; its first status. Refused (`nil`) past ``running``.
    package func start(base: String, profile: AuditProfile, options: AuditRunner.Options) throws(AuditError) -> Status? {
        var options = options
        let total = try AuditRunner.selected(options).count
        let n = counter.add(1, ordering: .relaxed).newValue
        let id = "audit-\(n)"
        let first = Status(id: id, state: .running, target: base, done: 0, total: total, report: nil, error: nil)
        let admitted = jobs.withLock { all -> Bool in
            guard all.values.filter({ $0.status.state == .running }).count < Self.running else { return false }
            all[id] = Job(status: first, order: n)
            Self.trim(&all)
            return true
        }
        guard admitted else { return nil }
        options.progress = { [weak self] _, done, total in self?.update(id) { $0.status = $0.status.with(done: done, total: total) } }
        options.isCanceled = { [weak self] in self?.jobs.withLock { $0[id]?.cancel ?? true } ?? true }
        let runner: AuditRunner
        do { runner = try AuditRunner(base: base, profile: profile, options: options) } catch {
            jobs.withLock { _ = $0.removeValue(forKey: id) }
            throw error
        }
        update(id) { $0.workspace = runner.workspace }
        let handoff = Handoff(runner)
        live.add(1, ordering: .sequentiallyConsistent)
        let thread = Thread { [weak self] in
            let ended: Status
            do throws(AuditError) {
                let report = try handoff.runner!.run()
                ended = Status(id: id, state: .done, target: base, done: report.results.count, total: total, report: report, error: nil)
            } catch {
                let state: State = error.name == .canceled ? .canceled : .failed
                ended = Status(id: id, state: state, target: base, done: 0, total: total, report: nil,
                               error: Failure(name: error.name.rawValue, detail: error.message))
            }
            handoff.runner = nil  // its vault goes now, before the status says it ended
            self?.update(id) { job in
                job.workspace = nil
                job.status = Status(id: id, state: ended.state, target: base, done: ended.state == .done ? ended.done : job.status.done,
                                    total: total, report: ended.report, error: ended.error)
            }
            self?.live.subtract(1, ordering: .sequentiallyConsistent)
        }
        thread.name = id
        thread.start()
        return first
    }

    package func status(_ id: String) -> Status? { jobs.withLock { $0[id]?.status } }

    /// Every audit's status, oldest first, without their reports.
    package func all() -> [Status] {
        jobs.withLock { all in
            all.values.sorted { $0.order < $1.order }.map { $0.status.with(report: nil) }
        }
    }

    /// Stops a running audit — the request under way ends within about a second, and none is sent
    /// after it (its status then says `canceled`) — or forgets one that has ended. `false` for an
    /// id there is not.
    package func delete(_ id: String) -> Bool {
        jobs.withLock { all in
            guard let job = all[id] else { return false }
            if job.status.state == .running { all[id]!.cancel = true } else { all[id] = nil }
            return true
        }
    }

    /// The server stops: every running audit is stopped, as ``delete(_:)`` stops one.
    package func cancelAll() {
        jobs.withLock { all in for id in all.keys where all[id]!.status.state == .running { all[id]!.cancel = true } }
    }

    /// The server ends: every running audit is stopped — the request under way too — and waited
    /// for, at most `seconds`; the throw-away vaults of any still running go (the process ends
    /// before their runners do).
    package func end(waitingAtMost seconds: Double) {
        cancelAll()
        let deadline = Date(timeIntervalSinceNow: seconds)
        while live.load(ordering: .sequentiallyConsistent) > 0 && Date() < deadline { usleep(10_000) }
        let left = jobs.withLock { all in all.values.compactMap(\.workspace) }
        for workspace in left { try? FileManager.default.removeItem(atPath: workspace) }
    }

    private func update(_ id: String, _ change: (inout Job) -> Void) {
        jobs.withLock { all in if all[id] != nil { change(&all[id]!) } }
    }

    /// Past ``kept``, the oldest that have ended go.
    private static func trim(_ all: inout [String: Job]) {
        let ended = all.filter { $0.value.status.state != .running }.sorted { $0.value.order < $1.value.order }
        for (id, _) in ended.prefix(max(0, all.count - kept)) { all[id] = nil }
    }
}

extension AuditJobs.Status {
    func with(done: Int, total: Int) -> Self {
        Self(id: id, state: state, target: target, done: done, total: total, report: report, error: error)
    }

    func with(report: AuditReport?) -> Self {
        Self(id: id, state: state, target: target, done: done, total: total, report: report, error: error)
    }
}

/// A runner made on the request's thread (so that a bad URL or origin is the request's answer) and
/// run on the audit's own: from then on only that thread touches it, and lets it go when it ends.
private final class Handoff: @unchecked Sendable {
    var runner: AuditRunner?
    init(_ runner: AuditRunner) { self.runner = runner }
}
