/// The report as one self-contained HTML page (`authctl audit --html FILE`, `GET /audits/{audit}/html`):
/// the counts, every case in a table, and for each finding the requests and answers that show it.
/// No script, no outside resource (its Content-Security-Policy allows neither); everything the
/// RP sent is shown as text, escaped, never as markup.
extension AuditReport {
    package var html: String {
        func text(_ value: String) -> String {
            var out = ""
            out.reserveCapacity(value.utf8.count)
            for scalar in value.unicodeScalars {
                switch scalar {
                case "&": out += "&amp;"
                case "<": out += "&lt;"
                case ">": out += "&gt;"
                case "\"": out += "&quot;"
                case "'": out += "&#39;"
                case "\n", "\t": out.unicodeScalars.append(scalar)
                // Control characters (and HTML's noncharacters) are shown, not sent raw.
                case _ where scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || (0xFDD0...0xFDEF).contains(scalar.value)
                    || scalar.value & 0xFFFE == 0xFFFE:
                    out += "\u{FFFD}"
                default: out.unicodeScalars.append(scalar)
                }
            }
            return out
        }
        let order: [Verdict] = [.accepted, .serverError, .refused, .inconclusive, .rejected, .taken]
        let summary = order.compactMap { v in counts[v.rawValue].map { "<span class=\"v \(v.cssClass)\">\($0) \(text(v.rawValue))</span>" } }
        var page = """
        <!DOCTYPE html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
        <title>authctl audit of \(text(target))</title>
        <style>
        body { font: 14px/1.4 system-ui, sans-serif; margin: 2em; color: #222; }
        table { border-collapse: collapse; width: 100%; }
        th, td { border-bottom: 1px solid #ddd; padding: 4px 8px; text-align: left; vertical-align: top; }
        .v { font-weight: bold; padding: 1px 6px; border-radius: 3px; white-space: nowrap; }
        .accepted { background: #fdd; color: #900; } .server-error { background: #fec; color: #850; }
        .refused { background: #fec; color: #850; } .inconclusive { background: #eee; color: #555; }
        .rejected, .taken { background: #dfd; color: #060; }
        pre { background: #f6f6f6; padding: 6px; white-space: pre-wrap; word-break: break-all; max-height: 30em; overflow: auto; }
        </style>
        </head>
        <body>
        <h1>authctl audit of \(text(target))</h1>
        <p>Origin claimed: \(text(origin)). \(results.count) cases: \(summary.joined(separator: " "))</p>
        <table>
        <thead><tr><th>case</th><th>family</th><th>verdict</th><th>spec</th><th>the RP checks</th><th>evidence</th></tr></thead>
        <tbody>

        """
        for r in results {
            let name = r.exchanges == nil ? text(r.id) : "<a href=\"#\(text(r.id))\">\(text(r.id))</a>"
            page += "<tr><td>\(name)</td><td>\(text(r.family.rawValue))</td><td><span class=\"v \(r.verdict.cssClass)\">\(text(r.verdict.rawValue))</span></td>"
                + "<td>\(text(r.spec))</td><td>\(text(r.check))</td><td>\(text(r.evidence))</td></tr>\n"
        }
        page += "</tbody>\n</table>\n"
        let shown = results.filter { $0.exchanges != nil }
        if !shown.isEmpty { page += "<h2>Findings</h2>\n" }
        for r in shown {
            page += "<section id=\"\(text(r.id))\">\n<h3>\(text(r.id)): <span class=\"v \(r.verdict.cssClass)\">\(text(r.verdict.rawValue))</span></h3>\n"
                + "<p>\(text(r.spec)) — \(text(r.check)). \(text(r.evidence))</p>\n<p>Seen in real RPs: \(text(r.reference))</p>\n"
            for (i, e) in (r.exchanges ?? []).enumerated() {
                page += "<h4>\(i + 1). \(text(e.method)) \(text(e.path)) → \(e.status)</h4>\n"
                if let body = e.body { page += "<pre>\(text(body))</pre>\n" }
                page += "<pre>\(text(e.answer))</pre>\n"
            }
            page += "</section>\n"
        }
        return page + "</body>\n</html>\n"
    }
}

extension AuditReport.Verdict {
    var cssClass: String {
        switch self {
        case .accepted: "accepted"
        case .serverError: "server-error"
        case .inconclusive: "inconclusive"
        case .rejected: "rejected"
        case .taken: "taken"
        case .refused: "refused"
        }
    }
}
