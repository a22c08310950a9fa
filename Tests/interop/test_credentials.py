"""One passkey looked at (credential show), its backup flags set by hand (credential set), and
moved between vaults (credential export / import), judged by py_webauthn."""
import json

import pytest
from webauthn import (generate_authentication_options, generate_registration_options, options_to_json,
                      verify_authentication_response, verify_registration_response)
from webauthn.helpers.cose import COSEAlgorithmIdentifier

from webauthn.helpers import parse_authenticator_data

from conftest import Authctl, unb64url

ORIGIN, RP_ID = "https://example.com", "example.com"
EXPORT = {"AUTHCTL_EXPORT_PASSPHRASE": "a passphrase for the export"}


def register(tool, *extra, alg=-7, uv="preferred"):
    options = generate_registration_options(rp_id=RP_ID, rp_name="RP", user_name="alice", user_id=b"alice",
                                            supported_pub_key_algs=[COSEAlgorithmIdentifier(alg)])
    as_json = json.loads(options_to_json(options))
    as_json["authenticatorSelection"] = {"residentKey": "required", "userVerification": uv}
    response = tool.register(as_json, ORIGIN, *extra).json
    verified = verify_registration_response(credential=response, expected_challenge=options.challenge,
                                            expected_rp_id=RP_ID, expected_origin=ORIGIN,
                                            supported_pub_key_algs=[COSEAlgorithmIdentifier(alg)])
    return response, verified


def sign(tool, verified, count=0, *extra):
    options = generate_authentication_options(rp_id=RP_ID)
    assertion = tool.sign(json.loads(options_to_json(options)), ORIGIN, *extra).json
    checked = verify_authentication_response(
        credential=assertion, expected_challenge=options.challenge, expected_rp_id=RP_ID, expected_origin=ORIGIN,
        credential_public_key=verified.credential_public_key, credential_current_sign_count=count)
    return assertion, checked


def show(tool, credential_id):
    return tool.run("--json", "credential", "show", "--", credential_id).json


def test_show_tells_algorithm_aaguid_profile_flags_and_counter(authctl):
    response, _ = register(authctl, "--profile", "windows-hello", alg=-257, uv="required")
    details = show(authctl, response["id"])
    assert details["id"] == response["id"] and details["rpId"] == RP_ID and details["userName"] == "alice"
    assert details["algorithm"] == "RS256" and details["publicKeyAlgorithm"] == -257
    assert details["publicKey"] == response["response"]["publicKey"]
    assert details["aaguid"] == "08987058-cadc-4b81-b6e1-30de50dcbe96" and details["profile"] == "windows-hello"
    assert (details["backupEligible"], details["backupState"], details["signCounter"]) == (False, False, "per-credential")
    assert details["userVerificationRequired"] is True
    text = authctl.run("credential", "show", "--", response["id"])
    assert text.code == 0 and "RS256 (-257)" in text.stdout and "windows-hello" in text.stdout
    missing = authctl.run("credential", "show", "AAAAAAAAAAAAAAAAAAAAAA")
    assert missing.code == 13 and "no passkey" in missing.stderr


def test_backup_state_set_by_hand_is_what_every_response_carries(authctl):
    response, verified = register(authctl)  # icloud-keychain: BE=1
    assert authctl.run("credential", "set", "--backup-state", "0", "--", response["id"]).code == 0
    _, checked = sign(authctl, verified)
    assert checked.credential_backed_up is False and checked.credential_device_type == "multi_device"
    assert show(authctl, response["id"])["backupStateSetByHand"] is True
    assert authctl.run("credential", "set", "--backup-state", "1", "--", response["id"]).code == 0
    _, checked = sign(authctl, verified)
    assert checked.credential_backed_up is True
    # BE=0 with BS=1 is refused; BE=0, BS=0 is a device-bound passkey from now on.
    refused = authctl.run("credential", "set", "--backup-eligible", "0", "--backup-state", "1", "--", response["id"])
    assert refused.code == 65 and "BE" in refused.stderr
    assert authctl.run("credential", "set", "--backup-eligible", "0", "--backup-state", "0", "--", response["id"]).code == 0
    _, checked = sign(authctl, verified)
    assert checked.credential_device_type == "single_device" and checked.credential_backed_up is False


@pytest.mark.parametrize("alg,uv", [(-7, "preferred"), (-8, "required"), (-257, "discouraged")])
def test_an_exported_passkey_signs_from_another_vault(authctl, tmp_path, alg, uv):
    response, verified = register(authctl, "--profile", "authctl", alg=alg, uv=uv)
    out = tmp_path / "alice.passkey"
    exported = authctl.run("credential", "export", "--kdf", "min", "--out", str(out), "--", response["id"], env=EXPORT)
    assert exported.code == 0, exported.stderr
    assert out.stat().st_mode & 0o777 == 0o600
    blob = out.read_bytes()
    assert blob.startswith(b"AUTHCTL-PASSKEY1")
    assert b"alice" not in blob and b"example.com" not in blob  # sealed, not merely encoded

    other = Authctl(tmp_path / "other")
    assert other.run("init", "--kdf", "min").code == 0
    wrong = other.run("credential", "import", str(out), env={"AUTHCTL_EXPORT_PASSPHRASE": "not it"})
    assert wrong.code == 20 and other.listing() == []
    imported = other.run("credential", "import", str(out), env=EXPORT)
    assert imported.code == 0, imported.stderr
    assert [c["id"] for c in other.listing()] == [response["id"]]
    # The RP's stored public key verifies what the other vault signs.
    assertion, _ = sign(other, verified)
    assert assertion["id"] == response["id"]
    again = other.run("credential", "import", str(out), env=EXPORT)
    assert again.code == 65 and "already holds" in again.stderr


def test_an_export_never_overwrites_and_a_damaged_one_is_refused(authctl, tmp_path):
    response, _ = register(authctl)
    out = tmp_path / "taken"
    out.write_text("mine")
    result = authctl.run("credential", "export", "--kdf", "min", "--out", str(out), "--", response["id"], env=EXPORT)
    assert result.code == 74 and out.read_text() == "mine"
    good = tmp_path / "good.passkey"
    assert authctl.run("credential", "export", "--kdf", "min", "--out", str(good), "--", response["id"], env=EXPORT).code == 0
    damaged = bytearray(good.read_bytes())
    damaged[-5] ^= 0x01
    bad = tmp_path / "bad.passkey"
    bad.write_bytes(bytes(damaged))
    other = Authctl(tmp_path / "other")
    assert other.run("init", "--kdf", "min").code == 0
    refused = other.run("credential", "import", str(bad), env=EXPORT)
    assert refused.code == 20 and other.listing() == []
    junk = tmp_path / "junk"
    junk.write_bytes(b"\x00" * 64)
    assert other.run("credential", "import", str(junk), env=EXPORT).code == 65


def test_a_security_key_counts_with_one_global_counter(authctl):
    counts = []
    first, first_verified = register(authctl, "--profile", "security-key")
    options = generate_registration_options(rp_id="other.example.com", rp_name="RP", user_name="bob", user_id=b"bob")
    as_json = json.loads(options_to_json(options))
    second = authctl.register(as_json, "https://other.example.com", "--profile", "security-key").json
    for origin, rp_id in [(ORIGIN, RP_ID), ("https://other.example.com", "other.example.com"), (ORIGIN, RP_ID)]:
        auth = generate_authentication_options(rp_id=rp_id)
        assertion = authctl.sign(json.loads(options_to_json(auth)), origin).json
        counts.append(parse_authenticator_data(unb64url(assertion["response"]["authenticatorData"])).sign_count)
    assert counts == [1, 2, 3]  # one counter across both passkeys
    assert show(authctl, first["id"])["signCounter"] == "global"
    # Per credential, each passkey counts on its own.
    per, _ = register(authctl, "--profile", "security-key", "--counter", "per-credential")
    assert show(authctl, per["id"])["signCounter"] == "per-credential"


def test_extension_state_travels_with_an_exported_passkey(authctl, tmp_path):
    options = generate_registration_options(rp_id=RP_ID, rp_name="RP", user_name="erin", user_id=b"erin")
    as_json = json.loads(options_to_json(options))
    as_json["authenticatorSelection"] = {"residentKey": "required", "userVerification": "required"}
    as_json["extensions"] = {"credentialProtectionPolicy": "userVerificationRequired",
                             "credBlob": "Y3JlZC1ibG9i", "largeBlob": {"support": "required"}}
    response = authctl.register(as_json, ORIGIN).json
    auth = json.loads(options_to_json(generate_authentication_options(rp_id=RP_ID)))
    auth["allowCredentials"] = [{"type": "public-key", "id": response["id"]}]
    auth["userVerification"] = "required"
    auth["extensions"] = {"largeBlob": {"write": "bGFyZ2UtYmxvYg"}}
    assert authctl.sign(auth, ORIGIN).json["clientExtensionResults"]["largeBlob"] == {"written": True}
    details = show(authctl, response["id"])
    assert (details["credProtect"], details["credBlobBytes"], details["largeBlobBytes"]) == (3, 9, 10)

    out = tmp_path / "erin.passkey"
    assert authctl.run("credential", "export", "--kdf", "min", "--out", str(out), "--", response["id"], env=EXPORT).code == 0
    other = Authctl(tmp_path / "other")
    assert other.run("init", "--kdf", "min").code == 0
    assert other.run("credential", "import", str(out), env=EXPORT).code == 0
    assert show(other, response["id"])["credProtect"] == 3
    auth["extensions"] = {"largeBlob": {"read": True}, "getCredBlob": True}
    read = other.sign(auth, ORIGIN).json["clientExtensionResults"]
    assert read["largeBlob"] == {"blob": "bGFyZ2UtYmxvYg"} and read["getCredBlob"] == "Y3JlZC1ibG9i"


def test_an_imported_passkey_on_the_global_counter_never_counts_back(authctl, tmp_path):
    response, verified = register(authctl, "--profile", "security-key")
    count = 0
    for _ in range(3):
        _, checked = sign(authctl, verified, count)
        count = checked.new_sign_count
    out = tmp_path / "key.passkey"
    assert authctl.run("credential", "export", "--kdf", "min", "--out", str(out), "--", response["id"], env=EXPORT).code == 0
    other = Authctl(tmp_path / "other")
    assert other.run("init", "--kdf", "min", "--profile", "security-key").code == 0
    assert other.run("credential", "import", str(out), env=EXPORT).code == 0
    _, checked = sign(other, verified, count)  # py_webauthn refuses a count that does not grow
    assert checked.new_sign_count == count + 1
