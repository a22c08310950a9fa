"""What the browser tests share: a throw-away TLS certificate Chromium trusts by its SPKI hash,
the browser engines — headless Chromium (Debian's chromium and chromium-driver through Selenium),
headless Firefox ESR (over WebDriver BiDi, clients/python's authctl_client.firefox) — each with the
test's host names mapped to 127.0.0.1 and the page bridge preloaded where asked, `authctl serve`
with its token, and waiting on a condition."""
import base64
import datetime
import hashlib
import importlib.util
import json
import os
import pathlib
import shutil
import signal
import ssl
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Callable

import pytest

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from conftest import BIN, ROOT, own_environment

CHROMIUM = os.environ.get("AUTHCTL_CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("AUTHCTL_CHROMEDRIVER", "/usr/bin/chromedriver")
HAVE_CHROMIUM = bool(shutil.which(CHROMIUM) and shutil.which(CHROMEDRIVER))
FIREFOX = os.environ.get("AUTHCTL_FIREFOX", "/usr/bin/firefox-esr")
HAVE_FIREFOX = bool(shutil.which(FIREFOX))
DEADLINE = 60  # seconds: a generous bound on any one thing the browser does
# Chromium's own WebAuthn in a tab, for comparing with: a CDP virtual authenticator (WebAuthn.enable,
# WebAuthn.addVirtualAuthenticator) that answers as a platform authenticator with every extension.
VIRTUAL_AUTHENTICATOR = {
    "protocol": "ctap2", "ctap2Version": "ctap2_1", "transport": "internal",
    "hasResidentKey": True, "hasUserVerification": True, "isUserVerified": True,
    "hasPrf": True, "hasLargeBlob": True, "hasCredBlob": True, "hasMinPinLength": True,
    "automaticPresenceSimulation": True,
}


def wait_until(condition, what: str, timeout: float = DEADLINE, poll: float = 0.05):
    """Polls `condition` until it returns something true (which it returns), or fails the test
    after `timeout` seconds naming `what`."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        try:
            last = condition()
        except Exception as error:  # a page between loads, a request not answered yet
            last = error
        else:
            if last:
                return last
        time.sleep(poll)
    raise AssertionError(f"timed out after {timeout:g} s waiting for {what} (last: {last!r})")


def certificate(directory: pathlib.Path, *names: str) -> tuple[ssl.SSLContext, str]:
    """A throw-away certificate for `names`, a server context with it, and its SPKI hash for
    Chromium's --ignore-certificate-errors-spki-list."""
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, names[0])])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(subject).issuer_name(subject).public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(days=1)).not_valid_after(now + datetime.timedelta(days=7))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName(n) for n in names]), critical=False)
            .sign(key, hashes.SHA256()))
    (directory / "cert.pem").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    (directory / "key.pem").write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                                          serialization.NoEncryption()))
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(directory / "cert.pem", directory / "key.pem")
    spki = key.public_key().public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    return context, base64.b64encode(hashlib.sha256(spki).digest()).decode()


def chromium(profile: pathlib.Path, hosts: list[str], spki: str, extension: pathlib.Path | None = None, extra: list[str] = ()):
    """Headless Chromium through chromedriver: `hosts` resolve to 127.0.0.1, the certificate
    with `spki` is trusted, `extension` (an unpacked directory) loaded."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    arguments = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                 "--window-size=520,900", f"--user-data-dir={profile}",
                 "--host-resolver-rules=" + ", ".join(f"MAP {h} 127.0.0.1" for h in hosts),
                 f"--ignore-certificate-errors-spki-list={spki}"]
    if extension:
        arguments += [f"--load-extension={extension}", f"--disable-extensions-except={extension}"]
    for argument in arguments + list(extra):
        options.add_argument(argument)
    # The page's console and failed loads, for driver.get_log("browser").
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_script_timeout(DEADLINE)
    driver.set_page_load_timeout(DEADLINE)
    return driver


def _firefox_driver():
    """The Python client's Firefox driver from the tree under test (the shared venv may hold
    another tree's authctl_client); the module imports nothing of its package."""
    name = "authctl_client_firefox_under_test"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, ROOT / "clients" / "python" / "authctl_client" / "firefox.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


def firefox(profile: pathlib.Path, hosts: list[str], spki: str = "", extra: list[str] = ()):
    """Headless Firefox ESR over WebDriver BiDi (authctl_client.firefox): `hosts` resolve to
    127.0.0.1, certificates are accepted (the session's acceptInsecureCerts: Firefox has no
    per-key trust switch), a 520×900 viewport as Chromium's window; Firefox's own WebAuthn
    answered by the virtual authenticators a test adds (add_virtual_authenticator), as Chromium's
    by CDP's."""
    return _firefox_driver().Firefox(profile=profile, hosts=hosts, binary=FIREFOX, window_size=(520, 900), timeout=DEADLINE,
                                     virtual_authenticators=True)


@dataclass(frozen=True)
class Engine:
    """A browser engine the browser suites run in: `start(profile, hosts, spki, extra)` gives a
    driver with Selenium's surface (get, execute_script, execute_async_script, find_element by id
    → click/send_keys, save_screenshot, get_log, quit); `preload(driver, script)` makes `script`
    run before the page's own scripts in every frame of the driver's tab, at every navigation."""
    name: str
    available: bool
    missing: str  # why the engine cannot run here, when it cannot
    start: Callable
    preload: Callable


def _chromium_preload(driver, script: str):
    driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": script})


ENGINES: dict[str, Engine] = {
    "chromium": Engine("chromium", HAVE_CHROMIUM, "Debian's chromium and chromium-driver are not installed",
                       lambda profile, hosts, spki, extra=(): chromium(profile, hosts, spki, extra=extra), _chromium_preload),
    "firefox": Engine("firefox", HAVE_FIREFOX, "Debian's firefox-esr is not installed", firefox,
                      lambda driver, script: driver.preload(script)),
}


def open_browser(engine: str, profile: pathlib.Path, hosts: list[str], spki: str, bridge: str | None = None,
                 extra: list[str] = ()):
    """A browser of `engine` ("chromium", "firefox", "webkit"), with `bridge` (the page bridge's script)
    preloaded when given."""
    found = ENGINES[engine]
    driver = found.start(profile, hosts, spki, extra)
    if bridge is not None:
        try:
            found.preload(driver, bridge)
        except BaseException:
            driver.quit()
            raise
    return driver


def engine_params(*sides: str):
    """pytest params for `sides` ("chromium-bridge", "firefox-bridge", …: an engine, a dash, what
    answers the page), each skipped where its engine is not installed."""
    params = []
    for side in sides:
        engine = ENGINES[side.split("-")[0]]
        params.append(pytest.param(side, id=side, marks=pytest.mark.skipif(not engine.available, reason=engine.missing)))
    return params


def bridge_sides() -> list[str]:
    """The page bridge in every engine."""
    return [f"{name}-bridge" for name in ENGINES]


class AuthctlServer:
    """`authctl serve` on a free loopback port, for the test's lifetime; `call` is one request."""

    def __init__(self, scratch: pathlib.Path):
        self.process = subprocess.Popen([BIN, "serve"], env=own_environment(scratch), stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, text=True)
        self.url = self.process.stdout.readline().split()[-1]
        self.token = self.process.stdout.readline().split()[-1]

    def call(self, method: str, path: str, body=None, text: bool = False):
        request = urllib.request.Request(self.url + path, method=method,
                                         data=json.dumps(body).encode() if body is not None else None,
                                         headers={"Authorization": f"Bearer {self.token}"})
        try:
            with urllib.request.urlopen(request, timeout=DEADLINE) as response:
                data = response.read()
        except urllib.error.HTTPError as error:
            raise AssertionError(f"{method} {path}: {error.code} {error.read().decode()}") from None
        if text:
            return data.decode()
        return json.loads(data) if data else None

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        assert self.process.wait(timeout=DEADLINE) == 0, self.process.stderr.read()


# WebKitGTK: Debian's WebKitWebDriver (webkit2gtk-driver) launching authctl-webkit
# (clients/webkit, built beside authctl by scripts/build-webkit-browser.sh) under Xvfb. WebKitGTK
# has no headless mode and lets no WebDriver client add a script that runs before the page's, so
# authctl-webkit adds the one in its --user-script file, read again at every navigation.
WEBKIT_DRIVER = os.environ.get("AUTHCTL_WEBKIT_DRIVER", "/usr/bin/WebKitWebDriver")
WEBKIT_BROWSER = os.environ.get("AUTHCTL_WEBKIT_BROWSER", str(pathlib.Path(BIN).parent / "authctl-webkit"))
XVFB = shutil.which("Xvfb")
HAVE_WEBKIT = bool(shutil.which(WEBKIT_DRIVER) and XVFB and os.access(WEBKIT_BROWSER, os.X_OK))
WEBKIT_MISSING = ("WebKitGTK's WebKitWebDriver (webkit2gtk-driver), Xvfb (xvfb) or authctl-webkit "
                  "(scripts/build-webkit-browser.sh) is missing")


class Display:
    """An Xvfb display of the test's own (`-displayfd`: the server picks a free number and says
    which once it listens), for WebKitGTK, which has no headless mode."""

    def __init__(self):
        self.process = subprocess.Popen([XVFB, "-displayfd", "1", "-screen", "0", "1280x1024x24", "-nolisten", "tcp"],
                                        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        number = self.process.stdout.readline().strip()
        if not number:
            self.process.wait(timeout=DEADLINE)
            raise AssertionError(f"Xvfb exited ({self.process.returncode}) without a display")
        self.name = f":{number}"

    def stop(self):
        if self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=DEADLINE)


def free_port() -> int:
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def webkit(display: Display, scratch: pathlib.Path, user_script: pathlib.Path, capabilities: dict | None = None,
           proxy: "HostProxy | None" = None):
    """authctl-webkit through WebKitWebDriver on `display`; its pages get `user_script` (a file,
    absent until written) at document start. The driver's `quit()` ends WebKitWebDriver too."""
    from selenium import webdriver
    from selenium.webdriver.common.options import ArgOptions

    port = free_port()
    env = dict(own_environment(scratch), DISPLAY=display.name)
    log = open(scratch / "webkitwebdriver.log", "w")
    service = subprocess.Popen([WEBKIT_DRIVER, f"--port={port}", "--host=127.0.0.1"], env=env, stdout=log,
                               stderr=subprocess.STDOUT)
    log.close()

    def listening():
        assert service.poll() is None, f"WebKitWebDriver exited ({service.returncode}): {(scratch / 'webkitwebdriver.log').read_text()}"
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/status", timeout=5) as response:
            return json.loads(response.read())["value"]["ready"]

    try:
        wait_until(listening, "WebKitWebDriver listening")
        options = ArgOptions()
        options.set_capability("webkitgtk:browserOptions", {
            "binary": WEBKIT_BROWSER, "args": ["--automation", f"--user-script={user_script}", *(proxy.arguments() if proxy else [])]})
        for name, value in (capabilities or {}).items():
            options.set_capability(name, value)

        class Driver(webdriver.Remote):
            def save_screenshot(self, filename) -> bool:
                # WebKit's snapshot is the last frame painted: wait for the page's next two.
                self.execute_async_script("const done = arguments[0]; requestAnimationFrame(() => requestAnimationFrame(() => done()));")
                return super().save_screenshot(filename)

            def quit(self):
                try:
                    super().quit()
                finally:
                    if service.poll() is None:
                        service.terminate()
                    service.wait(timeout=DEADLINE)

        driver = Driver(command_executor=f"http://127.0.0.1:{port}", options=options)
    except BaseException:
        service.terminate()
        service.wait(timeout=DEADLINE)
        raise
    driver.user_script = user_script
    driver.set_script_timeout(DEADLINE)
    driver.set_page_load_timeout(DEADLINE)
    return driver


def write_user_script(driver, text: str):
    """What the next page of `driver` (authctl-webkit) gets before its own scripts: replaced whole
    (a new file renamed over the old), so the browser never reads half of it."""
    path = pathlib.Path(driver.user_script)
    partial = path.with_name(path.name + ".new")
    partial.write_text(text)
    os.replace(partial, path)


class HostProxy:
    """A SOCKS5 proxy (RFC 1928) on loopback that connects every name to 127.0.0.1 on the port
    asked: WebKitGTK has no --host-resolver-rules, so authctl-webkit is given this proxy
    (`arguments()`) for the names a test serves from this machine. The browser sends the name, not
    an address (SOCKS5 resolves at the proxy)."""

    def __init__(self):
        import socket
        import threading
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def arguments(self) -> list:
        """authctl-webkit's: every name through this proxy but loopback (authctl serve's)."""
        return [f"--proxy=socks5://127.0.0.1:{self.port}", "--ignore-host=127.0.0.1", "--ignore-host=localhost"]

    def _accept(self):
        import threading
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._tunnel, args=(client,), daemon=True).start()

    @staticmethod
    def _exactly(sock, count: int) -> bytes:
        data = b""
        while len(data) < count:
            chunk = sock.recv(count - len(data))
            if not chunk:
                raise OSError("closed")
            data += chunk
        return data

    def _tunnel(self, client):
        import select
        import socket
        upstream = None
        try:
            client.settimeout(DEADLINE)
            version, methods = self._exactly(client, 2)
            self._exactly(client, methods)
            if version != 5:
                return
            client.sendall(b"\x05\x00")  # no authentication
            version, command, _, kind = self._exactly(client, 4)
            if kind == 1:
                self._exactly(client, 4)
            elif kind == 3:
                self._exactly(client, self._exactly(client, 1)[0])
            elif kind == 4:
                self._exactly(client, 16)
            port = int.from_bytes(self._exactly(client, 2), "big")
            if command != 1 or kind not in (1, 3, 4):
                client.sendall(b"\x05\x07\x00\x01" + bytes(6))  # command not supported
                return
            try:
                upstream = socket.create_connection(("127.0.0.1", port), timeout=DEADLINE)
            except OSError:
                client.sendall(b"\x05\x05\x00\x01" + bytes(6))  # connection refused
                return
            client.sendall(b"\x05\x00\x00\x01" + bytes(6))
            ends = [client, upstream]
            while True:
                readable, _, _ = select.select(ends, [], [], DEADLINE)
                if not readable:
                    return
                for end in readable:
                    data = end.recv(65536)
                    if not data:
                        return
                    (upstream if end is client else client).sendall(data)
        except (OSError, ValueError):
            return
        finally:
            client.close()
            if upstream:
                upstream.close()

    def stop(self):
        self.listener.close()



class TLSFront:
    """https://127.0.0.1:PORT in front of authctl serve's http://127.0.0.1:`upstream`, with a
    throw-away certificate (the WebKitGTK session accepts it: acceptInsecureCerts): WebKit blocks an
    https:// page's calls to http://127.0.0.1 as mixed content, so the bridge in WebKitGTK calls
    authctl serve through this (GET /bridge.js's `server`)."""

    def __init__(self, upstream: int, scratch: pathlib.Path):
        import socket
        import threading
        self.upstream = upstream
        self.tls, _ = certificate(scratch, "localhost")
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"https://127.0.0.1:{self.listener.getsockname()[1]}"
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        import threading
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client):
        import socket
        import threading
        upstream = None
        try:
            client.settimeout(DEADLINE)
            client = self.tls.wrap_socket(client, server_side=True)
            upstream = socket.create_connection(("127.0.0.1", self.upstream), timeout=DEADLINE)
            back = threading.Thread(target=_pipe, args=(upstream, client), daemon=True)
            back.start()
            _pipe(client, upstream)
            back.join(DEADLINE)
        except (OSError, ValueError):
            return
        finally:
            client.close()
            if upstream:
                upstream.close()

    def stop(self):
        self.listener.close()


def _pipe(source, sink):
    """Copies `source` to `sink` until either ends; then `sink` is told no more is coming."""
    import socket
    try:
        while True:
            data = source.recv(65536)
            if not data:
                break
            sink.sendall(data)
    except OSError:
        pass
    try:
        sink.shutdown(socket.SHUT_WR)
    except OSError:
        pass


# One Xvfb and one proxy for the test run's WebKitGTK browsers, and a TLS front per authctl
# serve, started at the first use and ended with the run.
_webkit_shared: dict = {"fronts": {}}


def _webkit_start(profile: pathlib.Path, hosts: list[str], spki: str, extra=()):
    """authctl-webkit for a suite: every name (`hosts` among them) reached on 127.0.0.1 through
    the SOCKS5 proxy, certificates accepted (WebKitGTK has no per-key trust switch), a 520×900
    window as Chromium's."""
    import atexit
    if "display" not in _webkit_shared:
        _webkit_shared["display"], _webkit_shared["proxy"] = Display(), HostProxy()
        atexit.register(_webkit_stop)
    profile.mkdir(parents=True, exist_ok=True)
    driver = webkit(_webkit_shared["display"], profile, profile / "user-script.js", {"acceptInsecureCerts": True},
                    proxy=_webkit_shared["proxy"])
    driver.set_window_rect(width=520, height=900)
    driver.scratch, driver.engine = profile, "webkit"
    return driver


def _webkit_preload(driver, script: str):
    """The bridge, its server reached through a TLS front (TLSFront): the script's settings name
    authctl serve as GET /bridge.js put them, `"server":"http://127.0.0.1:PORT"`."""
    import re
    found = re.search(r'"server":"http://127\.0\.0\.1:(\d+)"', script)
    if found:
        port = int(found.group(1))
        if port not in _webkit_shared["fronts"]:
            _webkit_shared["fronts"][port] = TLSFront(port, driver.scratch)
        script = script.replace(found.group(0), f'"server":"{_webkit_shared["fronts"][port].url}"')
    write_user_script(driver, script)


def page_server(driver, url: str) -> str:
    """authctl serve's URL as the pages of `driver` reach it: `url`, or in WebKitGTK its TLS front."""
    port = int(url.rsplit(":", 1)[1])
    front = _webkit_shared["fronts"].get(port) if getattr(driver, "engine", None) == "webkit" else None
    return front.url if front else url


def _webkit_stop():
    for front in _webkit_shared["fronts"].values():
        front.stop()
    _webkit_shared["proxy"].stop()
    _webkit_shared["display"].stop()


ENGINES["webkit"] = Engine("webkit", HAVE_WEBKIT, WEBKIT_MISSING, _webkit_start, _webkit_preload)
