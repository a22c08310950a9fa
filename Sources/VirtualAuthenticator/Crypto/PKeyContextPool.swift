import COpenSSL
import Synchronization

/// Prepared OpenSSL `EVP_PKEY_CTX`s for one operation (signing with one key, generating keys of
/// one type), lent out one per call. Preparing a context — looking the algorithm up in the
/// provider, binding the key, setting the digest — costs OpenSSL a lock, hash-table look-ups and
/// string compares each time: a tenth of an ECDSA signature, half a P-256 key generation. A pool
/// pays it once per concurrent caller.
///
/// A context is not safe to share between threads; a lent one belongs to its borrower alone, so
/// the pool is `Sendable`. A context whose call failed is freed rather than lent again.
final class PKeyContextPool: Sendable {
    /// One context, handed between threads only through the pool's lock.
    private struct Context: @unchecked Sendable {
        let pointer: OpaquePointer
    }

    /// Idle contexts kept at most; more concurrent callers prepare and free their own.
    private static let capacity = 16
    private let idle = Mutex<[Context]>([])

    init() {}

    deinit {
        idle.withLock { contexts in
            for context in contexts { EVP_PKEY_CTX_free(context.pointer) }
        }
    }

    /// Calls `body` with an idle context, or one made by `prepare` when none is idle, and takes
    /// it back afterwards unless `body` threw.
    func withContext<R>(prepare: () throws(OpenSSLFailure) -> OpaquePointer,
                        _ body: (OpaquePointer) throws(OpenSSLFailure) -> R) throws(OpenSSLFailure) -> R {
        let pointer: OpaquePointer
        if let lent = idle.withLock({ $0.popLast() }) { pointer = lent.pointer } else { pointer = try prepare() }
        let result: R
        do {
            result = try body(pointer)
        } catch {
            EVP_PKEY_CTX_free(pointer)
            throw error
        }
        let context = Context(pointer: pointer)
        let kept = idle.withLock { contexts in
            guard contexts.count < Self.capacity else { return false }
            contexts.append(context)
            return true
        }
        if !kept { EVP_PKEY_CTX_free(pointer) }
        return result
    }
}
