"""python-fido2 (Yubico) as the relying party, with attestation verification switched on and an
exact origin check (its default origin check is looser than a real RP's)."""
import json

import pytest
from fido2.attestation import Attestation, AttestationType
from fido2.server import Fido2Server
from fido2.webauthn import (AttestedCredentialData, AuthenticationResponse, PublicKeyCredentialDescriptor,
                            PublicKeyCredentialRpEntity, PublicKeyCredentialUserEntity, RegistrationResponse)

from conftest import tamper, unb64url

attestation_results = []


def verify_attestation(attestation_object, client_data_hash):
    verifier = Attestation.for_type(attestation_object.fmt)()
    result = verifier.verify(attestation_object.att_stmt, attestation_object.auth_data, client_data_hash)
    attestation_results.append((attestation_object.fmt, result.attestation_type))


def server(rp_id, origin, attestation="direct"):
    return Fido2Server(PublicKeyCredentialRpEntity(id=rp_id, name="RP"), attestation=attestation,
                       verify_origin=lambda o: o == origin, verify_attestation=verify_attestation)


def register(authctl, rp, origin, user_id=b"user-1", uv="preferred", exclude=None):
    options, state = rp.register_begin(
        PublicKeyCredentialUserEntity(id=user_id, name="alice", display_name="Alice"),
        credentials=exclude, user_verification=uv, resident_key_requirement="required")
    response = authctl.register(dict(options), origin, "--profile", "authctl").json
    return rp.register_complete(state, response), response


@pytest.mark.parametrize("rp_id,origin,uv", [
    ("example.com", "https://example.com", "required"),
    ("example.org", "https://id.example.org", "discouraged"),
    ("localhost", "http://localhost:8080", "preferred"),
])
def test_packed_self_attestation_and_assertion_verify(authctl, rp_id, origin, uv):
    attestation_results.clear()
    rp = server(rp_id, origin)
    auth_data, _ = register(authctl, rp, origin, uv=uv)
    assert attestation_results == [("packed", AttestationType.SELF)]
    assert auth_data.is_user_present() and auth_data.is_user_verified() == (uv != "discouraged")
    assert auth_data.is_backup_eligible() and auth_data.is_backed_up()
    credential = auth_data.credential_data

    options, state = rp.authenticate_begin([credential], user_verification=uv)
    assertion = authctl.sign(dict(options), origin).json
    assert rp.authenticate_complete(state, [credential], assertion).credential_id == credential.credential_id


def test_none_attestation_registers(authctl):
    rp = server("example.com", "https://example.com", attestation="none")
    auth_data, response = register(authctl, rp, "https://example.com")
    assert RegistrationResponse.from_dict(response).response.attestation_object.fmt == "none"
    assert auth_data.credential_data.aaguid != bytes(16)


def test_excluded_credential_is_refused(authctl):
    rp = server("example.com", "https://example.com")
    auth_data, _ = register(authctl, rp, "https://example.com")
    before = authctl.state()
    options, _ = rp.register_begin(PublicKeyCredentialUserEntity(id=b"other", name="x", display_name="x"),
                                   credentials=[auth_data.credential_data])
    result = authctl.register(dict(options), "https://example.com")
    assert result.code == 15 and "matchedExcludedCredential" in result.stderr
    assert authctl.state() == before


def test_same_user_registers_again_and_replaces(authctl):
    rp = server("example.com", "https://example.com")
    first, _ = register(authctl, rp, "https://example.com")
    second, _ = register(authctl, rp, "https://example.com")
    ids = [c["id"] for c in authctl.listing()]
    assert len(ids) == 1 and unb64url(ids[0]) == second.credential_data.credential_id
    # The replaced passkey can no longer sign in.
    options, state = rp.authenticate_begin([first.credential_data])
    result = authctl.sign(dict(options), "https://example.com")
    assert result.code == 13 and "notHandled" in result.stderr


def test_tampering_is_caught(authctl):
    rp = server("example.com", "https://example.com")
    options, state = rp.register_begin(PublicKeyCredentialUserEntity(id=b"u", name="u", display_name="u"))
    response = authctl.register(dict(options), "https://example.com", "--profile", "authctl").json
    with pytest.raises(Exception):
        rp.register_complete(state, tamper(response, "attestationObject", index=-3))
    credential = rp.register_complete(state, response).credential_data

    options, state = rp.authenticate_begin([credential])
    assertion = authctl.sign(dict(options), "https://example.com").json
    for field, index in (("signature", 40), ("authenticatorData", 0), ("clientDataJSON", -3)):
        with pytest.raises(Exception):
            rp.authenticate_complete(state, [credential], tamper(assertion, field, index))
    rp.authenticate_complete(state, [credential], assertion)


def test_origin_mismatch_is_caught(authctl):
    rp = server("example.com", "https://example.com")
    options, state = rp.register_begin(PublicKeyCredentialUserEntity(id=b"u", name="u", display_name="u"))
    response = authctl.register(dict(options), "https://login.example.com").json
    with pytest.raises(ValueError, match="origin"):
        rp.register_complete(state, response)
