import Curl
import Session

extension AuditRunner {
    /// ``run()``, stopped at once when ``Options/isCanceled`` says so: the request under way ends
    /// within about a second and none is sent after it, rather than the case under way going on
    /// to its end — up to nine requests, each waiting up to ``RPSession/timeoutSeconds`` for an
    /// RP that answers slowly (docs/server.md, "Audits"). Stopped during the baseline, it is
    /// `canceled` too, not an RP that failed it.
    package func runStoppable() throws(AuditError) -> AuditReport {
        let outcome = HTTPClient.$isCanceled.withValue(options.isCanceled) { () -> Result<AuditReport, AuditError> in
            do throws(AuditError) { return .success(try run()) } catch { return .failure(error) }
        }
        switch outcome {
        case .success(let report): return report
        case .failure(let error) where error.name != .canceled && options.isCanceled():
            throw AuditError(.canceled, "the audit was stopped before its baseline ended")
        case .failure(let error): throw error
        }
    }
}
