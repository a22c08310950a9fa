import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// An answer of the bank that is not 2xx: its status and body (`{"error", "code"?}`).
struct BankRefusal: Error, Sendable, CustomStringConvertible {
    let status: Int
    let body: String
    var description: String { "\(status) \(body)" }
}

/// An answer of the bank the app cannot read (not the JSON it expects).
struct UnreadableAnswer: Error, Sendable, CustomStringConvertible {
    let what: String
    var description: String { what }
}

/// The bank's JSON endpoints (docs/examples/rp_server.py) over one URLSession, whose cookie store
/// carries the bank's session cookie from one call to the next.
@MainActor
final class BankAPI {
    let base: URL
    private let session: URLSession

    init(base: URL) {
        self.base = base
        // Ephemeral: the session cookie lives in memory for this run, nothing is written to disk.
        session = URLSession(configuration: .ephemeral)
    }

    /// POSTs `body` as JSON to `path`; the answer's bytes when it is 2xx, else a `BankRefusal`.
    func post(_ path: String, _ body: some Encodable & Sendable) async throws -> Data {
        var request = URLRequest(url: base.appendingPathComponent(path))
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = try JSONEncoder().encode(body)
        return try await send(request)
    }

    func post(_ path: String) async throws -> Data {
        try await post(path, [String: String]())
    }

    /// GETs `path`; the answer's bytes when it is 2xx, else a `BankRefusal`.
    func get(_ path: String) async throws -> Data {
        try await send(URLRequest(url: base.appendingPathComponent(path)))
    }

    private func send(_ request: URLRequest) async throws -> Data {
        let (data, response) = try await session.data(for: request)
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        guard (200..<300).contains(status) else {
            throw BankRefusal(status: status, body: String(decoding: data, as: UTF8.self))
        }
        return data
    }
}
