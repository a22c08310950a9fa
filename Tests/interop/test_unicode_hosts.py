"""Internationalized hosts become A-labels as a browser makes them (IDNA through libidn2), and the
RP libraries verify against the A-label; the Public Suffix List (libpsl) still refuses public
suffixes. An RP ID in the options is compared as given (Chrome): only its A-label form matches."""
import hashlib
import json

import pytest
from fido2.server import Fido2Server
from fido2.webauthn import PublicKeyCredentialRpEntity, PublicKeyCredentialUserEntity
from webauthn import (generate_authentication_options, generate_registration_options, options_to_json,
                      verify_authentication_response, verify_registration_response)
from webauthn.helpers.structs import PublicKeyCredentialDescriptor

from conftest import unb64url
from test_fido2_tools import cred_verify

A_LABEL = "xn--bcher-kva.example"


@pytest.mark.parametrize("origin,rp_id", [
    ("https://bücher.example", A_LABEL),
    ("https://bücher.example", None),
    ("https://shop.bücher.example", A_LABEL),
    ("https://BÜCHER.example", A_LABEL),
    (f"https://{A_LABEL}", A_LABEL),
])
def test_a_unicode_origin_and_rp_id_verify_against_the_a_label(authctl, origin, rp_id):
    expected_origin = origin.lower().replace("bücher", "xn--bcher-kva")
    options = generate_registration_options(rp_id=A_LABEL, rp_name="Bücher", user_name="anna", user_id=b"anna")
    as_json = json.loads(options_to_json(options))
    if rp_id is None:
        del as_json["rp"]["id"]
        if origin.startswith("https://shop."):
            pytest.skip("without rp.id the RP ID is the host")
    else:
        as_json["rp"]["id"] = rp_id
    response = authctl.register(as_json, origin, "--profile", "authctl").json
    client_data = json.loads(unb64url(response["response"]["clientDataJSON"]))
    assert client_data["origin"] == expected_origin
    verified = verify_registration_response(credential=response, expected_challenge=options.challenge,
                                            expected_rp_id=A_LABEL, expected_origin=expected_origin)
    assert authctl.listing()[0]["rpId"] == A_LABEL

    request = generate_authentication_options(rp_id=A_LABEL, allow_credentials=[PublicKeyCredentialDescriptor(id=verified.credential_id)])
    request_json = json.loads(options_to_json(request))
    request_json["rpId"] = rp_id or A_LABEL
    assertion = authctl.sign(request_json, origin).json
    verify_authentication_response(credential=assertion, expected_challenge=request.challenge, expected_rp_id=A_LABEL,
                                   expected_origin=expected_origin, credential_public_key=verified.credential_public_key,
                                   credential_current_sign_count=0)
    # A verifier that can say no: the Unicode spelling is not what the browser sent.
    with pytest.raises(Exception):
        verify_authentication_response(credential=assertion, expected_challenge=request.challenge, expected_rp_id=A_LABEL,
                                       expected_origin=expected_origin.replace("xn--bcher-kva", "bücher"),
                                       credential_public_key=verified.credential_public_key,
                                       credential_current_sign_count=0)


def test_python_fido2_and_libfido2_verify_a_unicode_registration(authctl):
    origin = f"https://{A_LABEL}"
    rp = Fido2Server(PublicKeyCredentialRpEntity(id=A_LABEL, name="Bücher"), attestation="direct",
                     verify_origin=lambda o: o == origin)
    options, state = rp.register_begin(PublicKeyCredentialUserEntity(id=b"anna", name="anna", display_name="Anna"))
    as_dict = dict(options)
    as_dict["publicKey"] = dict(as_dict["publicKey"])
    as_dict["publicKey"]["rp"] = {"id": A_LABEL, "name": "Bücher"}
    response = authctl.register(json.loads(json.dumps(as_dict, default=dict)), "https://bücher.example", "--profile", "authctl").json
    auth_data = rp.register_complete(state, response)
    assert auth_data.rp_id_hash == hashlib.sha256(A_LABEL.encode()).digest()
    assert cred_verify(A_LABEL, response).returncode == 0
    assert cred_verify("bücher.example", response).returncode != 0


@pytest.mark.parametrize("origin,rp_id", [("https://bücher.example", "bücher.example"),
                                          (f"https://{A_LABEL}", "bücher.example"),
                                          ("https://bücher.example", "BÜCHER.example")])
def test_a_unicode_rp_id_in_the_options_is_a_security_error(authctl, origin, rp_id):
    options = generate_registration_options(rp_id=A_LABEL, rp_name="Bücher", user_name="anna", user_id=b"anna")
    as_json = json.loads(options_to_json(options))
    as_json["rp"]["id"] = rp_id
    result = authctl.run("register", "--origin", origin, "--options", "-", stdin=json.dumps(as_json))
    assert (result.code, result.stdout) == (16, ""), result.stderr
    assert A_LABEL in result.stderr  # the message names the form that would match
    authctl.run("register", "--origin", origin, "--rp-id", rp_id).json  # a typed --rp-id is normalized
    result = authctl.run("sign", "--origin", origin, "--options", "-", stdin=json.dumps({"challenge": "AQID", "rpId": rp_id}))
    assert (result.code, result.stdout) == (16, ""), result.stderr


@pytest.mark.parametrize("origin,rp_id", [
    ("https://shop.example.co.uk", "co.uk"),
    ("https://alice.github.io", "github.io"),
    ("https://a.b.blogspot.com", "blogspot.com"),
    ("https://xn--a.example", None),  # not a valid A-label
    ("https://bü\u200dcher.example", None),  # a joiner IDNA refuses there
])
def test_public_suffixes_and_invalid_names_are_refused(authctl, origin, rp_id):
    args = ["register", "--origin", origin] + (["--rp-id", rp_id] if rp_id else [])
    result = authctl.run(*args)
    assert (result.code, result.stdout) == (16, ""), result.stderr
    assert "securityError" in result.stderr
    assert authctl.listing() == []
