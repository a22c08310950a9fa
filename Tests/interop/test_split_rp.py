"""An RP the vault splits by user (docs/vault-format.md, "Index"): with the split count set low
($AUTHCTL_INDEX_SPLIT_RECORDS=4), one RP's passkeys on two devices are filed in shards by user
handle, which the independent reader finds and checks against the log; sign-ins naming a passkey
(on both devices), a registration replacing a user's passkey, `credential show` and `delete` by
id all answer as on a vault that is not split, and py_webauthn accepts every response — and
refuses a tampered one."""
import dataclasses
import json

import pytest
from webauthn import (generate_authentication_options, generate_registration_options, options_to_json,
                      verify_authentication_response, verify_registration_response)
from webauthn.helpers.exceptions import InvalidAuthenticationResponse
from webauthn.helpers.structs import (AuthenticatorSelectionCriteria, PublicKeyCredentialDescriptor,
                                      ResidentKeyRequirement, UserVerificationRequirement)

import vault_reader
from conftest import PASSPHRASE, b64url, tamper, unb64url

RP_ID, ORIGIN = "example.com", "https://example.com"
LAPTOP_PIN = "9753"


def register(tool, user: bytes):
    options = generate_registration_options(
        rp_id=RP_ID, rp_name="RP", user_name=user.decode(), user_id=user,
        authenticator_selection=AuthenticatorSelectionCriteria(
            resident_key=ResidentKeyRequirement.REQUIRED, user_verification=UserVerificationRequirement.DISCOURAGED))
    result = tool.register(json.loads(options_to_json(options)), ORIGIN)
    assert result.code == 0, result.stderr
    verified = verify_registration_response(credential=result.json, expected_challenge=options.challenge,
                                            expected_rp_id=RP_ID, expected_origin=ORIGIN)
    return result.json["id"], verified.credential_public_key


def sign(tool, credential_id: str, public_key: bytes, *extra, pin=None):
    options = generate_authentication_options(
        rp_id=RP_ID, user_verification=UserVerificationRequirement.DISCOURAGED,
        allow_credentials=[PublicKeyCredentialDescriptor(id=unb64url(credential_id))])
    result = tool.sign(json.loads(options_to_json(options)), ORIGIN, *extra, env={"AUTHCTL_PIN": pin} if pin else None)
    assert result.code == 0, result.stderr
    response = result.json
    verified = verify_authentication_response(credential=response, expected_challenge=options.challenge,
                                              expected_rp_id=RP_ID, expected_origin=ORIGIN,
                                              credential_public_key=public_key, credential_current_sign_count=0)
    assert response["id"] == credential_id
    return response, verified, options.challenge


@pytest.fixture
def split(authctl):
    authctl.env["AUTHCTL_INDEX_SPLIT_RECORDS"] = "4"
    added = authctl.run("device", "add", "laptop", env={"AUTHCTL_NEW_PIN": LAPTOP_PIN})
    assert added.code == 0, added.stderr
    keys = {}
    for n in range(30):
        credential_id, public_key = register(authctl, f"user-{n}".encode())
        keys[credential_id] = (f"user-{n}".encode(), public_key)
    return authctl, keys


def test_a_big_rp_is_split_by_user_and_every_command_answers_as_before(split):
    tool, keys = split
    vault = vault_reader.open_vault(tool.vault, PASSPHRASE.encode())
    assert vault.index is not None and vault.index.splits and RP_ID.encode() in vault.index.splits, \
        "the RP's partition should be split once it outgrew four revisions"
    shards = {p for p in (vault.index.partition_of(r) for _, r in vault.index.records.values()) if p and p.startswith(b"example.com\xff")}
    assert len(shards) > 2
    # Index format 4: one 32-byte bound per shard, at or above every passkey the shard holds (the
    # reader checks it as it opens the vault) — and the check says no to a bound set too low.
    bounds = vault.index.bounds[RP_ID.encode()]
    assert len(bounds) == vault.index.splits[RP_ID.encode()] and all(len(b) == 32 for b in bounds)
    newest = max(vault_reader.shard_place(r, i) for i, (_, r) in vault.index.records.items()
                 if vault.index.partition_of(r) in shards)
    assert max(bounds) >= newest > bytes(32)
    lowered = dataclasses.replace(vault.index, bounds={RP_ID.encode(): [bytes(32)] * len(bounds)})
    with pytest.raises(vault_reader.Corrupted, match="bound of shard"):
        vault_reader._check_index(lowered, {i: r for i, (_, r) in vault.index.records.items()})

    ids = list(keys)
    for credential_id in ids[::7]:
        response, _, challenge = sign(tool, credential_id, keys[credential_id][1])
        assert unb64url(response["response"]["userHandle"]) == keys[credential_id][0]
        # The laptop holds it too (no delay set: it arrived at once).
        sign(tool, credential_id, keys[credential_id][1], "--device", "laptop", pin=LAPTOP_PIN)
    with pytest.raises(InvalidAuthenticationResponse):
        verify_authentication_response(credential=tamper(response, "signature"), expected_challenge=challenge,
                                       expected_rp_id=RP_ID, expected_origin=ORIGIN,
                                       credential_public_key=keys[response["id"]][1],
                                       credential_current_sign_count=0)

    # A new passkey for user-3 replaces the old one, on both devices.
    old = next(i for i, (user, _) in keys.items() if user == b"user-3")
    new, _ = register(tool, b"user-3")
    assert tool.run("credential", "show", "--", old).code == 13
    shown = tool.run("--json", "credential", "show", "--", new).json
    assert shown["id"] == new and shown["rpId"] == RP_ID

    # Delete by id: gone from every device and from the listing.
    gone = ids[10]
    assert tool.run("delete", "--", gone).code == 0
    missing = tool.run("credential", "show", "--", gone)
    assert missing.code == 13 and "no passkey" in missing.stderr
    listed = {c["id"] for c in tool.run("--json", "list").json["credentials"]}
    assert listed == (set(ids) - {old, gone}) | {new}
    laptop = {c["id"] for c in tool.run("--json", "--device", "laptop", "list").json["credentials"]}
    assert laptop == listed

    # The vault checks, and the independent reader agrees with the index after all of it.
    check = tool.run("vault", "check")
    assert check.code == 0, check.stderr
    vault_reader.open_vault(tool.vault, PASSPHRASE.encode())
