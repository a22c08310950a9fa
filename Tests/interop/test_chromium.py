"""Differential test against real headless Chromium.

The same options JSON goes through Chromium's own WebAuthn client — a page calls
`PublicKeyCredential.parseCreationOptionsFromJSON()` / `parseRequestOptionsFromJSON()`, then
`navigator.credentials.create()` / `.get()`, answered by a CDP virtual authenticator (ctap2,
transport `internal`, resident keys, user verification, prf, largeBlob, credBlob, minPinLength) —
and through `authctl register` / `authctl sign`. Each case compares:

- the outcome: `ok`, the DOMException's name (authctl's `domException` in `--json` error output),
  or `pending` — Chromium's promise has not settled after PENDING_MS (the request is then aborted),
  which on authctl's side is the timeout outcome (`timedOut` under `--instant-timeout`);
- the client's part of a response: clientDataJSON's `type`, `challenge`, `origin`, `crossOrigin`
  (and no `topOrigin`), `clientExtensionResults` (PRF outputs by their length: the two worlds hold
  different keys), `authenticatorAttachment`, `type`.

Not compared, because they belong to the authenticator, not to the client: attestation, AAGUID,
flags (BE/BS, UV on `discouraged`), transports, the chosen algorithm, the credential id.

A case is one of:
- compared (the default): any difference fails it;
- `authenticator=REASON`: the outcome differs because of Chromium's emulated authenticator or its
  virtual environment (the issue leaves those out); Chromium's outcome is pinned, so that the
  reason stays true;
- `known=REASON`: a client difference that docs/conformance.md, "Differences from Chromium",
  lists; both outcomes are pinned, so that a change on either side fails the case and the list
  is updated.

Both sides hold the same existing passkeys: before the cases each registers FIXTURES, and an
option naming `{uv}`, `{p3}` or `{pref}` gets that side's own credential id; what a create case
makes is removed from both sides afterwards. Most cases run on `https://login.example.com:PORT`
(a TLS server with a throw-away certificate that Chromium trusts by its SPKI hash, the name mapped
to 127.0.0.1), so that RP ID suffixes, the public-suffix rule and `appid` behave as on the web; a
few on `http://localhost:PORT`, and some in an iframe of `https://other.example.net:PORT` (authctl:
`--top-origin`, `--no-frame-permission`). Each calling context (a World) has its own tab, virtual
authenticator and authctl vault.

A third side runs every case through the page bridge (`authctl serve`'s GET /bridge.js, injected
into a tab of a second Chromium, docs/browser.md): the same page code, answered by an account of
the server. It must answer as `authctl register`/`sign` does — outcome and client part — except
for the cases BRIDGE_KNOWN lists (pinned, and listed in docs/browser.md); so wherever the CLI
answers as Chromium, so does a page through the bridge.

A fourth side runs the same page code through the page bridge in headless Firefox ESR (over
WebDriver BiDi, a tab per world): it too must answer as `authctl register`/`sign` does, except for
the cases FIREFOX_KNOWN lists — where Firefox's own client reads the options otherwise (pinned,
and listed with Firefox's behaviour in docs/browser.md, "Fidelity").

Every run writes what each side did, case by case, to $AUTHCTL_CHROMIUM_REPORT (default
.build/chromium-differential.md). docs/conformance.md, "Differences from Chromium", says how to
run it and lists what still differs.
"""
import base64
import dataclasses
import datetime
import functools
import hashlib
import http.server
import json
import os
import pathlib
import shutil
import ssl
import threading
import urllib.parse

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from browser_support import HAVE_FIREFOX, VIRTUAL_AUTHENTICATOR, AuthctlServer, chromium, firefox
from conftest import BIN, ROOT, Authctl, unb64url

CHROMIUM = os.environ.get("AUTHCTL_CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("AUTHCTL_CHROMEDRIVER", "/usr/bin/chromedriver")
pytestmark = pytest.mark.skipif(not (shutil.which(CHROMIUM) and shutil.which(CHROMEDRIVER)),
                                reason="Debian's chromium and chromium-driver are not installed")

PAGE_DIR = pathlib.Path(__file__).resolve().parent / "chromium"
HOST = "login.example.com"     # the TLS world's page; the RP ID is its registrable suffix
RP_ID = "example.com"
OTHER = "other.example.net"    # another site, also mapped to 127.0.0.1 and in the certificate
# Chromium's answers take 10-400 ms here (393 ms the slowest seen, at a load average of 10 on two
# cores); a promise still open after 2 s is waiting (for another authenticator, for a password
# sign-in). AUTHCTL_CHROMIUM_PENDING_MS changes it; the report gives each run's slowest answer.
PENDING_MS = int(os.environ.get("AUTHCTL_CHROMIUM_PENDING_MS", "2000"))
REPORT = pathlib.Path(os.environ.get("AUTHCTL_CHROMIUM_REPORT", ROOT / ".build" / "chromium-differential.md"))

# The passkeys both worlds hold before the cases run; `{NAME}` in a case's options is its id there.
FIXTURES = {
    # resident, made with user verification, with a credBlob, large-blob support and PRF
    "uv": {"user": {"id": "Zml4dHVyZQ", "name": "fixture", "displayName": "Fixture"},
           "authenticatorSelection": {"residentKey": "required", "userVerification": "required"},
           "extensions": {"credBlob": "Y3JlZGJsb2I", "largeBlob": {"support": "required"}, "prf": {}}},
    # credProtect level 3 (userVerificationRequired): invisible to a call that does not verify the
    # user. Not resident: Chromium's virtual authenticator holds only 3 resident credentials.
    "p3": {"user": {"id": "cHJvdGVjdGVk", "name": "protected", "displayName": "Protected"},
           "authenticatorSelection": {"residentKey": "discouraged", "userVerification": "required"},
           "extensions": {"credentialProtectionPolicy": "userVerificationRequired",
                          "enforceCredentialProtectionPolicy": True}},
    # resident with userVerification "preferred" and no credProtect input: Chromium's client asks
    # for credProtect level 3 by itself for this combination (ProtectionPolicyToCredProtect)
    "pref": {"user": {"id": "cHJlZmVycmVk", "name": "preferred", "displayName": "Preferred"},
             "authenticatorSelection": {"residentKey": "required", "userVerification": "preferred"}},
}
CHALLENGE = "ZGlmZmVyZW50aWFsLWNoYWxsZW5nZQ"


# MARK: the two worlds

class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def serve(tls: ssl.SSLContext | None) -> http.server.ThreadingHTTPServer:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(PAGE_DIR)))
    if tls:
        server.socket = tls.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def certificate(directory: pathlib.Path) -> tuple[ssl.SSLContext, str]:
    """A throw-away certificate for HOST and OTHER, and its SPKI hash for Chromium's trust flag."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, HOST)])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(days=1)).not_valid_after(now + datetime.timedelta(days=7))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName(HOST), x509.DNSName(OTHER)]), critical=False)
            .sign(key, hashes.SHA256()))
    (directory / "cert.pem").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    (directory / "key.pem").write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                                          serialization.PrivateFormat.PKCS8,
                                                          serialization.NoEncryption()))
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(directory / "cert.pem", directory / "key.pem")
    spki = key.public_key().public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    return context, base64.b64encode(hashlib.sha256(spki).digest()).decode()


@dataclasses.dataclass
class World:
    """One calling context, seen by both sides: a Chromium tab with its own virtual authenticator
    (the page itself, or an iframe in it), and an authctl vault of its own with the flags that say
    the same (`--top-origin`, `--no-frame-permission`)."""
    name: str
    origin: str                     # the calling document's origin
    rp_id: str
    page: str = ""                  # the tab's URL: the test page, or a top page that frames it
    framed: bool = False
    authctl_args: tuple = ()
    fixtures: bool = True           # registers FIXTURES (a frame without the permission cannot)
    handle: str = ""
    authenticator: str = ""         # the CDP virtual authenticator's id
    authctl: Authctl | None = None
    bridge_handle: str = ""         # its tab in the bridged Chromium
    bridge_account: str = ""        # its account on authctl serve (one device, "d")
    firefox_handle: str = ""        # its tab in Firefox, through the bridge
    firefox_account: str = ""       # that tab's account on authctl serve
    ids: dict = dataclasses.field(default_factory=dict)   # side -> {fixture name: credential id}


class Differential:
    def __init__(self, driver, worlds: dict):
        self.driver, self.worlds = driver, worlds
        self.bridged = None     # the second Chromium, whose tabs have the page bridge
        self.firefox = None     # Firefox ESR, whose tabs have the page bridge
        self.server = None      # authctl serve, for the bridge
        self.current = {}
        self.rows = []

    def side(self, world: World, side: str):
        """The browser of `side` ("chromium", "bridge": the bridged Chromium, "firefox"), and the
        tab of `world` in it."""
        return {"chromium": (self.driver, world.handle), "bridge": (self.bridged, world.bridge_handle),
                "firefox": (self.firefox, world.firefox_handle)}[side]

    def enter(self, world: World, reload: bool = False, side: str = "chromium"):
        """The tab of `world` in the browser of `side`, its calling document selected and its
        harness loaded."""
        from selenium.webdriver.support.wait import WebDriverWait
        driver, handle = self.side(world, side)
        if self.current.get(side) is not world or reload:
            driver.switch_to.window(handle)
            driver.switch_to.default_content()
            if reload:
                driver.refresh()
            if world.framed:
                WebDriverWait(driver, 60).until(
                    lambda d: d.execute_script("const f = document.getElementById('inner');"
                                               "return !!(f && f.contentWindow && f.contentDocument === null);"))
                driver.switch_to.frame("inner")
            WebDriverWait(driver, 60).until(lambda d: d.execute_script("return typeof differential === 'function'"))
            self.current[side] = world

    # Chromium's side, and the bridge's (the same page code in the bridged Chromium)
    def chromium(self, world: World, kind: str, options: dict, outer: dict, activation: bool | None,
                 side: str = "chromium") -> dict:
        # activation None: the page as it is; False: a fresh page (no user activation left from an
        # earlier case); True: a fresh page, then a click on it (transient user activation)
        driver = self.side(world, side)[0]
        self.enter(world, reload=activation is not None, side=side)
        if activation:
            driver.find_element("tag name", "body").click()
        result = driver.execute_async_script(
            "differential(arguments[0], arguments[1], arguments[2], arguments[3]).then(arguments[4])",
            kind, options, outer or None, PENDING_MS)
        if side != "chromium" and result.get("authctl") == "timedOut":
            # authctl's request timed out at once (the server's clock waits for nobody): in a
            # browser the promise would still be open.
            result = {**result, "outcome": "pending"}
        return result

    def bridge(self, world: World, kind: str, options: dict, outer: dict, activation: bool | None) -> dict:
        return self.chromium(world, kind, options, outer, activation, side="bridge")

    def in_firefox(self, world: World, kind: str, options: dict, outer: dict, activation: bool | None) -> dict:
        return self.chromium(world, kind, options, outer, activation, side="firefox")

    def forget(self, world: World, sides: dict):
        """Removes what a create case made, in both worlds, so that every case meets the fixtures
        alone (and Chromium's virtual authenticator, which holds 3 resident credentials, has room)."""
        theirs, ours = sides["chromium"], sides["authctl"]
        if theirs["outcome"] == "ok":
            raw = unb64url(theirs["response"]["rawId"])
            self.enter(world)
            self.driver.execute_cdp_cmd("WebAuthn.removeCredential", {
                "authenticatorId": world.authenticator, "credentialId": base64.b64encode(raw).decode()})
        if ours["outcome"] == "ok":
            deleted = world.authctl.run("delete", "--", ours["response"]["id"])
            assert deleted.code == 0, deleted.stderr
        for side, account in (("bridge", world.bridge_account), ("firefox", world.firefox_account)):
            made = sides.get(side)
            if made and made["outcome"] == "ok":
                self.server.call("DELETE", f"/accounts/{account}/devices/d/passkeys/{made['response']['id']}")

    # authctl's side
    def run_authctl(self, world: World, kind: str, options: dict, outer: dict, args: tuple = ()) -> dict:
        command = "register" if kind == "create" else "sign"
        extra = ["--json", "--instant-timeout", *world.authctl_args, *args]
        if "mediation" in (outer or {}):
            extra += ["--mediation", outer["mediation"]]
        if "uiMode" in (outer or {}):
            extra += ["--ui-mode", outer["uiMode"]]
        result = world.authctl.run(command, "--origin", world.origin, "--options", "-", *extra,
                                   stdin=json.dumps(options))
        if result.code == 0:
            return {"outcome": "ok", "response": json.loads(result.stdout), "stderr": result.stderr.strip()}
        try:
            error = json.loads(result.stderr.strip().splitlines()[-1])
        except (ValueError, IndexError):
            return {"outcome": f"exit {result.code}", "message": result.stderr.strip()}
        outcome = "pending" if error["error"] == "timedOut" else error["domException"]
        return {"outcome": outcome, "error": error["error"], "message": error["message"]}


@pytest.fixture(scope="module")
def differential(tmp_path_factory):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    directory = tmp_path_factory.mktemp("chromium")
    tls, spki = certificate(directory)
    secure, local = serve(tls), serve(None)
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--no-first-run", f"--user-data-dir={directory / 'profile'}",
                     f"--host-resolver-rules=MAP {HOST} 127.0.0.1, MAP {OTHER} 127.0.0.1",
                     f"--ignore-certificate-errors-spki-list={spki}"):
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_script_timeout(60)
    driver.set_page_load_timeout(60)

    origin = f"https://{HOST}:{secure.server_address[1]}"
    top = f"https://{OTHER}:{secure.server_address[1]}"
    framed = top + "/frame.html?src=" + urllib.parse.quote(origin + "/index.html", safe="")
    permissions = "&allow=" + urllib.parse.quote("publickey-credentials-get; publickey-credentials-create", safe="")
    worlds = {
        "tls": World("tls", origin, RP_ID),
        "local": World("local", f"http://localhost:{local.server_address[1]}", "localhost"),
        # the test page in an iframe of another site that grants both permissions
        "frame": World("frame", origin, RP_ID, page=framed + permissions, framed=True,
                       authctl_args=("--top-origin", top)),
        # ... and one that grants neither
        "frame-without-permission": World("frame-without-permission", origin, RP_ID, page=framed, framed=True,
                                          authctl_args=("--top-origin", top, "--no-frame-permission"),
                                          fixtures=False),
    }
    session = Differential(driver, worlds)
    try:
        for index, world in enumerate(worlds.values()):
            if index:
                driver.switch_to.new_window("tab")
            driver.get(world.page or world.origin + "/index.html")
            world.handle = driver.current_window_handle
            driver.execute_cdp_cmd("WebAuthn.enable", {"enableUI": False})
            world.authenticator = driver.execute_cdp_cmd(
                "WebAuthn.addVirtualAuthenticator", {"options": VIRTUAL_AUTHENTICATOR})["authenticatorId"]
            world.authctl = Authctl(directory / f"vault-{world.name}")
            init = world.authctl.run("init", "--kdf", "min")
            assert init.code == 0, init.stderr
            world.ids = {"chromium": {}, "authctl": {}}
            for name, members in FIXTURES.items() if world.fixtures else ():
                fixture = {"rp": {"id": world.rp_id, "name": "Differential"}, "challenge": CHALLENGE,
                           "pubKeyCredParams": [{"type": "public-key", "alg": -7}], **members}
                # a create from a cross-origin iframe needs a click in it
                theirs = session.chromium(world, "create", fixture, {}, True if world.framed else None)
                ours = session.run_authctl(world, "create", fixture, {})
                assert theirs["outcome"] == "ok", (world.name, name, theirs)
                assert ours["outcome"] == "ok", (world.name, name, ours)
                world.ids["chromium"][name] = theirs["response"]["id"]
                world.ids["authctl"][name] = ours["response"]["id"]
        # The bridge's side: a second Chromium (its frames in one renderer, so that the bridge
        # injected into a tab is in its cross-origin frame too), a tab per world.
        session.server = AuthctlServer(directory / "serve")
        session.bridged = chromium(directory / "profile-bridge", [HOST, OTHER], spki, extra=["--disable-site-isolation-trials"])
        for index, world in enumerate(worlds.values()):
            if index:
                session.bridged.switch_to.new_window("tab")
            world.bridge_account = session.server.call("POST", "/accounts", {"devices": [{"name": "d", "pin": "1234"}]})["id"]
            script = session.server.call("GET", f"/bridge.js?account={world.bridge_account}&device=d", text=True)
            session.bridged.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": script})
            session.bridged.get(world.page or world.origin + "/index.html")
            world.bridge_handle = session.bridged.current_window_handle
            world.ids["bridge"] = {}
            for name, members in FIXTURES.items() if world.fixtures else ():
                fixture = {"rp": {"id": world.rp_id, "name": "Differential"}, "challenge": CHALLENGE,
                           "pubKeyCredParams": [{"type": "public-key", "alg": -7}], **members}
                made = session.bridge(world, "create", fixture, {}, True if world.framed else None)
                assert made["outcome"] == "ok", (world.name, name, made)
                world.ids["bridge"][name] = made["response"]["id"]
        # The bridge in Firefox: a tab per world, the bridge preloaded into it (its frames too).
        if HAVE_FIREFOX:
            session.firefox = firefox(directory / "profile-firefox", [HOST, OTHER])
            for index, world in enumerate(worlds.values()):
                if index:
                    session.firefox.switch_to.new_window("tab")
                world.firefox_account = session.server.call("POST", "/accounts", {"devices": [{"name": "d", "pin": "1234"}]})["id"]
                session.firefox.preload(session.server.call("GET", f"/bridge.js?account={world.firefox_account}&device=d", text=True))
                session.firefox.get(world.page or world.origin + "/index.html")
                world.firefox_handle = session.firefox.current_window_handle
                world.ids["firefox"] = {}
                for name, members in FIXTURES.items() if world.fixtures else ():
                    fixture = {"rp": {"id": world.rp_id, "name": "Differential"}, "challenge": CHALLENGE,
                               "pubKeyCredParams": [{"type": "public-key", "alg": -7}], **members}
                    made = session.in_firefox(world, "create", fixture, {}, True if world.framed else None)
                    assert made["outcome"] == "ok", (world.name, name, made)
                    world.ids["firefox"][name] = made["response"]["id"]
        yield session
    finally:
        driver.quit()
        if session.bridged:
            session.bridged.quit()
        if session.firefox:
            session.firefox.quit()
        if session.server:
            session.server.stop()
        secure.shutdown()
        local.shutdown()
        write_report(session.rows)


# MARK: comparing

def substitute(value, mapping: dict):
    """The options with `{uv}`/`{origin}` replaced by this world's values, in keys too."""
    if isinstance(value, str):
        for key, text in mapping.items():
            value = value.replace("{" + key + "}", text)
        return value
    if isinstance(value, list):
        return [substitute(v, mapping) for v in value]
    if isinstance(value, dict):
        return {substitute(k, mapping): substitute(v, mapping) for k, v in value.items()}
    return value


def client_part(response: dict) -> dict:
    data = json.loads(unb64url(response["response"]["clientDataJSON"]))
    extensions = json.loads(json.dumps(response.get("clientExtensionResults", {})))
    prf = extensions.get("prf", {})
    for name, output in prf.get("results", {}).items():
        prf["results"][name] = f"<{len(unb64url(output))} bytes>"
    return {
        "clientData": {key: data.get(key) for key in ("type", "challenge", "origin", "crossOrigin", "topOrigin")},
        "clientExtensionResults": extensions,
        "authenticatorAttachment": response.get("authenticatorAttachment"),
        "type": response.get("type"),
    }


def drop(part: dict, path: str):
    """Removes clientExtensionResults' member at a dotted path (an authenticator's value)."""
    *parents, last = path.split(".")
    node = part["clientExtensionResults"]
    for name in parents:
        node = node.get(name, {})
    node.pop(last, None)


def summary(side: dict) -> str:
    if side["outcome"] != "ok":
        detail = side.get("error") or ""
        return f"{side['outcome']}" + (f" ({detail})" if detail and detail != side["outcome"] else "")
    part = client_part(side["response"])
    return "ok " + json.dumps(part["clientExtensionResults"], separators=(",", ":"))


def write_report(rows: list):
    if not rows:
        return
    lines = ["# authctl against headless Chromium", "",
             f"authctl: `{BIN}`; Chromium: `{CHROMIUM}`", "",
             "| case | item | Chromium | authctl | verdict | page bridge | page bridge in Firefox |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for row in rows:
        cells = [row["case"], row["item"], row["chromium"], row["authctl"], row["verdict"],
                 f"{row.get('bridge', '')}: {row.get('bridge_verdict', '')}",
                 f"{row.get('firefox', '')}: {row.get('firefox_verdict', '')}" if row.get("firefox") else ""]
        lines.append("| " + " | ".join(str(c).replace("|", "\\|") for c in cells) + " |")
    differing = [r for r in rows if r["verdict"].startswith("DIFFERS")]
    known = [r for r in rows if r["verdict"].startswith("known")]
    excluded = [r for r in rows if r["verdict"].startswith("excluded")]
    lines += ["", f"{len(rows)} cases: {len(differing)} differ, {len(known)} known differences, "
                  f"{len(excluded)} excluded as the emulated authenticator's."]
    settled = [r["chromium_ms"] for r in rows if r.get("chromium_ms") is not None]
    if settled:
        lines.append(f"Chromium's slowest settled call: {max(settled)} ms (the pending window is {PENDING_MS} ms).")
    REPORT.parent.mkdir(parents=True, exist_ok=True)
    REPORT.write_text("\n".join(lines) + "\n")
    REPORT.with_suffix(".json").write_text(json.dumps(rows, indent=1) + "\n")


# MARK: the cases

@dataclasses.dataclass
class Case:
    name: str
    kind: str                       # create | get
    options: dict
    item: int | None = None         # the browser item of issue 16 it checks
    outer: dict = dataclasses.field(default_factory=dict)   # CredentialRequestOptions: mediation, uiMode
    world: str = "tls"
    activation: bool | None = None  # reload the page first; True: and click it (transient user activation)
    authenticator: str | None = None    # the outcome differs because of Chromium's emulated authenticator
    ignore: tuple = ()              # clientExtensionResults members that are the authenticator's
    note: str = ""                  # why they are not compared
    chromium_outcome: str | None = None  # pinned for `authenticator` and `known` cases
    known: str | None = None        # a client difference docs/conformance.md lists, with its reason
    authctl_outcome: str | None = None   # pinned for `known` cases
    authctl_args: tuple = ()        # authctl's flags for the page's situation (no user activation)


def create(**members) -> dict:
    options = {"rp": {"id": "{rpid}", "name": "Differential"},
               "user": {"id": "Y2FzZS11c2Vy", "name": "case", "displayName": "Case"},
               "challenge": CHALLENGE, "pubKeyCredParams": [{"type": "public-key", "alg": -7}]}
    options.update(members)
    return options


def get(**members) -> dict:
    options = {"challenge": CHALLENGE, "rpId": "{rpid}"}
    options.update(members)
    return options


def allow(*transports, id="{uv}") -> list:
    entry = {"type": "public-key", "id": id}
    if transports:
        entry["transports"] = list(transports)
    return [entry]


UV = {"type": "public-key", "id": "{uv}"}
RK = {"residentKey": "required"}

CASES = [
    # -- create: ordinary options
    Case("create-plain", "create", create()),
    Case("create-rp-id-omitted", "create", create(rp={"name": "Differential"})),
    Case("create-rp-id-registrable-suffix", "create", create(rp={"id": RP_ID, "name": "D"})),
    Case("create-rp-id-public-suffix", "create", create(rp={"id": "com", "name": "D"})),
    Case("create-rp-id-other-site", "create", create(rp={"id": OTHER, "name": "D"})),
    Case("create-rp-id-upper-case", "create", create(rp={"id": "EXAMPLE.com", "name": "D"})),
    Case("create-attestation-direct", "create", create(attestation="direct")),
    Case("create-attestation-enterprise", "create", create(attestation="enterprise")),
    Case("create-attestation-unknown", "create", create(attestation="everything")),
    Case("create-rk-required-uv-required", "create",
         create(authenticatorSelection={"residentKey": "required", "userVerification": "required"})),
    Case("create-rk-discouraged-uv-discouraged", "create",
         create(authenticatorSelection={"residentKey": "discouraged", "userVerification": "discouraged"})),
    Case("create-require-resident-key-string", "create",
         create(authenticatorSelection={"requireResidentKey": "no", "userVerification": "preferred"})),
    Case("create-uv-unknown", "create", create(authenticatorSelection={"userVerification": "sometimes"})),
    Case("create-attachment-cross-platform", "create",
         create(authenticatorSelection={"authenticatorAttachment": "cross-platform"}),
         known="Chromium waits for a cross-platform authenticator (a security key, a phone over hybrid) that "
               "never comes; authctl with a platform profile refuses at once (notHandled)",
         chromium_outcome="pending", authctl_outcome="NotAllowedError"),
    Case("create-hints-security-key", "create", create(hints=["security-key"])),
    Case("create-attachment-platform", "create", create(authenticatorSelection={"authenticatorAttachment": "platform"})),
    Case("create-pubkeycredparams-empty", "create", create(pubKeyCredParams=[])),
    Case("create-alg-as-string", "create", create(pubKeyCredParams=[{"type": "public-key", "alg": "-7"}])),
    Case("create-alg-missing", "create", create(pubKeyCredParams=[{"type": "public-key"}])),
    Case("create-rs256-only", "create", create(pubKeyCredParams=[{"type": "public-key", "alg": -257}]),
         authenticator="Chromium's virtual authenticator makes RS256; authctl's iCloud Keychain profile makes ES256 only",
         chromium_outcome="ok"),
    Case("create-unknown-member", "create", create(futureMember={"x": 1})),
    Case("create-name-number", "create", create(user={"id": "Y2FzZS11c2Vy", "name": 5, "displayName": True})),
    Case("create-timeout-string", "create", create(timeout="120000")),
    Case("create-timeout-negative", "create", create(timeout=-1)),
    Case("create-hints-string", "create", create(hints="client-device")),
    Case("create-exclude-null", "create", create(excludeCredentials=None)),
    Case("create-rp-missing", "create", {k: v for k, v in create().items() if k != "rp"}),
    Case("create-user-id-65-bytes", "create", create(user={"id": "QUFB" * 21 + "QUE", "name": "l", "displayName": "L"})),
    # -- create: base64url
    Case("create-challenge-plus-slash", "create", create(challenge="a+b/")),
    Case("create-challenge-padded", "create", create(challenge="AA==")),
    Case("create-challenge-empty", "create", create(challenge=""), item=12),
    Case("create-challenge-trailing-bits", "create", create(challenge="AB"), item=12),
    Case("create-user-id-empty", "create", create(user={"id": "", "name": "e", "displayName": "E"}), item=12),
    Case("create-user-id-trailing-bits", "create", create(user={"id": "AB", "name": "t", "displayName": "T"}), item=12),
    # -- create: algorithms (item 7)
    Case("create-only-unknown-algorithms", "create", create(pubKeyCredParams=[{"type": "public-key", "alg": -999}]), item=7),
    Case("create-only-unknown-type", "create", create(pubKeyCredParams=[{"type": "secret-key", "alg": -7}]), item=7),
    Case("create-unknown-algorithms-and-excluded", "create",
         create(pubKeyCredParams=[{"type": "public-key", "alg": -999}], excludeCredentials=[UV]), item=7),
    # -- create: excludeCredentials
    Case("create-exclude-match", "create", create(excludeCredentials=[UV])),
    Case("create-exclude-match-uv-discouraged", "create",
         create(excludeCredentials=[UV], authenticatorSelection={"userVerification": "discouraged"}), item=6),
    Case("create-exclude-protected-uv-discouraged", "create",
         create(excludeCredentials=[{"type": "public-key", "id": "{p3}"}],
                authenticatorSelection={"userVerification": "discouraged"}),
         authenticator="Chromium's virtual authenticator verifies the user on a discouraged create (UV=1), so it "
                       "sees the credProtect-3 passkey; authctl does not verify on discouraged, and a level-3 passkey "
                       "is invisible to a call without user verification (CTAP 2.1 makeCredential, excludeList)",
         chromium_outcome="InvalidStateError"),
    Case("create-exclude-rk-preferred-uv-discouraged", "create",
         create(excludeCredentials=[{"type": "public-key", "id": "{pref}"}],
                authenticatorSelection={"userVerification": "discouraged"})),
    Case("create-exclude-protected-uv-required", "create",
         create(excludeCredentials=[{"type": "public-key", "id": "{p3}"}],
                authenticatorSelection={"userVerification": "required"})),
    Case("create-exclude-match-with-transports", "create",
         create(excludeCredentials=[{**UV, "transports": ["usb"]}])),
    Case("create-exclude-unknown-id", "create", create(excludeCredentials=[{"type": "public-key", "id": "bm8tc3VjaA"}])),
    Case("create-exclude-other-type", "create", create(excludeCredentials=[{"type": "other", "id": "{uv}"}])),
    Case("create-exclude-bad-base64url", "create", create(excludeCredentials=[{"type": "public-key", "id": "a+b"}])),
    # -- create: extensions
    Case("create-credprops-resident", "create", create(authenticatorSelection=RK, extensions={"credProps": True})),
    Case("create-credprops-not-required", "create", create(extensions={"credProps": True}),
         ignore=("credProps.rk",),
         note="rk not compared: Chromium's virtual authenticator makes a non-resident key unless asked, "
              "every authctl passkey is discoverable"),
    Case("create-credprotect-uvrequired-uv-preferred", "create",
         create(extensions={"credentialProtectionPolicy": "userVerificationRequired"}), item=1),
    Case("create-credprotect-uvrequired-enforced-uv-discouraged", "create",
         create(authenticatorSelection={"userVerification": "discouraged"},
                extensions={"credentialProtectionPolicy": "userVerificationRequired",
                            "enforceCredentialProtectionPolicy": True}), item=1),
    Case("create-credprotect-uvrequired-uv-required", "create",
         create(authenticatorSelection={"userVerification": "required"},
                extensions={"credentialProtectionPolicy": "userVerificationRequired"})),
    Case("create-credprotect-optional-with-list-enforced", "create",
         create(extensions={"credentialProtectionPolicy": "userVerificationOptionalWithCredentialIDList",
                            "enforceCredentialProtectionPolicy": True})),
    Case("create-credprotect-unknown", "create", create(extensions={"credentialProtectionPolicy": "sometimes"}), item=2),
    Case("create-prf-empty", "create", create(extensions={"prf": {}})),
    Case("create-prf-eval", "create", create(extensions={"prf": {"eval": {"first": "Zmlyc3Q"}}})),
    Case("create-prf-eval-by-credential", "create",
         create(extensions={"prf": {"evalByCredential": {"{uv}": {"first": "Zmlyc3Q"}}}})),
    Case("create-largeblob-required", "create", create(authenticatorSelection=RK, extensions={"largeBlob": {"support": "required"}})),
    Case("create-largeblob-read", "create", create(authenticatorSelection=RK, extensions={"largeBlob": {"read": True}})),
    Case("create-credblob", "create", create(authenticatorSelection=RK, extensions={"credBlob": "YmxvYg"})),
    Case("create-minpinlength", "create", create(extensions={"minPinLength": True})),
    Case("create-unknown-extension", "create", create(extensions={"futureExtension": {"a": 1}})),
    Case("create-appid-exclude", "create", create(extensions={"appidExclude": "{origin}"})),
    Case("create-hmac-create-secret", "create", create(extensions={"hmacCreateSecret": True}),
         known="authctl does not implement Chrome's hmacCreateSecret (the raw hmac-secret extension; prf is "
               "its WebAuthn form), so there is no hmacCreateSecret output",
         chromium_outcome="ok", authctl_outcome="ok"),
    # -- create: mediation
    Case("create-mediation-conditional", "create", create(), item=9, outer={"mediation": "conditional"}),
    Case("create-mediation-silent", "create", create(), outer={"mediation": "silent"}),
    Case("create-mediation-unknown", "create", create(), outer={"mediation": "whenever"}),

    # -- get: ordinary options
    Case("get-discoverable", "get", get()),
    Case("get-allow", "get", get(allowCredentials=allow())),
    Case("get-rp-id-omitted-no-passkey", "get", {"challenge": CHALLENGE, "allowCredentials": allow()}),
    Case("get-rp-id-public-suffix", "get", get(rpId="com")),
    Case("get-rp-id-other-site", "get", get(rpId=OTHER)),
    Case("get-uv-required", "get", get(allowCredentials=allow(), userVerification="required")),
    Case("get-uv-discouraged", "get", get(allowCredentials=allow(), userVerification="discouraged")),
    Case("get-protected-uv-discouraged", "get", get(allowCredentials=allow(id="{p3}"), userVerification="discouraged")),
    Case("get-rk-preferred-uv-discouraged", "get", get(allowCredentials=allow(id="{pref}"), userVerification="discouraged"),
         authenticator="Chromium's client asks a CTAP authenticator for credProtect level 3 when residentKey is "
                       "required and userVerification preferred (ProtectionPolicyToCredProtect), and its virtual "
                       "authenticator then hides the passkey from a sign-in that does not verify the user; authctl "
                       "plays a platform passkey provider and applies credProtect only when the RP asks for it",
         chromium_outcome="NotAllowedError"),
    Case("get-rk-preferred-uv-preferred", "get", get(allowCredentials=allow(id="{pref}"))),
    Case("get-protected-uv-required", "get", get(allowCredentials=allow(id="{p3}"), userVerification="required")),
    Case("get-unknown-member", "get", get(allowCredentials=allow(), somethingNew=[1, 2])),
    # (no short timeouts: with a virtual authenticator attached Chromium does not clamp the timeout,
    # so `timeout: 0` races the authenticator; see "Differences from Chromium")
    Case("get-timeout-string", "get", get(allowCredentials=allow(), timeout="120000")),
    Case("get-hints-security-key", "get", get(allowCredentials=allow(), hints=["client-device"])),
    Case("get-allow-string", "get", get(allowCredentials="{uv}")),
    Case("get-allow-entry-without-type", "get", get(allowCredentials=[{"id": "{uv}"}])),
    Case("get-allow-unknown-id", "get", get(allowCredentials=allow(id="bm8tc3VjaA"))),
    Case("get-challenge-plus-slash", "get", get(challenge="a+b/")),
    Case("get-challenge-empty", "get", get(challenge="", allowCredentials=allow()), item=12),
    Case("get-challenge-trailing-bits", "get", get(challenge="AB", allowCredentials=allow()), item=12),
    # -- get: transports (item 5)
    Case("get-allow-transports-internal", "get", get(allowCredentials=allow("internal"))),
    Case("get-allow-transports-internal-hybrid", "get", get(allowCredentials=allow("internal", "hybrid"))),
    Case("get-allow-transports-usb-nfc", "get", get(allowCredentials=allow("usb", "nfc")), item=5),
    Case("get-allow-transports-hybrid", "get", get(allowCredentials=allow("hybrid")), item=5),
    Case("get-allow-transports-unknown", "get", get(allowCredentials=allow("carrier-pigeon"))),
    Case("get-allow-transports-smart-card", "get", get(allowCredentials=allow("smart-card")), item=5),
    Case("get-allow-transports-ble", "get", get(allowCredentials=allow("ble")), item=5),
    Case("get-allow-transports-empty-list", "get", get(allowCredentials=[{**UV, "transports": []}])),
    # -- get: extensions
    Case("get-credprops", "get", get(allowCredentials=allow(), extensions={"credProps": True}), item=3),
    Case("get-appid-origin", "get", get(allowCredentials=allow(), extensions={"appid": "{origin}"}), item=4),
    Case("get-appid-other-site", "get", get(allowCredentials=allow(), extensions={"appid": f"https://{OTHER}"}),
         known="Chromium checks an appid against the caller's origin (an https URL of the same site, as the "
               "FIDO AppID rules say) and throws SecurityError; authctl does not check it",
         chromium_outcome="SecurityError", authctl_outcome="ok"),
    Case("get-prf-eval", "get", get(allowCredentials=allow(), extensions={"prf": {"eval": {"first": "Zmlyc3Q", "second": "c2Vjb25k"}}})),
    Case("get-prf-eval-by-credential", "get",
         get(allowCredentials=allow(), extensions={"prf": {"evalByCredential": {"{uv}": {"first": "Zmlyc3Q"}}}})),
    Case("get-prf-eval-by-credential-not-allowed", "get",
         get(allowCredentials=allow(), extensions={"prf": {"evalByCredential": {"bm8tc3VjaA": {"first": "Zmlyc3Q"}}}}),
         item=10),
    Case("get-prf-eval-by-credential-without-allow", "get",
         get(extensions={"prf": {"evalByCredential": {"{uv}": {"first": "Zmlyc3Q"}}}})),
    Case("get-largeblob-read", "get", get(allowCredentials=allow(), extensions={"largeBlob": {"read": True}})),
    Case("get-largeblob-write", "get", get(allowCredentials=allow(), extensions={"largeBlob": {"write": "d3JpdHRlbg"}})),
    Case("get-largeblob-read-back", "get", get(allowCredentials=allow(), extensions={"largeBlob": {"read": True}})),
    Case("get-largeblob-support", "get", get(allowCredentials=allow(), extensions={"largeBlob": {"support": "required"}})),
    Case("get-credblob", "get", get(allowCredentials=allow(), extensions={"getCredBlob": True})),
    # -- get: mediation and uiMode
    Case("get-mediation-silent", "get", get(allowCredentials=allow()), item=8, outer={"mediation": "silent"}),
    Case("get-mediation-required", "get", get(allowCredentials=allow()), outer={"mediation": "required"}),
    Case("get-mediation-conditional", "get", get(), outer={"mediation": "conditional"}),
    Case("get-mediation-conditional-no-passkey", "get", {"challenge": CHALLENGE}, outer={"mediation": "conditional"},
         authenticator="the virtual environment has no autofill: with enableUI false Chromium answers a conditional "
                       "request at once, with a passkey or NotAllowedError when there is none; Chrome's autofill "
                       "keeps the promise pending, as authctl does (timedOut under --instant-timeout)",
         chromium_outcome="NotAllowedError"),
    Case("get-no-passkey-for-rp", "get", {"challenge": CHALLENGE}),
    Case("get-mediation-immediate", "get", get(), item=11, outer={"mediation": "immediate"}),
    Case("get-ui-mode-immediate-without-activation", "get", get(), item=11, outer={"uiMode": "immediate"},
         activation=False, authctl_args=("--no-user-activation",)),
    Case("get-ui-mode-immediate", "get", get(), item=11, outer={"uiMode": "immediate"}, activation=True),
    Case("get-ui-mode-immediate-no-passkey", "get", {"challenge": CHALLENGE}, item=11,
         outer={"uiMode": "immediate"}, activation=True),
    Case("get-ui-mode-immediate-with-allow-list", "get", get(allowCredentials=allow()), item=11,
         outer={"uiMode": "immediate"}, activation=True),
    Case("get-ui-mode-passive-alone", "get", get(), item=11, outer={"uiMode": "passive"}),
    Case("get-ui-mode-unknown", "get", get(), item=11, outer={"uiMode": "whatever"}),
    Case("get-ui-mode-passive", "get", get(), item=11, outer={"mediation": "conditional", "uiMode": "passive"}),
    # -- a cross-origin iframe (the page on another site frames the RP's page)
    Case("frame-create-without-activation", "create", create(), world="frame", activation=False,
         authctl_args=("--no-user-activation",)),
    Case("frame-create", "create", create(), world="frame", activation=True),
    Case("frame-get", "get", get(allowCredentials=allow()), world="frame"),
    Case("frame-get-discoverable", "get", get(), world="frame"),
    Case("frame-get-conditional", "get", get(), world="frame", outer={"mediation": "conditional"},
         known="authctl refuses conditional mediation from a cross-origin iframe; Chromium 156 accepts the call "
               "(answered here by the virtual environment, which has no autofill, so whether Chrome's autofill "
               "offers passkeys to a cross-origin frame is not seen)",
         chromium_outcome="ok", authctl_outcome="NotAllowedError"),
    Case("frame-without-permission-get", "get", get(), world="frame-without-permission"),
    Case("frame-without-permission-create", "create", create(), world="frame-without-permission", activation=True),
    # -- http://localhost
    Case("localhost-create", "create", create(), world="local"),
    Case("localhost-create-rp-id-omitted", "create", create(rp={"name": "D"}), world="local"),
    Case("localhost-get-discoverable", "get", get(), world="local"),
]


# Where a page through the bridge answers otherwise than `authctl register`/`sign` for the same
# options: case -> (reason, the bridge's outcome). docs/browser.md lists them.
WAITS_FOR_PICK = ("a conditional sign-in through the bridge waits for the test's pick (POST …/autofill), as a person's "
                  "autofill list would; `authctl sign --mediation conditional` picks the newest passkey at once")
BRIDGE_KNOWN: dict[str, tuple[str, str]] = {
    "get-mediation-conditional": (WAITS_FOR_PICK, "pending"),
    "get-ui-mode-passive": (WAITS_FOR_PICK, "pending"),
}


# Where a page through the bridge in Firefox answers otherwise than `authctl register`/`sign`:
# case -> (reason: what Firefox's own client does, the bridge's outcome there). docs/browser.md,
# "Fidelity", lists them.
NO_UI_MODE = "Firefox ESR 153 has no uiMode: its conversion does not read the member, so the request is a modal one"
NO_CRED_BLOB = ("Firefox's parseCreationOptionsFromJSON / parseRequestOptionsFromJSON know no credBlob extension: "
                "the options the page passes have none, and Firefox's client has none either")
FIREFOX_KNOWN: dict[str, tuple[str, str]] = {
    "get-mediation-conditional": (WAITS_FOR_PICK, "pending"),
    "get-ui-mode-passive": (WAITS_FOR_PICK, "pending"),
    "create-challenge-padded": ("Firefox's parseCreationOptionsFromJSON takes base64url with '=' padding "
                                "(Chromium's is an EncodingError)", "ok"),
    "create-credprotect-unknown": ("Firefox's parseCreationOptionsFromJSON converts credentialProtectionPolicy as "
                                   "an enum: another value is its TypeError before any request", "TypeError"),
    "create-credblob": (NO_CRED_BLOB, "ok"),
    "get-credblob": (NO_CRED_BLOB, "ok"),
    "get-ui-mode-immediate-without-activation": (NO_UI_MODE, "ok"),
    "get-ui-mode-immediate-with-allow-list": (NO_UI_MODE, "ok"),
    "get-ui-mode-unknown": (NO_UI_MODE, "ok"),
}


def bridge_against_authctl(case: Case, bridged: dict, ours: dict) -> list[str]:
    """Where a side through the bridge answers otherwise than the CLI: outcome, client part."""
    found = []
    if bridged["outcome"] != ours["outcome"]:
        found.append(f"outcome: bridge {bridged['outcome']}, authctl {ours['outcome']}")
    elif ours["outcome"] == "ok":
        mine, through = client_part(ours["response"]), client_part(bridged["response"])
        for path in case.ignore:
            drop(mine, path)
            drop(through, path)
        for key in mine:
            if mine[key] != through[key]:
                found.append(f"{key}: bridge {json.dumps(through[key])}, authctl {json.dumps(mine[key])}")
    return found


@pytest.mark.parametrize("case", CASES, ids=[f"{n:02d}-{c.name}" for n, c in enumerate(CASES, 1)])
def test_authctl_answers_as_chromium(differential, case):
    world = differential.worlds[case.world]
    sides = {}
    for side in ("chromium", "authctl", "bridge") + (("firefox",) if differential.firefox else ()):
        mapping = {**world.ids[side], "rpid": world.rp_id, "origin": world.origin}
        options, outer = substitute(case.options, mapping), substitute(case.outer, mapping)
        if side == "chromium":
            sides[side] = differential.chromium(world, case.kind, options, outer, case.activation)
        elif side == "bridge":
            sides[side] = differential.bridge(world, case.kind, options, outer, case.activation)
        elif side == "firefox":
            sides[side] = differential.in_firefox(world, case.kind, options, outer, case.activation)
        else:
            sides[side] = differential.run_authctl(world, case.kind, options, outer, case.authctl_args)
    theirs, ours, bridged = sides["chromium"], sides["authctl"], sides["bridge"]
    if case.kind == "create":
        differential.forget(world, sides)

    # The bridge answers as the CLI does (outcome and client part), but for what BRIDGE_KNOWN pins.
    bridge_differences = bridge_against_authctl(case, bridged, ours)

    differences = []
    if theirs["outcome"] != ours["outcome"]:
        differences.append(f"outcome: Chromium {theirs['outcome']}, authctl {ours['outcome']}")
    elif theirs["outcome"] == "ok":
        mine, other = client_part(ours["response"]), client_part(theirs["response"])
        for path in case.ignore:
            drop(mine, path)
            drop(other, path)
        for key in other:
            if mine[key] != other[key]:
                differences.append(f"{key}: Chromium {json.dumps(other[key])}, authctl {json.dumps(mine[key])}")
        expected_origin = world.origin
        if other["clientData"]["origin"] != expected_origin:
            differences.append(f"Chromium's origin is {other['clientData']['origin']}, not {expected_origin}")

    if case.authenticator:
        verdict = f"excluded (authenticator): {case.authenticator}" if differences else "same"
    elif case.known:
        verdict = f"known difference: {case.known}" if differences else "same"
    else:
        verdict = ("DIFFERS: " + "; ".join(differences)) if differences else "same"
        if case.note:
            verdict += f" ({case.note})"
    known_bridge = BRIDGE_KNOWN.get(case.name)
    bridge_verdict = ("same as authctl" if not bridge_differences
                      else f"known: {known_bridge[0]}" if known_bridge else "DIFFERS: " + "; ".join(bridge_differences))
    in_firefox = sides.get("firefox")
    firefox_differences = bridge_against_authctl(case, in_firefox, ours) if in_firefox else []
    known_firefox = FIREFOX_KNOWN.get(case.name)
    firefox_verdict = ("" if not in_firefox else "same as authctl" if not firefox_differences
                       else f"known: {known_firefox[0]}" if known_firefox else "DIFFERS: " + "; ".join(firefox_differences))
    differential.rows.append({"case": case.name, "item": case.item or "", "chromium": summary(theirs),
                              "firefox": summary(in_firefox) if in_firefox else "", "firefox_verdict": firefox_verdict,
                              "authctl": summary(ours), "bridge": summary(bridged), "bridge_verdict": bridge_verdict,
                              "verdict": verdict,
                              "messages": {"chromium": theirs.get("message"), "authctl": ours.get("message")},
                              "chromium_ms": theirs.get("ms")})

    if known_bridge:
        assert bridged["outcome"] == known_bridge[1] and bridge_differences, (
            f"{case.name}: the bridge's known difference ({known_bridge[0]}) no longer holds: {bridged}; "
            f"update BRIDGE_KNOWN and docs/browser.md")
    else:
        assert not bridge_differences, (f"{case.name}: the page bridge and authctl differ: " + "; ".join(bridge_differences)
                                        + f"\nbridge: {bridged}\nauthctl: {ours}")
    if in_firefox and known_firefox:
        assert in_firefox["outcome"] == known_firefox[1] and firefox_differences, (
            f"{case.name}: the bridge's known difference in Firefox ({known_firefox[0]}) no longer holds: {in_firefox}; "
            f"update FIREFOX_KNOWN and docs/browser.md")
    elif in_firefox:
        assert not firefox_differences, (f"{case.name}: the page bridge in Firefox and authctl differ: "
                                         + "; ".join(firefox_differences) + f"\nFirefox: {in_firefox}\nauthctl: {ours}")
    if case.known:
        # Listed in docs/conformance.md, "Differences from Chromium": both sides are pinned, so that
        # a change on either side (authctl fixed, Chromium changed) is seen and the list updated.
        assert (theirs["outcome"], ours["outcome"]) == (case.chromium_outcome, case.authctl_outcome), (
            f"{case.name}: the known difference ({case.known}) no longer holds: Chromium {theirs['outcome']}, "
            f"authctl {ours['outcome']}; update the case and docs/conformance.md")
        assert differences, f"{case.name}: authctl now answers as Chromium; drop the known difference"
        return
    if case.authenticator:
        assert theirs["outcome"] == case.chromium_outcome, (
            f"Chromium no longer answers {case.chromium_outcome}, so the exclusion ({case.authenticator}) "
            f"must be looked at again: {theirs}")
        return
    assert not differences, (f"{case.name}: authctl and Chromium differ: " + "; ".join(differences)
                             + f"\nChromium: {theirs}\nauthctl: {ours}")
