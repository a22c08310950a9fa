/// What an audit found (docs/audit.md, "Reading the report"): each case's verdict, with one line
/// of evidence, and for each finding the requests and answers that show it.
package struct AuditReport: Encodable, Sendable {
    package enum Verdict: String, Encodable, Sendable {
        /// The RP refused it (a 4xx, or a 2xx that is not its yes), and the probe after found
        /// nothing of it kept.
        case rejected
        /// A finding: the RP said yes, or a probe found what it refused kept.
        case accepted = "ACCEPTED"
        /// A finding of its own: the RP answered with a 5xx, or not at all.
        case serverError = "server error"
        /// Not judged, with the reason (the RP does not ask for what the case needs).
        case inconclusive
        /// A valid response the RP must take (`AuditCase.mustTake`), taken.
        case taken
        /// A finding of a case whose response is valid: the RP refused it (docs/audit.md, "The
        /// cases": an interoperability finding, failed on by `--fail-on any`).
        case refused = "REFUSED"
    }

    package struct Result: Encodable, Sendable {
        package let id: String
        package let family: AuditCase.Family
        package let spec: String
        package let check: String
        package let reference: String
        package let verdict: Verdict
        package let evidence: String
        /// A finding's requests and answers (`nil`, and absent from the JSON, for the others).
        let exchanges: [RPSession.Exchange]?
    }

    /// The RP's base URL and the origin its responses claim.
    package let target: String
    package let origin: String
    package let results: [Result]

    package var findings: [Result] { results.filter { [.accepted, .serverError, .refused].contains($0.verdict) } }

    /// How many cases came to each verdict.
    package let counts: [String: Int]

    package init(target: String, origin: String, results: [Result]) {
        (self.target, self.origin, self.results) = (target, origin, results)
        counts = Dictionary(grouping: results, by: \.verdict.rawValue).mapValues(\.count)
    }
}

extension AuditReport {
    /// The report as JUnit XML, for CI: one test case per case (its family the class), a finding
    /// a `failure` (ACCEPTED) or an `error` (server error), an inconclusive case `skipped`.
    package var junitXML: String {
        func escaped(_ text: String) -> String {
            var out = ""
            for scalar in text.unicodeScalars {
                switch scalar {
                case "&": out += "&amp;"
                case "<": out += "&lt;"
                case ">": out += "&gt;"
                case "\"": out += "&quot;"
                case "\n", "\t": out += "&#\(scalar.value);"
                // XML 1.0 has no other control characters, escaped or not.
                case _ where scalar.value < 0x20 || (0xFFFE...0xFFFF).contains(scalar.value): out += "?"
                default: out.unicodeScalars.append(scalar)
                }
            }
            return out
        }
        let failures = results.filter { $0.verdict == .accepted || $0.verdict == .refused }.count
        let errors = results.filter { $0.verdict == .serverError }.count
        let skipped = results.filter { $0.verdict == .inconclusive }.count
        var lines = ["<?xml version=\"1.0\" encoding=\"UTF-8\"?>",
                     "<testsuite name=\"authctl audit \(escaped(target))\" tests=\"\(results.count)\" failures=\"\(failures)\" errors=\"\(errors)\" skipped=\"\(skipped)\">"]
        for r in results {
            let head = "  <testcase classname=\"\(escaped(r.family.rawValue))\" name=\"\(escaped(r.id))\""
            let what = "\(r.spec): \(r.check) — \(r.evidence)"
            switch r.verdict {
            case .rejected, .taken: lines.append(head + "/>")
            case .accepted, .refused:
                lines += [head + ">", "    <failure message=\"\(escaped(what))\" type=\"\(r.verdict.rawValue)\">\(escaped(r.reference))</failure>", "  </testcase>"]
            case .serverError: lines += [head + ">", "    <error message=\"\(escaped(what))\" type=\"server error\"/>", "  </testcase>"]
            case .inconclusive: lines += [head + ">", "    <skipped message=\"\(escaped(r.evidence))\"/>", "  </testcase>"]
            }
        }
        lines.append("</testsuite>")
        return lines.joined(separator: "\n") + "\n"
    }
}
