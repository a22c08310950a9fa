import Curl
import Session

extension AuditRunner {
    /// The baseline, then every selected case — stopped at once when ``Options/isCanceled`` says
    /// so (`authctl audit` interrupted, `DELETE /audits/{audit}`, a server that stops): the request under way ends
    /// within about a second and none is sent after it, rather than the case under way going on
    /// to its end — up to nine requests, each waiting up to ``RPSession/timeoutSeconds`` for an
    /// RP that answers slowly (docs/server.md, "Audits"). Stopped during the baseline, it is
    /// `canceled` too, not an RP that failed it.
    package func run() throws(AuditError) -> AuditReport {
        let outcome = HTTPClient.$isCanceled.withValue(options.isCanceled) { () -> Result<AuditReport, AuditError> in
            do throws(AuditError) { return .success(try runBattery()) } catch { return .failure(error) }
        }
        switch outcome {
        case .success(let report): return report
        case .failure(let error) where error.name != .canceled && options.isCanceled():
            throw AuditError(.canceled, "the audit was stopped before its baseline ended")
        case .failure(let error): throw error
        }
    }
}
