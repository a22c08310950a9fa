"""The example bank (docs/examples/rp_server.py) as a target for RP audits: sign-up, sign-in by
username and discoverable, and each --flaw it can re-create. Every attack below is driven with the
built authctl (a forged, replayed or downgraded response); the bank with no flaw refuses each one,
and the bank with one flaw lets through that flaw's attacks and no other."""
import importlib.util
import json
import subprocess
import sys
import threading
import urllib.error
import urllib.request

import cbor2
import pytest

from conftest import BIN, ROOT, Authctl, b64url, unb64url

ORIGIN = "https://yourbank.example"


def load_rp_server():
    spec = importlib.util.spec_from_file_location("rp_server", ROOT / "docs" / "examples" / "rp_server.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


RP_SERVER = load_rp_server()


@pytest.fixture(scope="module")
def vault(tmp_path_factory) -> Authctl:
    """One vault for the whole file: every passkey is picked by its id, so they do not mix."""
    tool = Authctl(tmp_path_factory.mktemp("rp-flaws") / "vault")
    result = tool.run("init", "--kdf", "min")
    assert result.code == 0, result.stderr
    return tool


@pytest.fixture
def start_bank():
    """Starts banks on free loopback ports (serve(flaws=...)), stopped after the test."""
    servers = []

    def start(*flaws) -> str:
        server = RP_SERVER.serve(0, flaws=frozenset(flaws))
        threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}"
    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


class Browser:
    """One browser's session with the bank: its cookie, kept from answer to answer."""

    def __init__(self, url: str):
        self.url, self.cookie = url, None

    def call(self, method: str, path: str, body=None, raw: bytes | None = None):
        data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
        request = urllib.request.Request(self.url + path, method=method, data=data)
        if self.cookie:
            request.add_header("Cookie", f"session={self.cookie}")
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                status, headers, text = response.status, response.headers, response.read()
        except urllib.error.HTTPError as error:
            status, headers, text = error.code, error.headers, error.read()
        cookie = headers.get("Set-Cookie")
        if cookie:
            self.cookie = cookie.split(";")[0].partition("=")[2]
        return status, json.loads(text)

    def post(self, path: str, body=None, raw: bytes | None = None):
        return self.call("POST", path, body, raw)

    def get(self, path: str):
        return self.call("GET", path)


NAMES = iter(range(10**6))


def sign_up(url: str):
    """A new customer, signed in: their browser and name."""
    name = f"customer-{next(NAMES)}"
    browser = Browser(url)
    assert browser.post("/signup", {"username": name, "password": "hunter2"}) == (200, {"user": name})
    return browser, name


def register(browser: Browser, vault: Authctl, *extra):
    """A registration through the bank: the bank's answer and the passkey's id."""
    _, options = browser.post("/register/begin")
    response = vault.register(options, ORIGIN, *extra).json
    return browser.post("/register/finish", {"credential": response}), response["id"]


def customer(url: str, vault: Authctl):
    """A new customer with one passkey: their browser, name and passkey id."""
    browser, name = sign_up(url)
    answer, credential_id = register(browser, vault)
    assert answer == (200, {"verified": True, "passkeys": 1}), answer
    return browser, name, credential_id


def sign(vault: Authctl, options: dict, credential_id: str, *extra, origin: str = ORIGIN) -> dict:
    return vault.sign(options, origin, "--credential", credential_id, *extra).json


def begin_sign_in(url: str, username: str | None = None):
    browser = Browser(url)
    status, options = browser.post("/login/begin", {} if username is None else {"username": username})
    assert status == 200, options
    return browser, options


def refused(answer, code: str | None = None) -> bool:
    """Whether the bank refused (a 400), with `code` when named; any other answer fails the test."""
    status, body = answer
    if status == 200:
        return False
    assert status == 400 and "error" in body, answer
    if code:
        assert body.get("code") == code, answer
    return True


# Each attack: what it tries, against a bank at `url`; True when the bank accepted it. Each
# checks along the way what the bank must do whatever its flaws.

def passkey_of_another_user_signs_in_by_username(url, vault):
    """Mallory signs in as alice by username with mallory's own passkey (the options' allow list,
    alice's passkeys, dropped)."""
    _, alice, _ = customer(url, vault)
    _, _, mallorys = customer(url, vault)
    browser, options = begin_sign_in(url, alice)
    del options["publicKey"]["allowCredentials"]
    answer = browser.post("/login/finish", sign(vault, options, mallorys))
    if refused(answer, "notThisUsersPasskey"):
        assert browser.get("/account")[0] == 401
        return False
    assert answer == (200, {"verified": True, "user": alice}), answer
    assert browser.get("/account")[1]["user"] == alice
    return True


def passkey_of_another_user_signs_in_by_their_user_handle(url, vault):
    """Mallory signs in as alice in a discoverable sign-in (no username) with mallory's own passkey,
    its response carrying alice's user handle (which no signature covers; anyone who once saw
    alice's registration options knows it). Without a userHandle it is refused, flaw or not."""
    alices_browser, alice, _ = customer(url, vault)
    alices_handle = alices_browser.post("/register/begin")[1]["publicKey"]["user"]["id"]
    _, _, mallorys = customer(url, vault)
    browser, options = begin_sign_in(url)
    response = sign(vault, options, mallorys)
    del response["response"]["userHandle"]
    assert refused(browser.post("/login/finish", response), "noUserHandle")
    browser, options = begin_sign_in(url)
    response = sign(vault, options, mallorys)
    response["response"]["userHandle"] = alices_handle
    answer = browser.post("/login/finish", response)
    if refused(answer, "userHandleMismatch"):
        assert browser.get("/account")[0] == 401
        return False
    assert answer == (200, {"verified": True, "user": alice}), answer
    assert browser.get("/account")[1]["user"] == alice
    return True


def sign_in_replayed(url, vault):
    """A sign-in's response posted a second time, in the same session."""
    _, name, credential_id = customer(url, vault)
    browser, options = begin_sign_in(url)
    response = sign(vault, options, credential_id)
    assert browser.post("/login/finish", response) == (200, {"verified": True, "user": name})
    return not refused(browser.post("/login/finish", response))


def registration_replayed(url, vault):
    """A registration's response posted a second time, in the same session."""
    browser, _ = sign_up(url)
    _, options = browser.post("/register/begin")
    response = vault.register(options, ORIGIN).json
    assert browser.post("/register/finish", response) == (200, {"verified": True, "passkeys": 1})
    return not refused(browser.post("/register/finish", response))


def transfer_replayed(url, vault):
    """A transfer's approval posted a second time: the money would go twice."""
    browser, _, credential_id = customer(url, vault)
    _, options = browser.post("/transfer/begin", {"amount": 1000})
    response = sign(vault, options, credential_id)
    assert browser.post("/transfer/finish", response) == (200, {"approved": True, "amount": 1000})
    return not refused(browser.post("/transfer/finish", response))


def sign_in_from_a_subdomain(url, vault):
    """A sign-in made on https://login.yourbank.example:8443, a page the bank does not serve (its
    host ends with the RP ID, so a browser lets it use the bank's passkeys)."""
    _, _, credential_id = customer(url, vault)
    browser, options = begin_sign_in(url)
    response = sign(vault, options, credential_id, origin="https://login.yourbank.example:8443")
    return not refused(browser.post("/login/finish", response))


def registration_from_a_subdomain(url, vault):
    browser, _ = sign_up(url)
    _, options = browser.post("/register/begin")
    response = vault.register(options, "https://login.yourbank.example:8443").json
    return not refused(browser.post("/register/finish", response))


def sign_in_from_another_site(url, vault):
    """clientDataJSON names https://attacker.example: no flaw lets it in."""
    _, _, credential_id = customer(url, vault)
    browser, options = begin_sign_in(url)
    return not refused(browser.post("/login/finish", sign(vault, options, credential_id, "--fault", "wrong-origin")))


def registration_without_uv(url, vault):
    """A registration whose UV flag is clear, though the bank asked for user verification."""
    browser, _ = sign_up(url)
    return not refused(register(browser, vault, "--fault", "uv-cleared")[0])


def transfer_without_uv(url, vault):
    """A transfer approved with the UV flag clear, though the bank asked for user verification."""
    browser, _, credential_id = customer(url, vault)
    _, options = browser.post("/transfer/begin", {"amount": 250000})
    return not refused(browser.post("/transfer/finish", sign(vault, options, credential_id, "--fault", "uv-cleared")))


def session_after_a_bad_signature(url, vault):
    """A sign-in whose signature fails: refused, and the session is then signed in or not."""
    _, name, credential_id = customer(url, vault)
    browser, options = begin_sign_in(url)
    assert refused(browser.post("/login/finish", sign(vault, options, credential_id, "--fault", "bad-signature")))
    status, account = browser.get("/account")
    if status == 401:
        return False
    assert (status, account["user"]) == (200, name)
    return True


def counter_pushed_by_a_forged_sign_in(url, vault):
    """A forged sign-in (its sign count set to 2^32-1, so its signature fails) is refused; then the
    customer's real sign-in is refused too when the forged count was stored: a denial of service."""
    _, name, credential_id = customer(url, vault)
    browser, options = begin_sign_in(url)
    forged = sign(vault, options, credential_id)
    data = bytearray(unb64url(forged["response"]["authenticatorData"]))
    data[33:37] = (2**32 - 1).to_bytes(4, "big")
    forged["response"]["authenticatorData"] = b64url(bytes(data))
    assert refused(browser.post("/login/finish", forged))
    browser, options = begin_sign_in(url)
    return refused(browser.post("/login/finish", sign(vault, options, credential_id)))


def registration_without_up(url, vault):
    """A registration whose UP flag is clear."""
    browser, _ = sign_up(url)
    return not refused(register(browser, vault, "--fault", "up-cleared")[0])


def sign_in_without_up(url, vault):
    """A sign-in whose UP flag is clear: py_webauthn refuses it whatever the bank asks."""
    _, _, credential_id = customer(url, vault)
    browser, options = begin_sign_in(url)
    return not refused(browser.post("/login/finish", sign(vault, options, credential_id, "--fault", "up-cleared")))


def sign_in_in_another_sites_frame(url, vault):
    """A sign-in made in a frame https://attacker.example embeds (crossOrigin, topOrigin)."""
    _, _, credential_id = customer(url, vault)
    browser, options = begin_sign_in(url)
    return not refused(browser.post("/login/finish", sign(vault, options, credential_id, "--top-origin", "https://attacker.example")))


def registration_in_another_sites_frame(url, vault):
    browser, _ = sign_up(url)
    return not refused(register(browser, vault, "--top-origin", "https://attacker.example")[0])


def audited(url, case):
    """Whether the RP said yes to `case` of `authctl audit`: the cases that need a key the audit holds
    (an algorithm the vault's profiles make none of, an assertion's BE cleared and re-signed)."""
    proc = subprocess.run([BIN, "--json", "audit", "--preset", "rp-server", "--only", case, url], capture_output=True, text=True, timeout=120)
    assert proc.returncode in (0, 32), proc.stderr
    result = json.loads(proc.stdout)["results"][0]
    # The RP's own yes (a session kept after a refusal is session-on-failed-verify's attack).
    return result["verdict"] == "ACCEPTED" and "the RP said yes" in result["evidence"]


def registration_of_an_algorithm_not_offered(url, vault):
    """The bank offers ES256 and RS256; the attacker's authenticator makes an EdDSA key."""
    _, options = sign_up(url)[0].post("/register/begin")
    assert [p["alg"] for p in options["publicKey"]["pubKeyCredParams"]] == [-7, -257]
    return audited(url, "reg-alg-not-offered")


def sign_in_of_a_synced_passkey_claiming_to_be_device_bound(url, vault):
    """BE cleared in a synced passkey's assertion, re-signed."""
    return audited(url, "sign-backup-eligibility-changed")


def unknown_name_told_apart(url, vault):
    """A sign-in begun for a name no user has answers as one for a user with no passkey: one
    imaginary credential id, the same each time (WebAuthn L3 §14.6.2)."""
    status, body = Browser(url).post("/login/begin", {"username": "nobody"})
    if status != 200:
        assert (status, body.get("code")) == (400, "unknownUser")
        return True
    again = Browser(url).post("/login/begin", {"username": "nobody"})[1]
    listed = [c["id"] for c in body["publicKey"]["allowCredentials"]]
    assert len(listed) == 1 and listed == [c["id"] for c in again["publicKey"]["allowCredentials"]]
    _, name = sign_up(url)  # a user with no passkey: the same form
    assert len(begin_sign_in(url, name)[1]["publicKey"]["allowCredentials"]) == 1
    return False


# attack -> the flaw that lets it through (None: no flaw does)
ATTACKS = {
    passkey_of_another_user_signs_in_by_username: "not-bound-to-user",
    passkey_of_another_user_signs_in_by_their_user_handle: "user-handle-trusted",
    sign_in_replayed: "challenge-not-consumed",
    registration_replayed: "challenge-not-consumed",
    transfer_replayed: "challenge-not-consumed",
    sign_in_from_a_subdomain: "origin-suffix-match",
    registration_from_a_subdomain: "origin-suffix-match",
    sign_in_from_another_site: None,
    registration_without_uv: "uv-not-enforced",
    transfer_without_uv: "uv-not-enforced",
    session_after_a_bad_signature: "session-on-failed-verify",
    counter_pushed_by_a_forged_sign_in: "state-before-verify",
    registration_without_up: "up-not-checked",
    sign_in_without_up: None,
    sign_in_in_another_sites_frame: "cross-origin-allowed",
    registration_in_another_sites_frame: "cross-origin-allowed",
    registration_of_an_algorithm_not_offered: "alg-not-checked",
    sign_in_of_a_synced_passkey_claiming_to_be_device_bound: "backup-eligibility-not-compared",
    unknown_name_told_apart: "user-enumeration",
}


def test_every_flaw_has_an_attack():
    assert set(ATTACKS.values()) - {None} == set(RP_SERVER.FLAWS)


@pytest.mark.parametrize("flaw", [None, *RP_SERVER.FLAWS])
def test_a_flaw_lets_through_its_own_attacks_and_no_other(vault, start_bank, flaw):
    url = start_bank(*([flaw] if flaw else []))
    accepted = {attack.__name__ for attack in ATTACKS if attack(url, vault)}
    assert accepted == {attack.__name__ for attack, its_flaw in ATTACKS.items() if flaw and its_flaw == flaw}


def test_flaws_combine(vault, start_bank):
    url = start_bank("uv-not-enforced", "challenge-not-consumed")
    assert registration_without_uv(url, vault) and transfer_replayed(url, vault)
    assert not passkey_of_another_user_signs_in_by_username(url, vault)


def test_flaws_from_the_command_line(vault, tmp_path):
    script = ROOT / "docs" / "examples" / "rp_server.py"
    bank = subprocess.Popen([sys.executable, str(script), "--port", "0", "--flaw", "up-not-checked", "--flaw", "uv-not-enforced"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        url = bank.stdout.readline().split()[-1]  # listening on http://127.0.0.1:PORT
        assert url.startswith("http://127.0.0.1:"), bank.stderr.read()
        assert registration_without_up(url, vault) and registration_without_uv(url, vault)
        assert not sign_in_replayed(url, vault)
    finally:
        bank.terminate()
        bank.wait(timeout=60)
    assert bank.stderr.read().splitlines() == [f"with the flaw {name}: {RP_SERVER.FLAWS[name]}"
                                               for name in ("up-not-checked", "uv-not-enforced")]
    unknown = subprocess.run([sys.executable, str(script), "--port", "0", "--flaw", "sloppy"], capture_output=True,
                             text=True, timeout=60)
    assert unknown.returncode == 2 and "invalid choice: 'sloppy'" in unknown.stderr


def test_an_unknown_flaw_is_refused():
    with pytest.raises(ValueError, match="no such flaw: sloppy"):
        RP_SERVER.serve(0, flaws=frozenset({"sloppy"}))


def test_sign_up_signs_in_with_a_fresh_user_id_and_reset_forgets_it(vault, start_bank):
    url = start_bank()
    browser, name = sign_up(url)
    assert browser.get("/account") == (200, {"user": name, "password": True, "passkeys": 0})
    _, options = browser.post("/register/begin")
    first = unb64url(options["publicKey"]["user"]["id"])
    other, _ = sign_up(url)
    second = unb64url(other.post("/register/begin")[1]["publicKey"]["user"]["id"])
    assert len(first) == len(second) == 16 and first != second
    assert Browser(url).post("/password/login", {"username": name, "password": "hunter2"})[0] == 200

    assert Browser(url).post("/reset") == (200, {"reset": True})
    assert Browser(url).post("/password/login", {"username": name, "password": "hunter2"})[0] == 401
    assert Browser(url).post("/password/login", {"username": "budi", "password": "rahasia"})[0] == 200
    assert Browser(url).post("/signup", {"username": name, "password": "again"}) == (200, {"user": name})


def test_sign_up_refuses_a_taken_name_and_a_bad_body(start_bank):
    url = start_bank()
    browser = Browser(url)
    status, body = browser.post("/signup", {"username": "budi", "password": "x"})
    assert status == 409 and "taken" in body["error"] and browser.cookie is None
    assert Browser(url).post("/password/login", {"username": "budi", "password": "rahasia"})[0] == 200
    for bad in ({}, {"username": "eve"}, {"password": "x"}, {"username": "", "password": "x"},
                {"username": "eve", "password": ""}, {"username": 7, "password": "x"},
                {"username": "eve", "password": ["x"]}, {"username": "e" * 65, "password": "x"},
                {"username": "e\u0000ve", "password": "x"}, {"username": "e\nve", "password": "x"}):
        status, body = Browser(url).post("/signup", bad)
        assert status == 400 and "error" in body, bad
    for raw in (b"[1, 2]", b"{not json", b"\xff\xfe", b'"eve"'):
        status, body = Browser(url).post("/signup", raw=raw)
        assert status == 400 and "error" in body, raw
    assert Browser(url).post("/password/login", {"username": "eve", "password": "x"})[0] == 401


def test_signing_up_at_once_under_one_name_makes_one_user(start_bank):
    url = start_bank()
    answers = []
    threads = [threading.Thread(target=lambda: answers.append(Browser(url).post("/signup", {"username": "twin", "password": "p"})[0]))
               for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert sorted(answers) == [200] + [409] * 7


def test_sign_in_by_username_lists_that_users_passkeys_and_signs_in_as_them(vault, start_bank):
    url = start_bank()
    _, name, credential_id = customer(url, vault)
    customer(url, vault)  # another customer's passkey, not listed
    browser, options = begin_sign_in(url, name)
    assert [c["id"] for c in options["publicKey"]["allowCredentials"]] == [credential_id]
    assert browser.post("/login/finish", {"credential": sign(vault, options, credential_id)}) == \
        (200, {"verified": True, "user": name})
    assert browser.get("/account")[1]["user"] == name

    browser, body = begin_sign_in(url, "nobody")  # answered as a user with no passkey, and no passkey signs in as it
    assert len(body["publicKey"]["allowCredentials"]) == 1
    del body["publicKey"]["allowCredentials"]  # the imaginary id dropped: a real passkey answers
    assert refused(browser.post("/login/finish", sign(vault, body, credential_id)), "notThisUsersPasskey")
    assert Browser(url).post("/login/begin", {"username": 42})[0] == 400
    assert begin_sign_in(url)[1]["publicKey"]["allowCredentials"] == []  # the discoverable form, as it was


def test_sign_in_by_username_refuses_a_user_handle_of_another_user(vault, start_bank):
    url = start_bank()
    _, name, credential_id = customer(url, vault)
    browser, options = begin_sign_in(url, name)
    response = sign(vault, options, credential_id)
    response["response"]["userHandle"] = b64url(b"customer-0042")  # budi's; the handle is not signed
    assert refused(browser.post("/login/finish", response), "userHandleMismatch")
    assert browser.get("/account")[0] == 401


def test_discoverable_sign_in_needs_the_passkeys_own_user_handle(vault, start_bank):
    url = start_bank()
    _, name, credential_id = customer(url, vault)
    browser, options = begin_sign_in(url)
    response = sign(vault, options, credential_id)
    del response["response"]["userHandle"]
    assert refused(browser.post("/login/finish", response), "noUserHandle")

    browser, options = begin_sign_in(url)
    response = sign(vault, options, credential_id)
    response["response"]["userHandle"] = b64url(b"customer-0042")  # budi's: the passkey is not his
    assert refused(browser.post("/login/finish", response), "userHandleMismatch")
    assert browser.get("/account")[0] == 401

    browser, options = begin_sign_in(url)
    assert browser.post("/login/finish", sign(vault, options, credential_id)) == (200, {"verified": True, "user": name})


def test_a_challenge_is_for_its_own_ceremony_and_used_up_by_a_refusal(vault, start_bank):
    url = start_bank()
    browser, name, credential_id = customer(url, vault)
    # a sign-in's challenge, even one naming the signed-in user, does not approve a transfer: the
    # sign-in does not require UV, the transfer does
    browser.post("/transfer/begin", {"amount": 5})
    _, options = browser.post("/login/begin", {"username": name})
    assert refused(browser.post("/transfer/finish", sign(vault, options, credential_id, "--fault", "uv-cleared")))
    # a refused finish uses the challenge up: the right response after it finds none
    _, options = browser.post("/transfer/begin", {"amount": 5})
    assert refused(browser.post("/transfer/finish", sign(vault, options, credential_id, "--fault", "bad-signature")))
    assert refused(browser.post("/transfer/finish", sign(vault, options, credential_id)))


def test_a_passkey_of_one_user_is_not_registered_for_another(vault, start_bank):
    """With attestation "none" nothing in a registration is signed: anyone can answer a
    registration with another user's credential id and a key of their own."""
    url = start_bank()
    first, _ = sign_up(url)
    _, options = first.post("/register/begin")
    response = vault.register(options, ORIGIN).json
    assert first.post("/register/finish", response)[0] == 200
    second, _ = sign_up(url)
    _, options = second.post("/register/begin")
    response["response"]["clientDataJSON"] = b64url(json.dumps(
        {"type": "webauthn.create", "challenge": options["publicKey"]["challenge"], "origin": ORIGIN}).encode())
    assert refused(second.post("/register/finish", response), "credentialInUse")
    assert second.get("/passkeys") == (200, {"passkeys": []})
    assert len(first.get("/passkeys")[1]["passkeys"]) == 1



def test_an_automatic_upgrade_is_verified_without_up_and_uv_and_only_as_one(vault, start_bank):
    """A conditional create (authctl's automatic upgrade after a password sign-in: UP and UV clear)
    is what /upgrade/begin asks for and /upgrade/finish verifies; /register/finish still refuses
    it, and an upgrade needs a signed-in customer."""
    url = start_bank()
    conditional = ("--mediation", "conditional", "--recent-password-sign-in")
    assert Browser(url).post("/upgrade/begin") == (401, {"error": "not signed in"})
    browser, _ = sign_up(url)
    # a registration's options require UV (a conditional create refuses them as they are) and its finish needs UP
    _, options = browser.post("/register/begin")
    assert options["publicKey"]["authenticatorSelection"]["userVerification"] == "required"
    options["publicKey"]["authenticatorSelection"]["userVerification"] = "preferred"
    made = vault.register(options, ORIGIN, *conditional).json
    auth_data = cbor2.loads(unb64url(made["response"]["attestationObject"]))["authData"]
    assert auth_data[32] & 0x05 == 0  # UP and UV clear
    assert refused(browser.post("/register/finish", made))
    # the upgrade's options prefer UV; its answer finishes the upgrade, not a registration
    _, options = browser.post("/upgrade/begin")
    assert options["publicKey"]["authenticatorSelection"]["userVerification"] == "preferred"
    assert refused(browser.post("/register/finish", vault.register(options, ORIGIN, *conditional).json))
    _, options = browser.post("/upgrade/begin")
    assert browser.post("/upgrade/finish", vault.register(options, ORIGIN, *conditional).json) == (200, {"verified": True, "passkeys": 1})
    assert browser.get("/account")[1]["passkeys"] == 1
