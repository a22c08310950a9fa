"""A vault written by a newer authctl, in a format this binary does not know, is refused by name
(`vaultTooNew`, exit 30) and left as it is: not migrated, compacted or repaired, and never
reported as `vaultCorrupted` (docs/vault-format.md, "Versions")."""
import hashlib
import json
import pathlib

import pytest

from conftest import PASSPHRASE

ORIGIN = "https://example.com"
# Commands that read, write, compact or change the key: none may touch a vault too new for it.
COMMANDS = [["list"], ["vault", "check"], ["vault", "info"], ["register", "--origin", ORIGIN],
            ["sign", "--origin", ORIGIN], ["vault", "compact"], ["sync", "status"]]


def every_file(vault: pathlib.Path) -> dict:
    """Every file under the vault (its store too), byte for byte; the lock files are empty and
    only ever created."""
    return {str(p.relative_to(vault)): p.read_bytes() for p in sorted(vault.rglob("*"))
            if p.is_file() and p.name != "lock"}


def set_header_version(vault: pathlib.Path, version: int, extra: bytes = b""):
    """The header with another format version (and `extra` bytes before the checksum, as a
    newer format might have), its checksum recomputed, so that only the version is wrong."""
    header = (vault / "header").read_bytes()
    body = header[:8] + version.to_bytes(2, "big") + header[10:131] + extra
    (vault / "header").write_bytes(body + hashlib.blake2b(body, digest_size=32).digest())


@pytest.fixture
def synced(authctl):
    """A vault with a passkey, two devices and its store: every file a newer binary may have made."""
    assert authctl.run("register", "--origin", ORIGIN).code == 0
    assert authctl.run("device", "add", "laptop", env={"AUTHCTL_NEW_PIN": "5678"}).code == 0
    return authctl


def refused_untouched(tool, before: dict, expect: str):
    for command in COMMANDS:
        result = tool.run("--json", *command)
        assert result.stdout == "", command
        error = json.loads(result.stderr)
        assert (result.code, error["error"]) == (30, "vaultTooNew"), (command, result.stderr)
        assert error["exitCode"] == 30
        assert "newer authctl" in error["message"] and expect in error["message"], error["message"]
        assert every_file(tool.vault) == before, command
        plain = tool.run(*command)
        assert plain.code == 30 and plain.stderr.startswith("authctl: error: vaultTooNew: "), plain.stderr


def test_a_header_one_version_higher_is_too_new_and_untouched(synced):
    set_header_version(synced.vault, 2)
    refused_untouched(synced, every_file(synced.vault), "format version 2")


def test_a_newer_header_of_another_size_is_too_new_not_corrupted(synced):
    set_header_version(synced.vault, 7, extra=b"\x00" * 40)
    refused_untouched(synced, every_file(synced.vault), "format version 7")


def test_a_header_of_version_0_is_damage(synced):
    set_header_version(synced.vault, 0)
    result = synced.run("--json", "list")
    assert (result.code, json.loads(result.stderr)["error"]) == (21, "vaultCorrupted")


def test_a_too_new_header_is_refused_before_the_passphrase_is_asked(synced):
    set_header_version(synced.vault, 2)
    result = synced.run("--json", "list", env={"AUTHCTL_PASSPHRASE": "wrong passphrase"})
    assert (result.code, json.loads(result.stderr)["error"]) == (30, "vaultTooNew")


def test_a_damaged_version_field_is_damage_not_too_new(synced):
    header = bytearray((synced.vault / "header").read_bytes())
    header[9] ^= 0x02  # version 3, the checksum left as it was
    (synced.vault / "header").write_bytes(bytes(header))
    result = synced.run("--json", "list")
    assert (result.code, json.loads(result.stderr)["error"]) == (21, "vaultCorrupted")


def commit_record(vault: pathlib.Path, record_id: bytes, record, passphrase=PASSPHRASE):
    """Appends one frame holding `record` and commits it, as docs/vault-format.md says a writer
    does ("log.N", "commit"): what a newer authctl would write, sealed with the vault key."""
    import struct
    import vault_reader
    from nacl import bindings as sodium
    opened = vault_reader.open_vault(vault, passphrase)
    key, vault_id, g = opened._vault_key, opened.vault_id, opened.generation
    fields = b"".join(struct.pack(">BI", tag, len(value)) + value for tag, value in sorted(record.fields.items()))
    batch = struct.pack(">I", 1) + record_id + struct.pack(">BQH", record.kind, record.version, len(record.fields)) + fields
    nonce = sodium.randombytes(24)
    sealed = nonce + sodium.crypto_aead_xchacha20poly1305_ietf_encrypt(
        batch, vault_reader._frame_ad(vault_id, g, opened.frame_count), nonce, key)
    log = (vault / f"log.{g}").read_bytes()[:opened.log_length] + struct.pack(">I", len(sealed)) + sealed
    (vault / f"log.{g}").write_bytes(log)
    commit = (vault / "commit").read_bytes()
    pointer = sodium.crypto_aead_xchacha20poly1305_ietf_decrypt(commit[24:], vault_reader._commit_ad(vault_id), commit[:24], key)
    pointer = struct.pack(">QQQ", g, opened.frame_count + 1, len(log)) + pointer[24:]
    nonce = sodium.randombytes(24)
    (vault / "commit").write_bytes(nonce + sodium.crypto_aead_xchacha20poly1305_ietf_encrypt(
        pointer, vault_reader._commit_ad(vault_id), nonce, key))


def test_a_sync_state_one_format_higher_is_too_new_and_untouched(synced):
    import struct
    import vault_reader
    opened = vault_reader.open_vault(synced.vault, PASSPHRASE)
    state_id = b"AUTHCTL-SYNCSTAT"
    state = opened.records[state_id]
    assert struct.unpack(">Q", state.fields[6]) == (3,)  # what this authctl writes
    newer = vault_reader.Record(kind=4, version=state.version + 1, fields=dict(state.fields), record_id=state_id)
    newer.fields[6] = struct.pack(">Q", 4)
    commit_record(synced.vault, state_id, newer)
    assert vault_reader.open_vault(synced.vault, PASSPHRASE).records[state_id].fields[6] == struct.pack(">Q", 4)
    refused_untouched(synced, every_file(synced.vault), "sync state is format 4")
