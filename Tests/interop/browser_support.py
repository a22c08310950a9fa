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
    per-key trust switch), a 520×900 viewport as Chromium's window."""
    return _firefox_driver().Firefox(profile=profile, hosts=hosts, binary=FIREFOX, window_size=(520, 900), timeout=DEADLINE)


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
    """A browser of `engine` ("chromium", "firefox"), with `bridge` (the page bridge's script)
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
