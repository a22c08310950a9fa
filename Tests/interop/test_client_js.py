"""The JavaScript client (clients/js): its own suite, `node --test clients/js/test/`, run against the
binary under test. It judges the server's answers with node:crypto, runs 32 accounts in parallel,
drives sync on the virtual clock through the event stream, and runs the worked example against the
example bank (docs/examples/rp_server.py, with this interpreter's py_webauthn). And py_webauthn and
python-fido2 judge a registration and a sign-in made through the JavaScript client.

Node 18 or later is required: without it this test fails, it does not skip."""
import json
import os
import re
import shutil
import subprocess
import sys

from conftest import BIN, ROOT, own_environment

NODE = os.environ.get("NODE", "node")


def test_the_javascript_client_suite_passes(tmp_path):
    node = shutil.which(NODE)
    assert node, f"{NODE} is not on the PATH: the JavaScript client's suite needs Node 18 or later (Debian: apt-get install nodejs)"
    version = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=60).stdout.strip()
    major = re.match(r"v(\d+)\.", version)
    assert major and int(major.group(1)) >= 18, f"{node} is {version!r}; the JavaScript client needs Node 18 or later"

    env = own_environment(tmp_path)  # its HOME and TMPDIR under tmp_path; no AUTHCTL_* of the caller's
    env.update(AUTHCTL_BIN=BIN, PYTHON=sys.executable)
    proc = subprocess.run([node, "--test", "--test-reporter=tap", "clients/js/test/"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=900)
    output = f"node {version}, exit {proc.returncode}\n--- stdout ---\n{proc.stdout}\n--- stderr ---\n{proc.stderr}"
    assert proc.returncode == 0, output
    passed = re.search(r"^# pass (\d+)$", proc.stdout, re.M)
    failed = re.search(r"^# fail (\d+)$", proc.stdout, re.M)
    assert passed and failed, output
    assert int(failed.group(1)) == 0, output
    assert int(passed.group(1)) >= 25, f"only {passed.group(1)} tests ran\n{output}"


JUDGED_BY_PYTHON = """
import { AuthctlServer } from './clients/js/src/index.mjs';
const [registration, signIn] = JSON.parse(process.argv[2]);
const server = await AuthctlServer.start();
try {
  const account = await server.createAccount({ devices: [{ name: 'phone', pin: '1234' }] });
  const phone = account.device('phone');
  const made = await phone.register(registration, 'https://example.com');
  const asserted = await phone.sign(signIn, 'https://example.com');
  console.log(JSON.stringify([made, asserted]));
} finally {
  await server.stop();
}
"""


def run_through_javascript(tmp_path, registration: dict, sign_in: dict):
    """A registration and a sign-in made through the JavaScript client: the responses it hands back."""
    node = shutil.which(NODE)
    assert node, f"{NODE} is not on the PATH"
    script = tmp_path / "judged.mjs"
    script.write_text(JUDGED_BY_PYTHON.replace("./clients/js/src/index.mjs", str(ROOT / "clients" / "js" / "src" / "index.mjs")))
    env = own_environment(tmp_path)
    env.update(AUTHCTL_BIN=BIN)
    proc = subprocess.run([node, str(script), json.dumps([registration, sign_in])], env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_py_webauthn_verifies_what_the_javascript_client_got(tmp_path):
    from webauthn import (generate_authentication_options, generate_registration_options, options_to_json,
                          verify_authentication_response, verify_registration_response)
    registration = generate_registration_options(rp_id="example.com", rp_name="RP", user_name="alice", user_id=b"alice")
    sign_in = generate_authentication_options(rp_id="example.com")
    made, asserted = run_through_javascript(tmp_path, json.loads(options_to_json(registration)), json.loads(options_to_json(sign_in)))
    verified = verify_registration_response(credential=made, expected_challenge=registration.challenge, expected_rp_id="example.com",
                                            expected_origin="https://example.com")
    verify_authentication_response(credential=asserted, expected_challenge=sign_in.challenge, expected_rp_id="example.com",
                                   expected_origin="https://example.com", credential_public_key=verified.credential_public_key,
                                   credential_current_sign_count=0)


def test_python_fido2_verifies_what_the_javascript_client_got(tmp_path):
    from fido2.server import Fido2Server
    from fido2.utils import websafe_encode
    from fido2.webauthn import PublicKeyCredentialRpEntity, PublicKeyCredentialUserEntity
    from conftest import tamper
    rp = Fido2Server(PublicKeyCredentialRpEntity(id="example.com", name="RP"), verify_origin=lambda o: o == "https://example.com")
    options, state = rp.register_begin(PublicKeyCredentialUserEntity(id=b"user-1", name="alice", display_name="Alice"),
                                       user_verification="required", resident_key_requirement="required")
    registration = dict(options)["publicKey"]
    # The sign-in's challenge is chosen here, so the same options can be sent before the credential exists.
    challenge = os.urandom(32)
    made, asserted = run_through_javascript(tmp_path, json.loads(json.dumps(dict(registration), default=lambda o: websafe_encode(o) if isinstance(o, bytes) else dict(o))),
                                            {"challenge": websafe_encode(challenge), "rpId": "example.com", "userVerification": "required"})
    auth_data = rp.register_complete(state, made)
    credential = auth_data.credential_data
    state = {"challenge": websafe_encode(challenge), "user_verification": "required"}
    assert rp.authenticate_complete(state, [credential], asserted).credential_id == credential.credential_id
    try:
        rp.authenticate_complete(state, [credential], tamper(asserted, "signature"))
    except Exception:
        pass
    else:
        raise AssertionError("a tampered signature verified")
