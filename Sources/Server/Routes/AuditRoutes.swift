import Audit
import Foundation
import Session

/// `/audits`: `authctl audit` as a resource (docs/server.md, "Audits"). A `POST` starts one and
/// answers at once (`202`, `Location`); its status says how far it is, and its report once done;
/// `DELETE` stops a running one, or forgets one that ended.
extension AccountService {
    func addAuditRoutes(to router: inout Router<AccountService>) {
        router.add("POST", "/audits", body: Body.NewAudit.self) { s, _, body throws(Problem) in
            let (base, profile, options) = try Self.audit(body)
            let started: AuditJobs.Status?
            do throws(AuditError) { started = try s.audits.start(base: base, profile: profile, options: options) } catch {
                throw Problem(error.sessionError)
            }
            guard let started else {
                throw Problem(429, .usage, "\(AuditJobs.running) audits are running: wait for one to end (GET /audits), or stop one (DELETE /audits/{audit})")
            }
            var answer = HTTPResponse.encoded(202, started)
            answer.headers = [("Location", "/audits/\(started.id)")]
            return answer
        }
        router.add("GET", "/audits") { s, _ throws(Problem) in .encoded(200, ["audits": s.audits.all()]) }
        router.add("GET", "/audits/{audit}") { s, call throws(Problem) in .encoded(200, try s.audit(call)) }
        router.add("GET", "/audits/{audit}/junit") { s, call throws(Problem) in
            let status = try s.audit(call)
            guard let report = status.report else { throw Problem(409, .usage, "audit \(JSONText.shown(status.id)) is \(status.state.rawValue): its report comes when it is done") }
            return HTTPResponse(status: 200, contentType: .xml, body: Array(report.junitXML.utf8))
        }
        router.add("GET", "/audits/{audit}/html") { s, call throws(Problem) in
            let status = try s.audit(call)
            guard let report = status.report else { throw Problem(409, .usage, "audit \(JSONText.shown(status.id)) is \(status.state.rawValue): its report comes when it is done") }
            return HTTPResponse(status: 200, contentType: .html, body: Array(report.html.utf8))
        }
        router.add("DELETE", "/audits/{audit}") { s, call throws(Problem) in
            guard s.audits.delete(call.parameter("audit")) else { throw Self.noAudit(call) }
            return .noContent
        }
    }

    private func audit(_ call: Router<AccountService>.Call) throws(Problem) -> AuditJobs.Status {
        guard let status = audits.status(call.parameter("audit")) else { throw Self.noAudit(call) }
        return status
    }

    private static func noAudit(_ call: Router<AccountService>.Call) -> Problem {
        Problem.notFound("no audit \(JSONText.shown(call.parameter("audit"))) (GET /audits lists them)")
    }

    /// The audit a body asks for, as `authctl audit`'s options read it.
    private static func audit(_ body: Body.NewAudit) throws(Problem) -> (String, AuditProfile, AuditRunner.Options) {
        var profile: AuditProfile
        switch (body.preset, body.profile) {
        case (let preset?, nil): profile = preset.profile
        case (nil, let given?):
            do { profile = try JSONDecoder().decode(AuditProfile.self, from: Data(given.bytes)) } catch {
                throw Problem.input("profile is not a profile (docs/audit.md, \"A profile for your RP\"): \(JSONText.shown(String(describing: error)))")
            }
        default: throw Problem.input("an audit takes one of preset and profile")
        }
        if let origin = body.origin { profile.origin = origin }
        var options = AuditRunner.Options()
        options.only = Set(body.only ?? [])
        options.skip = Set(body.skip ?? [])
        if let rate = body.rate { options.rate = rate.perSecond }
        return (body.url, profile, options)
    }
}
