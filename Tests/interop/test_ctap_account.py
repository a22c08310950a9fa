"""A passkey made over CTAP2 on a key of an account is visible to that account's other tools as the
key's profile says. The key is a device of a vault (`ctap serve --vault`, the security-key
profile), python-fido2's Fido2Client makes a discoverable credential and one with `rk` false on
it; once the key has stopped (it holds the vault while it serves), `authctl list --device key`
lists both and `authctl sign --device key` signs with both — the one with `rk` false only when an
allow list names it, as a USB key that keeps nothing of it could. py_webauthn judges every
signature with the public key the registration over CTAP gave, and refuses it with the other's."""
import json

import pytest
from fido2.client import DefaultClientDataCollector, Fido2Client, UserInteraction
from fido2.webauthn import PublicKeyCredentialCreationOptions
from webauthn import (generate_authentication_options, generate_registration_options, options_to_json, verify_authentication_response,
                      verify_registration_response)
from webauthn.helpers.exceptions import InvalidAuthenticationResponse
from webauthn.helpers.structs import (AuthenticatorSelectionCriteria, AuthenticatorTransport, PublicKeyCredentialDescriptor,
                                      ResidentKeyRequirement, UserVerificationRequirement)

from conftest import b64url, unb64url
from test_ctap_credman import VaultKey, plain

ORIGIN = "https://example.com"


class Touching(UserInteraction):
    """The person at a key without a PIN: the key is set to take their touch at once."""


def make(key, user: bytes, resident_key):
    """A credential of example.com made over CTAP by Fido2Client, py_webauthn verifying it."""
    client = Fido2Client(key.device, DefaultClientDataCollector(ORIGIN), user_interaction=Touching())
    options = generate_registration_options(
        rp_id="example.com", rp_name="Example", user_id=user, user_name=user.decode(),
        authenticator_selection=AuthenticatorSelectionCriteria(resident_key=resident_key,
                                                               user_verification=UserVerificationRequirement.DISCOURAGED))
    result = client.make_credential(PublicKeyCredentialCreationOptions.from_dict(json.loads(options_to_json(options))))
    return verify_registration_response(credential=plain(dict(result)), expected_challenge=options.challenge,
                                        expected_rp_id="example.com", expected_origin=ORIGIN)


def sign(tool, allow=None):
    """`authctl sign --device key` for example.com, naming `allow` (a credential, over USB) or
    none (a discoverable sign-in): the challenge and the response."""
    options = generate_authentication_options(
        rp_id="example.com", user_verification=UserVerificationRequirement.DISCOURAGED,
        allow_credentials=[PublicKeyCredentialDescriptor(id=allow.credential_id, transports=[AuthenticatorTransport.USB])] if allow else None)
    result = tool.sign(json.loads(options_to_json(options)), ORIGIN, "--device", "key")
    assert result.code == 0, result.stderr
    return options.challenge, result.json


def judge(challenge, response, credential, count):
    verify_authentication_response(credential=response, expected_challenge=challenge, expected_rp_id="example.com",
                                   expected_origin=ORIGIN, credential_public_key=credential.credential_public_key,
                                   credential_current_sign_count=count)


def test_a_credential_made_over_ctap_on_a_key_of_an_account_is_listed_and_signs_with_the_cli(tmp_path):
    key = VaultKey(tmp_path)
    try:
        key.start()
        discoverable = make(key, b"ann", ResidentKeyRequirement.REQUIRED)
        bound = make(key, b"bob", ResidentKeyRequirement.DISCOURAGED)
    finally:
        key.stop()
    assert key.tool.run("vault", "check").code == 0
    # The model's ids: 48 bytes for a credential the key keeps, 64 (a wrapped key handle) for one it does not.
    assert (len(discoverable.credential_id), len(bound.credential_id)) == (48, 64)

    listed = key.tool.run("--json", "list", "--device", "key")
    assert listed.code == 0, listed.stderr
    held = {unb64url(c["id"]): c for c in listed.json["credentials"]}
    assert set(held) == {discoverable.credential_id, bound.credential_id}
    for credential, user in ((discoverable, "ann"), (bound, "bob")):
        entry = held[credential.credential_id]
        assert (entry["rpId"], entry["userName"], entry["profile"], entry["backupEligible"]) == ("example.com", user, "security-key", False)
        assert entry["publicKey"] == b64url(_spki(credential))

    # Each signs when an allow list names it; the signature is the key's, and only that key's.
    for credential, other in ((discoverable, bound), (bound, discoverable)):
        challenge, response = sign(key.tool, allow=credential)
        assert unb64url(response["rawId"]) == credential.credential_id
        assert response["authenticatorAttachment"] == "cross-platform"
        judge(challenge, response, credential, 0)
        with pytest.raises(InvalidAuthenticationResponse):
            judge(challenge, response, other, 0)
    # A discoverable sign-in finds only the discoverable one, though the other is newer.
    challenge, response = sign(key.tool)
    assert unb64url(response["rawId"]) == discoverable.credential_id
    judge(challenge, response, discoverable, 0)


def _spki(verified) -> bytes:
    """The SubjectPublicKeyInfo DER of a registration's COSE public key (what `list` shows)."""
    from cryptography.hazmat.primitives import serialization
    from webauthn.helpers import decode_credential_public_key
    from webauthn.helpers.cose import COSEKTY
    decoded = decode_credential_public_key(verified.credential_public_key)
    if decoded.kty == COSEKTY.OKP:
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
        public = Ed25519PublicKey.from_public_bytes(decoded.x)
    else:
        from cryptography.hazmat.primitives.asymmetric import ec
        public = ec.EllipticCurvePublicNumbers(int.from_bytes(decoded.x, "big"), int.from_bytes(decoded.y, "big"), ec.SECP256R1()).public_key()
    return public.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
