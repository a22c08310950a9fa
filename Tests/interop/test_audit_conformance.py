"""`authctl audit --preset fido-conformance` against docs/examples/conformance_rp.py, an RP on
py_webauthn in the shape of the FIDO2 server conformance test API (no sign-up, login or signed-in
page): the baseline passes, each case comes to the verdict glue written the way py_webauthn's
examples show earns, and what the shape lacks is said: a case that needs it is inconclusive, a
refused sign-in that cannot be probed is rejected "not probed". Profiles
without signUp, logIn or signedIn run; hostile profiles are badInput before anything is sent."""
import http.server
import inspect
import json
import subprocess

import pytest
from webauthn import verify_authentication_response, verify_registration_response
from webauthn.helpers.exceptions import InvalidJSONStructure, InvalidRegistrationResponse

from conftest import BIN, ROOT, Running, load_example

RP = load_example("conformance_rp")
RP_SERVER = load_example("rp_server")
FIDO2_RP = load_example("fido2_rp")

# What the audit finds in glue written as py_webauthn's examples show.
EXPECTED = {
    # verify_authentication_response takes no user handle and looks at none (§7.2 step 6 is the
    # caller's), and the examples never compare it: another user's handle signs in.
    "sign-other-users-handle": "ACCEPTED",
    # verify_*_response's docstrings name InvalidRegistrationResponse / InvalidAuthenticationResponse,
    # but parsing raises InvalidJSONStructure for a response without id or of another type: glue
    # that catches what the docstring names answers those with a 500.
    "reg-wrong-credential-type": "server error",
    "reg-id-missing": "server error",
    "sign-wrong-credential-type": "server error",
    # py_webauthn 3.0.1 leaves these to its caller, and its examples do not do them: crossOrigin
    # (and topOrigin) unread, a credential id's length and what follows the attestation object
    # unchecked, BE not stored to compare, a credential id already another user's not looked up;
    # and the conformance API answers a name no user has with "User does not exist!".
    **{case: "ACCEPTED" for case in [
        "opt-user-enumeration", "reg-cross-origin", "sign-cross-origin", "reg-trailing-bytes", "reg-long-credential-id",
        "sign-backup-eligibility-changed", "reg-credential-id-in-use"]},
    # BS without BE raises InvalidBackupFlags, which the docstrings do not name: a 500.
    "reg-backup-state-without-eligibility": "server error",
    "sign-backup-state-without-eligibility": "server error",
    # The conformance API lets the caller ask for any algorithm py_webauthn knows.
    "reg-alg-not-offered": "inconclusive",
    "reg-unsolicited-extension": "taken",
    **{case: "rejected" for case in ["reg-format-miscased", "reg-none-with-statement", "reg-at-flag-cleared",
                                     "sign-zero-signature", "sign-other-key-signature"]},
    # No logIn in the shape: no second session of the same user.
    "reg-without-begin": "inconclusive",
    # No discoverable sign-in in the API: /assertion/options names its username.
    **{case: "inconclusive" for case in [
        "sign-discoverable-no-user-handle", "sign-discoverable-other-users-credential", "sign-discoverable-other-users-handle"]},
    # No signedIn in the shape: a refused sign-in is judged on the refusal alone ("not probed").
    **{case: "rejected" for case in [
        "sign-wrong-type", "sign-wrong-challenge", "sign-wrong-origin", "sign-look-alike-origin", "sign-subdomain-origin",
        "sign-http-origin", "sign-other-port-origin", "sign-wrong-rp-id-hash", "sign-up-cleared", "sign-uv-cleared",
        "sign-bad-signature", "sign-uv-claimed", "sign-counter-regress", "sign-other-users-credential", "sign-without-begin",
        "sign-id-not-raw-id", "sign-id-missing", "sign-raw-id-not-base64url", "sign-empty-signature",
        "sign-client-data-changed", "sign-id-not-base64url"]},
    # Judged on the finish's or the options' answer alone, and refused.
    **{case: "rejected" for case in [
        "opt-distinct-challenges", "opt-exclude-credentials", "reg-wrong-type", "reg-wrong-challenge", "reg-wrong-origin",
        "reg-look-alike-origin", "reg-subdomain-origin", "reg-http-origin", "reg-other-port-origin", "reg-bad-cbor",
        "reg-wrong-rp-id-hash", "reg-up-cleared", "reg-uv-cleared", "reg-replay", "sign-replay", "reg-in-another-users-session",
        "state-refused-sign-in-moves-count", "reg-id-not-raw-id", "reg-raw-id-not-base64url"]},
}


def audit(url, *args, preset=("--preset", "fido-conformance")):
    return subprocess.run([BIN, "--json", "audit", *preset, *args, url], capture_output=True, text=True, timeout=300)


def error_of(proc):
    return json.loads(proc.stderr.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def report():
    rp = Running(RP.serve(0))
    try:
        proc = audit(rp.url)
    finally:
        rp.close()
    assert proc.returncode == 32, f"exit {proc.returncode}: {proc.stderr}"
    assert error_of(proc)["error"] == "auditFindings"
    return json.loads(proc.stdout)


def test_each_case_comes_to_the_verdict_py_webauthn_glue_earns(report):
    found = {r["id"]: r["verdict"] for r in report["results"]}
    assert {case: found.get(case) for case in EXPECTED} == EXPECTED
    # Every case of the battery is pinned here.
    assert set(found) == set(EXPECTED)
    assert report["counts"] == {v: list(found.values()).count(v) for v in set(found.values())}
    for result in report["results"]:
        assert ("exchanges" in result) == (result["verdict"] in ("ACCEPTED", "server error")), result["id"]


def test_what_the_profile_lacks_is_named_in_the_evidence(report):
    evidence = {r["id"]: r["evidence"] for r in report["results"]}
    assert evidence["reg-without-begin"] == "the profile has no logIn: a second session of the same user cannot be had"
    for case in ("sign-discoverable-no-user-handle", "sign-discoverable-other-users-credential", "sign-discoverable-other-users-handle"):
        assert evidence[case] == "the profile has no discoverableSignIn: a sign-in whose begin names no user cannot be had", case
    reason = evidence["sign-bad-signature"]
    assert reason.startswith("refused (400 ") and "Could not verify authentication signature" in reason, reason
    assert reason.endswith("not probed: the profile has no signedIn: whether the browser is signed in cannot be asked"), reason


def test_the_handle_finding_carries_the_other_users_handle_and_the_rps_yes(report):
    finding = next(r for r in report["results"] if r["id"] == "sign-other-users-handle")
    finish = finding["exchanges"][-1]
    assert finish["path"] == "/assertion/result" and finish["status"] == 200
    assert json.loads(finish["answer"]) == {"status": "ok", "errorMessage": ""}


def test_py_webauthn_neither_takes_nor_checks_a_user_handle():
    """Why sign-other-users-handle is found: the library leaves §7.2 step 6 to its caller."""
    assert not any("handle" in name for name in inspect.signature(verify_authentication_response).parameters)


@pytest.mark.parametrize("change", [{"id": None}, {"type": "public-key-x"}])
def test_py_webauthn_raises_other_than_its_docstring_names_for_a_malformed_response(change):
    """Why the envelope cases are server errors: parsing raises InvalidJSONStructure, which is not
    the InvalidRegistrationResponse verify_registration_response's docstring names."""
    assert "InvalidRegistrationResponse" in verify_registration_response.__doc__
    credential = {"id": "AAAA", "rawId": "AAAA", "type": "public-key",
                  "response": {"clientDataJSON": "e30", "attestationObject": "oA"}}
    credential.update({k: v for k, v in change.items() if v is not None})
    for k in [k for k, v in change.items() if v is None]:
        del credential[k]
    with pytest.raises(InvalidJSONStructure) as raised:
        verify_registration_response(credential=credential, expected_challenge=b"x" * 16, expected_rp_id="localhost",
                                     expected_origin="https://localhost")
    assert not isinstance(raised.value, InvalidRegistrationResponse)


def write(tmp_path, profile, name="profile.json"):
    path = tmp_path / name
    path.write_text(json.dumps(profile))
    return str(path)


def rp_server_profile(**changes):
    profile = {
        "origin": "https://yourbank.example",
        "signUp": {"method": "POST", "path": "/signup", "body": {"username": "${user}", "password": "${password}"}},
        "logIn": {"method": "POST", "path": "/password/login", "body": {"username": "${user}", "password": "${password}"}},
        "register": {"begin": {"method": "POST", "path": "/register/begin", "body": {}}, "options": "publicKey",
                     "finish": {"method": "POST", "path": "/register/finish", "body": {"credential": "${response}"}}},
        "signIn": {"begin": {"method": "POST", "path": "/login/begin", "body": {"username": "${user}"}}, "options": "publicKey",
                   "finish": {"method": "POST", "path": "/login/finish", "body": {"credential": "${response}"}}},
        "discoverableSignIn": {"begin": {"method": "POST", "path": "/login/begin", "body": {}}, "options": "publicKey",
                               "finish": {"method": "POST", "path": "/login/finish", "body": {"credential": "${response}"}}},
        "signedIn": {"method": "GET", "path": "/account"},
        "success": {"member": "verified", "equals": True},
    }
    for key, value in changes.items():
        if value is None:
            profile.pop(key)
        else:
            profile[key] = value
    return profile


def test_the_preset_written_as_a_file_without_the_optional_members_runs_the_same(tmp_path):
    preset = {
        "origin": "https://localhost",
        "register": {"begin": {"method": "POST", "path": "/attestation/options",
                               "body": {"username": "${user}", "displayName": "${user}",
                                        "authenticatorSelection": {"userVerification": "required"}, "attestation": "none"}},
                     "options": "", "finish": {"method": "POST", "path": "/attestation/result", "body": "${response}"}},
        "signIn": {"begin": {"method": "POST", "path": "/assertion/options", "body": {"username": "${user}", "userVerification": "required"}},
                   "options": "", "finish": {"method": "POST", "path": "/assertion/result", "body": "${response}"}},
        "success": {"member": "status", "equals": "ok"},
    }
    rp = Running(RP.serve(0))
    try:
        proc = audit(rp.url, "--only", "reg-without-begin,sign-bad-signature,reg-replay,reg-uv-cleared",
                     preset=("--profile", write(tmp_path, preset)))
    finally:
        rp.close()
    assert proc.returncode == 0, proc.stderr
    found = {r["id"]: r["verdict"] for r in json.loads(proc.stdout)["results"]}
    assert found == {"reg-without-begin": "inconclusive", "sign-bad-signature": "rejected", "reg-replay": "rejected",
                     "reg-uv-cleared": "rejected"}


@pytest.mark.parametrize("left_out, case, verdict, reason", [
    ("logIn", "reg-without-begin", "inconclusive", "the profile has no logIn"),
    ("signedIn", "sign-bad-signature", "rejected", "not probed: the profile has no signedIn"),
    ("discoverableSignIn", "sign-discoverable-other-users-handle", "inconclusive", "the profile has no discoverableSignIn"),
])
def test_a_member_left_out_changes_only_the_cases_that_need_it_and_says_so(tmp_path, left_out, case, verdict, reason):
    rp = Running(RP_SERVER.serve(0))
    try:
        proc = audit(rp.url, "--only", f"{case},reg-replay", preset=("--profile", write(tmp_path, rp_server_profile(**{left_out: None}))))
    finally:
        rp.close()
    assert proc.returncode == 0, proc.stderr
    results = {r["id"]: r for r in json.loads(proc.stdout)["results"]}
    assert results[case]["verdict"] == verdict and reason in results[case]["evidence"], results[case]
    assert results["reg-replay"]["verdict"] == "rejected"


def test_a_yes_that_is_text_of_a_page_finds_a_session_left_by_a_refused_sign_in(tmp_path):
    profile = rp_server_profile(signedInSuccess={"contains": '"passkeys": 1'})
    for flaws, verdict in ((frozenset(), "rejected"), (frozenset(["session-on-failed-verify"]), "ACCEPTED")):
        rp = Running(RP_SERVER.serve(0, flaws=flaws))
        try:
            proc = audit(rp.url, "--only", "sign-bad-signature", preset=("--profile", write(tmp_path, profile)))
        finally:
            rp.close()
        assert {r["id"]: r["verdict"] for r in json.loads(proc.stdout)["results"]} == {"sign-bad-signature": verdict}, proc.stderr
    # Text the signed-in page does not hold: the honest sign-in of the baseline is not seen.
    rp = Running(RP_SERVER.serve(0))
    try:
        proc = audit(rp.url, "--only", "sign-bad-signature",
                     preset=("--profile", write(tmp_path, rp_server_profile(signedInSuccess={"contains": "Welcome back"}))))
    finally:
        rp.close()
    assert proc.returncode == 33 and "does not say the user is signed in" in error_of(proc)["message"], proc.stderr


def test_a_yes_that_is_a_cookie_is_seen_in_the_answers_set_cookie(tmp_path):
    # fido2_rp sets its `sid` cookie when a secret signs in, and only then: asked as the
    # signed-in probe, a yes only if the cookie is seen; a cookie it never sets is never a yes.
    profile = json.loads((ROOT / "docs" / "examples" / "fido2_rp.audit.json").read_text())
    profile["signedIn"] = {"method": "POST", "path": "/api/session", "body": {"name": "${user}", "secret": "${password}"}}
    for cookie, status in (("sid", 0), ("other", 33)):
        profile["signedInSuccess"] = {"cookie": cookie}
        rp = Running(FIDO2_RP.serve(0))
        try:
            proc = audit(rp.url, "--only", "opt-distinct-challenges", preset=("--profile", write(tmp_path, profile)))
        finally:
            rp.close()
        assert proc.returncode == status, proc.stderr
        if status:
            assert "does not say the user is signed in" in error_of(proc)["message"]


class Recording(http.server.BaseHTTPRequestHandler):
    """An RP that only counts what reaches it."""
    seen = []

    def log_message(self, *args):
        pass

    def answer(self):
        self.seen.append(self.path)
        self.send_response(500)
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_GET = do_POST = answer


@pytest.mark.parametrize("changes, named", [
    ({"signedIn": {"method": "GET", "path": "http://198.51.100.7/account"}}, "signedIn.path"),
    ({"signedIn": {"method": "GET", "path": "//198.51.100.7/account"}}, "signedIn.path"),
    ({"logIn": {"method": "POST", "path": "/password/login\r\nHost: evil.example"}}, "logIn.path"),
    ({"signUp": {"method": "POST /x HTTP/1.1\r\nX-Injected: 1\r\n", "path": "/signup"}}, "signUp.method"),
    ({"success": {"cookie": "a=b"}}, "success.cookie"),
    ({"signUp": None}, "has no signUp"),
    ({"signedIn": "GET /account"}, "signedIn"),
    ({"signUp": {"method": "POST", "path": 7}}, "signUp"),
    ({"success": {"member": ["verified"]}}, "success"),
    ({"register": None}, "register"),
    ({"discoverableSignIn": {"begin": {"method": "POST", "path": "//198.51.100.7/login/begin", "body": {}}, "options": "publicKey",
                             "finish": {"method": "POST", "path": "/login/finish", "body": "${response}"}}}, "discoverableSignIn.begin.path"),
    ({"discoverableSignIn": {"begin": {"method": "POST", "path": "/login/begin", "body": {"username": "${user}"}}, "options": "publicKey",
                             "finish": {"method": "POST", "path": "/login/finish", "body": "${response}"}}}, "discoverableSignIn.begin names no user"),
    ({"discoverableSignIn": {"begin": {"method": "POST", "path": "/login/begin"}}}, "discoverableSignIn"),
])
def test_a_hostile_profile_is_bad_input_naming_what_and_nothing_is_sent(tmp_path, changes, named):
    handler = type("R", (Recording,), {"seen": []})
    rp = Running(http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler))
    try:
        proc = audit(rp.url, preset=("--profile", write(tmp_path, rp_server_profile(**changes))))
    finally:
        rp.close()
    assert proc.returncode == 65, proc.stderr
    error = error_of(proc)
    assert error["error"] == "badInput" and named in error["message"], error
    assert handler.seen == []


def post(url, body: bytes):
    import urllib.error
    import urllib.request
    request = urllib.request.Request(url, data=body, method="POST", headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


@pytest.mark.parametrize("path", ["/attestation/options", "/assertion/options", "/attestation/result", "/assertion/result"])
@pytest.mark.parametrize("body", [b"not json", b"[]", b"{}", b'{"username": 1, "displayName": []}',
                                  b'{"username": "u", "displayName": "u", "authenticatorSelection": {"userVerification": "always"}}'])
def test_a_malformed_request_is_a_400_with_failed_and_an_error_message(path, body):
    rp = Running(RP.serve(0))
    try:
        status, answer = post(rp.url + path, body)
    finally:
        rp.close()
    assert status == 400, (status, answer)
    assert answer["status"] == "failed" and answer["errorMessage"]
