"""Every --fault makes a response that both py_webauthn and python-fido2 reject, while the same
request without the fault is accepted: so a test can tell the two apart."""
import json
import struct

import pytest
from fido2.attestation import Attestation
from fido2.server import Fido2Server
from fido2.webauthn import (AuthenticationResponse, AuthenticatorData, PublicKeyCredentialRpEntity,
                            PublicKeyCredentialUserEntity, RegistrationResponse)
from webauthn import verify_authentication_response, verify_registration_response

from conftest import unb64url

RP_ID, ORIGIN = "yourbank.example", "https://yourbank.example"
REGISTRATION_FAULTS = ["bad-signature", "wrong-rp-id-hash", "wrong-challenge", "wrong-origin", "look-alike-origin", "subdomain-origin", "http-origin", "other-port-origin", "wrong-type",
                       "up-cleared", "uv-cleared", "bad-cbor"]
SIGN_FAULTS = ["bad-signature", "wrong-rp-id-hash", "wrong-challenge", "wrong-origin", "look-alike-origin", "subdomain-origin", "http-origin", "other-port-origin", "wrong-type", "up-cleared",
               "uv-cleared", "uv-claimed-without-check", "counter-regress"]


def check_attestation(attestation_object, client_data_hash):
    Attestation.for_type(attestation_object.fmt)().verify(
        attestation_object.att_stmt, attestation_object.auth_data, client_data_hash)


def fido2_server():
    return Fido2Server(PublicKeyCredentialRpEntity(id=RP_ID, name="Bank"), attestation="direct",
                       verify_origin=lambda o: o == ORIGIN, verify_attestation=check_attestation)


def accepted(check):
    try:
        check()
        return True
    except Exception:
        return False


def test_faults_are_listed(authctl):
    listed = authctl.run("faults").stdout.splitlines()
    assert sorted(line.split()[0] for line in listed) == sorted(set(REGISTRATION_FAULTS + SIGN_FAULTS))


@pytest.mark.parametrize("fault", REGISTRATION_FAULTS)
def test_registration_fault_is_rejected_by_both_and_the_honest_one_accepted(authctl, fault):
    results = {}
    for user_id, with_fault in ((b"honest", False), (b"faulty", True)):
        server = fido2_server()
        options, state = server.register_begin(
            PublicKeyCredentialUserEntity(id=user_id, name="budi", display_name="Budi"), user_verification="required")
        extra = ("--fault", fault) if with_fault else ()
        result = authctl.register(dict(options), ORIGIN, "--profile", "authctl", *extra)
        assert result.code == 0, result.stderr
        assert ("fault injected: " + fault in result.stderr) == with_fault
        response = json.loads(result.stdout)
        challenge = options.public_key.challenge
        results[with_fault] = (
            accepted(lambda: verify_registration_response(
                credential=response, expected_challenge=challenge, expected_rp_id=RP_ID, expected_origin=ORIGIN,
                require_user_verification=True)),
            accepted(lambda: server.register_complete(state, response)),
        )
    assert results == {False: (True, True), True: (False, False)}, results


@pytest.fixture
def counting_passkey(authctl):
    """A passkey that counts signatures and has signed once, and what an RP knows of it."""
    server = fido2_server()
    options, state = server.register_begin(
        PublicKeyCredentialUserEntity(id=b"budi", name="budi", display_name="Budi"), user_verification="required")
    response = authctl.register(dict(options), ORIGIN, "--sign-counter").json
    credential = server.register_complete(state, response).credential_data
    cose_key = verify_registration_response(credential=response, expected_challenge=options.public_key.challenge,
                                            expected_rp_id=RP_ID, expected_origin=ORIGIN).credential_public_key
    first = authctl.sign({"challenge": "Zmlyc3Q", "rpId": RP_ID}, ORIGIN).json
    count = struct.unpack(">I", unb64url(first["response"]["authenticatorData"])[33:37])[0]
    assert count == 1
    return server, credential, cose_key, {"count": count}


@pytest.mark.parametrize("fault", SIGN_FAULTS)
def test_sign_fault_is_rejected_by_both_and_the_honest_one_accepted(authctl, counting_passkey, fault):
    server, credential, cose_key, known = counting_passkey
    results = {}
    for with_fault in (False, True):
        options, state = server.authenticate_begin([credential], user_verification="required")
        extra = ("--fault", fault) if with_fault else ()
        result = authctl.sign(dict(options), ORIGIN, *extra)
        assert result.code == 0, result.stderr
        assertion = json.loads(result.stdout)
        stored = known["count"]

        def python_fido2():
            server.authenticate_complete(state, [credential], assertion)
            # python-fido2 leaves the counter rule (WebAuthn L3 §7.2 step 22) to the application;
            # this is that rule, applied to the counter python-fido2 parsed.
            counter = AuthenticationResponse.from_dict(assertion).response.authenticator_data.counter
            if (counter or stored) and counter <= stored:
                raise ValueError("sign count did not increase")

        results[with_fault] = (
            accepted(lambda: verify_authentication_response(
                credential=assertion, expected_challenge=options.public_key.challenge, expected_rp_id=RP_ID,
                expected_origin=ORIGIN, credential_public_key=cose_key, credential_current_sign_count=stored,
                require_user_verification=True)),
            accepted(python_fido2),
        )
        if not with_fault:
            known["count"] = struct.unpack(">I", unb64url(assertion["response"]["authenticatorData"])[33:37])[0]
    assert results == {False: (True, True), True: (False, False)}, results


def test_a_fault_that_cannot_apply_is_a_usage_error(authctl):
    result = authctl.run("register", "--origin", ORIGIN, "--fault", "counter-regress")
    assert result.code == 64 and "counter-regress" in result.stderr
    result = authctl.run("register", "--origin", ORIGIN, "--fault", "bad-signature")  # attestation none
    assert result.code == 64
    authctl.run("register", "--origin", ORIGIN).json
    before = authctl.snapshot()
    result = authctl.run("sign", "--origin", ORIGIN, "--fault", "counter-regress")  # counter not enabled
    assert result.code == 64 and result.stdout == ""
    assert authctl.snapshot() == before  # refused before the PIN or any counter was touched
    counting = authctl.run("register", "--origin", ORIGIN, "--user-name", "c", "--user-id", "Yw", "--sign-counter").json
    before = authctl.state()
    result = authctl.run("sign", "--origin", ORIGIN, f"--credential={counting['id']}", "--fault", "counter-regress")
    assert result.code == 64 and authctl.state() == before  # has not signed yet: nothing to regress from
    assert authctl.run("sign", "--origin", ORIGIN, "--fault", "nonsense").code == 64


# A flag fault breaks the flag and nothing else: the response is correctly signed (checked here
# with python-fido2's own attestation and COSE verifiers), so an RP can test its flag check alone.
# An RP that requires the flag rejects it, naming the flag; one that does not require it accepts it.
FLAG_MESSAGES = {"uv-cleared": ("verif", "verified"), "up-cleared": ("present", "present")}


def outcome(check):
    """None when the check accepts, else what it said."""
    try:
        check()
        return None
    except Exception as error:  # noqa: BLE001 - the verifiers raise several types
        return str(error)


def names_flag(message, fault):
    return message is not None and any(word in message.lower() for word in FLAG_MESSAGES[fault])


@pytest.mark.parametrize("fault", ["uv-cleared", "up-cleared"])
def test_registration_flag_fault_is_signed_and_rejected_only_for_its_flag(authctl, fault):
    for n, rp_requires_uv in enumerate((True, False)):
        server = fido2_server()
        options, state = server.register_begin(
            PublicKeyCredentialUserEntity(id=b"user-%d" % n, name="budi", display_name="Budi"),
            user_verification="required" if rp_requires_uv else "preferred")
        result = authctl.register(dict(options), ORIGIN, "--profile", "authctl", "--fault", fault)
        assert result.code == 0 and "fault injected: " + fault in result.stderr, result.stderr
        response = json.loads(result.stdout)
        parsed = RegistrationResponse.from_dict(response)
        attestation, client_data = parsed.response.attestation_object, parsed.response.client_data
        flags = attestation.auth_data.flags
        # Only the fault's flag is off: the user was present and verified (the PIN was checked).
        assert flags & AuthenticatorData.FLAG.AT
        assert bool(flags & AuthenticatorData.FLAG.UP) == (fault != "up-cleared")
        assert bool(flags & AuthenticatorData.FLAG.UV) == (fault != "uv-cleared")
        assert attestation.fmt == "packed" and "sig" in attestation.att_stmt
        check_attestation(attestation, client_data.hash)  # the signature over the faulted data is good
        challenge = options.public_key.challenge

        def py_webauthn(require_uv, require_up=True):
            return outcome(lambda: verify_registration_response(
                credential=response, expected_challenge=challenge, expected_rp_id=RP_ID, expected_origin=ORIGIN,
                require_user_verification=require_uv, require_user_presence=require_up))

        fido2 = outcome(lambda: server.register_complete(state, response))
        if fault == "uv-cleared":
            # What the RP asked for in the options is what it requires.
            assert names_flag(py_webauthn(True), fault) and names_flag(outcome(lambda: fido2_server().register_complete(
                {**state, "user_verification": "required"}, response)), fault)
            assert py_webauthn(False) is None
            assert (names_flag(fido2, fault) if rp_requires_uv else fido2 is None), fido2
        else:
            # Presence: python-fido2 always requires it; py_webauthn unless told not to (as for a
            # conditional create).
            assert names_flag(py_webauthn(rp_requires_uv), fault) and names_flag(fido2, fault), fido2
            assert py_webauthn(rp_requires_uv, require_up=False) is None


@pytest.mark.parametrize("fault", ["uv-cleared", "up-cleared"])
def test_sign_flag_fault_is_signed_and_rejected_only_for_its_flag(authctl, counting_passkey, fault):
    server, credential, cose_key, known = counting_passkey
    for rp_requires_uv in (True, False):
        options, state = server.authenticate_begin(
            [credential], user_verification="required" if rp_requires_uv else "preferred")
        result = authctl.sign(dict(options), ORIGIN, "--fault", fault)
        assert result.code == 0 and "fault injected: " + fault in result.stderr, result.stderr
        assertion = json.loads(result.stdout)
        parsed = AuthenticationResponse.from_dict(assertion).response
        flags = parsed.authenticator_data.flags
        assert bool(flags & AuthenticatorData.FLAG.UP) == (fault != "up-cleared")
        assert bool(flags & AuthenticatorData.FLAG.UV) == (fault != "uv-cleared")
        # The signature over the faulted authenticator data is good.
        credential.public_key.verify(bytes(parsed.authenticator_data) + parsed.client_data.hash, parsed.signature)
        stored = known["count"]
        assert parsed.authenticator_data.counter > stored  # only the flag is wrong

        def py_webauthn(require_uv):
            return outcome(lambda: verify_authentication_response(
                credential=assertion, expected_challenge=options.public_key.challenge, expected_rp_id=RP_ID,
                expected_origin=ORIGIN, credential_public_key=cose_key, credential_current_sign_count=stored,
                require_user_verification=require_uv))

        fido2 = outcome(lambda: server.authenticate_complete(state, [credential], assertion))
        if fault == "uv-cleared":
            assert names_flag(py_webauthn(True), fault) and py_webauthn(False) is None
            assert (names_flag(fido2, fault) if rp_requires_uv else fido2 is None), fido2
        else:  # both always require presence for a sign-in
            assert names_flag(py_webauthn(rp_requires_uv), fault) and names_flag(fido2, fault), fido2


def test_uv_cleared_needs_a_request_that_verifies_the_user(authctl):
    # Without verification UV is 0 anyway: the fault would send an honest response, so it is refused.
    result = authctl.run("register", "--origin", ORIGIN, "--user-verification", "discouraged", "--fault", "uv-cleared")
    assert result.code == 64 and "uv-cleared needs a request that verifies the user" in result.stderr, result.stderr
    authctl.run("register", "--origin", ORIGIN, "--user-verification", "discouraged").json
    before = authctl.state()
    result = authctl.run("sign", "--origin", ORIGIN, "--user-verification", "discouraged", "--fault", "uv-cleared")
    assert result.code == 64 and result.stdout == "" and authctl.state() == before, result.stderr
    # A passkey made with UV needs the PIN to sign even when the RP discourages UV: the fault applies.
    made = authctl.run("register", "--origin", ORIGIN, "--user-name", "v", "--user-id", "dg",
                       "--user-verification", "required").json["id"]
    signed = authctl.run("sign", "--origin", ORIGIN, f"--credential={made}", "--user-verification", "discouraged",
                         "--fault", "uv-cleared").json
    assert unb64url(signed["response"]["authenticatorData"])[32] & 0x05 == 0x01  # UP, not UV
