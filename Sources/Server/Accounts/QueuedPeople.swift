import Session

/// What the person at each device will do at the next prompts, queued by a test: the ceremonies
/// a page starts (through the page bridge or the browser extension, docs/browser.md) carry no
/// person of their own, so the test says beforehand — "a wrong PIN, then the right one", "cancel
/// the sheet". A ceremony whose body names no person takes the next one queued for its device;
/// with none queued the person approves with the PIN the server knows. Touched only under the
/// account's lock (`HostedAccount.serve`).
final class QueuedPeople: @unchecked Sendable {
    /// At most this many wait per device: a test that queues more has lost count.
    static let limit = 64
    private var queues = [String: [PersonRequest]]()

    /// Queues `person` for `device`'s next ceremony; how many now wait.
    func add(_ person: PersonRequest, device: String) throws(Problem) -> Int {
        guard queues[device, default: []].count < Self.limit else {
            throw Problem.input("\(Self.limit) people wait for device \(JSONText.shown(device)) already")
        }
        queues[device, default: []].append(person)
        return queues[device]!.count
    }

    /// The next person queued for `device`, taken from the queue.
    func next(device: String) -> PersonRequest? {
        guard var queue = queues[device], !queue.isEmpty else { return nil }
        let person = queue.removeFirst()
        queues[device] = queue.isEmpty ? nil : queue
        return person
    }

    /// The next person queued for `device`, left in the queue.
    func peek(device: String) -> PersonRequest? { queues[device]?.first }

    func waiting(device: String) -> [PersonRequest] { queues[device] ?? [] }

    func clear(device: String) { queues[device] = nil }
}
