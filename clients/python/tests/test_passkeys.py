"""A device's passkeys: added from a private key, read, flagged, exported, imported, deleted,
and removed by the RP's signals."""
import hashlib
import os

import pytest
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from fido2 import cbor
from fido2.cose import ES256
from webauthn.helpers import parse_authenticator_data

from authctl_client import NO_COUNTER, BadRequest, CeremonyFailed, NotFound, b64url, unb64url
from relying_party import (ORIGIN, RP_ID, authentication_options, client_data, registration_options, verify_authentication,
                           verify_registration)


class _Registered:
    """What py_webauthn's verify_authentication_response needs of a registration: the COSE key."""

    def __init__(self, public_key):
        self.credential_public_key = cbor.encode(dict(ES256.from_cryptography_key(public_key)))


def test_a_passkey_added_from_a_pkcs8_key_signs_for_that_key(passkey_device):
    key = ec.generate_private_key(ec.SECP256R1())
    credential_id = os.urandom(16)
    added = passkey_device.add_passkey(credential_id=credential_id, rp_id=RP_ID, private_key=key,
                                       user_handle=b"frank", user_name="frank", user_display_name="Frank")
    assert (added["id"], added["rpId"], added["algorithm"], added["userName"]) == (b64url(credential_id), RP_ID, "ES256", "frank")
    spki = key.public_key().public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    assert unb64url(added["publicKey"]) == spki

    request = authentication_options(allow=[added["id"]])
    assertion = passkey_device.sign(request, ORIGIN)
    assert assertion["id"] == added["id"] and unb64url(assertion["response"]["userHandle"]) == b"frank"
    signed = unb64url(assertion["response"]["authenticatorData"]) + hashlib.sha256(
        unb64url(assertion["response"]["clientDataJSON"])).digest()
    signature = unb64url(assertion["response"]["signature"])
    key.public_key().verify(signature, signed, ec.ECDSA(hashes.SHA256()))  # raises when it is not that key's
    verify_authentication(assertion, request, _Registered(key.public_key()))
    assert parse_authenticator_data(unb64url(assertion["response"]["authenticatorData"])).flags.up

    # Another key does not verify it, nor does the same key over changed data.
    with pytest.raises(InvalidSignature):
        ec.generate_private_key(ec.SECP256R1()).public_key().verify(signature, signed, ec.ECDSA(hashes.SHA256()))
    with pytest.raises(InvalidSignature):
        key.public_key().verify(signature, signed[:-1] + bytes([signed[-1] ^ 1]), ec.ECDSA(hashes.SHA256()))


def test_a_der_key_as_bytes_and_text(passkey_device):
    key = ec.generate_private_key(ec.SECP256R1())
    der = key.private_bytes(serialization.Encoding.DER, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    one = passkey_device.add_passkey(credential_id=b"one-0123456789ab", rp_id=RP_ID, private_key=der, user_handle=b"u1",
                                     sign_count=41)
    two = passkey_device.add_passkey(credential_id=b64url(b"two-0123456789ab"), rp_id=RP_ID, private_key=b64url(der),
                                     user_handle=b64url(b"u2"), backup_eligibility=False)
    assert one["signCount"] == 41
    assert (two["backupEligible"], two["backupState"]) == (False, False)
    assert {p["id"] for p in passkey_device.passkeys(rp_id=RP_ID)} == {one["id"], two["id"]}
    assert passkey_device.passkeys(rp_id="other.example") == []


def test_a_passkey_added_with_no_counter_reports_zero_at_every_sign_in(passkey_device):
    # sign_count=NO_COUNTER is "signCount": null (None leaves the member out: a counter from 0).
    key = ec.generate_private_key(ec.SECP256R1())
    counterless = passkey_device.add_passkey(credential_id=os.urandom(16), rp_id=RP_ID, private_key=key, user_handle=b"nina",
                                             sign_count=NO_COUNTER)
    counting = passkey_device.add_passkey(credential_id=os.urandom(16), rp_id=RP_ID, private_key=key, user_handle=b"otto",
                                          sign_count=None)
    assert (counterless["signCount"], counterless["signCounter"]) == (0, "zero"), counterless
    assert (counting["signCount"], counting["signCounter"]) == (0, "per-credential"), counting
    for _ in range(2):
        request = authentication_options(allow=[counterless["id"]])
        assertion = passkey_device.sign(request, ORIGIN)
        assert parse_authenticator_data(unb64url(assertion["response"]["authenticatorData"])).sign_count == 0
        verify_authentication(assertion, request, _Registered(key.public_key()))
    assertion = passkey_device.sign(authentication_options(allow=[counting["id"]]), ORIGIN)
    assert parse_authenticator_data(unb64url(assertion["response"]["authenticatorData"])).sign_count == 1
    assert repr(NO_COUNTER) == "NO_COUNTER"


def test_backup_flags_show_in_the_next_sign_in(passkey_device, registered):
    response, verified = registered
    for state in (False, True, False):
        changed = passkey_device.set_backup_flags(response["id"], backup_state=state)
        assert (changed["backupEligible"], changed["backupState"], changed["backupStateSetByHand"]) == (True, state, True)
        request = authentication_options(allow=[response["id"]])
        outcome = verify_authentication(passkey_device.sign(request, ORIGIN), request, verified)
        assert (outcome.credential_device_type, outcome.credential_backed_up) == ("multi_device", state)


def test_a_passkey_exported_from_one_account_signs_in_another(authctl_server, passkey_device, registered):
    response, verified = registered
    envelope = passkey_device.export_passkey(response["id"], "correct horse battery staple")
    assert isinstance(envelope, str) and response["id"] not in envelope
    with authctl_server.create_account(devices=[("tablet", "2468")]) as other:
        tablet = other.device("tablet")
        with pytest.raises(BadRequest):
            tablet.import_passkey(envelope, "incorrect horse")
        assert tablet.passkeys() == []
        imported = tablet.import_passkey(envelope, "correct horse battery staple")
        assert imported["id"] == response["id"]
        request = authentication_options()
        verify_authentication(tablet.sign(request, ORIGIN), request, verified)


def test_a_deleted_passkey_is_gone(passkey_device, registered):
    response, _ = registered
    passkey_device.delete_passkey(response["id"])
    with pytest.raises(NotFound) as missing:
        passkey_device.passkey(response["id"])
    assert missing.value.name == "notHandled"
    with pytest.raises(CeremonyFailed):
        passkey_device.sign(authentication_options(), ORIGIN)


def test_signals_remove_and_rename(passkey_device, registered):
    response, _ = registered
    effect = passkey_device.signal("currentUserDetails", {"rpId": RP_ID, "userId": b"alice", "name": "alice@example.com",
                                                          "displayName": "Alice Example"}, ORIGIN)
    assert effect["updated"] == [response["id"]]
    assert passkey_device.passkey(response["id"])["userName"] == "alice@example.com"
    effect = passkey_device.signal("unknown_credential", {"rpId": RP_ID, "credentialId": response["id"]}, ORIGIN)
    assert effect["removed"] == [response["id"]]
    assert passkey_device.passkeys() == []
    with pytest.raises(ValueError):
        passkey_device.signal("nonsense", {}, ORIGIN)


def test_the_response_is_what_a_browser_gives(passkey_device):
    options = registration_options()
    response = passkey_device.register(options, ORIGIN)
    assert set(response) >= {"id", "rawId", "type", "response", "clientExtensionResults", "authenticatorAttachment"}
    assert set(response["response"]) >= {"clientDataJSON", "attestationObject", "transports", "publicKey",
                                         "publicKeyAlgorithm", "authenticatorData"}
    assert client_data(response) == {"type": "webauthn.create", "challenge": b64url(options.challenge), "origin": ORIGIN,
                                     "crossOrigin": False}
    verify_registration(response, options)
