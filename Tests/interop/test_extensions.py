"""WebAuthn extensions from the command line (docs/extensions.md): prf over hmac-secret, largeBlob,
credProtect, credBlob and minPinLength. python-fido2 parses the authenticator data's extension
outputs, py_webauthn verifies every registration and assertion that carries them (it re-encodes
the extension map to find its end, so this also proves the CBOR is canonical), and the PRF and
large-blob secrets are recomputed here from the private key the vault reader opens."""
import hashlib
import hmac
import json

import pytest
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from fido2.webauthn import AuthenticatorData
from webauthn import (generate_authentication_options, generate_registration_options, options_to_json,
                      verify_authentication_response, verify_registration_response)
from webauthn.helpers.structs import (AuthenticatorSelectionCriteria, PublicKeyCredentialDescriptor,
                                      ResidentKeyRequirement, UserVerificationRequirement)

import vault_reader
from conftest import PASSPHRASE, PIN, b64url, unb64url

RP_ID, ORIGIN = "example.com", "https://example.com"
LAPTOP_PIN = "9753"


def register(authctl, extensions: dict, uv="discouraged", user=b"user-1", *extra, env=None):
    options = generate_registration_options(
        rp_id=RP_ID, rp_name="RP", user_name="alice", user_id=user,
        authenticator_selection=AuthenticatorSelectionCriteria(
            resident_key=ResidentKeyRequirement.REQUIRED, user_verification=UserVerificationRequirement(uv)))
    body = json.loads(options_to_json(options))
    body["extensions"] = extensions
    result = authctl.register(body, ORIGIN, *extra, env=env)
    if result.code != 0:
        return result, None, None
    response = result.json
    verified = verify_registration_response(credential=response, expected_challenge=options.challenge,
                                            expected_rp_id=RP_ID, expected_origin=ORIGIN,
                                            require_user_verification=(uv == "required"))
    data = AuthenticatorData(unb64url(response["response"]["authenticatorData"]))
    return response, verified, data


def sign(authctl, public_key: bytes, extensions: dict, uv="discouraged", allow=(), *extra, env=None):
    options = generate_authentication_options(
        rp_id=RP_ID, user_verification=UserVerificationRequirement(uv),
        allow_credentials=[PublicKeyCredentialDescriptor(id=i) for i in allow])
    body = json.loads(options_to_json(options))
    body["extensions"] = extensions
    result = authctl.sign(body, ORIGIN, *extra, env=env)
    if result.code != 0:
        return result, None
    response = result.json
    verify_authentication_response(credential=response, expected_challenge=options.challenge, expected_rp_id=RP_ID,
                                   expected_origin=ORIGIN, credential_public_key=public_key,
                                   credential_current_sign_count=0, require_user_verification=(uv == "required"))
    return response, AuthenticatorData(unb64url(response["response"]["authenticatorData"]))


def prf_eval(first: bytes, second: bytes | None = None) -> dict:
    values = {"first": b64url(first)}
    if second is not None:
        values["second"] = b64url(second)
    return values


def results(response: dict) -> dict:
    return response["clientExtensionResults"]


def credential_secret(authctl, credential_id: bytes, info: bytes, pin: bytes | None = None) -> bytes:
    """HKDF-SHA-256 over the private key's DER, as docs/extensions.md says, from the vault reader."""
    vault = vault_reader.open_vault(authctl.vault, PASSPHRASE.encode())
    der = vault.private_key_der(vault.record_for_credential(credential_id), pin)
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=b"AUTHCTL-CREDENTIAL-SECRET", info=info).derive(der)


def expected_prf(authctl, credential_id: bytes, prf_input: bytes, uv: bool, pin: bytes | None = None) -> bytes:
    cred_random = credential_secret(
        authctl, credential_id, b"hmac-secret CredRandomWithUV" if uv else b"hmac-secret CredRandomWithoutUV", pin)
    salt = hashlib.sha256(b"WebAuthn PRF\x00" + prf_input).digest()
    return hmac.new(cred_random, salt, hashlib.sha256).digest()


# --- prf ---------------------------------------------------------------------------------------

def test_prf_registration_enables_and_marks_hmac_secret(authctl):
    response, _, data = register(authctl, {"prf": {}})
    assert results(response) == {"prf": {"enabled": True}}
    assert data.extensions == {"hmac-secret": True}


def test_prf_outputs_match_an_independent_computation(authctl):
    response, verified, _ = register(authctl, {"prf": {}})
    cid = verified.credential_id
    first, second = b"salt one", b"salt two"
    assertion, data = sign(authctl, verified.credential_public_key, {"prf": {"eval": prf_eval(first, second)}})
    out = results(assertion)["prf"]["results"]
    assert unb64url(out["first"]) == expected_prf(authctl, cid, first, uv=True)
    assert unb64url(out["second"]) == expected_prf(authctl, cid, second, uv=True)
    assert data.extensions is None  # hmac-secret's sign-in output is not in authData (docs/extensions.md)


def test_prf_is_deterministic_separates_salts_and_credentials_and_ignores_uv_state(authctl):
    _, one, _ = register(authctl, {"prf": {}}, user=b"user-1")
    _, two, _ = register(authctl, {"prf": {}}, user=b"user-2")

    def evaluate(verified, prf_input, uv="discouraged", by_credential=False):
        ext = ({"evalByCredential": {b64url(verified.credential_id): prf_eval(prf_input)}} if by_credential
               else {"eval": prf_eval(prf_input)})
        response, _ = sign(authctl, verified.credential_public_key, {"prf": ext}, uv, [verified.credential_id])
        return results(response)["prf"]["results"]["first"]

    a = evaluate(one, b"A")
    assert evaluate(one, b"A") == a  # another process, same output
    assert evaluate(one, b"A", by_credential=True) == a
    assert evaluate(one, b"B") != a
    assert evaluate(two, b"A") != a
    # One PRF per credential, whatever the state of user verification (§10.1.4): the with-UV one.
    assert evaluate(one, b"A", uv="required") == a
    assert unb64url(a) == expected_prf(authctl, one.credential_id, b"A", uv=True)


def test_prf_eval_at_registration_equals_the_sign_in_output(authctl):
    response, verified, _ = register(authctl, {"prf": {"eval": prf_eval(b"x", b"y")}}, uv="required")
    made = results(response)["prf"]
    assert made["enabled"] is True and set(made["results"]) == {"first", "second"}
    assertion, _ = sign(authctl, verified.credential_public_key, {"prf": {"eval": prf_eval(b"x", b"y")}}, "required")
    assert results(assertion)["prf"]["results"] == made["results"]


def test_prf_eval_by_credential_takes_precedence_and_is_checked(authctl):
    _, verified, _ = register(authctl, {"prf": {}})
    cid = verified.credential_id
    plain, _ = sign(authctl, verified.credential_public_key, {"prf": {"eval": prf_eval(b"default")}}, allow=[cid])
    both, _ = sign(authctl, verified.credential_public_key,
                   {"prf": {"eval": prf_eval(b"default"), "evalByCredential": {b64url(cid): prf_eval(b"mine")}}},
                   allow=[cid])
    assert results(both)["prf"]["results"]["first"] != results(plain)["prf"]["results"]["first"]
    # No applicable input: prf is answered with no results.
    none, _ = sign(authctl, verified.credential_public_key, {"prf": {}}, allow=[cid])
    assert results(none) == {"prf": {}}

    # A key that is no allowed id (or not base64url) is SyntaxError (syntaxError, exit 29);
    # evalByCredential without allowCredentials is NotSupportedError.
    for key in ("AAAA", "not base64url!", ""):
        bad, _ = sign(authctl, verified.credential_public_key, {"prf": {"evalByCredential": {key: prf_eval(b"m")}}},
                      allow=[cid])
        assert bad.code == 29 and "syntaxError" in bad.stderr, bad.stderr
    bad, _ = sign(authctl, verified.credential_public_key, {"prf": {"evalByCredential": {b64url(cid): prf_eval(b"m")}}})
    assert bad.code == 17 and "notSupported" in bad.stderr, bad.stderr


def test_prf_eval_by_credential_at_registration_is_not_supported(authctl):
    result, _, _ = register(authctl, {"prf": {"evalByCredential": {"AAAA": prf_eval(b"m")}}})
    assert result.code == 17 and "notSupported" in result.stderr, result.stderr
    assert authctl.listing() == []


# --- largeBlob ---------------------------------------------------------------------------------

def test_large_blob_write_then_read_back(authctl):
    response, verified, data = register(authctl, {"largeBlob": {"support": "required"}})
    assert results(response) == {"largeBlob": {"supported": True}}
    assert data.extensions is None  # largeBlobKey is no authData extension
    cid, key = verified.credential_id, verified.credential_public_key

    empty, _ = sign(authctl, key, {"largeBlob": {"read": True}})
    assert results(empty) == {"largeBlob": {}}

    blob = bytes(range(256)) * 3
    written, _ = sign(authctl, key, {"largeBlob": {"write": b64url(blob)}}, allow=[cid])
    assert results(written) == {"largeBlob": {"written": True}}
    read, _ = sign(authctl, key, {"largeBlob": {"read": True}})
    assert unb64url(results(read)["largeBlob"]["blob"]) == blob

    # The vault holds it sealed: nonce ‖ AES-256-GCM under the largeBlobKey, AD "blob" ‖ uint64le(size).
    vault = vault_reader.open_vault(authctl.vault, PASSPHRASE.encode())
    sealed = vault.record_for_credential(cid).fields[vault_reader.T_LARGE_BLOB]
    assert blob not in sealed
    blob_key = credential_secret(authctl, cid, b"largeBlobKey")
    assert AESGCM(blob_key).decrypt(sealed[:12], sealed[12:], b"blob" + len(blob).to_bytes(8, "little")) == blob

    # A later write replaces it.
    sign(authctl, key, {"largeBlob": {"write": b64url(b"second")}}, allow=[cid])
    read, _ = sign(authctl, key, {"largeBlob": {"read": True}})
    assert unb64url(results(read)["largeBlob"]["blob"]) == b"second"


def test_large_blob_rules(authctl):
    _, one, _ = register(authctl, {"largeBlob": {"support": "preferred"}}, user=b"user-1")
    _, two, _ = register(authctl, {}, user=b"user-2")
    key = one.credential_public_key
    for allow in ([], [one.credential_id, two.credential_id]):
        bad, _ = sign(authctl, key, {"largeBlob": {"write": b64url(b"x")}}, allow=allow)
        assert bad.code == 17 and "notSupported" in bad.stderr, bad.stderr
    bad, _ = sign(authctl, key, {"largeBlob": {"read": True, "write": b64url(b"x")}}, allow=[one.credential_id])
    assert bad.code == 17, bad.stderr
    bad, _ = sign(authctl, key, {"largeBlob": {"support": "required"}}, allow=[one.credential_id])
    assert bad.code == 17, bad.stderr
    bad, _, _ = register(authctl, {"largeBlob": {"read": True}}, user=b"user-3")
    assert bad.code == 17, bad.stderr


def test_large_blob_syncs_to_another_device(authctl):
    assert authctl.run("device", "add", "laptop", env={"AUTHCTL_NEW_PIN": LAPTOP_PIN}).code == 0
    _, verified, _ = register(authctl, {"largeBlob": {"support": "required"}})
    cid, key = verified.credential_id, verified.credential_public_key
    blob = b"written on the phone"
    written, _ = sign(authctl, key, {"largeBlob": {"write": b64url(blob)}}, allow=[cid])
    assert results(written)["largeBlob"]["written"] is True
    read, _ = sign(authctl, key, {"largeBlob": {"read": True}}, "discouraged", (), "--device", "laptop",
                   env={"AUTHCTL_PIN": LAPTOP_PIN})
    assert unb64url(results(read)["largeBlob"]["blob"]) == blob
    # …and the PRF is the same on both devices.
    ext = {"prf": {"eval": prf_eval(b"shared")}}
    here, _ = sign(authctl, key, ext)
    there, _ = sign(authctl, key, ext, "discouraged", (), "--device", "laptop", env={"AUTHCTL_PIN": LAPTOP_PIN})
    assert results(here)["prf"] == results(there)["prf"]


# --- credProtect -------------------------------------------------------------------------------

def test_cred_protect_required_is_hidden_without_user_verification(authctl):
    response, verified, data = register(authctl, {"credentialProtectionPolicy": "userVerificationRequired",
                                                  "enforceCredentialProtectionPolicy": True}, "required")
    assert data.extensions == {"credProtect": 3}
    assert results(response) == {}  # no client output, as browsers give it
    key, cid = verified.credential_public_key, verified.credential_id
    hidden, _ = sign(authctl, key, {})
    assert hidden.code == 13 and "notHandled" in hidden.stderr, hidden.stderr
    hidden, _ = sign(authctl, key, {}, "discouraged", [cid])
    assert hidden.code == 13, hidden.stderr
    ok, data = sign(authctl, key, {}, "required")
    assert data.is_user_verified()
    # excludeCredentials without UV does not see it either: a second registration goes through.
    options = generate_registration_options(
        rp_id=RP_ID, rp_name="RP", user_name="alice", user_id=b"user-2",
        exclude_credentials=[PublicKeyCredentialDescriptor(id=cid)],
        authenticator_selection=AuthenticatorSelectionCriteria(
            resident_key=ResidentKeyRequirement.REQUIRED, user_verification=UserVerificationRequirement.DISCOURAGED))
    assert authctl.register(json.loads(options_to_json(options)), ORIGIN).code == 0
    options.authenticator_selection.user_verification = UserVerificationRequirement.REQUIRED
    refused = authctl.register(json.loads(options_to_json(options)), ORIGIN)
    assert refused.code == 15 and "matchedExcludedCredential" in refused.stderr, refused.stderr


def test_cred_protect_with_id_list(authctl):
    _, verified, data = register(authctl, {"credentialProtectionPolicy": "userVerificationOptionalWithCredentialIDList"})
    assert data.extensions == {"credProtect": 2}
    key, cid = verified.credential_public_key, verified.credential_id
    hidden, _ = sign(authctl, key, {})
    assert hidden.code == 13, hidden.stderr
    listed, data = sign(authctl, key, {}, "discouraged", [cid])
    assert not data.is_user_verified()
    sign(authctl, key, {}, "required")


def test_cred_protect_optional_and_unknown_policy(authctl):
    _, verified, data = register(authctl, {"credentialProtectionPolicy": "userVerificationOptional"})
    assert data.extensions == {"credProtect": 1}
    sign(authctl, verified.credential_public_key, {})
    # An unknown policy is NotSupportedError, as in Chromium 156 (it used to be ignored).
    refused, _, _ = register(authctl, {"credentialProtectionPolicy": "sometimes"}, user=b"user-2")
    assert refused.code == 17 and "notSupported" in refused.stderr, refused.stderr
    assert len(authctl.listing()) == 1


# --- credBlob and minPinLength -----------------------------------------------------------------

def test_cred_blob_round_trip(authctl):
    blob = bytes(range(32))
    response, verified, data = register(authctl, {"credBlob": b64url(blob),
                                                  "credentialProtectionPolicy": "userVerificationOptional"})
    assert data.extensions == {"credBlob": True, "credProtect": 1} and results(response) == {"credBlob": True}
    record = vault_reader.open_vault(authctl.vault, PASSPHRASE.encode()).record_for_credential(verified.credential_id)
    assert record.fields[vault_reader.T_CRED_BLOB] == blob and record.fields[vault_reader.T_CRED_PROTECT] == b"\x01"
    assertion, data = sign(authctl, verified.credential_public_key, {"getCredBlob": True})
    assert data.extensions == {"credBlob": blob}
    assert unb64url(results(assertion)["getCredBlob"]) == blob


def test_cred_blob_too_long_is_not_stored(authctl):
    response, verified, data = register(authctl, {"credBlob": b64url(bytes(33))})
    assert data.extensions == {"credBlob": False} and results(response) == {"credBlob": False}
    assertion, data = sign(authctl, verified.credential_public_key, {"getCredBlob": True})
    assert data.extensions == {"credBlob": b""} and results(assertion)["getCredBlob"] == ""


def test_min_pin_length(authctl):
    response, _, data = register(authctl, {"minPinLength": True})
    assert data.extensions == {"minPinLength": 4}
    assert results(response) == {}


def test_every_extension_at_once_is_canonical(authctl):
    """All registration outputs in one map: python-fido2 and py_webauthn (which re-encodes the
    map) both accept it, and its keys come in CTAP2 canonical order."""
    response, verified, data = register(authctl, {
        "prf": {"eval": prf_eval(b"p")}, "largeBlob": {"support": "required"}, "credProps": True,
        "credentialProtectionPolicy": "userVerificationOptionalWithCredentialIDList", "credBlob": b64url(b"blob"),
        "minPinLength": True, "somethingUnknown": {"x": 1}}, uv="required")
    assert list(data.extensions) == ["credBlob", "credProtect", "hmac-secret", "minPinLength"]
    assert set(results(response)) == {"prf", "largeBlob", "credProps", "credBlob"}
    assertion, data = sign(authctl, verified.credential_public_key,
                           {"prf": {"eval": prf_eval(b"p")}, "getCredBlob": True, "largeBlob": {"read": True}},
                           "required", [verified.credential_id])
    assert results(assertion)["prf"] == {"results": results(response)["prf"]["results"]}
    assert data.extensions == {"credBlob": b"blob"}


def test_presence_not_value_decides_and_ids_are_strict_base64url(authctl):
    # §10.1.5: read and write both present is NotSupportedError, whatever `read` says.
    response, verified, _ = register(authctl, {"largeBlob": {"support": "required"}, "prf": {}})
    both, _ = sign(authctl, verified.credential_public_key, {"largeBlob": {"read": False, "write": "AAAA"}},
                   allow=[verified.credential_id])
    assert both.code == 17
    # §10.1.4: evalByCredential at registration is NotSupportedError even when empty.
    refused, _, _ = register(authctl, {"prf": {"evalByCredential": {}}}, user=b"user-2")
    assert refused.code == 17
    # A padded or standard-alphabet key is no base64url encoding (SyntaxError → syntaxError).
    padded = b64url(verified.credential_id) + "="
    bad, _ = sign(authctl, verified.credential_public_key, {"prf": {"evalByCredential": {padded: {"first": "AA"}}}},
                  allow=[verified.credential_id])
    assert bad.code == 29
