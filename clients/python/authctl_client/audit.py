"""``authctl audit`` through the server (``POST /audits``): an RP's own endpoints driven with
every forged, replayed or downgraded response of the battery (docs/audit.md)."""
from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Dict, Iterable, List, Mapping, Optional

from . import _convert
from ._http import path

if TYPE_CHECKING:
    from .server import Server

FINDINGS = ("ACCEPTED", "server error", "REFUSED")


class AuditFailed(Exception):
    """An audit that ended without a report: the RP could not be audited (``rpUnusable``: its
    baseline failed, it answered too slowly, too much, or not as the profile says) or it was
    stopped (``canceled``). `name` is the error table's row, `detail` what happened."""

    def __init__(self, audit_id: str, name: str, detail: str):
        self.audit_id = audit_id
        self.name = name
        self.detail = detail
        super().__init__(f"audit {audit_id}: {name}: {detail}")


class AuditFindings(AssertionError):
    """What :meth:`AuditReport.assert_no_findings` raises: the cases the RP wrongly accepted,
    answered with a server error, or (a valid response) refused, each with its evidence."""

    def __init__(self, report: "AuditReport", findings: List[Dict[str, Any]]):
        self.report = report
        self.findings = findings
        lines = [f"{len(findings)} finding{'s' if len(findings) != 1 else ''} against {report.target}:"]
        lines += [f"  {f['id']}: {f['verdict']} ({f['spec']}) — {f['evidence']}" for f in findings]
        super().__init__("\n".join(lines))


class AuditReport:
    """A finished audit's report: `results` (each case's ``id``, ``family``, ``spec``, ``check``,
    ``reference``, ``verdict``, ``evidence``, and for a finding its ``exchanges``), `counts`,
    and the raw JSON as `json`."""

    def __init__(self, report: Mapping[str, Any]):
        self.json: Dict[str, Any] = dict(report)
        self.target: str = report["target"]
        self.origin: str = report["origin"]
        self.results: List[Dict[str, Any]] = list(report["results"])
        self.counts: Dict[str, int] = dict(report["counts"])

    @property
    def verdicts(self) -> Dict[str, str]:
        """``{case: verdict}``."""
        return {r["id"]: r["verdict"] for r in self.results}

    @property
    def findings(self) -> List[Dict[str, Any]]:
        """The findings: cases ACCEPTED, answered with a server error, or REFUSED (a valid response
        the RP must take, refused)."""
        return [r for r in self.results if r["verdict"] in FINDINGS]

    def assert_no_findings(self, fail_on: str = "any") -> None:
        """Raises :class:`AuditFindings` when a case was ACCEPTED (``fail_on="accepted"``), a
        server error (``"server-error"``), or any finding, REFUSED too (``"any"``, the default) —
        as ``authctl audit --fail-on`` says."""
        wanted = {"accepted": ("ACCEPTED",), "server-error": ("server error",), "any": FINDINGS}[fail_on]
        found = [r for r in self.results if r["verdict"] in wanted]
        if found:
            raise AuditFindings(self, found)

    def __repr__(self) -> str:
        return f"<AuditReport {self.target} {self.counts}>"


class Audit:
    """One audit the server runs (``/audits/{id}``)."""

    def __init__(self, server: "Server", status: Mapping[str, Any]):
        self.server = server
        self.id: str = status["id"]
        self.last: Dict[str, Any] = dict(status)

    def status(self) -> Dict[str, Any]:
        """``{"id", "state": running|done|failed|canceled, "target", "done", "total", "report"?, "error"?}``."""
        self.last = self.server.transport.request("GET", path("audits", self.id))
        return self.last

    def wait(self, timeout: float = 600.0, poll: float = 0.1) -> AuditReport:
        """Waits for the audit to end: its report, or :class:`AuditFailed`; ``TimeoutError``
        after `timeout` seconds (the audit goes on: :meth:`cancel` stops it)."""
        deadline = time.monotonic() + timeout
        while True:
            status = self.status()
            if status["state"] == "done":
                return AuditReport(status["report"])
            if status["state"] != "running":
                error = status.get("error") or {}
                raise AuditFailed(self.id, error.get("name", status["state"]), error.get("detail", ""))
            if time.monotonic() >= deadline:
                raise TimeoutError(f"audit {self.id} still running after {timeout:g} s ({status['done']}/{status['total']} cases)")
            time.sleep(poll)

    def junit(self) -> str:
        """The report as JUnit XML (once done)."""
        return self.server.transport.request("GET", path("audits", self.id, "junit"))

    def html(self) -> str:
        """The report as one self-contained HTML page (once done)."""
        return self.server.transport.request("GET", path("audits", self.id, "html"))

    def cancel(self) -> None:
        """Stops it — the request under way within about a second — or forgets it, once ended."""
        self.server.transport.request("DELETE", path("audits", self.id))

    def __repr__(self) -> str:
        return f"<Audit {self.id} {self.last.get('state')}>"


def start(server: "Server", url: str, *, preset: Optional[str] = None, profile: Optional[Mapping[str, Any]] = None,
          origin: Optional[str] = None, only: Optional[Iterable[str]] = None, skip: Optional[Iterable[str]] = None,
          rate: Optional[int] = None) -> Audit:
    body = _convert.body(url=url, preset=preset, profile=dict(profile) if profile is not None else None, origin=origin,
                         only=list(only) if only is not None else None, skip=list(skip) if skip is not None else None,
                         rate=rate)
    return Audit(server, server.transport.request("POST", "/audits", body))
