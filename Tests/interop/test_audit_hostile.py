"""`POST /audits` and the audit's reports against hostile callers and hostile RPs: bursts of
starts, stops while a request waits, a server stopped mid-audit, answers full of markup and bytes
that are not text, header storms, bodies of every wrong shape — a named 4xx or a report that
parses, never a 5xx, a crash or an audit that will not stop."""
import concurrent.futures
import http.client
import http.server
import json
import os
import signal
import socketserver
import subprocess
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from html.parser import HTMLParser
from xml.etree import ElementTree

import pytest
from authctl_client import AuthctlError, Server

from conftest import BIN, Forwarding, Running, load_example, wait_until

RP = load_example("rp_server")


@pytest.fixture
def server():
    running = Server(binary=BIN)
    yield running
    running.stop()


def post(server, body):
    """POST /audits with `body` as raw bytes: the status and the answer's JSON."""
    where = urllib.parse.urlparse(server.url)
    connection = http.client.HTTPConnection(where.hostname, where.port, timeout=120)
    try:
        connection.request("POST", "/audits", body=body, headers={"Authorization": f"Bearer {server.token}"})
        answer = connection.getresponse()
        return answer.status, json.loads(answer.read())
    finally:
        connection.close()


def ended(server, audit_id):
    return server.request("GET", f"/audits/{audit_id}")["state"] != "running"


class Silent(socketserver.StreamRequestHandler):
    """An RP that reads a request and never answers."""
    asked = None

    def handle(self):
        self.connection.recv(65536)
        self.asked.set()
        threading.Event().wait(60)


def test_twenty_starts_at_once_run_exactly_four_and_the_rest_are_429(server):
    bank = Running(RP.serve(0))
    try:
        def start(_):
            try:
                return server.request("POST", "/audits", {"url": bank.url, "preset": "rp-server", "rate": 1})["id"]
            except AuthctlError as error:
                return error.status
        with concurrent.futures.ThreadPoolExecutor(20) as pool:
            answers = list(pool.map(start, range(20)))
        started = [a for a in answers if isinstance(a, str)]
        assert len(started) == 4 and answers.count(429) == 16, answers
        assert len(set(started)) == 4
        for audit_id in started:
            server.request("DELETE", f"/audits/{audit_id}")
        wait_until(lambda: all(ended(server, a) for a in started), "the four audits stop", timeout=120)
        assert {server.request("GET", f"/audits/{a}")["state"] for a in started} == {"canceled"}
    finally:
        bank.close()


def test_a_delete_stops_the_request_under_way_at_once_and_the_audit_says_canceled(server):
    # The RP never answers the baseline's first request: without stopping the request itself, the
    # audit went on for the request's 10 s timeout and then said failed (rpUnusable).
    asked = threading.Event()
    rp = socketserver.ThreadingTCPServer(("127.0.0.1", 0), type("S", (Silent,), {"asked": asked}))
    rp.daemon_threads = True
    silent = Running(rp)
    try:
        audit = server.start_audit(silent.url, preset="rp-server")
        assert asked.wait(60), "the audit never reached the RP"
        began = time.monotonic()
        audit.cancel()
        wait_until(lambda: audit.status()["state"] != "running", "the audit stops", timeout=60)
        took = time.monotonic() - began
    finally:
        silent.close()
    assert audit.last["state"] == "canceled", audit.last
    assert audit.last["error"]["name"] == "canceled"
    # Within about a second (libcurl asks once a second while nothing comes); 10 s would be the timeout.
    assert took < 8, took


def test_a_server_stopped_while_four_audits_run_exits_0_and_leaves_no_vault(tmp_path):
    # Audit threads still in libcurl or OpenSSL while the process exited crashed it (SIGSEGV in
    # about one stop in ten; 40 stops all exit 0 by chance once in some 70 runs): the server now
    # stops them and waits for them before it exits.
    bank = Running(RP.serve(0))
    try:
        for trial in range(40):
            scratch = tmp_path / f"tmp{trial}"
            scratch.mkdir()
            running = Server(binary=BIN, env={"TMPDIR": str(scratch)})
            audits = [running.start_audit(bank.url, preset="rp-server", rate=1000) for _ in range(4)]
            # Stopped at a different point each time: after 0 to 4 cases ended in all.
            wait_until(lambda: sum(a.status()["done"] for a in audits) >= trial % 5 or any(a.last["state"] != "running" for a in audits),
                       "the audits get going", timeout=120)
            began = time.monotonic()
            running.process.send_signal(signal.SIGTERM)
            code = running.process.wait(timeout=60)
            assert code == 0, (trial, code, running.stderr[-3000:])
            assert time.monotonic() - began < 30
            assert list(scratch.iterdir()) == [], trial
    finally:
        bank.close()


EVIL = ("</pre><script>alert(1)</script><img src=x onerror=alert(2)>]]>--><!--\u2028\u2029\ufffe\U0010ffff\x1b[31m\r\n".encode()
        + b"\x00\x01\x7f\xc2\x85\xff\xfe\xc0\x80\xed\xa0\x80")


class Poisoning(Forwarding):
    """A proxy before the example bank that answers the sign-up and the signed-in page with
    markup, NUL, C1 controls, noncharacters, line separators and bytes that are not UTF-8 (the
    profile asks of those only a 2xx), all else as the bank answers."""

    def edit(self, body):
        return EVIL if self.path in ("/signup", "/account") else body


class Page(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags, self.text = [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.text.append(data)


def test_answers_of_markup_and_bytes_that_are_not_text_leave_every_report_valid_and_inert(server, tmp_path):
    bank = Running(RP.serve(0, flaws=frozenset(["session-on-failed-verify"])))
    proxy = Running(http.server.ThreadingHTTPServer(("127.0.0.1", 0), type("P", (Poisoning,), {"upstream": bank.url})))
    try:
        audit = server.start_audit(proxy.url, preset="rp-server", rate=1000, only=["sign-bad-signature"])
        report = audit.wait(timeout=120)
        page, junit = audit.html(), audit.junit()
        cli = subprocess.run([BIN, "--json", "audit", "--preset", "rp-server", "--only", "sign-bad-signature", "--html", str(tmp_path / "r.html"),
                              "--junit", str(tmp_path / "r.xml"), proxy.url], capture_output=True, timeout=300)
    finally:
        proxy.close()
        bank.close()
    # The finding's exchanges hold the poisoned answers, as text.
    assert report.verdicts == {"sign-bad-signature": "ACCEPTED"}
    answers = [e["answer"] for e in report.findings[0]["exchanges"]]
    assert any("</pre><script>" in a for a in answers), answers
    # JSON (the status, and the CLI's stdout) parses; JUnit parses as XML.
    assert cli.returncode == 32, cli.stderr
    assert json.loads(cli.stdout)["results"][0]["verdict"] == "ACCEPTED"
    ElementTree.fromstring(junit)
    ElementTree.parse(tmp_path / "r.xml")
    for html in (page, (tmp_path / "r.html").read_text(encoding="utf-8")):
        parsed = Page()
        parsed.feed(html)
        parsed.close()
        tags = [t for t, _ in parsed.tags]
        assert "script" not in tags and "img" not in tags and not any(k.startswith("on") for _, a in parsed.tags for k in a)
        assert "</pre><script>alert(1)</script>" in "".join(parsed.text)
        # No character HTML forbids raw: controls other than tab and newline, C1, noncharacters.
        bad = [hex(ord(c)) for c in html if (ord(c) < 0x20 and c not in "\n\t") or 0x7F <= ord(c) <= 0x9F or (ord(c) & 0xFFFE) == 0xFFFE]
        assert bad == []
        csp = next(a["content"] for t, a in parsed.tags if t == "meta" and a.get("http-equiv") == "Content-Security-Policy")
        assert "default-src 'none'" in csp


class Storm(socketserver.StreamRequestHandler):
    """An RP whose answer's head never ends well: 200,000 Set-Cookie lines, one header of 50 MB,
    or header lines for 30 s."""
    mode = "cookies"

    def handle(self):
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.connection.recv(65536)
            if not chunk:
                return
            head += chunk
        try:
            self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n")
            if self.mode == "cookies":
                for i in range(200_000):
                    self.wfile.write(b"Set-Cookie: c%d=%s; Path=/\r\n" % (i, b"v" * 4000))
            elif self.mode == "one-huge-header":
                self.wfile.write(b"Set-Cookie: s=" + b"v" * (50 << 20) + b"\r\n")
            else:
                began = time.monotonic()
                while time.monotonic() - began < 30:
                    self.wfile.write(b"X-More: " + b"a" * 1000 + b"\r\n")
            self.wfile.write(b"Content-Length: 2\r\n\r\n{}")
        except OSError:
            pass


@pytest.mark.parametrize("mode", ["cookies", "one-huge-header", "endless"])
def test_a_storm_of_headers_fails_the_audit_as_rp_unusable_and_the_server_stays_small(server, mode):
    rp = socketserver.ThreadingTCPServer(("127.0.0.1", 0), type("S", (Storm,), {"mode": mode}))
    rp.daemon_threads = True
    storm = Running(rp)
    try:
        audit = server.start_audit(storm.url, preset="rp-server", rate=1000)
        wait_until(lambda: audit.status()["state"] != "running", "the audit ends", timeout=60)
    finally:
        storm.close()
    assert audit.last["state"] == "failed" and audit.last["error"]["name"] == "rpUnusable", audit.last
    rss_kib = int(next(line for line in open(f"/proc/{server.process.pid}/status") if line.startswith("VmRSS")).split()[1])
    assert rss_kib < 200 * 1024, rss_kib
    assert server.health()["status"] == "ok"


PROFILE = {"origin": "https://a.example",
           "register": {"begin": {"method": "POST", "path": "/a", "body": {"u": "${user}"}}, "options": "",
                        "finish": {"method": "POST", "path": "/b", "body": "${response}"}},
           "signIn": {"begin": {"method": "POST", "path": "/c", "body": {}}, "options": "",
                      "finish": {"method": "POST", "path": "/d", "body": "${response}"}},
           "success": {}}


def with_begin(**change):
    profile = json.loads(json.dumps(PROFILE))
    profile["register"]["begin"].update(change)
    return profile


NOWHERE = "http://127.0.0.1:9"
HOSTILE_BODIES = {
    "rate 0": (json.dumps({"url": NOWHERE, "preset": "rp-server", "rate": 0}), "rate must be a whole number from 1 to 1000"),
    "rate 1001": (json.dumps({"url": NOWHERE, "preset": "rp-server", "rate": 1001}), "rate must be a whole number from 1 to 1000"),
    "rate -1": (json.dumps({"url": NOWHERE, "preset": "rp-server", "rate": -1}), "rate must be a whole number from 1 to 1000"),
    "rate 1.5": (json.dumps({"url": NOWHERE, "preset": "rp-server", "rate": 1.5}), "rate must be a whole number from 1 to 1000"),
    "rate as text": (json.dumps({"url": NOWHERE, "preset": "rp-server", "rate": "5"}), "rate must be a whole number from 1 to 1000"),
    "rate 1e400": ('{"url": "http://127.0.0.1:9", "preset": "rp-server", "rate": 1e400}', ""),
    "a profile nested 100,000 deep": (json.dumps({"url": NOWHERE, "profile": PROFILE}).replace('"u": "${user}"', '"u": "${user}", "n": ' + "[" * 100_000 + "]" * 100_000), ""),
    "10,000 unknown cases": (json.dumps({"url": NOWHERE, "preset": "rp-server", "only": [f"x{i}" for i in range(10_000)]}), "no case or family"),
    "only an object": (json.dumps({"url": NOWHERE, "preset": "rp-server", "only": {"a": 1}}), "only must be a list"),
    "only numbers": (json.dumps({"url": NOWHERE, "preset": "rp-server", "only": [1]}), "only[0] must be a string"),
    "url a number": (json.dumps({"url": 5, "preset": "rp-server"}), "url must be a string"),
    "url with a user": (json.dumps({"url": "http://u:p@127.0.0.1:9", "preset": "rp-server"}), "no path"),
    "url with a NUL": (json.dumps({"url": "http://127.0.0.1:9\u0000x", "preset": "rp-server"}), "no path"),
    "url with a fragment": (json.dumps({"url": "http://127.0.0.1:9#", "preset": "rp-server"}), "no path"),
    "url of 500 kB": (json.dumps({"url": "http://" + "a" * 500_000 + ".example/x", "preset": "rp-server"}), "no path"),
    "preset and profile": (json.dumps({"url": NOWHERE, "preset": "rp-server", "profile": PROFILE}), "one of preset and profile"),
    "profile a string": (json.dumps({"url": NOWHERE, "profile": "{}"}), "profile must be a JSON object"),
    "origin javascript:": (json.dumps({"url": NOWHERE, "preset": "rp-server", "origin": "javascript:alert(1)"}), "origin"),
    "a method with a line break": (json.dumps({"url": NOWHERE, "profile": with_begin(method="GET /x HTTP/1.1\r\nX: y")}), "method"),
    "a header with a line break": (json.dumps({"url": NOWHERE, "profile": with_begin(headers={"X-A": "a\r\nHost: evil"})}), "headers"),
    "a Host header": (json.dumps({"url": NOWHERE, "profile": with_begin(headers={"HOST": "evil"})}), "headers"),
    "an absolute URL as path": (json.dumps({"url": NOWHERE, "profile": with_begin(path="http://evil/")}), "path"),
    "a path with a fragment": (json.dumps({"url": NOWHERE, "profile": with_begin(path="/a?u=${user}#frag")}), "without '#'"),
    "a path with a bare %": (json.dumps({"url": NOWHERE, "profile": with_begin(path="/a%zz")}), "two hex digits"),
    "a path ending in %": (json.dumps({"url": NOWHERE, "profile": with_begin(path="/a%4")}), "two hex digits"),
    "a form body that is a list": (json.dumps({"url": NOWHERE, "profile": with_begin(body=[1], encoding="form")}), "form"),
    "an encoding not known": (json.dumps({"url": NOWHERE, "profile": with_begin(encoding="xml")}), "not a profile"),
}


@pytest.mark.parametrize("name", sorted(HOSTILE_BODIES))
def test_a_hostile_body_is_a_named_4xx_and_starts_nothing(server, name):
    body, says = HOSTILE_BODIES[name]
    status, answer = post(server, body)
    assert 400 <= status < 500, (status, answer)
    assert answer["name"] in ("badInput", "syntaxError", "usage"), answer
    assert says in answer["detail"], answer["detail"]
    assert server.request("GET", "/audits")["audits"] == []


def test_a_path_with_percent_encoded_octets_is_still_a_path(server):
    status, answer = post(server, json.dumps({"url": NOWHERE, "profile": with_begin(path="/a%2Fb%e2%82%ac?u=${user}")}))
    assert status == 202, answer


def test_the_cli_refuses_a_path_with_a_fragment_before_anything_is_sent(tmp_path):
    profile = tmp_path / "profile.json"
    profile.write_text(json.dumps(with_begin(path="/register#begin")))
    proc = subprocess.run([BIN, "--json", "audit", "--profile", str(profile), NOWHERE], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 65, proc.stderr
    assert "register.begin.path" in json.loads(proc.stderr.strip().splitlines()[-1])["message"]


class Redirecting(http.server.BaseHTTPRequestHandler):
    """An RP that sends every request to another server."""
    elsewhere = ""

    def log_message(self, *args):
        pass

    def answer(self):
        self.send_response(307)
        self.send_header("Location", self.elsewhere + self.path)
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_GET = do_POST = answer


def test_a_redirect_is_not_followed_through_the_server(server):
    hits = []

    class Elsewhere(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_POST(self):
            hits.append(self.path)
            self.send_response(200)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"{}")

        do_GET = do_POST

    elsewhere = Running(http.server.ThreadingHTTPServer(("127.0.0.1", 0), Elsewhere))
    front = Running(http.server.ThreadingHTTPServer(("127.0.0.1", 0), type("R", (Redirecting,), {"elsewhere": elsewhere.url})))
    try:
        audit = server.start_audit(front.url, preset="rp-server", rate=1000)
        wait_until(lambda: audit.status()["state"] != "running", "the audit ends", timeout=60)
    finally:
        front.close()
        elsewhere.close()
    assert audit.last["state"] == "failed" and audit.last["error"]["name"] == "rpUnusable"
    assert "307" in audit.last["error"]["detail"]
    assert hits == []


def test_an_audit_of_the_server_itself_fails_as_rp_unusable(server):
    audit = server.start_audit(server.url, preset="rp-server", rate=1000)
    wait_until(lambda: audit.status()["state"] != "running", "the audit ends", timeout=60)
    assert audit.last["state"] == "failed" and audit.last["error"]["name"] == "rpUnusable"
    assert "401" in audit.last["error"]["detail"]
    assert server.health()["status"] == "ok"


def test_the_python_client_says_at_once_when_the_server_is_gone():
    bank = Running(RP.serve(0))
    running = Server(binary=BIN)
    try:
        audit = running.start_audit(bank.url, preset="rp-server", rate=2)
        running.process.kill()
        running.process.wait(timeout=60)
        began = time.monotonic()
        with pytest.raises(ConnectionError):
            audit.wait(timeout=60)
        with pytest.raises(ConnectionError):
            running.audit(bank.url, preset="rp-server", timeout=60)
        assert time.monotonic() - began < 30
    finally:
        bank.close()


@pytest.mark.parametrize("args, says", [(["delete", "--json"], '"error":"usage"'), (["credential", "show", "--json"], '"error":"usage"'),
                                        (["delete", "--help"], "usage: authctl delete"), (["delete", "--version"], "authctl "),
                                        (["credential", "show", "--help"], "usage: authctl credential show")])
def test_an_option_where_an_id_goes_stays_an_option(args, says, tmp_path):
    proc = subprocess.run([BIN, "--vault", str(tmp_path / "none"), *args], capture_output=True, text=True, timeout=60)
    assert says in proc.stdout + proc.stderr, (proc.stdout, proc.stderr)
    assert "vaultNotFound" not in proc.stderr
