"""`authctl serve` (work in progress): accounts in memory over HTTP, ceremonies judged by
py_webauthn, the bearer token, and the errors as application/problem+json."""
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

from conftest import BIN, own_environment

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
