"""Registration and sign-in through the client, judged by py_webauthn and by python-fido2's
server; tampered responses refused; ceremony outcomes as AuthctlError."""
import copy
import json

import pytest
from fido2.server import Fido2Server
from fido2.webauthn import (AttestedCredentialData, PublicKeyCredentialRpEntity, PublicKeyCredentialUserEntity,
                            ResidentKeyRequirement, UserVerificationRequirement)
from webauthn.helpers.exceptions import InvalidAuthenticationResponse, InvalidRegistrationResponse

from authctl_client import AuthctlError, BadRequest, CeremonyFailed, NotFound, b64url, unb64url
from relying_party import (ORIGIN, RP_ID, authentication_options, client_data, registration_options,
                           verify_authentication, verify_registration)


def flip_last_byte(text: str) -> str:
    data = bytearray(unb64url(text))
    data[-1] ^= 0x01
    return b64url(bytes(data))


def test_registration_and_sign_in_verify_with_py_webauthn(passkey_device):
    options = registration_options()
    response = passkey_device.register(options, ORIGIN)
    assert response["type"] == "public-key" and response["authenticatorAttachment"] == "platform"
    registered = verify_registration(response, options)
    assert registered.user_verified
    assert b64url(registered.credential_id) == response["id"]
    held = passkey_device.passkey(response["id"])
    assert (held["rpId"], held["userName"], unb64url(held["userHandle"])) == (RP_ID, "alice", b"alice")

    request = authentication_options(allow=[response["id"]])
    assertion = passkey_device.sign(request, ORIGIN)
    verified = verify_authentication(assertion, request, registered)
    assert verified.credential_id == registered.credential_id
    assert unb64url(assertion["response"]["userHandle"]) == b"alice"
    assert client_data(assertion)["type"] == "webauthn.get"


def test_discoverable_sign_in_picks_the_passkey_named(passkey_device):
    made = {}
    for user in ("alice", "bob"):
        options = registration_options(user=user)
        response = passkey_device.register(options, ORIGIN)
        made[user] = (response["id"], verify_registration(response, options))
    for user, (credential_id, registered) in made.items():
        request = authentication_options()
        assertion = passkey_device.sign(request, ORIGIN, user=user)
        assert assertion["id"] == credential_id
        verify_authentication(assertion, request, registered)
        request = authentication_options()
        assertion = passkey_device.sign(request, ORIGIN, credential_id=credential_id)
        assert unb64url(assertion["response"]["userHandle"]) == user.encode()


def test_registration_and_sign_in_verify_with_python_fido2(passkey_device):
    server = Fido2Server(PublicKeyCredentialRpEntity(id=RP_ID, name="Example"))
    options, state = server.register_begin(PublicKeyCredentialUserEntity(id=b"carol", name="carol", display_name="Carol"),
                                           user_verification=UserVerificationRequirement.REQUIRED,
                                           resident_key_requirement=ResidentKeyRequirement.REQUIRED)
    response = passkey_device.register(options, ORIGIN)  # python-fido2's CredentialCreationOptions as it is
    auth_data = server.register_complete(state, response)
    assert auth_data.is_user_verified() and auth_data.credential_data is not None
    credential: AttestedCredentialData = auth_data.credential_data
    assert b64url(credential.credential_id) == response["id"]

    request, state = server.authenticate_begin([credential], user_verification=UserVerificationRequirement.REQUIRED)
    assertion = passkey_device.sign(request, ORIGIN)
    assert server.authenticate_complete(state, [credential], assertion) == credential

    # python-fido2 refuses the same assertion with its signature broken, and one for another challenge.
    request, state = server.authenticate_begin([credential])
    assertion = passkey_device.sign(request, ORIGIN)
    broken = copy.deepcopy(assertion)
    broken["response"]["signature"] = flip_last_byte(broken["response"]["signature"])
    with pytest.raises(ValueError, match="Invalid signature"):
        server.authenticate_complete(state, [credential], broken)
    _, other_state = server.authenticate_begin([credential])
    with pytest.raises(ValueError, match="Wrong challenge"):
        server.authenticate_complete(other_state, [credential], assertion)
    assert server.authenticate_complete(state, [credential], assertion) == credential


def test_tampered_responses_are_refused_by_py_webauthn(passkey_device, registered):
    response, verified = registered
    request = authentication_options(allow=[response["id"]])
    assertion = passkey_device.sign(request, ORIGIN)

    broken = copy.deepcopy(assertion)
    broken["response"]["signature"] = flip_last_byte(broken["response"]["signature"])
    with pytest.raises(InvalidAuthenticationResponse):
        verify_authentication(broken, request, verified)

    # The client data rewritten to another origin (the signature covers its hash).
    data = client_data(assertion)
    data["origin"] = "https://evil.example"
    forged = copy.deepcopy(assertion)
    forged["response"]["clientDataJSON"] = b64url(json.dumps(data).encode())
    with pytest.raises(InvalidAuthenticationResponse):
        verify_authentication(forged, request, verified, origin="https://evil.example")

    # Untouched, it verifies: the refusals above are the tampering's.
    verify_authentication(assertion, request, verified)

    options = registration_options(user="dave")
    made = passkey_device.register(options, ORIGIN)
    data = client_data(made)
    data["challenge"] = b64url(b"another challenge")
    made["response"]["clientDataJSON"] = b64url(json.dumps(data).encode())
    with pytest.raises(InvalidRegistrationResponse):
        verify_registration(made, options)


@pytest.mark.parametrize("fault", ["bad-signature", "wrong-challenge", "wrong-origin", "wrong-rp-id-hash", "up-cleared"])
def test_faults_are_refused_by_the_verifier(passkey_device, registered, fault):
    response, verified = registered
    request = authentication_options(allow=[response["id"]])
    assertion = passkey_device.sign(request, ORIGIN, fault=fault)
    with pytest.raises(InvalidAuthenticationResponse):
        verify_authentication(assertion, request, verified)


def test_snake_case_members_reach_the_server(passkey_device, registered):
    response, verified = registered
    request = authentication_options(allow=[response["id"]])
    assertion = passkey_device.sign(request, ORIGIN, top_origin="https://top.example")
    data = client_data(assertion)
    assert (data["crossOrigin"], data["topOrigin"]) == (True, "https://top.example")
    verify_authentication(assertion, request, verified)


def test_sign_in_without_a_passkey_is_not_handled(passkey_device):
    with pytest.raises(AuthctlError) as refused:
        passkey_device.sign(authentication_options(), ORIGIN)
    error = refused.value
    assert isinstance(error, CeremonyFailed)
    assert (error.status, error.name, error.dom_exception) == (422, "notHandled", "NotAllowedError")
    assert error.domException == "NotAllowedError" and error.problem["name"] == "notHandled"
    assert "example.com" in error.detail


def test_outcomes_the_page_sees(passkey_device, registered):
    response, _ = registered
    with pytest.raises(CeremonyFailed) as canceled:
        passkey_device.register(registration_options(user="erin"), ORIGIN, user_action="cancel")
    assert (canceled.value.name, canceled.value.dom_exception) == ("canceled", "NotAllowedError")
    assert len(passkey_device.passkeys(rp_id=RP_ID)) == 1  # nothing was stored

    with pytest.raises(CeremonyFailed) as timed_out:
        passkey_device.sign(authentication_options(), ORIGIN, user_action="timeout")
    assert timed_out.value.name == "timedOut"

    with pytest.raises(CeremonyFailed) as excluded:
        passkey_device.register(registration_options(exclude=[response["id"]]), ORIGIN)
    assert (excluded.value.name, excluded.value.dom_exception) == ("matchedExcludedCredential", "InvalidStateError")

    with pytest.raises(CeremonyFailed) as wrong_pin:
        passkey_device.sign(authentication_options(), ORIGIN, pin="0000")
    assert wrong_pin.value.name == "failed"
    assert passkey_device.info()["biometry"]["failures"] == 1


def test_caller_mistakes_are_bad_requests(passkey_device, authctl_account):
    with pytest.raises(BadRequest) as unknown:
        passkey_device.sign(authentication_options(), ORIGIN, no_such_member=True)
    assert unknown.value.name == "badInput" and "noSuchMember" in unknown.value.detail
    with pytest.raises(BadRequest):
        passkey_device.sign({"challenge": 7}, ORIGIN)
    with pytest.raises(NotFound) as missing:
        authctl_account.device("tablet").sign(authentication_options(), ORIGIN)
    assert missing.value.status == 404 and "tablet" in missing.value.detail


def test_a_packed_attestation_chains_to_the_root_the_account_gives(authctl_server):
    from webauthn import generate_registration_options, verify_registration_response
    from webauthn.helpers.structs import AttestationConveyancePreference, AttestationFormat
    first, second = (authctl_server.create_account(profile="security-key") for _ in range(2))
    ca = first.attestation_ca()
    assert ca["root"].startswith("-----BEGIN CERTIFICATE-----") and ca != {} and second.attestation_ca() == ca
    options = generate_registration_options(rp_id=RP_ID, rp_name="Example", user_name="alice", user_id=b"alice",
                                            attestation=AttestationConveyancePreference.DIRECT)
    response = second.device("phone").register(options, ORIGIN)
    verified = verify_registration_response(credential=response, expected_challenge=options.challenge, expected_rp_id=RP_ID,
                                            expected_origin=ORIGIN,
                                            pem_root_certs_bytes_by_fmt={AttestationFormat.PACKED: [ca["root"].encode()]})
    assert verified.fmt == AttestationFormat.PACKED
    # The intermediate is not a root: trusting it alone (as if it were) does not verify.
    with pytest.raises(InvalidRegistrationResponse):
        verify_registration_response(credential=response, expected_challenge=options.challenge, expected_rp_id=RP_ID,
                                     expected_origin=ORIGIN,
                                     pem_root_certs_bytes_by_fmt={AttestationFormat.PACKED: [ca["intermediate"].encode()]})
