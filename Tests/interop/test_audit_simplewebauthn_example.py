"""`authctl audit --preset simplewebauthn-example` against docs/examples/simplewebauthn_example_rp.py,
an RP on py_webauthn in the shape of SimpleWebAuthn's example server (GET begins that answer the
options at the top level, the response as each verify's whole body, `{"verified": true}` for yes,
users named by `?username=`): the baseline passes, each case comes to the verdict the example's
glue earns, the dry run names the GET begins with their query, and the JUnit report says the same."""
import http.server
import inspect
import json
import subprocess
import urllib.error
import urllib.request
from xml.etree import ElementTree

import pytest
from webauthn import generate_registration_options, verify_authentication_response, verify_registration_response
from webauthn.helpers import bytes_to_base64url
from webauthn.helpers.cose import COSEAlgorithmIdentifier

from conftest import BIN, Running, load_example

RP = load_example("simplewebauthn_example_rp")

# What the audit finds in the example's glue, on py_webauthn 3.0.1.
EXPECTED = {
    # verify_authentication_response takes no user handle and looks at none (§7.2 step 6 is the
    # caller's); the example never compares it — it keeps no user.id at all (generateRegistration-
    # Options makes a random one each time): another user's handle signs in.
    "sign-other-users-handle": "ACCEPTED",
    # The example offers ES256 and RS256 (supportedAlgorithmIDs [-7, -257]) in its options but does
    # not narrow the verify, whose default takes every algorithm the library knows: an EdDSA key
    # registers.
    "reg-alg-not-offered": "ACCEPTED",
    # py_webauthn 3.0.1 leaves these to its caller, and the example does not do them: crossOrigin
    # (and topOrigin) unread, a credential id's length and what follows the attestation object
    # unchecked.
    **{case: "ACCEPTED" for case in ["reg-cross-origin", "sign-cross-origin", "reg-trailing-bytes", "reg-long-credential-id"]},
    # The example stores a credential's id, public key, counter and transports — not its BE, so
    # nothing is compared at sign-in.
    "sign-backup-eligibility-changed": "ACCEPTED",
    # The example looks a new credential id up among the registering user's own credentials only:
    # one another user has registers again.
    "reg-credential-id-in-use": "ACCEPTED",
    # Named users: a sign-in begun for a name no user has is refused ("User … not found", the
    # example's "You need to know the user by this point"), a user with a passkey gets options.
    "opt-user-enumeration": "ACCEPTED",
    # The example asks for userVerification preferred in both ceremonies (its comment points at
    # passkeys.dev's note on bootstrapping), and verifies with requireUserVerification false.
    "reg-uv-cleared": "inconclusive",
    "sign-uv-cleared": "inconclusive",
    # No login in the shape: no second session of the same user.
    "reg-without-begin": "inconclusive",
    # The example's sign-in begin is for a named user only: no discoverable sign-in.
    **{case: "inconclusive" for case in [
        "sign-discoverable-no-user-handle", "sign-discoverable-other-users-credential", "sign-discoverable-other-users-handle"]},
    "reg-unsolicited-extension": "taken",
    # The example catches every error a verify raises and answers 400 {error}: the envelope and
    # flag cases that are 500s for glue catching only what py_webauthn's docstrings name are
    # refused here.
    **{case: "rejected" for case in [
        "reg-backup-state-without-eligibility", "reg-wrong-credential-type", "reg-id-missing", "reg-id-not-raw-id",
        "reg-raw-id-not-base64url"]},
    # No signedIn in the shape (a verified sign-in makes no session): a refused sign-in is judged
    # on the refusal alone ("not probed").
    **{case: "rejected" for case in [
        "sign-wrong-type", "sign-wrong-challenge", "sign-wrong-origin", "sign-look-alike-origin", "sign-subdomain-origin",
        "sign-http-origin", "sign-other-port-origin", "sign-wrong-rp-id-hash", "sign-up-cleared", "sign-bad-signature",
        "sign-uv-claimed", "sign-counter-regress", "sign-backup-state-without-eligibility", "sign-zero-signature",
        "sign-other-key-signature", "sign-other-users-credential", "sign-without-begin", "sign-id-not-raw-id",
        "sign-wrong-credential-type", "sign-id-missing", "sign-raw-id-not-base64url", "sign-empty-signature",
        "sign-client-data-changed", "sign-id-not-base64url"]},
    # Judged on the finish's or the options' answer alone, and refused: the challenge is cleared
    # after a verify, and kept per session.
    **{case: "rejected" for case in [
        "opt-distinct-challenges", "opt-exclude-credentials", "reg-wrong-type", "reg-wrong-challenge", "reg-wrong-origin",
        "reg-look-alike-origin", "reg-subdomain-origin", "reg-http-origin", "reg-other-port-origin", "reg-bad-cbor",
        "reg-wrong-rp-id-hash", "reg-up-cleared", "reg-format-miscased", "reg-none-with-statement", "reg-at-flag-cleared",
        "reg-replay", "sign-replay", "reg-in-another-users-session", "state-refused-sign-in-moves-count"]},
}


def audit(url, *args):
    return subprocess.run([BIN, "--json", "audit", "--preset", "simplewebauthn-example", *args, url],
                          capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    junit = tmp_path_factory.mktemp("junit") / "junit.xml"
    rp = Running(RP.serve(0))
    try:
        proc = audit(rp.url, "--junit", str(junit))
    finally:
        rp.close()
    assert proc.returncode == 32, f"exit {proc.returncode}: {proc.stderr}"
    assert json.loads(proc.stderr.strip().splitlines()[-1])["error"] == "auditFindings"
    return json.loads(proc.stdout), junit


@pytest.fixture(scope="module")
def report(run):
    return run[0]


def test_each_case_comes_to_the_verdict_the_examples_glue_earns(report):
    found = {r["id"]: r["verdict"] for r in report["results"]}
    assert {case: found.get(case) for case in EXPECTED} == EXPECTED
    # Every case of the battery is pinned here.
    assert set(found) == set(EXPECTED)
    assert report["counts"] == {v: list(found.values()).count(v) for v in set(found.values())}
    assert report["origin"] == "http://localhost:8000"
    for result in report["results"]:
        assert ("exchanges" in result) == (result["verdict"] in ("ACCEPTED", "server error")), result["id"]


def test_the_junit_report_says_the_same(run):
    report, junit = run
    suite = ElementTree.parse(junit).getroot()
    assert suite.tag == "testsuite"
    kinds = {case.get("name"): [child.tag for child in case] for case in suite.findall("testcase")}
    assert set(kinds) == set(EXPECTED)
    assert {name for name, tags in kinds.items() if "failure" in tags} == {c for c, v in EXPECTED.items() if v == "ACCEPTED"}
    assert {name for name, tags in kinds.items() if "skipped" in tags} == {c for c, v in EXPECTED.items() if v == "inconclusive"}
    assert not any("error" in tags for tags in kinds.values())
    assert int(suite.get("tests")) == len(EXPECTED)
    assert int(suite.get("failures")) == report["counts"]["ACCEPTED"]
    assert int(suite.get("skipped")) == report["counts"]["inconclusive"]


def test_users_are_named_in_the_begins_query_and_the_response_is_each_verifys_body(report):
    # The enumeration finding carries both sign-in begins: GETs naming the user in the query.
    finding = next(r for r in report["results"] if r["id"] == "opt-user-enumeration")
    begins = [e for e in finding["exchanges"] if e["path"].startswith("/generate-authentication-options?")]
    assert [e["method"] for e in begins] == ["GET", "GET"], finding["exchanges"]
    assert all(e.get("body") is None for e in begins)
    assert begins[0]["status"] == 200 and "challenge" in json.loads(begins[0]["answer"])
    assert begins[1]["path"].endswith("-nobody") and begins[1]["status"] == 400
    assert json.loads(begins[1]["answer"])["error"].startswith("User ")
    # The handle finding: another user's handle in the response sent as the verify's whole body,
    # and the example's yes.
    finding = next(r for r in report["results"] if r["id"] == "sign-other-users-handle")
    finish = finding["exchanges"][-1]
    assert finish["method"] == "POST" and finish["path"] == "/verify-authentication" and finish["status"] == 200
    assert json.loads(finish["answer"]) == {"verified": True}
    sent = json.loads(finish["body"])
    assert sent["type"] == "public-key" and sent["response"]["userHandle"]
    begun = [e["path"] for e in finding["exchanges"] if e["method"] == "GET"]
    assert begun and all("?username=audit-" in path for path in begun), begun


def test_what_the_shape_lacks_is_named_in_the_evidence(report):
    evidence = {r["id"]: r["evidence"] for r in report["results"]}
    assert evidence["reg-without-begin"] == "the profile has no logIn: a second session of the same user cannot be had"
    assert "userVerification preferred" in evidence["reg-uv-cleared"] and "userVerification preferred" in evidence["sign-uv-cleared"]
    reason = evidence["sign-bad-signature"]
    assert reason.startswith("refused (400 ") and "Could not verify authentication signature" in reason, reason
    assert reason.endswith("not probed: the profile has no signedIn: whether the browser is signed in cannot be asked"), reason
    assert "EdDSA" in evidence["reg-alg-not-offered"] and "[-7, -257]" in evidence["reg-alg-not-offered"]


def test_a_dry_run_names_the_get_begins_with_the_query_and_sends_nothing():
    seen = []

    class Recording(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def answer(self):
            seen.append((self.command, self.path))
            self.send_response(500)
            self.send_header("Content-Length", "0")
            self.end_headers()

        do_GET = do_POST = answer

    rp = Running(http.server.ThreadingHTTPServer(("127.0.0.1", 0), Recording))
    try:
        proc = audit(rp.url, "--dry-run")
        text = subprocess.run([BIN, "audit", "--preset", "simplewebauthn-example", "--dry-run", "--only", "reg-replay", rp.url],
                              capture_output=True, text=True, timeout=60)
    finally:
        rp.close()
    assert proc.returncode == 0 and text.returncode == 0, proc.stderr + text.stderr
    assert seen == []
    plan = json.loads(proc.stdout)
    requests = {r["name"]: r for r in plan["requests"]}
    assert set(requests) == {"register.begin", "register.finish", "signIn.begin", "signIn.finish"}
    assert (requests["register.begin"]["method"], requests["register.begin"]["url"]) == \
        ("GET", rp.url + "/generate-registration-options?username=${user}")
    assert (requests["signIn.begin"]["method"], requests["signIn.begin"]["url"]) == \
        ("GET", rp.url + "/generate-authentication-options?username=${user}")
    assert "body" not in requests["register.begin"] and "body" not in requests["signIn.begin"]
    for name, path in (("register.finish", "/verify-registration"), ("signIn.finish", "/verify-authentication")):
        assert (requests[name]["method"], requests[name]["url"], json.loads(requests[name]["body"])) == ("POST", rp.url + path, "${response}")
    # No sign-up, login or signed-in page: the baseline is the two ceremonies.
    assert plan["baseline"] == ["register.begin", "register.finish", "signIn.begin", "signIn.finish"]
    assert plan["origin"] == "http://localhost:8000"
    assert {c["id"] for c in plan["cases"]} == set(EXPECTED)
    assert "/generate-registration-options?username=${user}" in text.stdout and "GET" in text.stdout


def test_py_webauthn_verifies_algorithms_the_options_did_not_offer_unless_told():
    """Why reg-alg-not-offered is found: the example narrows its options (supportedAlgorithmIDs)
    and not its verify, whose default is every algorithm py_webauthn knows, EdDSA among them."""
    default = inspect.signature(verify_registration_response).parameters["supported_pub_key_algs"].default
    assert COSEAlgorithmIdentifier.EDDSA in default


def test_py_webauthn_neither_takes_nor_checks_a_user_handle_and_makes_a_random_user_id():
    """Why sign-other-users-handle is found: §7.2 step 6 is the caller's, and the example gives no
    user id to keep (each registration's options carry a fresh random one)."""
    assert not any("handle" in name for name in inspect.signature(verify_authentication_response).parameters)
    ids = {bytes_to_base64url(generate_registration_options(rp_id="localhost", rp_name="x", user_name="u").user.id) for _ in range(2)}
    assert len(ids) == 2


def request(url, method="GET", body: bytes | None = None, cookie: str | None = None):
    headers = {"Content-Type": "application/json"} if body is not None else {}
    if cookie:
        headers["Cookie"] = cookie
    try:
        with urllib.request.urlopen(urllib.request.Request(url, data=body, method=method, headers=headers), timeout=30) as answer:
            return answer.status, json.loads(answer.read()), answer.headers.get("Set-Cookie")
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read()), error.headers.get("Set-Cookie")


def test_the_rps_routes_answer_as_the_examples_do():
    rp = Running(RP.serve(0))
    try:
        # Registration options at the top level, for the named user, with the example's choices,
        # and express-session's cookie set.
        status, options, cookie = request(rp.url + "/generate-registration-options?username=a%20b%26c")
        assert status == 200 and cookie.startswith("connect.sid=")
        assert options["user"]["name"] == "a b&c" and options["rp"] == {"name": "SimpleWebAuthn Example", "id": "localhost"}
        assert [p["alg"] for p in options["pubKeyCredParams"]] == [-7, -257] and options["timeout"] == 60000
        assert options["attestation"] == "none"
        assert options["authenticatorSelection"]["residentKey"] == "discouraged"
        assert options["authenticatorSelection"]["userVerification"] == "preferred"
        # A verify without a challenge in its session, a body that is not a response: 400 {error}.
        for path in ("/verify-registration", "/verify-authentication"):
            for body in (b"{}", b"not json", b"[]"):
                status, answer, _ = request(rp.url + path, "POST", body)
                assert status == 400 and set(answer) == {"error"} and answer["error"], (path, body, answer)
        # A begin that names no user, or two; a route the example has not.
        for path in ("/generate-registration-options", "/generate-authentication-options?username=",
                     "/generate-authentication-options?username=a&username=b"):
            status, answer, _ = request(rp.url + path)
            assert status == 400 and "username" in answer["error"], (path, answer)
        assert request(rp.url + "/verify-registration")[0] == 404
        assert request(rp.url + "/generate-registration-options?username=x", "POST", b"{}")[0] == 404
    finally:
        rp.close()
