"""`authctl serve`: accounts in memory over HTTP, ceremonies judged by
py_webauthn, the bearer token, and the errors as application/problem+json."""
import base64
import json
import os
import signal
import socket
import subprocess
import urllib.error
import urllib.request

import pytest
from webauthn import (generate_authentication_options, generate_registration_options, options_to_json,
                      verify_authentication_response, verify_registration_response)
from webauthn.helpers.structs import PublicKeyCredentialDescriptor

from conftest import BIN, b64url, own_environment, unb64url, wait_until

RP_ID, ORIGIN = "example.com", "https://example.com"


@pytest.fixture
def server(tmp_path):
    proc = subprocess.Popen([BIN, "serve"], env=own_environment(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    url = proc.stdout.readline().split()[-1]
    token = proc.stdout.readline().split()[-1]
    yield url, token
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=60) == 0


def call(server, method, path, body=None, token=True, raw=None):
    url, secret = server
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
    request = urllib.request.Request(url + path, data=data, method=method)
    if token:
        request.add_header("Authorization", f"Bearer {secret}")
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            text = response.read()
            return response.status, response.headers.get("Content-Type"), json.loads(text) if text else None
    except urllib.error.HTTPError as error:
        return error.code, error.headers.get("Content-Type"), json.loads(error.read())


def test_a_registration_and_a_sign_in_over_http_verify(server):
    status, _, account = call(server, "POST", "/accounts", {"devices": [{"name": "phone", "pin": "1234"}]})
    assert status == 201 and [d["name"] for d in account["devices"]] == ["phone"]
    options = generate_registration_options(rp_id=RP_ID, rp_name="RP", user_name="alice", user_id=b"alice")
    status, kind, response = call(server, "POST", f"/accounts/{account['id']}/devices/phone/register",
                                  {"options": json.loads(options_to_json(options)), "origin": ORIGIN})
    assert status == 200 and kind == "application/json", response
    registered = verify_registration_response(credential=response, expected_challenge=options.challenge,
                                              expected_rp_id=RP_ID, expected_origin=ORIGIN)
    request = generate_authentication_options(rp_id=RP_ID, allow_credentials=[PublicKeyCredentialDescriptor(id=registered.credential_id)])
    status, _, response = call(server, "POST", f"/accounts/{account['id']}/devices/phone/sign",
                               {"options": json.loads(options_to_json(request)), "origin": ORIGIN})
    assert status == 200, response
    verify_authentication_response(credential=response, expected_challenge=request.challenge, expected_rp_id=RP_ID,
                                   expected_origin=ORIGIN, credential_public_key=registered.credential_public_key,
                                   credential_current_sign_count=0)
    # Another account never sees it.
    _, _, other = call(server, "POST", "/accounts")
    status, kind, problem = call(server, "POST", f"/accounts/{other['id']}/devices/phone/sign",
                                 {"options": json.loads(options_to_json(request)), "origin": ORIGIN})
    assert (status, kind, problem["name"], problem["domException"]) == (422, "application/problem+json", "notHandled", "NotAllowedError")


def test_the_accounts_a_server_makes_share_one_attestation_ca_an_rp_can_trust(server, tmp_path):
    from webauthn.helpers.structs import AttestationConveyancePreference, AttestationFormat
    roots = []
    for _ in range(2):
        _, _, account = call(server, "POST", "/accounts", {"profile": "security-key"})
        status, _, ca = call(server, "GET", f"/accounts/{account['id']}/attestation-ca")
        assert status == 200 and ca["root"].startswith("-----BEGIN CERTIFICATE-----") and ca["root"] != ca["intermediate"]
        roots.append(ca["root"])
        options = generate_registration_options(rp_id=RP_ID, rp_name="RP", user_name="alice", user_id=b"alice",
                                                attestation=AttestationConveyancePreference.DIRECT)
        _, _, response = call(server, "POST", f"/accounts/{account['id']}/devices/phone/register",
                              {"options": json.loads(options_to_json(options)), "origin": ORIGIN})
        verified = verify_registration_response(credential=response, expected_challenge=options.challenge, expected_rp_id=RP_ID,
                                                expected_origin=ORIGIN, pem_root_certs_bytes_by_fmt={AttestationFormat.PACKED: [ca["root"].encode()]})
        assert verified.fmt == AttestationFormat.PACKED
    assert roots[0] == roots[1]
    # Another CA's root (a vault's own) is not a trust anchor for it.
    env = own_environment(tmp_path)
    env.update(AUTHCTL_VAULT=str(tmp_path / "vault"), AUTHCTL_PASSPHRASE="pass")
    subprocess.run([BIN, "init", "--kdf", "min", "--no-biometry"], text=True, env=env, check=True, capture_output=True)
    other = subprocess.run([BIN, "ca", "export"], text=True, env=env, capture_output=True)
    assert other.returncode == 0 and other.stdout.startswith("-----BEGIN CERTIFICATE-----"), other.stderr
    with pytest.raises(Exception):
        verify_registration_response(credential=response, expected_challenge=options.challenge, expected_rp_id=RP_ID,
                                     expected_origin=ORIGIN, pem_root_certs_bytes_by_fmt={AttestationFormat.PACKED: [other.stdout.encode()]})
    assert call(server, "GET", "/accounts/nope/attestation-ca")[0] == 404


def test_errors_are_problems(server):
    assert call(server, "GET", "/health", token=False)[0] == 200
    assert call(server, "POST", "/accounts", token=False)[0] == 401
    url, _ = server
    request = urllib.request.Request(url + "/accounts", data=b"{}", method="POST", headers={"Authorization": "Bearer wrong"})
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=60)
    assert refused.value.code == 401
    assert call(server, "POST", "/accounts", raw=b"{not json")[0:2] == (400, "application/problem+json")
    # Over 1 MiB: refused at once by its Content-Length (the body is not read), or, sent in
    # chunks without one, once read past the limit.
    host, port = url.split("//")[1].split(":")
    with socket.create_connection((host, int(port)), timeout=60) as raw:
        raw.sendall(b"POST /accounts HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + server[1].encode()
                    + b"\r\nContent-Length: 2097152\r\n\r\n")
        assert raw.recv(4096).startswith(b"HTTP/1.1 413")
    chunks = (b"x" * 65536 for _ in range(32))
    request = urllib.request.Request(url + "/accounts", data=chunks, method="POST",
                                     headers={"Authorization": f"Bearer {server[1]}", "Transfer-Encoding": "chunked"})
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=60)
    assert refused.value.code == 413
    assert call(server, "POST", "/accounts/nobody/devices/phone/sign", {"options": {}, "origin": ORIGIN})[0] == 404
    assert call(server, "GET", "/../../etc/passwd")[0] == 404
    _, _, account = call(server, "POST", "/accounts")
    assert call(server, "DELETE", f"/accounts/{account['id']}")[0] == 204
    assert call(server, "DELETE", f"/accounts/{account['id']}")[0] == 404


def fido2_server(rp_id=RP_ID, origin=ORIGIN):
    from fido2.server import Fido2Server
    from fido2.webauthn import PublicKeyCredentialRpEntity
    return Fido2Server(PublicKeyCredentialRpEntity(id=rp_id, name="RP"), verify_origin=lambda o: o == origin)


def public_key_of(options):
    """fido2's options as the JSON an RP sends (`publicKey`'s member)."""
    as_dict = dict(options)
    return as_dict.get("publicKey", as_dict)


def test_python_fido2_verifies_ceremonies_over_http_and_refuses_a_tampered_one(server):
    from fido2.webauthn import PublicKeyCredentialUserEntity
    from conftest import tamper
    rp = fido2_server()
    _, _, account = call(server, "POST", "/accounts", {"devices": [{"name": "phone", "pin": "1234"}]})
    base = f"/accounts/{account['id']}/devices/phone"
    options, state = rp.register_begin(PublicKeyCredentialUserEntity(id=b"user-1", name="alice", display_name="Alice"),
                                       user_verification="required", resident_key_requirement="required")
    status, _, response = call(server, "POST", base + "/register", {"options": public_key_of(options), "origin": ORIGIN})
    assert status == 200, response
    auth_data = rp.register_complete(state, response)
    assert auth_data.is_user_verified() and auth_data.is_backup_eligible()
    credential = auth_data.credential_data
    options, state = rp.authenticate_begin([credential], user_verification="required")
    status, _, assertion = call(server, "POST", base + "/sign", {"options": public_key_of(options), "origin": ORIGIN})
    assert status == 200, assertion
    assert rp.authenticate_complete(state, [credential], assertion).credential_id == credential.credential_id
    options, state = rp.authenticate_begin([credential])
    status, _, assertion = call(server, "POST", base + "/sign", {"options": public_key_of(options), "origin": ORIGIN})
    with pytest.raises(Exception):
        rp.authenticate_complete(state, [credential], tamper(assertion, "signature"))


def sign_options(**extra):
    return {"challenge": "c2lnbi1pbi1jaGFsbGVuZ2U", "rpId": RP_ID, **extra}


def register_alice(server, account, device="phone"):
    options = generate_registration_options(rp_id=RP_ID, rp_name="RP", user_name="alice", user_id=b"alice")
    status, _, response = call(server, "POST", f"/accounts/{account}/devices/{device}/register",
                               {"options": json.loads(options_to_json(options)), "origin": ORIGIN})
    assert status == 200, response
    return response["id"]


def test_a_conditional_sign_in_waits_for_the_pick_its_timeout_or_the_accounts_end(server):
    import threading
    _, _, account = call(server, "POST", "/accounts", {"clock": {"mode": "virtual", "start": "2026-01-01T00:00:00Z"}})
    credential = register_alice(server, account["id"])
    base = f"/accounts/{account['id']}/devices/phone"
    answers = []

    def pending(body):
        thread = threading.Thread(target=lambda: answers.append(call(server, "POST", base + "/sign", body)))
        thread.start()
        return thread

    # Picked from the autofill list: answered as a sign-in with that passkey.
    thread = pending({"options": sign_options(), "origin": ORIGIN, "mediation": "conditional"})
    status, _, picked = call(server, "POST", base + "/autofill", {"credentialId": credential, "wait": "60s"})
    assert (status, picked) == (200, {"picked": True})
    thread.join(timeout=60)
    status, _, response = answers.pop()
    assert status == 200 and response["id"] == credential
    # A second one while one is pending is refused; the clock moved past the timeout ends it.
    thread = pending({"options": sign_options(timeout=60000), "origin": ORIGIN, "mediation": "conditional"})
    wait_until(lambda: call(server, "GET", base + "/autofill")[2]["pending"], "the sign-in pending")
    offered = call(server, "GET", base + "/autofill")[2]["offered"]
    assert [(o["credentialId"], o["userName"]) for o in offered] == [(credential, "alice")]
    assert call(server, "POST", base + "/sign", {"options": sign_options(), "origin": ORIGIN, "mediation": "conditional"})[0] == 409
    assert call(server, "POST", f"/accounts/{account['id']}/clock", {"advance": "61s"})[0] == 200
    thread.join(timeout=60)
    status, _, problem = answers.pop()
    assert (status, problem["name"], problem["domException"]) == (422, "timedOut", "NotAllowedError")
    assert call(server, "GET", base + "/autofill")[2] == {"pending": False}
    # Another RP's request, or one allowing other passkeys only, offers nothing.
    for options in (sign_options(rpId="other.example", timeout=10000), sign_options(allowCredentials=[{"type": "public-key", "id": "AAAA"}], timeout=10000)):
        thread = pending({"options": options, "origin": "https://other.example" if options["rpId"] == "other.example" else ORIGIN, "mediation": "conditional"})
        wait_until(lambda: call(server, "GET", base + "/autofill")[2]["pending"], "the sign-in pending")
        assert call(server, "GET", base + "/autofill")[2]["offered"] == []
        assert call(server, "POST", f"/accounts/{account['id']}/clock", {"advance": "11s"})[0] == 200
        thread.join(timeout=60)
        assert answers.pop()[0] == 422
    # No pick for a sign-in that never began.
    assert call(server, "POST", base + "/autofill", {"credentialId": credential, "wait": 0})[0] == 409
    # The account's end cancels one still pending.
    thread = pending({"options": sign_options(), "origin": ORIGIN, "mediation": "conditional"})
    wait_until(lambda: call(server, "GET", base + "/autofill")[2]["pending"], "the sign-in pending")
    assert call(server, "DELETE", f"/accounts/{account['id']}")[0] == 204
    thread.join(timeout=60)
    status, _, problem = answers.pop()
    assert (status, problem["name"], problem["domException"]) == (422, "canceled", "NotAllowedError")
    # A device the account does not have is not there for a pick either.
    _, _, other = call(server, "POST", "/accounts")
    assert call(server, "GET", f"/accounts/{other['id']}/devices/nope/autofill")[0] == 404
    assert call(server, "POST", f"/accounts/{other['id']}/devices/nope/autofill", {"cancel": True})[0] == 404



def test_a_conditional_sign_in_is_its_pages_until_another_pages_request_or_its_page_ends_it(server):
    import threading
    _, _, account = call(server, "POST", "/accounts")
    credential = register_alice(server, account["id"])
    base = f"/accounts/{account['id']}/devices/phone"
    answers = {}

    def begin(request_id, page):
        body = {"options": sign_options(), "origin": ORIGIN, "mediation": "conditional",
                "request": {"id": request_id, "page": page, "url": f"https://example.com/login#{page}"}}
        thread = threading.Thread(target=lambda: answers.__setitem__(request_id, call(server, "POST", base + "/sign", body)))
        thread.start()
        return thread

    def pending_request():
        return call(server, "GET", base + "/autofill")[2].get("request", {}).get("id")

    first = begin("r1", "A")
    wait_until(lambda: pending_request() == "r1", "r1 pending")
    assert call(server, "GET", base + "/autofill")[2]["request"] == {"id": "r1", "page": "A", "url": "https://example.com/login#A", "origin": ORIGIN}
    # The same page again: refused, as Chromium refuses a page's second request.
    status, _, problem = call(server, "POST", base + "/sign", {"options": sign_options(), "origin": ORIGIN, "mediation": "conditional",
                                                              "request": {"id": "r1b", "page": "A"}})
    assert (status, problem["domException"]) == (409, "OperationError"), problem
    assert problem["detail"].startswith("A request is already pending"), problem
    # Another page's request (a reload, a navigation) takes the list: r1 is over, a pick for it finds nothing.
    second = begin("r2", "B")
    first.join(timeout=60)
    status, _, problem = answers["r1"]
    assert status == 410 and "superseded: request r2 of page https://example.com/login#B" in problem["detail"], problem
    assert pending_request() == "r2"
    status, _, problem = call(server, "POST", base + "/autofill", {"credentialId": credential, "request": "r1", "wait": 0})
    assert status == 409 and problem["detail"].startswith("conditional sign-in r1 is not pending on device"), problem
    assert call(server, "POST", base + "/autofill", {"credentialId": credential, "request": "r2"})[2] == {"picked": True}
    second.join(timeout=60)
    assert answers["r2"][0] == 200 and answers["r2"][2]["id"] == credential
    # A pick for a request that has not begun waits for it, and is not taken by another page's.
    other = begin("r4", "D")
    wait_until(lambda: pending_request() == "r4", "r4 pending")
    picked = {}
    picker = threading.Thread(target=lambda: picked.update(answer=call(server, "POST", base + "/autofill",
                                                                       {"credentialId": credential, "request": "r3", "wait": "60s"})))
    picker.start()
    third = begin("r3", "C")
    for thread in (picker, third, other):
        thread.join(timeout=60)
    assert picked["answer"][2] == {"picked": True} and answers["r3"][0] == 200 and answers["r4"][0] == 410
    # The page withdraws its own (it aborted it, or went away) — even one still on its way.
    fifth = begin("r5", "E")
    wait_until(lambda: pending_request() == "r5", "r5 pending")
    assert call(server, "DELETE", base + "/autofill?request=r5")[2] == {"ended": True}
    fifth.join(timeout=60)
    assert answers["r5"][0] == 410 and "withdrawn" in answers["r5"][2]["detail"]
    assert call(server, "DELETE", base + "/autofill?request=r5")[2] == {"ended": False}
    assert call(server, "DELETE", base + "/autofill?request=r6")[2] == {"ended": False}
    sixth = begin("r6", "F")
    sixth.join(timeout=60)
    assert answers["r6"][0] == 410 and call(server, "GET", base + "/autofill")[2] == {"pending": False}
    # What is not a page's request.
    conditional = {"options": sign_options(), "origin": ORIGIN, "mediation": "conditional"}
    for body, path in (({**conditional, "request": {"id": ""}}, "/sign"), ({**conditional, "request": {"page": "A"}}, "/sign"),
                       ({**conditional, "request": {"id": "x", "tab": 1}}, "/sign"), ({**conditional, "request": {"id": "x y"}}, "/sign"),
                       ({**conditional, "request": {"id": "x", "url": "u" * 4097}}, "/sign"), ({**conditional, "request": "x"}, "/sign"),
                       ({"options": sign_options(), "origin": ORIGIN, "request": {"id": "x"}}, "/sign")):
        status, _, problem = call(server, "POST", base + path, body)
        assert (status, problem["name"]) == (400, "badInput"), (body, problem)
    assert call(server, "DELETE", base + "/autofill")[0] == 400
    assert call(server, "DELETE", base + "/autofill?request=a&other=b")[0] == 400
    assert call(server, "DELETE", base + "/autofill?request=" + "x" * 129)[0] == 400
    assert call(server, "POST", base + "/autofill", {"credentialId": credential, "request": ""})[0] == 400

def test_the_autofill_list_is_what_the_authenticator_offers_and_a_pick_is_one_of_it(server):
    import threading
    _, _, account = call(server, "POST", "/accounts")
    base = f"/accounts/{account['id']}/devices/phone"
    alice = register_alice(server, account["id"])
    # carol's passkey is credProtect 3: no candidate of a sign-in that does not verify the user.
    options = json.loads(options_to_json(generate_registration_options(rp_id=RP_ID, rp_name="RP", user_name="carol", user_id=b"carol")))
    options["authenticatorSelection"] = {"residentKey": "required", "userVerification": "required"}
    options["extensions"] = {"credentialProtectionPolicy": "userVerificationRequired"}
    status, _, carol = call(server, "POST", base + "/register", {"options": options, "origin": ORIGIN})
    assert status == 200, carol
    answers = []

    def pending(options):
        thread = threading.Thread(target=lambda: answers.append(call(server, "POST", base + "/sign", {"options": options, "origin": ORIGIN,
                                                                                                      "mediation": "conditional"})))
        thread.start()
        wait_until(lambda: call(server, "GET", base + "/autofill")[2]["pending"], "the sign-in pending")
        return thread

    thread = pending(sign_options(userVerification="required"))
    assert [o["userName"] for o in call(server, "GET", base + "/autofill")[2]["offered"]] == ["alice", "carol"]
    assert call(server, "POST", base + "/autofill", {"credentialId": carol["id"]})[2] == {"picked": True}
    thread.join(timeout=60)
    status, _, response = answers.pop()
    assert status == 200 and response["id"] == carol["id"]
    # Without user verification the list leaves carol's out, and she cannot be picked from it.
    thread = pending(sign_options(userVerification="discouraged"))
    assert [o["credentialId"] for o in call(server, "GET", base + "/autofill")[2]["offered"]] == [alice]
    assert call(server, "POST", base + "/autofill", {"credentialId": carol["id"]})[2] == {"picked": True}
    thread.join(timeout=60)
    status, _, problem = answers.pop()
    assert (problem["name"], problem["domException"]) == ("notHandled", "NotAllowedError") and "does not offer" in problem["detail"], problem


def test_sync_on_a_virtual_clock_and_its_events(server):
    _, _, account = call(server, "POST", "/accounts", {"devices": [{"name": "phone", "pin": "1234"}, {"name": "laptop", "pin": "9753"}],
                                                       "clock": {"mode": "virtual", "start": 1_767_225_600_000},
                                                       "sync": {"upload": "2s", "download": "3s"}})
    a = account["id"]
    url, token = server
    request = urllib.request.Request(f"{url}/accounts/{a}/events?follow=false", headers={"Authorization": f"Bearer {token}"})
    with urllib.request.urlopen(request, timeout=60) as stream:   # recording from now
        assert stream.read() == b": authctl events\n\n"
    credential = register_alice(server, a)
    assert call(server, "GET", f"/accounts/{a}/devices/laptop/passkeys")[2] == {"credentials": []}
    assert call(server, "POST", f"/accounts/{a}/clock", {"advance": 4999})[2]["now"] == 1_767_225_604_999
    assert call(server, "GET", f"/accounts/{a}/devices/laptop/passkeys")[2] == {"credentials": []}
    assert call(server, "POST", f"/accounts/{a}/clock", {"set": "2026-01-01T00:00:05Z"})[0] == 200
    assert [c["id"] for c in call(server, "GET", f"/accounts/{a}/devices/laptop/passkeys")[2]["credentials"]] == [credential]
    request = urllib.request.Request(f"{url}/accounts/{a}/events?follow=false", headers={"Authorization": f"Bearer {token}"})
    with urllib.request.urlopen(request, timeout=60) as stream:
        assert stream.headers["Content-Type"] == "text/event-stream"
        text = stream.read().decode()
    events = [(e.split("\nevent: ")[1].split("\n")[0], json.loads(e.split("\ndata: ")[1])) for e in text.split("\n\n") if "\nevent: " in e]
    assert [name for name, _ in events] == ["credentialAdded", "syncLanded", "syncArrived"]
    assert events[1][1] == {"device": "phone", "credentialId": credential, "removal": False, "time": 1_767_225_602_000}
    assert events[2][1] == {"device": "laptop", "credentialId": credential, "removal": False, "time": 1_767_225_605_000}
    assert events[0][1]["authenticatorId"] == "phone" and events[0][1]["credential"]["credentialId"] == credential
    # A real clock is not moved by a request.
    _, _, real = call(server, "POST", "/accounts")
    assert call(server, "POST", f"/accounts/{real['id']}/clock", {"advance": "1s"})[2]["name"] == "usage"


def test_a_virtual_clock_reads_rfc_3339_to_the_end_of_the_year_9999_and_goes_no_further(server):
    from datetime import datetime
    end = 253_402_300_799_999  # 9999-12-31T23:59:59.999Z, RFC 3339's last time
    _, _, account = call(server, "POST", "/accounts", {"clock": {"mode": "virtual", "start": "6325-01-01T00:00:00Z"}})
    a = account["id"]
    for change, now in [({}, None), ({"advance": "8760h"}, None), ({"set": "9999-12-31T23:59:59Z"}, end - 999), ({"advance": 999}, end)]:
        clock = call(server, "POST", f"/accounts/{a}/clock", change)[2] if change else call(server, "GET", f"/accounts/{a}/clock")[2]
        assert datetime.fromisoformat(clock["time"]).timestamp() * 1000 == clock["now"], clock  # "2026-01-01T00:00:00.000Z"
        assert len(clock["time"]) == 24 and clock["time"].endswith("Z"), clock
        assert now is None or clock["now"] == now
    assert call(server, "GET", f"/accounts/{a}/clock")[2]["time"] == "9999-12-31T23:59:59.999Z"
    # Past it there is no RFC 3339 time: refused, the clock where it was.
    for change in [{"advance": 1}, {"advance": "1s"}, {"set": end + 1}]:
        status, _, problem = call(server, "POST", f"/accounts/{a}/clock", change)
        assert (status, problem["name"]) == (400, "badInput"), problem
    for start in [end + 1, "10000-01-01T00:00:00Z", "1969-12-31T23:59:59Z", -1]:
        status, _, problem = call(server, "POST", "/accounts", {"clock": {"mode": "virtual", "start": start}})
        assert (status, problem["name"]) == (400, "badInput"), (start, problem)
    assert call(server, "GET", f"/accounts/{a}/clock")[2]["now"] == end


def test_add_virtual_authenticator_always_answers_with_a_new_authenticator(server):
    # Its id names its device, whose name may not start with '-': one random id in 64 did, and
    # Add Virtual Authenticator failed as badInput. 400 tries miss that one in 64 with odds of 0.2%.
    _, _, session = call(server, "POST", "/session", {})
    s = session["value"]["sessionId"]
    ids = set()
    for _ in range(400):
        status, _, added = call(server, "POST", f"/session/{s}/webauthn/authenticator", {"protocol": "ctap2", "transport": "internal"})
        assert status == 200, added
        ids.add(added["value"])
        assert call(server, "DELETE", f"/session/{s}/webauthn/authenticator/{added['value']}")[0] == 200
    assert len(ids) == 400


def test_webdriver_verbs_add_get_and_remove_credentials(server):
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from webauthn.helpers import bytes_to_base64url
    key = ec.generate_private_key(ec.SECP256R1())
    pkcs8 = key.private_bytes(serialization.Encoding.DER, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    _, _, session = call(server, "POST", "/session", {})
    s = session["value"]["sessionId"]
    status, _, added = call(server, "POST", f"/session/{s}/webauthn/authenticator",
                            {"protocol": "ctap2", "transport": "internal", "hasResidentKey": True, "hasUserVerification": True,
                             "isUserVerified": True})
    assert status == 200
    a = added["value"]
    credential_id = bytes_to_base64url(b"webdriver-credential-1")
    assert call(server, "POST", f"/session/{s}/webauthn/authenticator/{a}/credential",
                {"credentialId": credential_id, "isResidentCredential": True, "rpId": RP_ID, "privateKey": bytes_to_base64url(pkcs8),
                 "userHandle": bytes_to_base64url(b"alice"), "signCount": 7})[2] == {"value": None}
    _, _, listed = call(server, "GET", f"/session/{s}/webauthn/authenticator/{a}/credentials")
    [only] = listed["value"]
    assert (only["credentialId"], only["rpId"], only["signCount"]) == (credential_id, RP_ID, 7)
    returned = serialization.load_der_private_key(base64.urlsafe_b64decode(only["privateKey"] + "=" * (-len(only["privateKey"]) % 4)), None)
    assert returned.private_numbers() == key.private_numbers()
    # A sign-in with it verifies against the key the test made.
    request = generate_authentication_options(rp_id=RP_ID)
    status, _, response = call(server, "POST", f"/accounts/{a}/devices/{a}/sign", {"options": json.loads(options_to_json(request)), "origin": ORIGIN})
    assert status == 200 and response["id"] == credential_id
    public = key.public_key().public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    from webauthn.helpers.cose import COSEAlgorithmIdentifier  # noqa: F401  (py_webauthn takes a COSE key)
    from fido2.cose import ES256
    cose = ES256.from_cryptography_key(key.public_key())
    import cbor2
    verify_authentication_response(credential=response, expected_challenge=request.challenge, expected_rp_id=RP_ID, expected_origin=ORIGIN,
                                   credential_public_key=cbor2.dumps(dict(cose)), credential_current_sign_count=7)
    assert public
    # Set User Verified false: verification now fails; Set Credential Properties; Remove.
    assert call(server, "POST", f"/session/{s}/webauthn/authenticator/{a}/uv", {"isUserVerified": False})[2] == {"value": None}
    status, _, problem = call(server, "POST", f"/accounts/{a}/devices/{a}/sign",
                              {"options": sign_options(userVerification="required"), "origin": ORIGIN})
    assert (status, problem["name"]) == (422, "notInteractive")
    assert call(server, "POST", f"/session/{s}/webauthn/authenticator/{a}/credentials/{credential_id}/props",
                {"backupEligibility": True, "backupState": False})[0] == 200
    assert call(server, "GET", f"/accounts/{a}/devices/{a}/passkeys/{credential_id}")[2]["backupState"] is False
    assert call(server, "DELETE", f"/session/{s}/webauthn/authenticator/{a}/credentials/{credential_id}")[0] == 200
    status, _, problem = call(server, "DELETE", f"/session/{s}/webauthn/authenticator/{a}/credentials/{credential_id}")
    assert (status, problem["value"]["error"]) == (400, "invalid argument")
    status, _, problem = call(server, "POST", f"/session/{s}/webauthn/authenticator", {"protocol": "ctap1/u2f", "transport": "usb"})
    assert (status, problem["value"]["error"]) == (500, "unsupported operation")
    assert call(server, "DELETE", f"/session/{s}")[0] == 200
    assert call(server, "GET", f"/accounts/{a}")[0] == 404


def webdriver_authenticator(server):
    """A session and a virtual authenticator in it (user verification on, verified)."""
    s = call(server, "POST", "/session", {})[2]["value"]["sessionId"]
    status, _, added = call(server, "POST", f"/session/{s}/webauthn/authenticator",
                            {"protocol": "ctap2", "transport": "internal", "hasResidentKey": True, "hasUserVerification": True,
                             "isUserVerified": True})
    assert status == 200, added
    return s, added["value"]


def test_webdriver_add_credential_keeps_the_user_handle_it_was_given(server):
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from fido2.cose import ES256
    import cbor2
    key = ec.generate_private_key(ec.SECP256R1())
    pkcs8 = key.private_bytes(serialization.Encoding.DER, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    s, a = webdriver_authenticator(server)
    credential_id, user_handle = b64url(os.urandom(16)), b64url(b"user-handle-of-alice")
    assert call(server, "POST", f"/session/{s}/webauthn/authenticator/{a}/credential",
                {"credentialId": credential_id, "isResidentCredential": True, "rpId": RP_ID, "privateKey": b64url(pkcs8),
                 "userHandle": user_handle, "userName": "alice", "signCount": 0})[2] == {"value": None}
    # Read back by Get Credentials and by the account's passkeys: the handle given, not the id.
    [listed] = call(server, "GET", f"/session/{s}/webauthn/authenticator/{a}/credentials")[2]["value"]
    assert (listed["credentialId"], listed["userHandle"], listed["userName"]) == (credential_id, user_handle, "alice")
    [held] = call(server, "GET", f"/accounts/{a}/devices/{a}/passkeys")[2]["credentials"]
    assert (held["id"], held["userHandle"]) == (credential_id, user_handle)
    # A sign-in with no allowCredentials (the passkey found as a discoverable one) answers it as
    # the response's userHandle, which an RP looks the account up by; py_webauthn checks the rest.
    request = generate_authentication_options(rp_id=RP_ID)
    status, _, response = call(server, "POST", f"/accounts/{a}/devices/{a}/sign",
                               {"options": json.loads(options_to_json(request)), "origin": ORIGIN})
    assert status == 200 and response["id"] == credential_id, response
    assert response["response"]["userHandle"] == user_handle
    verify_authentication_response(credential=response, expected_challenge=request.challenge, expected_rp_id=RP_ID, expected_origin=ORIGIN,
                                   credential_public_key=cbor2.dumps(dict(ES256.from_cryptography_key(key.public_key()))),
                                   credential_current_sign_count=0)


def test_webdriver_add_credential_takes_a_pkcs8_key_package_only(server):
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec, rsa
    der, raw = serialization.Encoding.DER, serialization.NoEncryption()
    ec_key, rsa_key = ec.generate_private_key(ec.SECP256R1()), rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pkcs8 = ec_key.private_bytes(der, serialization.PrivateFormat.PKCS8, raw)
    s, a = webdriver_authenticator(server)
    # WebAuthn L3 §11.7: "an asymmetric key package containing a single private key per RFC 5958";
    # anything else is WebDriver's invalid argument — SEC1 (RFC 5915) and PKCS #1 are other formats.
    for refused in (ec_key.private_bytes(der, serialization.PrivateFormat.TraditionalOpenSSL, raw),
                    rsa_key.private_bytes(der, serialization.PrivateFormat.TraditionalOpenSSL, raw), pkcs8 + b"\x00", pkcs8[:-1]):
        body = {"credentialId": b64url(os.urandom(16)), "isResidentCredential": True, "rpId": RP_ID, "privateKey": b64url(refused),
                "userHandle": b64url(b"alice"), "signCount": 0}
        status, kind, problem = call(server, "POST", f"/session/{s}/webauthn/authenticator/{a}/credential", body)
        assert (status, kind, problem["name"], problem["value"]["error"]) == (400, "application/problem+json", "badInput", "invalid argument")
        assert "not a PKCS #8 key package" in problem["detail"], problem
        del body["isResidentCredential"]
        status, _, problem = call(server, "POST", f"/accounts/{a}/devices/{a}/passkeys", body)
        assert (status, problem["name"]) == (400, "badInput") and "not a PKCS #8 key package" in problem["detail"], problem
    assert call(server, "GET", f"/session/{s}/webauthn/authenticator/{a}/credentials")[2] == {"value": []}
    body = {"credentialId": b64url(os.urandom(16)), "isResidentCredential": True, "rpId": RP_ID, "userHandle": b64url(b"alice"),
            "privateKey": b64url(pkcs8), "signCount": 0}
    assert call(server, "POST", f"/session/{s}/webauthn/authenticator/{a}/credential", body)[2] == {"value": None}


def p256_credential():
    """A P-256 key, its PKCS #8 (base64url) and its COSE public key (as py_webauthn takes it)."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from fido2.cose import ES256
    import cbor2
    key = ec.generate_private_key(ec.SECP256R1())
    pkcs8 = key.private_bytes(serialization.Encoding.DER, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    return pkcs8, cbor2.dumps(dict(ES256.from_cryptography_key(key.public_key())))


def webdriver_sign_in(server, a, public_key, current_sign_count):
    """A sign-in on virtual authenticator `a`, verified by py_webauthn against `public_key`; its
    authenticator data's flags and signature counter."""
    request = generate_authentication_options(rp_id=RP_ID)
    status, _, response = call(server, "POST", f"/accounts/{a}/devices/{a}/sign", {"options": json.loads(options_to_json(request)), "origin": ORIGIN})
    assert status == 200, response
    verified = verify_authentication_response(credential=response, expected_challenge=request.challenge, expected_rp_id=RP_ID,
                                              expected_origin=ORIGIN, credential_public_key=public_key,
                                              credential_current_sign_count=current_sign_count)
    data = unb64url(response["response"]["authenticatorData"])
    assert verified.new_sign_count == int.from_bytes(data[33:37], "big")
    return data[32], verified.new_sign_count


def webdriver_credentials(server, s, a):
    status, _, listed = call(server, "GET", f"/session/{s}/webauthn/authenticator/{a}/credentials")
    assert status == 200, listed
    return {c["credentialId"]: c for c in listed["value"]}


def test_webdriver_a_credential_added_with_sign_count_null_has_no_counter(server):
    # w3c/webauthn#2382: "When |signCount| is `null`, no signature counter will be associated to
    # the credential" — every assertion reports 0, and Get Credentials says null. Sent in the shape
    # Selenium's Credential writes (its sign_count passed through as None), names added.
    from selenium.webdriver.common.virtual_authenticator import Credential
    pkcs8, public_key = p256_credential()
    s, a = webdriver_authenticator(server)
    counterless = Credential.create_resident_credential(os.urandom(16), RP_ID, b"alice", pkcs8, None).to_dict()
    counterless.update(userName="alice", userDisplayName="Alice Example")
    assert counterless["signCount"] is None
    assert call(server, "POST", f"/session/{s}/webauthn/authenticator/{a}/credential", counterless) == (200, "application/json", {"value": None})
    listed = webdriver_credentials(server, s, a)[b64url(unb64url(counterless["credentialId"]))]
    assert (listed["signCount"], listed["userName"], listed["userDisplayName"], listed["userHandle"]) == (None, "alice", "Alice Example", b64url(b"alice"))
    for _ in range(2):
        assert webdriver_sign_in(server, a, public_key, 0)[1] == 0
    assert webdriver_credentials(server, s, a)[listed["credentialId"]]["signCount"] is None
    # A number is a counter from there: 7, then 8 and 9.
    pkcs8, public_key = p256_credential()
    call(server, "DELETE", f"/session/{s}/webauthn/authenticator/{a}/credentials")
    counting = Credential.create_resident_credential(os.urandom(16), RP_ID, b"bob", pkcs8, 7).to_dict()
    assert call(server, "POST", f"/session/{s}/webauthn/authenticator/{a}/credential", counting)[2] == {"value": None}
    assert webdriver_sign_in(server, a, public_key, 7)[1] == 8
    assert webdriver_sign_in(server, a, public_key, 8)[1] == 9
    [listed] = webdriver_credentials(server, s, a).values()
    assert listed["signCount"] == 9 and Credential.from_dict(listed).sign_count == 9


def test_webdriver_set_credential_properties_sets_or_removes_the_signature_counter(server):
    pkcs8, public_key = p256_credential()
    s, a = webdriver_authenticator(server)
    credential_id = b64url(os.urandom(16))
    props = f"/session/{s}/webauthn/authenticator/{a}/credentials/{credential_id}/props"
    assert call(server, "POST", f"/session/{s}/webauthn/authenticator/{a}/credential",
                {"credentialId": credential_id, "isResidentCredential": True, "rpId": RP_ID, "privateKey": b64url(pkcs8),
                 "userHandle": b64url(b"alice"), "signCount": 5})[2] == {"value": None}
    assert webdriver_sign_in(server, a, public_key, 5)[1] == 6
    # null: "any existing signature counter associated to the credential will be removed".
    assert call(server, "POST", props, {"signCount": None}) == (200, "application/json", {"value": None})
    assert webdriver_credentials(server, s, a)[credential_id]["signCount"] is None
    for _ in range(2):
        assert webdriver_sign_in(server, a, public_key, 0)[1] == 0
    # A number: a counter again, set to it ("associate one … and set it to the value").
    assert call(server, "POST", props, {"signCount": 100})[2] == {"value": None}
    assert webdriver_credentials(server, s, a)[credential_id]["signCount"] == 100
    assert webdriver_sign_in(server, a, public_key, 100)[1] == 101
    # With the backup flags in the same command; each assertion's BE (0x08) and BS (0x10) follow.
    assert call(server, "POST", props, {"backupEligibility": True, "backupState": True, "signCount": 0})[2] == {"value": None}
    flags, count = webdriver_sign_in(server, a, public_key, 0)
    assert (flags & 0x18, count) == (0x18, 1)
    assert call(server, "POST", props, {"backupState": False})[2] == {"value": None}
    flags, count = webdriver_sign_in(server, a, public_key, 1)
    assert (flags & 0x18, count) == (0x08, 2)
    # Anything else is WebDriver's invalid argument, and changes nothing — nor does a refused
    # backup state (BS without BE) given with a good counter.
    for refused in ({"signCount": -1}, {"signCount": 4294967296}, {"signCount": "2"}, {"signCount": 2.5}, {"signCount": True},
                    {"signCount": 9, "backupEligibility": False, "backupState": True}):
        status, kind, problem = call(server, "POST", props, refused)
        assert (status, kind, problem["value"]["error"]) == (400, "application/problem+json", "invalid argument"), (refused, problem)
    listed = webdriver_credentials(server, s, a)[credential_id]
    assert (listed["signCount"], listed["backupEligibility"], listed["backupState"]) == (2, True, False)
    # The largest a counter holds is taken; a credential no one added is invalid argument.
    assert call(server, "POST", props, {"signCount": 4294967295})[2] == {"value": None}
    assert webdriver_credentials(server, s, a)[credential_id]["signCount"] == 4294967295
    status, _, problem = call(server, "POST", f"/session/{s}/webauthn/authenticator/{a}/credentials/{b64url(b'nobody')}/props", {"signCount": 1})
    assert (status, problem["value"]["error"]) == (400, "invalid argument")


def test_webdriver_add_credential_takes_sign_count_as_section_11_does(server):
    pkcs8, _ = p256_credential()
    s, a = webdriver_authenticator(server)
    add = f"/session/{s}/webauthn/authenticator/{a}/credential"

    def body(**given):
        parameters = {"credentialId": b64url(os.urandom(16)), "isResidentCredential": True, "rpId": RP_ID, "privateKey": b64url(pkcs8),
                      "userHandle": b64url(os.urandom(8)), "signCount": 0}
        parameters.update(given)
        return {k: v for k, v in parameters.items() if v is not ...}
    # "This property is required", and so is isResidentCredential (§11.6's steps: "If … is not
    # defined, return … invalid argument"); out of 0..4294967295, or not a number, likewise; a
    # credential id that is not base64url too.
    for refused in (body(signCount=...), body(isResidentCredential=...), body(signCount=-1), body(signCount=4294967296), body(signCount="0"),
                    body(signCount=0.5), body(signCount=False), body(credentialId="not base64url!"), body(userName=None, userDisplayName=7)):
        status, kind, problem = call(server, "POST", add, refused)
        assert (status, kind, problem["value"]["error"]) == (400, "application/problem+json", "invalid argument"), (refused, problem)
    assert webdriver_credentials(server, s, a) == {}
    largest = body(signCount=4294967295)
    assert call(server, "POST", add, largest)[2] == {"value": None}
    assert webdriver_credentials(server, s, a)[largest["credentialId"]]["signCount"] == 4294967295
    # The account route that takes the same parameters keeps signCount optional (a counter from
    # 0), and takes null as Add Credential does.
    for given, expected in ((..., "per-credential"), (None, "zero"), (3, "per-credential")):
        parameters = body(signCount=given)
        del parameters["isResidentCredential"]
        status, _, added = call(server, "POST", f"/accounts/{a}/devices/{a}/passkeys", parameters)
        assert status == 201, added
        assert (added["signCount"], added["signCounter"]) == (3 if given == 3 else 0, expected), added


def test_webdriver_a_passkey_whose_counter_is_at_4294967295_signs_in_no_more(server):
    # WebAuthn L3 §6.1.1: the counter is "incremented … by some positive value"; past 4294967295
    # none is left, and a wrap to 0 (Chromium's virtual authenticator) is what an RP reads as a
    # clone (§7.2). The sign-in is refused as no eligible credential — the page's NotAllowedError,
    # a 422 problem, never a 500 — before the person is asked (the queued action is still there),
    # and the counter stays where it was.
    pkcs8, public_key = p256_credential()
    s, a = webdriver_authenticator(server)
    credential_id = b64url(os.urandom(16))
    assert call(server, "POST", f"/session/{s}/webauthn/authenticator/{a}/credential",
                {"credentialId": credential_id, "isResidentCredential": True, "rpId": RP_ID, "privateKey": b64url(pkcs8),
                 "userHandle": b64url(b"alice"), "signCount": 4294967295})[2] == {"value": None}
    assert call(server, "POST", f"/accounts/{a}/devices/{a}/person", {"userAction": "approve"})[0] == 200
    for allowed in ([], [PublicKeyCredentialDescriptor(id=unb64url(credential_id))]):
        request = generate_authentication_options(rp_id=RP_ID, allow_credentials=allowed)
        status, kind, problem = call(server, "POST", f"/accounts/{a}/devices/{a}/sign",
                                     {"options": json.loads(options_to_json(request)), "origin": ORIGIN})
        assert (status, kind, problem["name"], problem["domException"]) == (422, "application/problem+json", "notHandled", "NotAllowedError"), problem
        assert "signature counter is at 4294967295" in problem["detail"], problem
    assert len(call(server, "GET", f"/accounts/{a}/devices/{a}/person")[2]["queued"]) == 1
    assert webdriver_credentials(server, s, a)[credential_id]["signCount"] == 4294967295
    # One below signs once, to the largest count; then no more.
    assert call(server, "POST", f"/session/{s}/webauthn/authenticator/{a}/credentials/{credential_id}/props", {"signCount": 4294967294})[0] == 200
    assert webdriver_sign_in(server, a, public_key, 4294967294)[1] == 4294967295
    request = generate_authentication_options(rp_id=RP_ID)
    status, _, problem = call(server, "POST", f"/accounts/{a}/devices/{a}/sign", {"options": json.loads(options_to_json(request)), "origin": ORIGIN})
    assert (status, problem["name"]) == (422, "notHandled"), problem
    # A counterless credential (null) signs on with 0, as it always does.
    assert call(server, "POST", f"/session/{s}/webauthn/authenticator/{a}/credentials/{credential_id}/props", {"signCount": None})[0] == 200
    assert webdriver_sign_in(server, a, public_key, 0)[1] == 0


def test_webdriver_errors_are_webdrivers_codes_with_webdrivers_statuses(server):
    # §11 answers every id that matches nothing, and every parameter refused, with invalid
    # argument (WebDriver's table: 400); what the endpoint cannot do — a protocol or an extension
    # it does not have — with unsupported operation (500).
    pkcs8, _ = p256_credential()
    s, a = webdriver_authenticator(server)
    base = f"/session/{s}/webauthn/authenticator"
    parameters = {"credentialId": b64url(b"id"), "isResidentCredential": True, "rpId": RP_ID, "privateKey": b64url(pkcs8),
                  "userHandle": b64url(b"alice"), "signCount": 0}
    for method, path, body in (("DELETE", f"{base}/nobody", None), ("POST", f"{base}/nobody/credential", parameters),
                               ("GET", f"{base}/nobody/credentials", None), ("DELETE", f"{base}/nobody/credentials", None),
                               ("DELETE", f"{base}/nobody/credentials/{b64url(b'id')}", None), ("POST", f"{base}/nobody/uv", {"isUserVerified": True}),
                               ("POST", f"{base}/nobody/credentials/{b64url(b'id')}/props", {"backupState": False}),
                               ("GET", f"/session/another/webauthn/authenticator/{a}/credentials", None),
                               ("DELETE", f"{base}/{a}/credentials/{b64url(b'nobody')}", None),
                               ("POST", f"{base}/{a}/credentials/{b64url(b'nobody')}/props", {"backupState": False}),
                               ("POST", f"{base}/{a}/uv", {}), ("POST", f"{base}/{a}/uv", {"isUserVerified": "yes"}),
                               ("POST", base, {"protocol": "ctap3", "transport": "usb"}), ("POST", base, {"protocol": "ctap2", "transport": "pigeon"}),
                               ("POST", base, {"protocol": "ctap2", "transport": "usb", "hasResidentKey": 1})):
        status, kind, problem = call(server, method, path, body)
        assert (status, kind, problem["value"]["error"]) == (400, "application/problem+json", "invalid argument"), (method, path, problem)
        assert problem["status"] == 400 and problem["value"]["message"] == problem["detail"]
    for refused in ({"protocol": "ctap1/u2f", "transport": "usb"}, {"protocol": "ctap2", "transport": "usb", "extensions": ["largeBlob", "uvm"]},
                    {"protocol": "ctap2_1", "transport": "usb", "extensions": ["credProps"]}):
        status, kind, problem = call(server, "POST", base, refused)
        assert (status, kind, problem["value"]["error"], problem["status"]) == (500, "application/problem+json", "unsupported operation", 500), problem
    status, _, added = call(server, "POST", base, {"protocol": "ctap2_1", "transport": "usb",
                                                   "extensions": ["credBlob", "credProtect", "hmac-secret", "largeBlob", "minPinLength", "prf"]})
    assert status == 200, added
    # A resident credential on an authenticator without hasResidentKey (its default: false), as
    # Chromium's answers it too; a non-resident one is taken there.
    without = added["value"]
    status, _, problem = call(server, "POST", f"{base}/{without}/credential", {**parameters, "credentialId": b64url(os.urandom(16))})
    assert (status, problem["value"]["error"]) == (400, "invalid argument") and "hasResidentKey" in problem["detail"], problem
    assert call(server, "POST", f"{base}/{without}/credential",
                {**parameters, "credentialId": b64url(os.urandom(16)), "isResidentCredential": False})[2] == {"value": None}


def test_webdriver_backup_flags_are_each_credentials_with_the_authenticators_defaults(server):
    # Add Credential (§11): "If |backupEligibility| is not defined, set |backupEligibility| to the
    # value of the |authenticator|'s |defaultBackupEligibility|" (false unless given), and
    # backupState alike.
    s = call(server, "POST", "/session", {})[2]["value"]["sessionId"]
    for defaults, expected in (({}, (False, False)), ({"defaultBackupEligibility": True}, (True, False)),
                               ({"defaultBackupEligibility": True, "defaultBackupState": True}, (True, True))):
        status, _, added = call(server, "POST", f"/session/{s}/webauthn/authenticator",
                                {"protocol": "ctap2", "transport": "internal", "hasResidentKey": True, **defaults})
        assert status == 200, added
        a = added["value"]
        ids = {}
        for given in ({}, {"backupEligibility": True, "backupState": True}, {"backupEligibility": False, "backupState": False}):
            pkcs8, public_key = p256_credential()
            credential_id = b64url(os.urandom(16))
            assert call(server, "POST", f"/session/{s}/webauthn/authenticator/{a}/credential",
                        {"credentialId": credential_id, "isResidentCredential": True, "rpId": RP_ID, "privateKey": b64url(pkcs8),
                         "userHandle": b64url(os.urandom(8)), "signCount": None, **given})[2] == {"value": None}
            ids[credential_id] = (given["backupEligibility"], given["backupState"]) if given else expected
        listed = webdriver_credentials(server, s, a)
        assert {i: (c["backupEligibility"], c["backupState"]) for i, c in listed.items()} == ids, defaults
        # A registration's BE is the same default ("MUST be reflected by the BE authenticator data
        # flag when performing an authenticatorMakeCredential operation").
        options = generate_registration_options(rp_id=RP_ID, rp_name="RP", user_name="carol", user_id=os.urandom(8))
        status, _, response = call(server, "POST", f"/accounts/{a}/devices/{a}/register", {"options": json.loads(options_to_json(options)), "origin": ORIGIN})
        assert status == 200, response
        assert bool(unb64url(response["response"]["authenticatorData"])[32] & 0x08) == expected[0], defaults


def test_a_virtual_authenticators_registrations_count_their_signatures(server):
    # As a browser's virtual authenticator does: Get Credentials then gives a number, which
    # Selenium's Credential.from_dict reads.
    from selenium.webdriver.common.virtual_authenticator import Credential
    s, a = webdriver_authenticator(server)
    options = generate_registration_options(rp_id=RP_ID, rp_name="RP", user_name="alice", user_id=b"alice")
    status, _, response = call(server, "POST", f"/accounts/{a}/devices/{a}/register", {"options": json.loads(options_to_json(options)), "origin": ORIGIN})
    assert status == 200, response
    registered = verify_registration_response(credential=response, expected_challenge=options.challenge, expected_rp_id=RP_ID, expected_origin=ORIGIN)
    assert webdriver_sign_in(server, a, registered.credential_public_key, registered.sign_count)[1] == registered.sign_count + 1
    assert webdriver_sign_in(server, a, registered.credential_public_key, registered.sign_count + 1)[1] == registered.sign_count + 2
    [listed] = webdriver_credentials(server, s, a).values()
    assert Credential.from_dict(listed).sign_count == registered.sign_count + 2


def test_webdriver_get_credentials_reads_every_key_whatever_the_simulated_user_does(server):
    # Get Credentials fails only for an unknown authenticator (§11): a passkey registered with user
    # verification is sealed under the biometric, and its key is still given while isUserVerified
    # is false and isUserConsenting is false — those are for ceremonies.
    from cryptography.hazmat.primitives import serialization
    s, a = webdriver_authenticator(server)
    options = generate_registration_options(rp_id=RP_ID, rp_name="RP", user_name="alice", user_id=b"alice")
    status, _, response = call(server, "POST", f"/accounts/{a}/devices/{a}/register", {"options": json.loads(options_to_json(options)), "origin": ORIGIN})
    assert status == 200, response
    assert call(server, "POST", f"/session/{s}/webauthn/authenticator/{a}/uv", {"isUserVerified": False})[2] == {"value": None}
    [listed] = webdriver_credentials(server, s, a).values()
    key = serialization.load_der_private_key(unb64url(listed["privateKey"]), None)
    assert key.public_key().public_numbers().curve.name == "secp256r1"
    # …and the ceremonies still follow the settings.
    status, _, problem = call(server, "POST", f"/accounts/{a}/devices/{a}/sign", {"options": sign_options(userVerification="required"), "origin": ORIGIN})
    assert (status, problem["name"]) == (422, "notInteractive")


def raw_call(server, method, path, headers):
    url, _ = server
    request = urllib.request.Request(url + path, method=method, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, response.headers, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.headers, error.read()


def test_a_page_may_call_across_origins_with_the_token_only(server):
    url, token = server
    page = "https://bank.example:8443"
    # A preflight needs no token, and says what a page may send.
    status, headers, _ = raw_call(server, "OPTIONS", "/accounts", {"Origin": page, "Access-Control-Request-Method": "POST",
                                                                   "Access-Control-Request-Headers": "authorization,content-type"})
    assert status == 204 and headers["Access-Control-Allow-Origin"] == page
    assert "Authorization" in headers["Access-Control-Allow-Headers"] and "POST" in headers["Access-Control-Allow-Methods"]
    # The answers carry the page's origin; without the token there is still nothing but a 401.
    status, headers, _ = raw_call(server, "GET", "/accounts/nope", {"Origin": page})
    assert status == 401 and headers["Access-Control-Allow-Origin"] == page
    status, headers, _ = raw_call(server, "POST", "/accounts", {"Origin": page, "Authorization": f"Bearer {token}"})
    assert status == 201 and headers["Access-Control-Allow-Origin"] == page and headers["Vary"] == "Origin"
    # No Origin, no CORS headers; OPTIONS without one is a method the routes do not take.
    status, headers, _ = raw_call(server, "GET", "/health", {})
    assert status == 200 and headers["Access-Control-Allow-Origin"] is None
    assert raw_call(server, "OPTIONS", "/accounts", {"Authorization": f"Bearer {token}"})[0] == 405


def test_the_page_bridge_is_a_script_for_one_device_behind_the_token(server):
    url, token = server
    _, _, account = call(server, "POST", "/accounts")
    path = f"/bridge.js?account={account['id']}&device=phone"
    assert raw_call(server, "GET", path, {})[0] == 401
    status, headers, body = raw_call(server, "GET", path, {"Authorization": f"Bearer {token}"})
    assert status == 200 and headers["Content-Type"].startswith("text/javascript")
    text = body.decode()
    config = json.loads(text.split("const CONFIG = ", 1)[1].split(";\n", 1)[0])
    assert config == {"account": account["id"], "device": "phone", "server": url, "token": token}
    assert "navigator.credentials" in text and "__AUTHCTL_CONFIG__" not in text
    given = raw_call(server, "GET", path + "&server=http://10.0.0.2:9000/", {"Authorization": f"Bearer {token}"})[2].decode()
    assert '"server":"http://10.0.0.2:9000"' in given
    for bad in (f"/bridge.js?account={account['id']}&device=nope", "/bridge.js?account=nope&device=phone"):
        assert raw_call(server, "GET", bad, {"Authorization": f"Bearer {token}"})[0] == 404
    for bad in (f"/bridge.js?account={account['id']}", path + "&server=ftp://x", path + "&server=http://x/path", path + "&extra=1"):
        assert raw_call(server, "GET", bad, {"Authorization": f"Bearer {token}"})[0] == 400, bad


def test_people_queued_for_a_device_act_at_its_next_ceremonies(server):
    _, _, account = call(server, "POST", "/accounts")
    base = f"/accounts/{account['id']}/devices/phone"
    credential = register_alice(server, account["id"])
    request = {"options": sign_options(userVerification="required"), "origin": ORIGIN}
    assert call(server, "POST", base + "/person", {"userAction": "wrong-pin"}) == (200, "application/json", {"queued": 1})
    assert call(server, "POST", base + "/person", {"userAction": "cancel"})[2] == {"queued": 2}
    assert call(server, "GET", base + "/person")[2] == {"queued": [{"userAction": "wrong-pin"}, {"userAction": "cancel"}]}
    status, _, problem = call(server, "POST", base + "/sign", request)
    assert (status, problem["name"]) == (422, "failed"), problem
    status, _, problem = call(server, "POST", base + "/sign", request)
    assert (status, problem["name"], problem["domException"]) == (422, "canceled", "NotAllowedError")
    # The queue is empty again: the person approves with the PIN the server knows.
    status, _, response = call(server, "POST", base + "/sign", request)
    assert status == 200 and response["id"] == credential
    # A body that names a person is that person; the queue waits for the next one that does not.
    call(server, "POST", base + "/person", {"pin": "0000"})
    assert call(server, "POST", base + "/sign", {**request, "pin": "1234"})[0] == 200
    assert call(server, "GET", base + "/person")[2] == {"queued": [{"userAction": "approve", "pin": "0000"}]}
    assert call(server, "DELETE", base + "/person")[0] == 204
    assert call(server, "GET", base + "/person")[2] == {"queued": []}
    # A request refused before any prompt (another site's RP ID) leaves the queued person waiting.
    call(server, "POST", base + "/person", {"userAction": "cancel"})
    status, _, problem = call(server, "POST", base + "/sign", {"options": sign_options(rpId="other.example"), "origin": ORIGIN})
    assert (status, problem["domException"]) == (422, "SecurityError"), problem
    assert call(server, "GET", base + "/person")[2] == {"queued": [{"userAction": "cancel"}]}
    # A device removed takes its queue with it: one added under its name starts afresh.
    call(server, "POST", f"/accounts/{account['id']}/devices", {"name": "tablet"})
    call(server, "POST", f"/accounts/{account['id']}/devices/tablet/person", {"userAction": "cancel"})
    assert call(server, "DELETE", f"/accounts/{account['id']}/devices/tablet")[0] == 204
    call(server, "POST", f"/accounts/{account['id']}/devices", {"name": "tablet"})
    assert call(server, "GET", f"/accounts/{account['id']}/devices/tablet/person")[2] == {"queued": []}
    assert call(server, "POST", base + "/person", {})[0] == 400
    assert call(server, "POST", base + "/person", {"userAction": "dance"})[0] == 400
    assert call(server, "POST", f"/accounts/{account['id']}/devices/nope/person", {"userAction": "cancel"})[0] == 404
