"""`authctl audit` against docs/examples/rp_server.py: with no flaw every case is refused (0
findings), with each flaw alone exactly that flaw's cases are found; and against hostile RPs
(no answer, a huge or slow one, not JSON, a redirect elsewhere) a named error, never a hang."""
import http.server
import json
import os
import signal
import subprocess
import threading
from xml.etree import ElementTree

import pytest

from conftest import BIN, Running, load_example, wait_until


RP = load_example("rp_server")


def audit(url, *args):
    proc = subprocess.run([BIN, "--json", "audit", "--preset", "rp-server", *args, url], capture_output=True, text=True, timeout=300)
    return proc


def junit(path):
    """The JUnit report, read by a real XML parser: {case: verdict as JUnit says it}."""
    suite = ElementTree.parse(path).getroot()
    assert suite.tag == "testsuite"
    out = {}
    for case in suite.findall("testcase"):
        kinds = [child.tag for child in case]
        out[case.get("name")] = kinds[0] if kinds else "passed"
    assert int(suite.get("tests")) == len(out)
    assert int(suite.get("failures")) == list(out.values()).count("failure")
    assert int(suite.get("skipped")) == list(out.values()).count("skipped")
    return out


def verdicts(proc):
    report = json.loads(proc.stdout)
    return {r["id"]: r["verdict"] for r in report["results"]}, report


# What each flaw of the example RP lets through: the cases that must come out ACCEPTED with it
# alone, and only those.
FLAWS = {
    "challenge-not-consumed": {"reg-replay", "sign-replay"},
    "not-bound-to-user": {"sign-other-users-credential", "sign-other-users-handle"},
    # Any scheme, any port, any host that ends with the RP ID.
    "origin-suffix-match": {f"{ceremony}-{kind}-origin" for ceremony in ("reg", "sign") for kind in ("look-alike", "subdomain", "http", "other-port")},
    "uv-not-enforced": {"reg-uv-cleared"},
    "state-before-verify": {"state-refused-sign-in-moves-count"},
    "up-not-checked": {"reg-up-cleared"},  # py_webauthn checks UP at a sign-in with no switch to turn it off
    "cross-origin-allowed": {"reg-cross-origin", "sign-cross-origin"},
    "alg-not-checked": {"reg-alg-not-offered"},
    "backup-eligibility-not-compared": {"sign-backup-eligibility-changed"},
    "user-enumeration": {"opt-user-enumeration"},
    # A session given before verification stays on every sign-in refused in verification; one
    # refused before (no such passkey, another user's) never had it.
    "session-on-failed-verify": {"sign-bad-signature", "sign-counter-regress", "sign-up-cleared", "sign-uv-claimed", "sign-wrong-challenge",
                                 "sign-wrong-credential-type", "sign-wrong-origin", "sign-look-alike-origin", "sign-subdomain-origin",
                                 "sign-http-origin", "sign-other-port-origin", "sign-wrong-rp-id-hash", "sign-wrong-type",
                                 "sign-empty-signature", "sign-client-data-changed", "sign-raw-id-not-base64url",
                                 "sign-cross-origin", "sign-backup-state-without-eligibility", "sign-backup-eligibility-changed",
                                 "sign-zero-signature", "sign-other-key-signature"},
}


def test_every_flaw_the_example_rp_can_have_is_one_the_audit_finds():
    assert set(RP.FLAWS) == set(FLAWS)


def test_an_rp_without_flaws_refuses_every_case_and_the_audit_exits_0():
    rp = Running(RP.serve(0))
    try:
        proc = audit(rp.url)
    finally:
        rp.close()
    assert proc.returncode == 0, proc.stderr
    found, report = verdicts(proc)
    assert len(found) >= 61
    assert {v for v in found.values()} <= {"rejected", "inconclusive", "taken"}, found
    # The one valid response of the battery (an extension output not asked for) is taken.
    assert [k for k, v in found.items() if v == "taken"] == ["reg-unsolicited-extension"]
    # Inconclusive only where the RP does not ask for what the case needs, with why.
    assert [k for k, v in found.items() if v == "inconclusive"] == ["sign-uv-cleared"]
    reason = next(r for r in report["results"] if r["id"] == "sign-uv-cleared")["evidence"]
    assert "does not require user verification" in reason
    assert report["counts"] == {"rejected": len(found) - 2, "inconclusive": 1, "taken": 1}


@pytest.mark.parametrize("flaw", sorted(FLAWS))
def test_each_flaw_alone_is_found_by_exactly_its_cases(flaw, tmp_path):
    rp = Running(RP.serve(0, flaws=frozenset([flaw])))
    try:
        proc = audit(rp.url, "--junit", str(tmp_path / "junit.xml"))
    finally:
        rp.close()
    tests = junit(tmp_path / "junit.xml")
    assert {k for k, v in tests.items() if v == "failure"} == FLAWS[flaw], tests
    found, report = verdicts(proc)
    accepted = {k for k, v in found.items() if v == "ACCEPTED"}
    assert accepted == FLAWS[flaw], (flaw, found)
    assert "server error" not in found.values(), found
    # A finding fails the run (auditFindings, 32) and carries its requests and answers.
    assert proc.returncode == 32, proc.stderr
    error = json.loads(proc.stderr.strip().splitlines()[-1])
    assert error["error"] == "auditFindings" and error["exitCode"] == 32
    for result in report["results"]:
        assert ("exchanges" in result) == (result["verdict"] == "ACCEPTED"), result["id"]


def test_an_rp_that_refuses_an_unsolicited_extension_output_is_reported_refused_and_fails_only_fail_on_any(tmp_path):
    # The bank, refusing every registration whose authenticator data has the ED flag (extension
    # outputs): WebAuthn L3 §7.1 lets it, and it locks out the authenticators that send one.
    import base64
    import cbor2
    server = RP.serve(0)
    handler = server.RequestHandlerClass

    class NoExtensions(handler):
        def do_POST(self):
            if self.path == "/register/finish":
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                text = body["credential"]["response"]["attestationObject"]
                auth_data = cbor2.loads(base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)))["authData"]
                if auth_data[32] & 0x80:
                    self.reply(400, {"error": "extension outputs not accepted"})
                    return
                raw = json.dumps(body).encode()
                self.headers.replace_header("Content-Length", str(len(raw)))
                self.rfile = __import__("io").BytesIO(raw)
            super().do_POST()

    server.RequestHandlerClass = NoExtensions
    rp = Running(server)
    try:
        default = audit(rp.url, "--only", "reg-unsolicited-extension", "--junit", str(tmp_path / "junit.xml"))
        strict = audit(rp.url, "--only", "reg-unsolicited-extension", "--fail-on", "any")
    finally:
        rp.close()
    found, report = verdicts(default)
    assert found == {"reg-unsolicited-extension": "REFUSED"}, found
    assert "extension outputs not accepted" in report["results"][0]["evidence"]
    assert "exchanges" in report["results"][0]
    assert default.returncode == 0, default.stderr  # not a security finding: --fail-on accepted passes
    assert strict.returncode == 32, strict.stderr
    suite = ElementTree.parse(tmp_path / "junit.xml").getroot()
    assert suite.find("testcase/failure").get("type") == "REFUSED"


def test_only_and_skip_pick_cases_and_families_and_an_unknown_one_is_a_usage_error():
    rp = Running(RP.serve(0, flaws=frozenset(["challenge-not-consumed"])))
    try:
        found, _ = verdicts(audit(rp.url, "--only", "replay", "--skip", "reg-replay"))
        assert found == {"sign-replay": "ACCEPTED", "reg-without-begin": "rejected", "reg-in-another-users-session": "rejected",
                         "sign-without-begin": "rejected"}
        proc = audit(rp.url, "--only", "no-such-case")
        assert proc.returncode == 64 and "no-such-case" in proc.stderr
    finally:
        rp.close()


class Hostile(http.server.BaseHTTPRequestHandler):
    """An RP that answers every request one wrong way."""
    mode = "huge"

    def log_message(self, *args):
        pass

    def answer(self):
        if self.mode == "redirect":
            self.send_response(302)
            self.send_header("Location", "http://198.51.100.7/signup")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if self.mode == "slow":
            threading.Event().wait(15)
        body = b"{" + b" " * (5 << 20) + b"}" if self.mode == "huge" else b"<html>not json</html>" if self.mode == "html" else b"{}"
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        try:
            self.wfile.write(body)
        except OSError:
            pass

    do_GET = do_POST = answer


@pytest.mark.parametrize("mode, says", [("huge", "the baseline failed"), ("html", "answered no options"), ("redirect", "did not make a user"),
                                        ("slow", "the baseline failed")])
def test_a_hostile_rp_ends_the_audit_with_rp_unusable_and_a_reason(mode, says):
    handler = type("H", (Hostile,), {"mode": mode})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    rp = Running(server)
    try:
        proc = audit(rp.url)
    finally:
        rp.close()
    assert proc.returncode == 33, (mode, proc.returncode, proc.stderr)
    error = json.loads(proc.stderr.strip().splitlines()[-1])
    assert error["error"] == "rpUnusable" and says in error["message"], error
    assert proc.stdout == ""


def test_an_rp_that_does_not_answer_is_rp_unusable():
    proc = audit("http://127.0.0.1:9")
    assert proc.returncode == 33, proc.stderr
    assert json.loads(proc.stderr.strip().splitlines()[-1])["error"] == "rpUnusable"


@pytest.mark.parametrize("url", ["ftp://127.0.0.1:1", "http://127.0.0.1:1/path", "not a url"])
def test_the_rp_is_an_http_url_with_no_path(url):
    proc = audit(url)
    assert proc.returncode == 65, proc.stderr


@pytest.mark.parametrize("origin", ["not a url", "https://rp.example/login", "ftp://rp.example"])
def test_the_origin_is_a_scheme_and_host_and_nothing_is_sent_for_another(origin):
    proc = audit("http://127.0.0.1:9", "--origin", origin)
    assert proc.returncode == 65, proc.stderr
    assert "origin" in json.loads(proc.stderr.strip().splitlines()[-1])["message"]


def test_a_profile_that_is_not_one_is_bad_input_and_a_fifo_is_not_waited_on(tmp_path):
    fifo = tmp_path / "profile.fifo"
    os.mkfifo(fifo)
    wrong = tmp_path / "wrong.json"
    wrong.write_text('{"origin": 1}')
    for profile in (fifo, wrong, tmp_path / "absent.json"):
        proc = subprocess.run([BIN, "audit", "--profile", str(profile), "http://127.0.0.1:9"], capture_output=True, text=True, timeout=60)
        assert proc.returncode == 65, (profile, proc.stderr)
    proc = subprocess.run([BIN, "audit", "--preset", "rp-server", "--profile", str(wrong), "http://127.0.0.1:9"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 64


def test_an_interrupted_audit_stops_and_removes_its_vault(tmp_path):
    rp = Running(RP.serve(0))
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    try:
        proc = subprocess.Popen([BIN, "--json", "audit", "--preset", "rp-server", "--rate", "5", rp.url], env=dict(os.environ, TMPDIR=str(scratch)),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        wait_until(lambda: any(scratch.iterdir()), "the audit's vault is made")
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        rp.close()
    assert proc.returncode == 10, err
    assert json.loads(err.strip().splitlines()[-1])["error"] == "canceled"
    assert list(scratch.iterdir()) == []


def test_on_a_terminal_each_case_shows_as_it_ends_and_the_line_is_cleared():
    import pty
    rp = Running(RP.serve(0))
    main, side = pty.openpty()
    try:
        proc = subprocess.run([BIN, "audit", "--preset", "rp-server", "--only", "replay", rp.url], stderr=side, stdout=subprocess.PIPE,
                              text=True, timeout=120)
    finally:
        rp.close()
        os.close(side)
    shown = b""
    while True:
        try:
            chunk = os.read(main, 65536)
        except OSError:
            break
        if not chunk:
            break
        shown += chunk
    os.close(main)
    assert proc.returncode == 0
    assert b"[1/5] reg-replay: rejected" in shown and b"[5/5] sign-without-begin: rejected" in shown, shown
    assert shown.endswith(b"\r\x1b[K"), shown[-40:]
    assert "5 cases against" in proc.stdout


def test_an_rp_that_fails_with_a_5xx_after_the_baseline_gets_server_errors_not_verdicts():
    # The bank, but every sign-in begin after the baseline's answers 500: the sign-in cases are
    # server errors (a finding with --fail-on server-error), the registrations judged as ever.
    server = RP.serve(0)
    handler = server.RequestHandlerClass
    begun = []

    class Crashing(handler):
        def do_POST(self):
            if self.path == "/login/begin":
                begun.append(1)
                if len(begun) > 1:
                    self.reply(500, {"error": "internal"})
                    return
            super().do_POST()

    server.RequestHandlerClass = Crashing
    rp = Running(server)
    try:
        proc = audit(rp.url, "--fail-on", "server-error")
    finally:
        rp.close()
    found, _ = verdicts(proc)
    assert found["sign-wrong-origin"] == "server error" and found["sign-replay"] == "server error", found
    assert found["reg-wrong-origin"] == "rejected"
    assert "ACCEPTED" not in found.values()
    assert proc.returncode == 32, proc.stderr
