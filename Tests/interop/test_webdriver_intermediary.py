"""`authctl webdriver --upstream URL` in front of a browser's driver: Selenium's own
virtual-authenticator helpers (WebAuthn L3 §11, as Selenium sends them for Chromium) register and
sign in on the example bank (docs/examples/rp_server.py, which verifies every response with
py_webauthn) with authctl's devices in the page, every other command passed on to the driver.
The same tests run in front of chromedriver (headless Chromium) and of WebKitWebDriver (which the
intermediary has launch authctl-webkit, under an Xvfb of the module's own): the test code changes
only the URL it connects to and the browser's capabilities. One intermediary, one driver and one
browser per engine; the tests run in order, each from where the one before left the customer."""
import json
import os
import pathlib
import shutil
import signal
import socket
import subprocess
import threading
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from browser_support import CHROMEDRIVER, CHROMIUM, DEADLINE, HAVE_CHROMIUM, wait_until
from conftest import BIN, own_environment
from test_browser_bank import load_bank

WEBKIT_DRIVER = os.environ.get("AUTHCTL_WEBKIT_DRIVER", "/usr/bin/WebKitWebDriver")
WEBKIT_BROWSER = os.environ.get("AUTHCTL_WEBKIT_BROWSER", str(pathlib.Path(BIN).parent / "authctl-webkit"))
XVFB = shutil.which("Xvfb")
HAVE_WEBKIT = bool(shutil.which(WEBKIT_DRIVER) and XVFB and os.access(WEBKIT_BROWSER, os.X_OK))
ENGINES = [
    pytest.param("chromium", marks=pytest.mark.skipif(not HAVE_CHROMIUM, reason="Debian's chromium and chromium-driver are not installed")),
    pytest.param("webkit", marks=pytest.mark.skipif(not HAVE_WEBKIT, reason="WebKitWebDriver (webkit2gtk-driver), Xvfb (xvfb) or authctl-webkit "
                                                                          "beside authctl (scripts/build-webkit-browser.sh) is missing")),
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def call(url: str, method: str, path: str, body=None, headers: dict = {}) -> tuple[int, dict]:
    """One WebDriver command, as a client sends it: its status and JSON answer."""
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url + path, method=method, data=data, headers={"Content-Type": "application/json", **headers})
    try:
        with urllib.request.urlopen(request, timeout=DEADLINE) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def refused(url: str, head: bytes, body: bytes) -> tuple[int, dict]:
    """A request whose body the server refuses, perhaps before it has all come: its status and JSON."""
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=DEADLINE) as connection:
        connection.sendall(head)
        try:
            connection.sendall(body)
        except (BrokenPipeError, ConnectionResetError):
            pass  # answered already
        reply = b""
        while chunk := connection.recv(65536):
            reply += chunk
    status_line, _, rest = reply.partition(b"\r\n")
    return int(status_line.split()[1]), json.loads(rest.partition(b"\r\n\r\n")[2])


class Intermediary:
    """`authctl webdriver` in front of `upstream`, for the test's lifetime."""

    def __init__(self, scratch, upstream: str, webkit_browser: str | None = None):
        arguments = ["--webkit-browser", webkit_browser] if webkit_browser and os.access(webkit_browser, os.X_OK) else []
        self.process = subprocess.Popen([BIN, "webdriver", "--upstream", upstream, *arguments], env=own_environment(scratch),
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.url = self.process.stdout.readline().split()[-1]
        self.token = self.process.stdout.readline().split()[-1]

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        assert self.process.wait(timeout=DEADLINE) == 0, self.process.stderr.read()


class World:
    pass


def start_driver(engine: str, directory: pathlib.Path, display: str | None) -> tuple[subprocess.Popen, str]:
    """chromedriver or WebKitWebDriver on a free loopback port, once it says it is ready."""
    port = free_port()
    if engine == "chromium":
        command, env = [CHROMEDRIVER, f"--port={port}"], None
    else:
        command, env = [WEBKIT_DRIVER, f"--port={port}", "--host=127.0.0.1"], dict(own_environment(directory), DISPLAY=display)
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"

    def ready():
        assert process.poll() is None, f"{command[0]} exited ({process.returncode})"
        return call(url, "GET", "/status")[1]["value"]["ready"]

    wait_until(ready, f"{command[0]} ready")
    return process, url


def browser_options(engine: str, directory: pathlib.Path):
    """What the test asks the driver for: headless Chromium; WebKitGTK's browser (the
    intermediary makes it authctl-webkit, with the session's user script)."""
    from selenium import webdriver
    from selenium.webdriver.common.options import ArgOptions

    if engine == "webkit":
        options = ArgOptions()
        options.set_capability("webkitgtk:browserOptions", {"args": ["--automation"]})
        return options
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                     "--window-size=520,900", f"--user-data-dir={directory / 'profile'}"]:
        options.add_argument(argument)
    return options


@pytest.fixture(scope="module", params=ENGINES)
def world(request, tmp_path_factory):
    from selenium import webdriver
    from selenium.webdriver.remote.client_config import ClientConfig
    from selenium.webdriver.remote.remote_connection import RemoteConnection

    world = World()
    world.engine = request.param
    directory = world.directory = tmp_path_factory.mktemp(f"webdriver-{world.engine}")
    bank = load_bank().serve(0, origin="http://localhost")
    world.origin = f"http://localhost:{bank.server_address[1]}"
    bank.RequestHandlerClass.origin = world.origin
    threading.Thread(target=bank.serve_forever, daemon=True).start()
    world.bank = bank
    display = driver_process = world.intermediary = world.driver = None
    try:
        if world.engine == "webkit":  # WebKitGTK has no headless mode
            display = subprocess.Popen([XVFB, "-displayfd", "1", "-screen", "0", "1280x1024x24", "-nolisten", "tcp"],
                                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
            number = display.stdout.readline().strip()
            assert number, "Xvfb gave no display"
        driver_process, world.upstream = start_driver(world.engine, directory, display and f":{number}")
        world.intermediary = Intermediary(directory, world.upstream, WEBKIT_BROWSER)
        # The client connects to the intermediary: the only change from a test against the driver.
        url = world.intermediary.url
        connection = RemoteConnection(client_config=ClientConfig(remote_server_addr=url))
        world.driver = webdriver.Remote(command_executor=connection, options=browser_options(world.engine, directory))
        world.driver.set_script_timeout(DEADLINE)
        world.driver.set_page_load_timeout(DEADLINE)
        yield world
    finally:
        if world.driver:
            world.driver.quit()
        if world.intermediary:
            world.intermediary.stop()
        for process in (driver_process, display):
            if process:
                process.terminate()
                process.wait(timeout=DEADLINE)
        bank.shutdown()


def bank_user(world) -> dict:
    return world.bank.RequestHandlerClass.bank.users["budi"]


def unpadded(credential_id: str) -> str:
    """Selenium's base64url (padded) as the bank and WebDriver write it."""
    return credential_id.rstrip("=")


def screen(world) -> str:
    return world.driver.execute_script("return document.body.dataset.screen")


def wait_screen(world, name: str):
    wait_until(lambda: screen(world) == name, f"the {name} screen")


def text(world, element: str) -> str:
    return world.driver.execute_script(f"const e = document.getElementById('{element}'); return e.hidden ? '' : e.textContent")


def click(world, element: str):
    found = world.driver.find_element("id", element)
    wait_until(lambda: found.is_displayed() and found.is_enabled(), f"#{element} shown")
    found.click()


def open_bank(world):
    world.driver.get(world.origin + "/")
    wait_until(lambda: world.driver.execute_script("return document.body.dataset.ready") == "true", "the bank's page ready")


def test_new_session_says_the_virtual_authenticators_are_authctls(world):
    capabilities = world.driver.capabilities
    assert capabilities["webauthn:virtualAuthenticators"] is True
    assert {name for name in capabilities if name.startswith("webauthn:extension:")} == {
        "webauthn:extension:largeBlob", "webauthn:extension:credBlob", "webauthn:extension:prf"}, \
        "authctl's extensions, not Chrome's emulator's (minPinLength, cmtgKey)"
    if world.engine == "chromium":
        assert capabilities["browserName"] == "chrome" and "goog:chromeOptions" in capabilities, "the rest is chromedriver's"
    else:
        assert capabilities["browserName"] == "authctl-webkit", "WebKitWebDriver launched authctl-webkit, not the browser it would have"


def test_selenium_registers_and_signs_in_on_the_bank_with_an_authctl_device(world):
    from selenium.webdriver.common.virtual_authenticator import VirtualAuthenticatorOptions

    driver = world.driver
    driver.add_virtual_authenticator(VirtualAuthenticatorOptions(
        protocol="ctap2", transport="internal", has_resident_key=True, has_user_verification=True, is_user_verified=True))
    assert driver.get_credentials() == []
    open_bank(world)
    wait_screen(world, "sign-in")
    driver.find_element("id", "username").send_keys("budi")
    driver.find_element("id", "password").send_keys("rahasia")
    driver.execute_script("document.getElementById('password-form').requestSubmit()")
    wait_screen(world, "upgrade")
    click(world, "upgrade-decline")
    wait_screen(world, "account")
    click(world, "create-passkey")  # userVerification: required
    wait_until(lambda: "Passkey created" in text(world, "message"), "the passkey created")
    credentials = driver.get_credentials()
    assert len(credentials) == 1
    passkey = credentials[0]
    assert list(bank_user(world)["passkeys"]) == [unpadded(passkey.id)], "the bank verified and kept the passkey Get Credentials shows"
    assert passkey.rp_id == "localhost" and passkey.is_resident_credential
    assert passkey.user_handle is not None and passkey.private_key
    # Signed in again with it: the bank verifies the assertion with the key it kept.
    click(world, "sign-out")
    wait_screen(world, "sign-in")
    click(world, "passkey-sign-in")
    wait_screen(world, "account")
    assert "Signed in with your passkey" in text(world, "message")


def test_set_user_verified_false_refuses_a_ceremony_that_requires_verification(world):
    driver = world.driver
    driver.set_user_verified(False)
    driver.find_element("id", "amount").send_keys("250000")
    driver.execute_script("document.getElementById('transfer-form').requestSubmit()")  # userVerification: required
    wait_until(lambda: "couldn't verify" in text(world, "transfer-result"), "the transfer refused")
    driver.set_user_verified(True)
    driver.execute_script("document.getElementById('transfer-form').requestSubmit()")
    wait_until(lambda: "approved" in text(world, "transfer-result"), "the transfer approved")


def test_credentials_are_added_and_removed_as_selenium_asks(world):
    from selenium.webdriver.common.virtual_authenticator import Credential

    driver = world.driver
    key = ec.generate_private_key(ec.SECP256R1()).private_bytes(
        serialization.Encoding.DER, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    added = Credential.create_resident_credential(bytearray(b"\x01" * 16), "localhost", bytearray(b"user-7"), bytearray(key), 0)
    driver.add_credential(added)
    held = {c.id: c for c in driver.get_credentials()}
    assert len(held) == 2 and held[added.id].user_handle == added.user_handle and held[added.id].rp_id == "localhost"
    driver.remove_credential(bytearray(b"\x01" * 16))
    assert [unpadded(c.id) for c in driver.get_credentials()] == list(bank_user(world)["passkeys"])
    driver.remove_all_credentials()
    assert driver.get_credentials() == []


def test_the_newest_authenticator_answers_and_removing_it_gives_the_pages_the_one_before(world):
    driver = world.driver
    older = driver.virtual_authenticator_id
    newer = driver.execute("addVirtualAuthenticator", {"protocol": "ctap2", "transport": "internal", "hasResidentKey": True,
                                                       "hasUserVerification": True, "isUserVerified": True})["value"]
    if world.engine == "webkit":
        # The session's user script holds the server's token: its owner's alone, rewritten or not.
        script, = world.directory.glob("tmp/authctl-serve-*/user-script.js")
        assert f"{newer}" in script.read_text() and script.stat().st_mode & 0o777 == 0o600, oct(script.stat().st_mode)
    bank_user(world)["passkeys"].clear()  # a customer with no passkey: the bank offers to make one
    open_bank(world)  # a page loaded after the newer authenticator came
    wait_screen(world, "account")
    click(world, "create-passkey")
    wait_until(lambda: "Passkey created" in text(world, "message"), "the passkey created")
    on_newer = driver.execute("getCredentials", {"authenticatorId": newer})["value"]
    assert [c["credentialId"] for c in on_newer] == [k for k in bank_user(world)["passkeys"]]
    assert driver.get_credentials() == [], "the older authenticator made none"
    driver.execute("removeVirtualAuthenticator", {"authenticatorId": newer})
    bank_user(world)["passkeys"].clear()
    open_bank(world)
    wait_screen(world, "account")
    click(world, "create-passkey")
    wait_until(lambda: "Passkey created" in text(world, "message"), "a passkey created on the older one")
    assert len(driver.get_credentials()) == 1 and driver.virtual_authenticator_id == older
    driver.remove_virtual_authenticator()


def test_an_authenticator_whose_user_does_not_consent_cancels_the_pages_ceremonies(world):
    from selenium.webdriver.common.virtual_authenticator import Credential, VirtualAuthenticatorOptions

    driver = world.driver
    click(world, "sign-out")
    wait_screen(world, "sign-in")
    driver.add_virtual_authenticator(VirtualAuthenticatorOptions(
        protocol="ctap2", transport="internal", has_resident_key=True, has_user_verification=True, is_user_verified=True,
        is_user_consenting=False))
    # A passkey for the bank's RP ID that the bank does not know: used, it would be refused and
    # signalled unknown (and leave the authenticator); canceled, it stays.
    key = ec.generate_private_key(ec.SECP256R1()).private_bytes(
        serialization.Encoding.DER, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    held = Credential.create_resident_credential(bytearray(b"\x02" * 16), "localhost", bytearray(b"user-8"), bytearray(key), 0)
    driver.add_credential(held)
    open_bank(world)
    wait_screen(world, "sign-in")
    click(world, "passkey-sign-in")
    wait_until(lambda: "cancelled" in text(world, "message"), "the sign-in cancelled")
    assert screen(world) == "sign-in"
    assert [c.id for c in driver.get_credentials()] == [held.id], "the passkey was not used"
    driver.remove_virtual_authenticator()


def test_commands_on_an_unknown_session_or_authenticator_are_webdriver_errors(world):
    url, session = world.intermediary.url, world.driver.session_id
    status, answer = call(url, "POST", "/session/no-such-session/webauthn/authenticator", {"protocol": "ctap2", "transport": "internal"})
    assert status == 404 and answer["value"]["error"] == "invalid session id"
    status, answer = call(url, "GET", f"/session/{session}/webauthn/authenticator/no-such-authenticator/credentials")
    assert status == 400 and answer["value"]["error"] == "invalid argument" and "no-such-authenticator" in answer["value"]["message"], \
        "as serve answers it (§11: an authenticatorId that matches none is invalid argument)"
    status, answer = call(url, "POST", "/session/no-such-session/url", {"url": "about:blank"})
    assert status == 404 and answer["value"]["error"] == "invalid session id", "chromedriver's own answer, passed on"
    # A body over 1 MiB is refused as serve refuses it: declared, before it is read; sent in
    # chunks, once it has passed the limit — then as a WebDriver error too.
    head = f"POST /session/{session}/url HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Type: application/json\r\n"
    status, answer = refused(url, f"{head}Content-Length: {1 << 20 | 1}\r\n\r\n".encode(), b"x" * (1 << 20 | 1))
    assert status == 413 and "larger than the server accepts" in answer["detail"]
    chunk = b"x" * (1 << 20)
    status, answer = refused(url, f"{head}Transfer-Encoding: chunked\r\n\r\n".encode(),
                             b"%x\r\n%s\r\n1\r\nx\r\n0\r\n\r\n" % (len(chunk), chunk))
    assert status == 413 and answer["value"]["error"] == "invalid argument"
    assert world.driver.title.startswith("YourBank"), "the session goes on"


class Echo(BaseHTTPRequestHandler):
    """An upstream that answers each command with what reached it."""

    def answer(self):
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        data = json.dumps({"value": {"method": self.command, "path": self.path, "body": body.decode(),
                                     "contentType": self.headers.get("Content-Type")}}).encode()
        if self.path.endswith("/screenshot"):  # a large window's, in base64
            data = json.dumps({"value": "A" * (12 << 20)}).encode()
        self.send_response(418)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST = do_DELETE = do_PUT = answer

    def log_message(self, *args):
        pass


def test_commands_reach_the_upstream_as_sent_and_its_answers_come_back_as_given(tmp_path):
    echo = ThreadingHTTPServer(("127.0.0.1", 0), Echo)
    threading.Thread(target=echo.serve_forever, daemon=True).start()
    intermediary = Intermediary(tmp_path, f"http://127.0.0.1:{echo.server_address[1]}/wd/hub")
    try:
        status, answer = call(intermediary.url, "POST", "/session/s1/element/e1%20x/value?a=b%26c", {"text": "é\u0000"})
        assert status == 418, "the upstream's status, whatever it is"
        assert answer["value"] == {"method": "POST", "path": "/wd/hub/session/s1/element/e1%20x/value?a=b%26c",
                                   "body": json.dumps({"text": "é\u0000"}), "contentType": "application/json"}
        status, answer = call(intermediary.url, "DELETE", "/session/s1/cookie/name")
        assert (status, answer["value"]["method"], answer["value"]["body"]) == (418, "DELETE", "")
        status, answer = call(intermediary.url, "GET", "/status")
        assert answer["value"]["path"] == "/wd/hub/status"
        status, answer = call(intermediary.url, "GET", "/session/s1/screenshot")
        assert status == 418 and len(answer["value"]) == 12 << 20, "an answer larger than a scenario's (4 MiB) comes back whole"
    finally:
        intermediary.stop()
        echo.shutdown()


def test_new_session_cannot_name_the_webkit_browser_past_the_intermediary(tmp_path):
    """The browser WebKitWebDriver launches is authctl-webkit, whatever the client's capabilities
    name: a body the intermediary cannot read as JSON (a lone surrogate, a raw tab in a string —
    WebKitWebDriver's parser takes both) is refused, not sent on as it came, and the upstream gets
    the capabilities as the intermediary read them (a duplicated key once, its last value)."""
    echo = ThreadingHTTPServer(("127.0.0.1", 0), Echo)
    threading.Thread(target=echo.serve_forever, daemon=True).start()
    browser = tmp_path / "authctl-webkit"
    browser.write_text("#!/bin/sh\nexit 0\n")
    browser.chmod(0o755)
    intermediary = Intermediary(tmp_path, f"http://127.0.0.1:{echo.server_address[1]}", str(browser))
    hostile = '{"webkitgtk:browserOptions": {"binary": "/tmp/hostile", "args": ["--automation", "--user-script=/tmp/hostile.js"]}}'

    def new_session(body: str) -> tuple[int, dict]:
        request = urllib.request.Request(intermediary.url + "/session", method="POST", data=body.encode(),
                                         headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=DEADLINE) as response:
                return response.status, json.loads(response.read())
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read())
    try:
        for unread in ('{"capabilities": {"alwaysMatch": %s}, "x": "\\ud800"}' % hostile,
                       '{"capabilities": {"alwaysMatch": %s}, "x": "a\tb"}' % hostile, "[]", ""):
            status, answer = new_session(unread)
            assert (status, answer["value"]["error"]) == (400, "invalid argument"), (unread, answer)
        # authctl-webkit exits at once on an option it does not take (GTK's --gtk-module would load
        # code into it), and WebKitWebDriver waits for it without end: refused before.
        for args in (["--automation", "--gtk-module=/tmp/hostile.so"], ["--automation", "--enable-webgl"]):
            status, answer = new_session(json.dumps({"capabilities": {"alwaysMatch": {"webkitgtk:browserOptions": {"args": args}}}}))
            assert (status, answer["value"]["error"]) == (400, "invalid argument") and args[1] in answer["value"]["message"], answer
        status, answer = new_session('{"capabilities": {"alwaysMatch": %s}, "capabilities": {"alwaysMatch": %s}}'
                                     % (hostile, hostile.replace("/tmp/hostile", "/tmp/other")))
        assert status == 418, "it reached the upstream"
        sent = answer["value"]["body"]
        assert "/tmp/hostile" not in sent and "/tmp/other" not in sent, sent
        options = json.loads(sent)["capabilities"]["alwaysMatch"]["webkitgtk:browserOptions"]
        assert options["binary"] == str(browser)
        assert [a for a in options["args"] if a.startswith("--user-script")] == [options["args"][-1]]
    finally:
        intermediary.stop()
        echo.shutdown()


def test_a_command_from_a_web_page_is_refused(world):
    """A WebDriver client sends no Origin and names a loopback host; a page that reached the port
    (a fetch, a form, a name made to resolve to 127.0.0.1) does otherwise, and drives nothing."""
    url = world.intermediary.url
    port = url.rsplit(":", 1)[1]
    for headers in ({"Origin": "https://evil.example"}, {"Host": f"evil.example:{port}"}, {"Host": "127.0.0.1.evil.example"}):
        status, answer = call(url, "POST", "/session", {"capabilities": {}}, headers)
        assert status == 403 and answer["value"]["error"] == "unknown error", headers
        status, answer = call(url, "GET", f"/session/{world.driver.session_id}/url", None, headers)
        assert status == 403, headers
    for host in (f"localhost:{port}", f"127.0.0.1:{port}", f"[::1]:{port}", "127.1.2.3"):
        assert call(url, "GET", "/status", None, {"Host": host})[0] == 200, host


class Garbage(BaseHTTPRequestHandler):
    def do_POST(self):
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.end_headers()
        self.wfile.write(b"<html>not a driver</html>")

    def log_message(self, *args):
        pass


def test_an_upstream_that_is_down_or_no_driver_is_an_unknown_error_naming_it(tmp_path):
    closed = f"http://127.0.0.1:{free_port()}"
    garbage = ThreadingHTTPServer(("127.0.0.1", 0), Garbage)
    threading.Thread(target=garbage.serve_forever, daemon=True).start()
    try:
        for upstream, why in ((closed, "did not answer"), (f"http://127.0.0.1:{garbage.server_address[1]}", "not a JSON object")):
            intermediary = Intermediary(tmp_path / why.replace(" ", "-"), upstream)
            try:
                status, answer = call(intermediary.url, "POST", "/session", {"capabilities": {}})
                assert status == 500 and answer["value"]["error"] == "unknown error"
                assert upstream in answer["value"]["message"] and why in answer["value"]["message"]
            finally:
                intermediary.stop()
    finally:
        garbage.shutdown()


class Stalling(BaseHTTPRequestHandler):
    """An upstream whose /hang commands wait until the test releases them, and whose other
    answers are JSON no client could take for WebDriver's."""
    arrived: list
    release: threading.Event
    answers = {"/weird-status": (999, {"value": 1}), "/no-value": (200, {"oops": 1}),
               "/server-error-without-error": (500, {"value": {"message": "no error code"}}),
               "/server-error": (500, {"value": {"error": "unknown error", "message": "the driver's own"}})}

    def do_GET(self):
        if self.path.endswith("/hang"):
            self.arrived.append(self.path)
            self.release.wait()
            status, body = 200, {"value": None}
        else:
            status, body = self.answers.get(self.path, (200, {"value": None}))
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


def test_commands_that_wait_on_the_upstream_hold_no_other_command(tmp_path):
    """Many commands waiting at once (async scripts, page loads, an upstream that hangs) each
    reach the upstream at once, and a command beside them is answered."""
    Stalling.arrived, Stalling.release = [], threading.Event()
    upstream = ThreadingHTTPServer(("127.0.0.1", 0), Stalling)
    threading.Thread(target=upstream.serve_forever, daemon=True).start()
    intermediary = Intermediary(tmp_path, f"http://127.0.0.1:{upstream.server_address[1]}")
    waiting = [threading.Thread(target=call, args=(intermediary.url, "GET", f"/session/s{n}/hang"), daemon=True) for n in range(64)]
    try:
        for thread in waiting:
            thread.start()
        # Dispatch's shared pool grew by about a thread a second: the 64th arrived after a minute.
        wait_until(lambda: len(Stalling.arrived) == 64, "every waiting command at the upstream", timeout=DEADLINE / 3)
        assert call(intermediary.url, "GET", "/status") == (200, {"value": None})
    finally:
        Stalling.release.set()
        for thread in waiting:
            thread.join(timeout=DEADLINE)
        intermediary.stop()
        upstream.shutdown()


def test_an_upstream_answer_that_is_not_webdrivers_is_an_unknown_error(tmp_path):
    """Never a status outside HTTP's, a body without WebDriver's value, nor a 5xx without its
    error code: each is unknown error naming the upstream. A driver's own error comes back as it was."""
    Stalling.arrived, Stalling.release = [], threading.Event()
    upstream = ThreadingHTTPServer(("127.0.0.1", 0), Stalling)
    threading.Thread(target=upstream.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{upstream.server_address[1]}"
    intermediary = Intermediary(tmp_path, url)
    try:
        for path in ("/weird-status", "/no-value", "/server-error-without-error"):
            status, answer = call(intermediary.url, "GET", path)
            assert (status, answer["value"]["error"]) == (500, "unknown error"), (path, answer)
            assert url in answer["value"]["message"] and "not a WebDriver answer" in answer["value"]["message"]
        assert call(intermediary.url, "GET", "/server-error") == (500, Stalling.answers["/server-error"][1])
    finally:
        intermediary.stop()
        upstream.shutdown()


def test_a_request_target_that_is_no_path_is_an_unknown_command(tmp_path):
    """`*`, an absolute URL or an authority form names no command (and would name another server
    to the upstream's client): WebDriver's unknown command, 404, never the upstream reached."""
    import socket
    Stalling.arrived, Stalling.release = [], threading.Event()
    upstream = ThreadingHTTPServer(("127.0.0.1", 0), Stalling)
    threading.Thread(target=upstream.serve_forever, daemon=True).start()
    intermediary = Intermediary(tmp_path, f"http://127.0.0.1:{upstream.server_address[1]}")
    host, port = intermediary.url.removeprefix("http://").rsplit(":", 1)
    try:
        for target in ("*", "http://127.0.0.1@example.com:1/status", "example.com:1"):
            with socket.create_connection((host, int(port)), timeout=DEADLINE) as connection:
                connection.sendall(f"GET {target} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n".encode())
                answer = b""
                while chunk := connection.recv(65536):
                    answer += chunk
            head, _, body = answer.partition(b"\r\n\r\n")
            status = int(head.split()[1])
            assert status < 500, (target, answer)
            if status == 404:
                assert json.loads(body)["value"]["error"] == "unknown command", (target, body)
        assert Stalling.arrived == [], "the upstream was reached"
    finally:
        intermediary.stop()
        upstream.shutdown()


@pytest.mark.parametrize("arguments, says", [
    ([], "--upstream URL is required"),
    (["--upstream", "ftp://127.0.0.1:9515"], "--upstream takes the driver's http://HOST:PORT"),
    (["--upstream", "http://127.0.0.1:9515/?x=1"], "--upstream takes the driver's http://HOST:PORT"),
    (["--upstream", "http://127.0.0.1:9515", "--listen", "0.0.0.0:0"], "listens on loopback only"),
    (["--upstream", "http://127.0.0.1:9515", "--webkit-browser", "/etc/passwd"], "is not a program this user can run"),
])
def test_a_bad_option_is_a_usage_error(tmp_path, arguments, says):
    result = subprocess.run([BIN, "webdriver", *arguments], env=own_environment(tmp_path), capture_output=True, text=True, timeout=DEADLINE)
    assert result.returncode == 64 and says in result.stderr and result.stdout == ""
