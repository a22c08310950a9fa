"""libfido2's command-line verifiers (Debian's fido2-tools): fido2-cred -V and fido2-assert -V."""
import base64
import hashlib
import json
import shutil
import subprocess

import pytest
from cryptography.hazmat.primitives import serialization

from conftest import unb64url

pytestmark = pytest.mark.skipif(shutil.which("fido2-cred") is None, reason="fido2-tools is not installed")


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def cbor_bytes(data: bytes) -> bytes:
    """A CBOR byte string header + data (fido2-cred wants authData wrapped this way)."""
    n = len(data)
    head = bytes([0x58, n]) if n < 256 else bytes([0x59, n >> 8, n & 0xFF])
    return (bytes([0x40 | n]) if n < 24 else head) + data


def attestation_parts(response):
    import cbor2
    obj = cbor2.loads(unb64url(response["response"]["attestationObject"]))
    return obj["fmt"], obj["attStmt"], obj["authData"]


def run(cmd, text):
    return subprocess.run(cmd, input=text, capture_output=True, text=True, timeout=30)


def cred_verify(rp_id, response, uv=False, auth_data=None):
    fmt, stmt, parsed_auth_data = attestation_parts(response)
    client_data_hash = hashlib.sha256(unb64url(response["response"]["clientDataJSON"])).digest()
    lines = [b64(client_data_hash), rp_id, fmt, b64(cbor_bytes(auth_data or parsed_auth_data)),
             b64(unb64url(response["id"])), b64(stmt["sig"])]
    return run(["fido2-cred", "-V"] + (["-v"] if uv else []), "\n".join(lines) + "\n")


def assert_verify(rp_id, assertion, key_file, uv=False):
    client_data_hash = hashlib.sha256(unb64url(assertion["response"]["clientDataJSON"])).digest()
    lines = [b64(client_data_hash), rp_id, b64(cbor_bytes(unb64url(assertion["response"]["authenticatorData"]))),
             b64(unb64url(assertion["response"]["signature"]))]
    return run(["fido2-assert", "-V", "-p"] + (["-v"] if uv else []) + [str(key_file), "es256"], "\n".join(lines) + "\n")


def options(rp_id, uv, user_id="dXNlcg"):
    return {"rp": {"id": rp_id, "name": "RP"}, "user": {"id": user_id, "name": "u", "displayName": "U"},
            "challenge": "Y2hhbGxlbmdlLWNoYWxsZW5nZQ", "pubKeyCredParams": [{"type": "public-key", "alg": -7}],
            "attestation": "direct", "authenticatorSelection": {"userVerification": uv}}


@pytest.mark.parametrize("rp_id,origin,uv", [("example.com", "https://example.com", "required"),
                                              ("sub.example.net", "https://sub.example.net", "discouraged")])
def test_packed_registration_and_assertion_pass_libfido2(authctl, tmp_path, rp_id, origin, uv):
    response = authctl.register(options(rp_id, uv), origin, "--profile", "authctl").json
    verified = cred_verify(rp_id, response, uv=(uv == "required"))
    assert verified.returncode == 0, verified.stderr
    # fido2-cred prints the credential id and the public key it extracted; compare with ours.
    printed_id, *pem = verified.stdout.strip().split("\n")
    assert base64.b64decode(printed_id) == unb64url(response["id"])
    ours = serialization.load_der_public_key(unb64url(response["response"]["publicKey"]))
    assert serialization.load_pem_public_key("\n".join(pem).encode()).public_numbers() == ours.public_numbers()

    key_file = tmp_path / "key.pem"
    key_file.write_text("\n".join(pem) + "\n")
    request = {"challenge": "c2lnbi1pbi1jaGFsbGVuZ2U", "rpId": rp_id, "userVerification": uv,
               "allowCredentials": [{"type": "public-key", "id": response["id"]}]}
    assertion = authctl.sign(request, origin).json
    result = assert_verify(rp_id, assertion, key_file, uv=(uv == "required"))
    assert result.returncode == 0, result.stderr

    # Tampered: a flipped signature byte, or the wrong RP id, is refused by libfido2.
    bad = json.loads(json.dumps(assertion))
    sig = bytearray(unb64url(bad["response"]["signature"]))
    sig[-1] ^= 1
    bad["response"]["signature"] = base64.urlsafe_b64encode(bytes(sig)).rstrip(b"=").decode()
    assert assert_verify(rp_id, bad, key_file).returncode != 0
    assert assert_verify("evil.example", assertion, key_file).returncode != 0


def test_tampered_attestation_fails_libfido2(authctl):
    response = authctl.register(options("example.com", "preferred"), "https://example.com", "--profile", "authctl").json
    _, _, auth_data = attestation_parts(response)
    changed = bytearray(auth_data)
    changed[33] ^= 0x01  # a sign-count byte: still well-formed, no longer what was signed
    assert cred_verify("example.com", response).returncode == 0
    assert cred_verify("example.com", response, auth_data=bytes(changed)).returncode != 0
    assert cred_verify("example.org", response).returncode != 0
