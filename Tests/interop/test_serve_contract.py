"""`authctl serve` against its own contract. The contract is a file, Sources/Server/OpenAPI/openapi.json
(the page bridge another, Sources/Server/Bridge/bridge.js), embedded in the binary when it is
built: each is linted as what it is — an OpenAPI 3.1 document, a script node parses — and served
byte for byte by a binary with no file beside it. schemathesis reads GET /openapi.json and calls
every operation with generated requests — valid and not — and checks each answer: never a 5xx, its
status documented, its content type and body valid against the schema."""
import json
import shutil
import signal
import subprocess
import sys
import urllib.request

from openapi_spec_validator import validate
from openapi_spec_validator.versions import consts as versions
from openapi_spec_validator.versions.shortcuts import get_spec_version

from conftest import BIN, ROOT, own_environment

CONTRACT = ROOT / "Sources" / "Server" / "OpenAPI" / "openapi.json"
BRIDGE = ROOT / "Sources" / "Server" / "Bridge" / "bridge.js"


def test_the_contract_is_a_valid_openapi_3_1_document():
    document = json.loads(CONTRACT.read_bytes())
    assert get_spec_version(document) == versions.OPENAPIV31
    validate(document)  # raises, naming what is wrong, on a document that is not OpenAPI 3.1


def test_the_page_bridge_is_a_script_node_parses():
    run = subprocess.run(["node", "--check", str(BRIDGE)], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    # The one place the server writes into it: a name that parses as an expression there.
    assert BRIDGE.read_text().count("__AUTHCTL_CONFIG__") == 1


def test_a_lone_binary_serves_the_contract_and_the_bridge_byte_for_byte_as_the_files_are(tmp_path):
    # The installed binary is one file: nothing beside it, run from elsewhere.
    lone = tmp_path / "bin" / "authctl"
    lone.parent.mkdir()
    shutil.copy2(BIN, lone)
    proc = subprocess.Popen([str(lone), "serve"], env=own_environment(tmp_path), cwd=tmp_path / "tmp", stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        url = proc.stdout.readline().split()[-1]
        token = proc.stdout.readline().split()[-1]
        assert sorted(p.name for p in lone.parent.iterdir()) == ["authctl"]
        with urllib.request.urlopen(url + "/openapi.json", timeout=60) as response:
            assert response.headers["Content-Type"].startswith("application/json")
            assert response.read() == CONTRACT.read_bytes()
        account = call(url, token, "POST", "/accounts", {})["id"]
        request = urllib.request.Request(f"{url}/bridge.js?account={account}&device=phone")
        request.add_header("Authorization", f"Bearer {token}")
        with urllib.request.urlopen(request, timeout=60) as response:
            assert response.headers["Content-Type"].startswith("text/javascript")
            served = response.read()
        # The file with its one placeholder replaced by the page's settings (sorted keys, '<' escaped).
        config = json.dumps({"server": url, "token": token, "account": account, "device": "phone"}, sort_keys=True, separators=(",", ":"))
        expected = BRIDGE.read_bytes().replace(b"__AUTHCTL_CONFIG__", config.replace("<", "\\u003c").encode())
        assert served == expected
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 0, proc.stderr.read()

HOOKS = '''
import schemathesis


@schemathesis.hook
def map_body(context, body):
    # A conditional sign-in stays pending until a pick (tested on its own in test_serve.py), and
    # an autofill pick waits for one: neither is left to generated data.
    if isinstance(body, dict):
        if body.get("mediation") == "conditional":
            body["mediation"] = "optional"
        body.pop("wait", None)
        # A virtual authenticator's protocol or extension authctl does not have is WebDriver's
        # unsupported operation, which WebDriver's table answers with a 500 (test_serve.py holds
        # the routes to it): not left to generated data, which would read it as the server failing.
        if body.get("protocol") == "ctap1/u2f":
            body["protocol"] = "ctap2"
        if isinstance(body.get("extensions"), list):
            body["extensions"] = [e for e in body["extensions"] if e in ("credBlob", "credProtect", "hmac-secret", "largeBlob", "minPinLength", "prf")]
    return body
'''


def call(url, token, method, path, body=None):
    request = urllib.request.Request(url + path, data=json.dumps(body).encode() if body is not None else None, method=method)
    request.add_header("Authorization", f"Bearer {token}")
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.loads(response.read() or b"null")


def test_every_operation_answers_as_its_contract_says(tmp_path):
    proc = subprocess.Popen([BIN, "serve"], env=own_environment(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        url = proc.stdout.readline().split()[-1]
        token = proc.stdout.readline().split()[-1]
        # Data for the paths: an account with two devices and a passkey, and a virtual
        # authenticator with a credential — so generated requests reach the routes' own checks,
        # not only "no such account".
        account = call(url, token, "POST", "/accounts", {"devices": [{"name": "phone", "pin": "1234"}, {"name": "laptop", "pin": "1234"}],
                                                          "clock": {"mode": "virtual"}})
        options = {"rp": {"id": "example.com", "name": "Example"}, "user": {"id": "dXNlcg", "name": "alice", "displayName": "Alice"},
                   "challenge": "Y2hhbGxlbmdlY2hhbGxlbmdl", "pubKeyCredParams": [{"type": "public-key", "alg": -7}]}
        made = call(url, token, "POST", f"/accounts/{account['id']}/devices/phone/register", {"options": options, "origin": "https://example.com"})
        session = call(url, token, "POST", "/session", {})["value"]["sessionId"]
        authenticator = call(url, token, "POST", f"/session/{session}/webauthn/authenticator",
                             {"protocol": "ctap2", "transport": "internal", "hasResidentKey": True, "hasUserVerification": True,
                              "isUserVerified": True})["value"]
        (tmp_path / "contract_hooks.py").write_text(HOOKS)
        (tmp_path / "schemathesis.toml").write_text(
            "[parameters]\n"
            f'"path.account" = "{account["id"]}"\n"path.device" = "phone"\n"path.credential" = "{made["id"]}"\n'
            f'"path.session" = "{session}"\n"path.authenticator" = "{authenticator}"\n"query.follow" = "false"\n'
            f'"query.account" = "{account["id"]}"\n"query.device" = "phone"\n')
        environment = own_environment(tmp_path)
        environment.update(PYTHONPATH=str(tmp_path), SCHEMATHESIS_HOOKS="contract_hooks")
        run = subprocess.run([sys.executable, "-m", "schemathesis.cli", "--config-file", str(tmp_path / "schemathesis.toml"), "run",
                              url + "/openapi.json", "-H", f"Authorization: Bearer {token}",
                              "--checks", "not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance",
                              "--phases", "examples,fuzzing", "--max-examples", "25", "--request-timeout", "60", "--seed", "1",
                              "--no-color"],
                             env=environment, cwd=tmp_path, capture_output=True, text=True, timeout=1800)
        assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-3000:]
        document = call(url, token, "GET", "/openapi.json")
        operations = sum(1 for item in document["paths"].values() for method in item if method in ("get", "post", "put", "delete"))
        assert operations >= 50
        assert f"Tested: {operations}" in run.stdout or f"{operations}/{operations}" in run.stdout, run.stdout[-3000:]
        # The server is still whole after it all.
        assert call(url, token, "GET", "/health") == {"status": "ok"}
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 0, proc.stderr.read()
