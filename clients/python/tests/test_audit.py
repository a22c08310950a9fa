"""The audit through the server: ``Server.audit``/``start_audit`` and the ``authctl_audit``
fixture, against the example bank (docs/examples/rp_server.py) with and without a flaw."""
import importlib.util
import pathlib
import socket
import threading
import time
from xml.etree import ElementTree

import pytest

from authctl_client import AuditFailed, AuditFindings, AuthctlError, BadRequest

BANK = pathlib.Path(__file__).resolve().parents[3] / "docs" / "examples" / "rp_server.py"


def load_bank():
    spec = importlib.util.spec_from_file_location("example_bank", BANK)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Bank:
    """The example bank on a free port, on a thread of its own."""

    def __init__(self, flaws=()):
        self.server = load_bank().serve(0, flaws=frozenset(flaws))
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def bank():
    running = Bank()
    yield running
    running.close()


@pytest.fixture
def flawed_bank():
    running = Bank(flaws=["challenge-not-consumed"])
    yield running
    running.close()


def test_a_bank_without_flaws_passes_the_fixture_and_its_report_has_every_case(authctl_audit, bank):
    report = authctl_audit(bank.url, preset="rp-server", rate=1000)
    assert len(report.results) >= 45 and report.findings == []
    assert set(report.verdicts.values()) <= {"rejected", "inconclusive", "taken"}
    assert report.counts["rejected"] == len(report.results) - report.counts.get("inconclusive", 0) - report.counts.get("taken", 0)


def test_a_finding_fails_the_fixture_naming_each_case_and_is_in_the_report(authctl_audit, flawed_bank):
    with pytest.raises(AuditFindings) as raised:
        authctl_audit(flawed_bank.url, preset="rp-server", rate=1000, only=["replay"])
    assert {f["id"] for f in raised.value.findings} == {"reg-replay", "sign-replay"}
    assert "reg-replay: ACCEPTED" in str(raised.value)
    report = authctl_audit(flawed_bank.url, preset="rp-server", rate=1000, only=["replay"], fail_on=None)
    assert report.verdicts == {"reg-replay": "ACCEPTED", "sign-replay": "ACCEPTED", "reg-without-begin": "rejected",
                               "reg-in-another-users-session": "rejected", "sign-without-begin": "rejected"}
    # A finding carries the requests and answers that show it.
    finding = next(r for r in report.results if r["id"] == "sign-replay")
    assert finding["exchanges"] and all({"method", "path", "status", "answer"} <= set(e) for e in finding["exchanges"])
    # Only a server error fails with fail_on="server-error": there is none.
    authctl_audit(flawed_bank.url, preset="rp-server", rate=1000, only=["replay"], fail_on="server-error")


def test_a_profile_as_a_dict_drives_the_rp_and_the_junit_report_parses(authctl_server, bank):
    profile = {
        "origin": "https://yourbank.example",
        "signUp": {"method": "POST", "path": "/signup", "body": {"username": "${user}", "password": "${password}"}},
        "logIn": {"method": "POST", "path": "/password/login", "body": {"username": "${user}", "password": "${password}"}},
        "register": {"begin": {"method": "POST", "path": "/register/begin", "body": {}}, "options": "publicKey",
                     "finish": {"method": "POST", "path": "/register/finish", "body": {"credential": "${response}"}}},
        "signIn": {"begin": {"method": "POST", "path": "/login/begin", "body": {"username": "${user}"}}, "options": "publicKey",
                   "finish": {"method": "POST", "path": "/login/finish", "body": {"credential": "${response}"}}},
        "signedIn": {"method": "GET", "path": "/account"},
        "signedInSuccess": {},
        "success": {"member": "verified", "equals": True},
    }
    running = authctl_server.start_audit(bank.url, profile=profile, only=["sign-other-users-credential", "sign-other-users-handle"],
                                         rate=1000)
    report = running.wait(timeout=120)
    assert report.verdicts == {"sign-other-users-credential": "rejected", "sign-other-users-handle": "rejected"}
    assert running.html().startswith("<!DOCTYPE html>") and "sign-other-users-handle" in running.html()
    suite = ElementTree.fromstring(running.junit())
    assert suite.tag == "testsuite" and int(suite.get("tests")) == 2 and int(suite.get("failures")) == 0
    # Ended, it is listed; deleted, it is gone.
    assert running.id in [a["id"] for a in authctl_server.request("GET", "/audits")["audits"]]
    running.cancel()
    with pytest.raises(AuthctlError) as raised:
        running.status()
    assert raised.value.status == 404


def test_a_running_audit_can_be_stopped_and_says_canceled(authctl_server, bank):
    running = authctl_server.start_audit(bank.url, preset="rp-server", rate=2)
    assert running.last["state"] == "running" and running.last["total"] >= 45
    running.cancel()
    with pytest.raises(AuditFailed) as raised:
        running.wait(timeout=120)
    assert raised.value.name == "canceled"
    assert running.last["state"] == "canceled"


def test_at_most_four_audits_run_at_once_and_a_fifth_is_429(authctl_server, bank):
    started = [authctl_server.start_audit(bank.url, preset="rp-server", rate=1) for _ in range(4)]
    try:
        with pytest.raises(AuthctlError) as raised:
            authctl_server.start_audit(bank.url, preset="rp-server", rate=1)
        assert raised.value.status == 429
    finally:
        for running in started:
            running.cancel()
    for running in started:
        with pytest.raises(AuditFailed):
            running.wait(timeout=120)
    # Room again once they have stopped.
    authctl_server.start_audit(bank.url, preset="rp-server", only=["opt-distinct-challenges"], rate=1000).wait(timeout=120)


def test_an_rp_that_is_not_there_fails_as_rp_unusable_and_bad_requests_are_refused(authctl_server):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed once the block ends: nothing listens there
    with pytest.raises(AuditFailed) as raised:
        authctl_server.audit(f"http://127.0.0.1:{port}", preset="rp-server", timeout=120)
    assert raised.value.name == "rpUnusable"
    for kwargs, words in ((dict(url="ftp://rp.example", preset="rp-server"), "http(s) URL"),
                          (dict(url="http://127.0.0.1:1", preset="no-such"), "preset"),
                          (dict(url="http://127.0.0.1:1"), "one of preset and profile"),
                          (dict(url="http://127.0.0.1:1", preset="rp-server", only=["no-such-case"]), "no-such-case"),
                          (dict(url="http://127.0.0.1:1", profile={"origin": 3}), "not a profile"),
                          (dict(url="http://127.0.0.1:1", preset="rp-server", rate=0), "rate")):
        with pytest.raises(BadRequest) as raised:
            authctl_server.start_audit(**kwargs)
        assert words in str(raised.value), (kwargs, str(raised.value))


def test_a_server_stopped_mid_audit_exits_0_and_leaves_no_throw_away_vault(tmp_path, bank):
    from authctl_client import Server
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    server = Server(env={"TMPDIR": str(scratch)})
    try:
        running = server.start_audit(bank.url, preset="rp-server", rate=2)
        deadline = time.monotonic() + 60
        while not list(scratch.glob("authctl-audit-*")) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert list(scratch.glob("authctl-audit-*")), "the audit's vault was never made"
        assert running.status()["state"] == "running"
    finally:
        server.stop()  # exit status 0, or it raises
    assert list(scratch.glob("authctl-audit-*")) == []
