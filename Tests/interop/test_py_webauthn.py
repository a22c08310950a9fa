"""py_webauthn (Duo Labs) as the relying party: its options in, its verifier judges the output."""
import json

import pytest
from webauthn import (generate_authentication_options, generate_registration_options, options_to_json,
                      verify_authentication_response, verify_registration_response)
from webauthn.helpers.exceptions import InvalidAuthenticationResponse, InvalidRegistrationResponse
from webauthn.helpers.structs import (AttestationConveyancePreference, AuthenticatorSelectionCriteria,
                                      PublicKeyCredentialDescriptor, ResidentKeyRequirement,
                                      UserVerificationRequirement)

from conftest import tamper, unb64url

CASES = [
    # (rp id, origin, user verification, attestation)
    ("example.com", "https://example.com", "required", "none"),
    ("example.com", "https://login.example.com", "preferred", "direct"),
    ("yourbank.co.id", "https://m.yourbank.co.id:8443", "discouraged", "indirect"),
    ("localhost", "http://localhost:3000", "required", "direct"),
]


def registration_options(rp_id, uv="preferred", attestation="none", user_id=b"user-1", exclude=()):
    options = generate_registration_options(
        rp_id=rp_id, rp_name="RP", user_name="alice@example.com", user_id=user_id,
        attestation=AttestationConveyancePreference(attestation),
        authenticator_selection=AuthenticatorSelectionCriteria(
            resident_key=ResidentKeyRequirement.REQUIRED, user_verification=UserVerificationRequirement(uv)),
        exclude_credentials=[PublicKeyCredentialDescriptor(id=c) for c in exclude])
    return options, json.loads(options_to_json(options))


def register(authctl, rp_id, origin, uv="preferred", attestation="none", **kw):
    options, as_json = registration_options(rp_id, uv, attestation, **kw)
    response = authctl.register(as_json, origin, "--profile", "authctl").json
    verified = verify_registration_response(
        credential=response, expected_challenge=options.challenge, expected_rp_id=rp_id,
        expected_origin=origin, require_user_verification=(uv == "required"))
    return options, response, verified


@pytest.mark.parametrize("rp_id,origin,uv,attestation", CASES)
def test_registration_and_assertion_verify(authctl, rp_id, origin, uv, attestation):
    _, response, verified = register(authctl, rp_id, origin, uv, attestation)
    assert verified.fmt == ("none" if attestation == "none" else "packed")
    assert verified.user_verified == (uv != "discouraged")
    assert verified.credential_backed_up and verified.credential_device_type == "multi_device"
    assert response["response"]["publicKey"]  # DER SPKI is present
    credential_id = unb64url(response["id"])

    options = generate_authentication_options(
        rp_id=rp_id, allow_credentials=[PublicKeyCredentialDescriptor(id=credential_id)],
        user_verification=UserVerificationRequirement(uv))
    assertion = authctl.sign(json.loads(options_to_json(options)), origin).json
    result = verify_authentication_response(
        credential=assertion, expected_challenge=options.challenge, expected_rp_id=rp_id, expected_origin=origin,
        credential_public_key=verified.credential_public_key, credential_current_sign_count=0,
        require_user_verification=(uv == "required"))
    assert result.new_sign_count == 0
    assert unb64url(assertion["response"]["userHandle"]) == b"user-1"


def test_discoverable_sign_in_picks_by_user(authctl):
    keys = {}
    for user in (b"alice", b"bob"):
        _, response, verified = register(authctl, "example.com", "https://example.com", user_id=user)
        keys[user] = (response["id"], verified.credential_public_key)
    options = generate_authentication_options(rp_id="example.com")  # empty allow list: discoverable
    as_json = json.loads(options_to_json(options))
    # Default: the newest passkey (bob's); --user picks by name or user handle.
    for extra, expected in (((), b"bob"), (("--user", "YWxpY2U"), b"alice")):
        assertion = authctl.sign(as_json, "https://example.com", *extra).json
        assert unb64url(assertion["response"]["userHandle"]) == expected
        assert assertion["id"] == keys[expected][0]
        verify_authentication_response(
            credential=assertion, expected_challenge=options.challenge, expected_rp_id="example.com",
            expected_origin="https://example.com", credential_public_key=keys[expected][1],
            credential_current_sign_count=0)


def test_excluded_credential_is_refused_and_nothing_stored(authctl):
    _, response, _ = register(authctl, "example.com", "https://example.com")
    before = authctl.state()
    _, as_json = registration_options("example.com", user_id=b"user-2", exclude=[unb64url(response["id"])])
    result = authctl.register(as_json, "https://example.com")
    assert result.code == 15 and result.stdout == ""
    assert "matchedExcludedCredential" in result.stderr
    assert authctl.state() == before


@pytest.mark.parametrize("field", ["clientDataJSON", "attestationObject"])
def test_tampered_registration_is_rejected(authctl, field):
    options, as_json = registration_options("example.com", attestation="direct")
    response = authctl.register(as_json, "https://example.com", "--profile", "authctl").json
    # The untampered response verifies, so the rejection below is the tampering's doing.
    verify_registration_response(credential=response, expected_challenge=options.challenge,
                                 expected_rp_id="example.com", expected_origin="https://example.com")
    bad = tamper(response, field, index=-3)
    with pytest.raises(Exception):
        verify_registration_response(credential=bad, expected_challenge=options.challenge,
                                     expected_rp_id="example.com", expected_origin="https://example.com")


@pytest.mark.parametrize("field", ["signature", "authenticatorData", "clientDataJSON"])
def test_tampered_assertion_is_rejected(authctl, field):
    _, _, verified = register(authctl, "example.com", "https://example.com")
    options = generate_authentication_options(rp_id="example.com")
    assertion = authctl.sign(json.loads(options_to_json(options)), "https://example.com").json
    kwargs = dict(expected_challenge=options.challenge, expected_rp_id="example.com",
                  expected_origin="https://example.com", credential_public_key=verified.credential_public_key,
                  credential_current_sign_count=0)
    verify_authentication_response(credential=assertion, **kwargs)
    index = 40 if field == "signature" else -3
    with pytest.raises(InvalidAuthenticationResponse):
        verify_authentication_response(credential=tamper(assertion, field, index), **kwargs)


def test_wrong_expectations_are_rejected(authctl):
    options, response, _ = register(authctl, "example.com", "https://example.com")
    with pytest.raises(InvalidRegistrationResponse):
        verify_registration_response(credential=response, expected_challenge=b"another challenge",
                                     expected_rp_id="example.com", expected_origin="https://example.com")
    with pytest.raises(InvalidRegistrationResponse):
        verify_registration_response(credential=response, expected_challenge=options.challenge,
                                     expected_rp_id="example.com", expected_origin="https://evil.example")
