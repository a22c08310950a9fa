"""A vault written before the store's append log and the sync state record (fixtures/main-vault,
made by fixtures/make_main_vault.py with that version's binary) opens with this one and is
migrated: its first writer replaces the first store layout (cloud/objects/) by the current one,
filled from the vault, and writes the sync state; every device still holds and signs with the
passkey, which py_webauthn verifies."""
import json
import pathlib
import shutil

from webauthn import generate_authentication_options, options_to_json, verify_authentication_response, verify_registration_response
from webauthn.helpers import base64url_to_bytes
from webauthn.helpers.structs import UserVerificationRequirement

import vault_reader
from conftest import Authctl

FIXTURES = pathlib.Path(__file__).parent / "fixtures"


def copy_fixture(tmp_path) -> Authctl:
    vault = tmp_path / "vault"
    shutil.copytree(FIXTURES / "main-vault", vault)
    for path in [vault, *vault.rglob("*")]:
        path.chmod(0o700 if path.is_dir() else 0o600)
    tool = Authctl(vault)
    tool.env.update(AUTHCTL_PASSPHRASE="fixture", AUTHCTL_PIN="1111")
    return tool


def sign(tool, public_key, *extra, pin):
    options = generate_authentication_options(rp_id="example.com", user_verification=UserVerificationRequirement.REQUIRED)
    result = tool.sign(json.loads(options_to_json(options)), "https://example.com", *extra, env={"AUTHCTL_PIN": pin})
    assert result.code == 0, result.stderr
    return verify_authentication_response(credential=result.json, expected_challenge=options.challenge, expected_rp_id="example.com",
                                          expected_origin="https://example.com", credential_public_key=public_key,
                                          credential_current_sign_count=0, require_user_verification=True)


def test_an_older_vault_opens_and_is_migrated(tmp_path):
    made = json.loads((FIXTURES / "registration.json").read_text())
    registration = verify_registration_response(credential=made["response"], expected_challenge=base64url_to_bytes(made["options"]["challenge"]),
                                                expected_rp_id="example.com", expected_origin="https://example.com",
                                                require_user_verification=True)
    tool = copy_fixture(tmp_path)
    # A reader looks without migrating anything: the old store stays as it was.
    listed = tool.run("--json", "--device", "laptop", "list")
    assert listed.code == 0, listed.stderr
    assert [c["id"] for c in listed.json["credentials"]] == [made["response"]["id"]]
    assert (tool.vault / "cloud" / "objects").is_dir()
    # The first writer migrates: the laptop signs, with its own PIN.
    verified = sign(tool, registration.credential_public_key, "--device", "laptop", pin="2222")
    assert verified.user_verified and verified.credential_backed_up
    assert not (tool.vault / "cloud" / "objects").exists()
    assert sorted(p.name for p in (tool.vault / "cloud").iterdir()) == ["ids", "lock", "log", "meta", "snapshot", "state"]
    assert list((tool.vault / "cloud" / "log").iterdir()), "the vault's revisions were uploaded again"
    status = tool.run("--json", "sync", "status").json
    assert status["storeInUse"] and status.get("storeProblem") is None, status
    assert tool.run("vault", "check").code == 0
    # The sync state record is there, and an independent reader still reads the vault.
    vault = vault_reader.open_vault(tool.vault, b"fixture")
    assert any(r.kind == 4 for r in vault.records.values())
    state = vault.records[b"AUTHCTL-SYNCSTAT"]
    assert state.fields[6] == (3).to_bytes(8, "big"), "the sync state is written in this version's format"
    # A device added now gets the passkey from the migrated store.
    assert tool.run("device", "add", "tablet", env={"AUTHCTL_NEW_PIN": "3333"}).code == 0
    verified = sign(tool, registration.credential_public_key, "--device", "tablet", pin="3333")
    assert verified.credential_backed_up


def test_a_format_1_sync_state_opens_and_is_migrated(tmp_path):
    """A sync state record as the previous version wrote it (format 1: tags 1–6, no knowledge of
    the account's directory, settings or collected passkeys) opens; the first writer rewrites it
    in format 3, with the device directory it publishes, and its devices still sign."""
    from test_vault_too_new import commit_record
    made = json.loads((FIXTURES / "registration.json").read_text())
    registration = verify_registration_response(credential=made["response"], expected_challenge=base64url_to_bytes(made["options"]["challenge"]),
                                                expected_rp_id="example.com", expected_origin="https://example.com",
                                                require_user_verification=True)
    tool = copy_fixture(tmp_path)
    sign(tool, registration.credential_public_key, "--device", "laptop", pin="2222")  # migrated once: a format-3 record
    state_id = b"AUTHCTL-SYNCSTAT"
    state = vault_reader.open_vault(tool.vault, b"fixture").records[state_id]
    older = vault_reader.Record(kind=4, version=state.version + 1, record_id=state_id,
                                fields={tag: value for tag, value in state.fields.items() if tag <= 6})
    older.fields[6] = (1).to_bytes(8, "big")
    commit_record(tool.vault, state_id, older, passphrase=b"fixture")
    listed = tool.run("--json", "--device", "laptop", "list")
    assert listed.code == 0, listed.stderr
    assert [c["id"] for c in listed.json["credentials"]] == [made["response"]["id"]]
    verified = sign(tool, registration.credential_public_key, "--device", "laptop", pin="2222")
    assert verified.user_verified
    state = vault_reader.open_vault(tool.vault, b"fixture").records[state_id]
    assert state.fields[6] == (3).to_bytes(8, "big") and 12 in state.fields, sorted(state.fields)
    assert tool.run("vault", "check").code == 0
