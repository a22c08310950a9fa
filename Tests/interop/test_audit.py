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

from conftest import BIN, Forwarding, Running, load_example, wait_until


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
    # A discoverable sign-in's user taken from userHandle, the passkey's owner not compared; a
    # response without one is still refused.
    "user-handle-trusted": {"sign-discoverable-other-users-credential", "sign-discoverable-other-users-handle"},
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
    assert len(found) >= 64
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


@pytest.mark.parametrize("url", ["ftp://127.0.0.1:1", "http://127.0.0.1:1/path", "not a url", "http://exämple.test"])
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
    # The bank, but every sign-in begin after the baseline's two (username-first, discoverable)
    # answers 500: the sign-in cases are server errors (a finding with --fail-on server-error), the
    # registrations judged as ever.
    server = RP.serve(0)
    handler = server.RequestHandlerClass
    begun = []

    class Crashing(handler):
        def do_POST(self):
            if self.path == "/login/begin":
                begun.append(1)
                if len(begun) > 2:
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
    assert found["sign-discoverable-other-users-handle"] == "server error", found
    assert found["reg-wrong-origin"] == "rejected"
    assert "ACCEPTED" not in found.values()
    assert proc.returncode == 32, proc.stderr


class Injecting(Forwarding):
    """A proxy before the example RP that adds markup to every JSON answer: what an HTML report
    must show as text."""
    MARK = "</pre><script>alert(1)</script><img src=x onerror=alert(2)>"

    def edit(self, body):
        try:
            value = json.loads(body)
        except ValueError:
            return body
        if isinstance(value, dict):
            value["note"] = self.MARK
        return json.dumps(value).encode()


def test_the_html_report_is_one_page_with_every_case_and_each_findings_exchanges_shown_as_text(tmp_path):
    from html.parser import HTMLParser

    class Page(HTMLParser):
        def __init__(self):
            super().__init__(convert_charrefs=True)
            self.tags, self.text, self.rows, self.sections, self.verdicts = [], [], 0, [], []
            self._in_verdict = False

        def handle_starttag(self, tag, attrs):
            attrs = dict(attrs)
            self.tags.append((tag, attrs))
            self.rows += tag == "tr"
            if tag == "section":
                self.sections.append(attrs["id"])
            self._in_verdict = tag == "span" and "v" in attrs.get("class", "").split()

        def handle_data(self, data):
            self.text.append(data)
            if self._in_verdict:
                self.verdicts.append(data)
                self._in_verdict = False

    rp = Running(RP.serve(0, flaws=frozenset(["challenge-not-consumed"])))
    proxy = Running(http.server.ThreadingHTTPServer(("127.0.0.1", 0), type("P", (Injecting,), {"upstream": rp.url})))
    try:
        proc = audit(proxy.url, "--only", "replay", "--html", str(tmp_path / "report.html"))
    finally:
        proxy.close()
        rp.close()
    found, _ = verdicts(proc)
    assert {k for k, v in found.items() if v == "ACCEPTED"} == {"reg-replay", "sign-replay"}, found
    page = Page()
    page.feed((tmp_path / "report.html").read_text(encoding="utf-8"))
    page.close()
    tags = [t for t, _ in page.tags]
    # Nothing the RP sent became markup: no script, no image, no handler; it is there as text.
    assert "script" not in tags and "img" not in tags and not any(k.startswith("on") for _, a in page.tags for k in a)
    text = "".join(page.text)
    assert "</pre><script>alert(1)</script><img src=x onerror=alert(2)>" in text
    # Self-contained: no script or outside resource may load.
    csp = next(a["content"] for t, a in page.tags if t == "meta" and a.get("http-equiv") == "Content-Security-Policy")
    assert "default-src 'none'" in csp and not any(t in ("link", "script", "iframe") for t in tags)
    # One row per case (and the header's), each finding a section with its requests and answers.
    assert page.rows == len(found) + 1
    assert sorted(page.sections) == ["reg-replay", "sign-replay"]
    assert tags.count("pre") >= 4
    assert page.verdicts.count("ACCEPTED") >= 4  # the summary, two rows, two sections


class FormFront(http.server.BaseHTTPRequestHandler):
    """The example RP behind a front that takes forms and queries, as many web RPs do: sign-up,
    login and finishes as `application/x-www-form-urlencoded` (the response a field of JSON
    text), the sign-in's user in the begin's query, and an API key header on every request —
    each translated to the example RP's JSON, or refused with a 400 when not as said."""
    upstream = ""
    seen: list = []

    def log_message(self, *args):
        pass

    def handle_one(self):
        import urllib.error
        import urllib.parse
        import urllib.request
        if self.headers.get("X-API-Key") != "k-123":
            return self.reply(400, b'{"error": "no API key"}', [])
        target = urllib.parse.urlsplit(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        body = None
        if target.path in ("/signup", "/password/login", "/register/finish", "/login/finish"):
            if self.headers.get("Content-Type") != "application/x-www-form-urlencoded":
                return self.reply(400, b'{"error": "a form, please"}', [])
            fields = dict(urllib.parse.parse_qsl(raw.decode(), strict_parsing=True))
            body = {"credential": json.loads(fields["credential"])} if "finish" in target.path else fields
        elif target.path == "/login/begin":  # with ?username=: username-first; without: discoverable
            query = dict(urllib.parse.parse_qsl(target.query))
            body = {"username": query["username"]} if "username" in query else {}
        elif raw:
            body = json.loads(raw)
        self.seen.append((self.command, self.path))
        method = "POST" if target.path == "/login/begin" else self.command
        request = urllib.request.Request(self.upstream + target.path, method=method,
                                         data=json.dumps(body).encode() if body is not None else (b"{}" if method == "POST" else None))
        request.add_header("Content-Type", "application/json")
        if self.headers.get("Cookie"):
            request.add_header("Cookie", self.headers["Cookie"])
        try:
            answer = urllib.request.urlopen(request, timeout=30)
        except urllib.error.HTTPError as error:
            answer = error
        self.reply(answer.status if hasattr(answer, "status") else answer.code, answer.read(), answer.headers.get_all("Set-Cookie") or [])

    def reply(self, status, body, cookies):
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        for cookie in cookies:
            self.send_header("Set-Cookie", cookie)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = handle_one


def test_a_profile_sends_forms_queries_and_headers_and_judges_as_through_json(tmp_path):
    key = {"X-API-Key": "k-123"}
    credentials = {"username": "${user}", "password": "${password}"}
    profile = {
        "origin": "https://yourbank.example",
        "signUp": {"method": "POST", "path": "/signup", "body": credentials, "encoding": "form", "headers": key},
        "logIn": {"method": "POST", "path": "/password/login", "body": credentials, "encoding": "form", "headers": key},
        "register": {"begin": {"method": "POST", "path": "/register/begin", "body": {}, "headers": key}, "options": "publicKey",
                     "finish": {"method": "POST", "path": "/register/finish", "body": {"credential": "${response}"}, "encoding": "form",
                                "headers": key}},
        "signIn": {"begin": {"method": "GET", "path": "/login/begin?username=${user}", "headers": key}, "options": "publicKey",
                   "finish": {"method": "POST", "path": "/login/finish", "body": {"credential": "${response}"}, "encoding": "form",
                              "headers": key}},
        "discoverableSignIn": {"begin": {"method": "GET", "path": "/login/begin", "headers": key}, "options": "publicKey",
                               "finish": {"method": "POST", "path": "/login/finish", "body": {"credential": "${response}"},
                                          "encoding": "form", "headers": key}},
        "signedIn": {"method": "GET", "path": "/account", "headers": key},
        "success": {"member": "verified", "equals": True},
    }
    (tmp_path / "form.json").write_text(json.dumps(profile))
    rp = Running(RP.serve(0, flaws=frozenset(["not-bound-to-user", "user-handle-trusted"])))
    front = Running(http.server.ThreadingHTTPServer(("127.0.0.1", 0), type("F", (FormFront,), {"upstream": rp.url, "seen": []})))
    try:
        through_form = subprocess.run([BIN, "--json", "audit", "--profile", str(tmp_path / "form.json"), "--only", "binding,replay",
                                       front.url], capture_output=True, text=True, timeout=300)
        direct = audit(rp.url, "--only", "binding,replay")
        seen = front.server.RequestHandlerClass.seen
    finally:
        front.close()
        rp.close()
    assert through_form.returncode == 32, through_form.stderr  # the flaw is found through the form front too
    assert verdicts(through_form)[0] == verdicts(direct)[0]
    assert ("GET", "/login/begin?username=audit-") in [(m, p[:len("/login/begin?username=audit-")]) for m, p in seen]
    assert ("GET", "/login/begin") in seen  # the discoverable sign-in's begin, no user named
    assert {k for k, v in verdicts(through_form)[0].items() if v == "ACCEPTED"} == \
        FLAWS["not-bound-to-user"] | FLAWS["user-handle-trusted"]
    # A header that would break the request, a form body that is not an object: refused before anything is sent.
    for change in ({"headers": {"X-Evil": "a\r\nHost: elsewhere"}}, {"headers": {"Host": "elsewhere"}}, {"body": "${response}", "encoding": "form"}):
        bad = json.loads(json.dumps(profile))
        bad["signIn"]["finish"].update(change)
        (tmp_path / "bad.json").write_text(json.dumps(bad))
        proc = subprocess.run([BIN, "audit", "--profile", str(tmp_path / "bad.json"), "http://127.0.0.1:9"], capture_output=True, text=True, timeout=60)
        assert proc.returncode == 65 and "signIn.finish" in proc.stderr, (change, proc.stderr)


class Recording(Forwarding):
    """A proxy before the example RP that records each request's method and path."""
    seen_requests: list = []

    def seen(self):
        self.seen_requests.append((self.command, self.path))


def test_a_dry_run_sends_nothing_and_lists_the_requests_the_run_then_sends_in_that_order():
    seen = []
    recorder = Running(http.server.ThreadingHTTPServer(("127.0.0.1", 0), type("R", (Recording,), {"upstream": "http://127.0.0.1:9", "seen_requests": seen})))
    try:
        plan = subprocess.run([BIN, "--json", "audit", "--preset", "rp-server", "--dry-run", "--skip", "sign-uv-cleared", recorder.url],
                              capture_output=True, text=True, timeout=60)
        text = subprocess.run([BIN, "audit", "--preset", "rp-server", "--dry-run", recorder.url], capture_output=True, text=True, timeout=60)
    finally:
        recorder.close()
    assert plan.returncode == 0 and text.returncode == 0, plan.stderr + text.stderr
    assert seen == []  # nothing sent
    listed = json.loads(subprocess.run([BIN, "--json", "audit", "--list"], capture_output=True, text=True, timeout=60).stdout)
    assert text.stdout.count("\n  ") >= len(listed) and f"{len(listed)} cases" in text.stdout
    plan = json.loads(plan.stdout)
    assert [c["id"] for c in plan["cases"]] == [c["id"] for c in listed if c["id"] != "sign-uv-cleared"]

    # The real run against a bank that refuses everything (so each probe is sent) sends exactly
    # those requests, in that order.
    rp = Running(RP.serve(0))
    seen = []
    recorder = Running(http.server.ThreadingHTTPServer(("127.0.0.1", 0), type("R", (Recording,), {"upstream": rp.url, "seen_requests": seen})))
    try:
        run = audit(recorder.url, "--skip", "sign-uv-cleared", "--rate", "1000")
    finally:
        recorder.close()
        rp.close()
    assert run.returncode == 0, run.stderr
    where = {r["name"]: (r["method"], r["url"].removeprefix(plan["target"])) for r in plan["requests"]}
    expected = [where[step.split(" ")[0].rstrip("*")] for step in plan["baseline"] + [s for c in plan["cases"] for s in c["requests"]]]
    assert seen == expected


def test_a_dry_run_checks_what_a_run_checks():
    for args, code in ((["ftp://rp.example"], 65), (["--only", "no-such-case", "http://127.0.0.1:9"], 64),
                       (["--origin", "https://rp.example/path", "http://127.0.0.1:9"], 65)):
        proc = subprocess.run([BIN, "audit", "--preset", "rp-server", "--dry-run", *args], capture_output=True, text=True, timeout=60)
        assert proc.returncode == code, (args, proc.stderr)


def test_a_finish_fills_the_user_its_browser_began_the_ceremony_for(tmp_path):
    seen = []

    class Headers(Forwarding):
        def seen(self):
            if "finish" in self.path:
                seen.append(self.headers.get("X-User"))

    # The rp-server preset as a file, its finishes with a header that names the user.
    preset = {
        "origin": "https://yourbank.example",
        "signUp": {"method": "POST", "path": "/signup", "body": {"username": "${user}", "password": "${password}"}},
        "logIn": {"method": "POST", "path": "/password/login", "body": {"username": "${user}", "password": "${password}"}},
        "register": {"begin": {"method": "POST", "path": "/register/begin", "body": {}}, "options": "publicKey",
                     "finish": {"method": "POST", "path": "/register/finish", "body": {"credential": "${response}"}, "headers": {"X-User": "${user}"}}},
        "signIn": {"begin": {"method": "POST", "path": "/login/begin", "body": {"username": "${user}"}}, "options": "publicKey",
                   "finish": {"method": "POST", "path": "/login/finish", "body": {"credential": "${response}"}, "headers": {"X-User": "${user}"}}},
        "signedIn": {"method": "GET", "path": "/account"},
        "success": {"member": "verified", "equals": True},
    }
    (tmp_path / "p.json").write_text(json.dumps(preset))
    rp = Running(RP.serve(0))
    recorder = Running(http.server.ThreadingHTTPServer(("127.0.0.1", 0), type("H", (Headers,), {"upstream": rp.url})))
    try:
        proc = subprocess.run([BIN, "--json", "audit", "--profile", str(tmp_path / "p.json"), "--only", "sign-replay", recorder.url],
                              capture_output=True, text=True, timeout=120)
    finally:
        recorder.close()
        rp.close()
    assert proc.returncode == 0, proc.stderr
    assert len(seen) >= 3 and all(v and v.startswith("audit-") for v in seen), seen
