"""An independent reader (vault_reader.py, written from docs/vault-format.md alone) reads what authctl wrote.

If these fail while authctl's own tests pass, the format document no longer describes the vault.
"""
import hashlib
import os
import struct

import pytest
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec

import vault_reader
from conftest import PASSPHRASE, PIN, b64url, log_file, unb64url
from vault_reader import Corrupted, Locked, PinRequired, WrongPin, open_vault

ORIGIN = "https://example.com"


def register(authctl, name: str, *extra: str) -> str:
    """A passkey for `name` at example.com, made with the CLI's flags; returns its credential id."""
    result = authctl.run("register", "--origin", ORIGIN, "--user-name", name,
                         "--user-id", b64url(f"user-{name}".encode()), *extra)
    return result.json["id"]


def sign(authctl, credential_id: str) -> dict:
    return authctl.run("sign", "--origin", ORIGIN, "--credential", credential_id).json


def read(authctl):
    return open_vault(authctl.vault, PASSPHRASE.encode())


def by_id(vault) -> dict:
    return {b64url(c["credential_id"]): c for c in vault.credentials()}


def record_of(vault, credential_id: str):
    return vault.records[by_id(vault)[credential_id]["record_id"]]


def point_of(der_private_key: bytes) -> bytes:
    key = serialization.load_der_private_key(der_private_key, password=None)
    assert isinstance(key.curve, ec.SECP256R1)
    return key.public_key().public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)


def assert_matches_listing(vault, listing: list):
    mine = by_id(vault)
    assert sorted(mine) == sorted(entry["id"] for entry in listing)
    for entry in listing:
        cred = mine[entry["id"]]
        assert cred["rp_id"] == entry["rpId"]
        assert cred["user_name"] == entry["userName"]
        assert b64url(cred["user_handle"]) == entry["userHandle"]
        assert cred["sign_count"] == entry["signCount"]
        spki = unb64url(entry["publicKey"])
        assert cred["public_point"] == spki[-65:]
        assert len(cred["public_point"]) == 65 and cred["public_point"][0] == 0x04


@pytest.fixture
def populated(authctl):
    """Four passkeys made, one deleted, one counting signatures signed with three times."""
    ids = {
        "plain": register(authctl, "plain", "--user-verification", "discouraged"),
        "verified": register(authctl, "verified"),  # "preferred" + an enrolled PIN → made with UV
        "counter": register(authctl, "counter", "--sign-counter"),
        "doomed": register(authctl, "doomed", "--user-verification", "discouraged"),
    }
    assert authctl.run("delete", ids.pop("doomed")).code == 0
    for _ in range(3):
        sign(authctl, ids["counter"])
    return authctl, ids


def test_credentials_match_listing(populated):
    authctl, ids = populated
    listing = authctl.listing()
    vault = read(authctl)
    assert_matches_listing(vault, listing)
    mine = by_id(vault)
    assert len(mine) == 3
    assert mine[ids["counter"]]["sign_count"] == 3
    assert mine[ids["plain"]]["sign_count"] == 0
    assert mine[ids["plain"]]["requires_uv"] is False
    assert mine[ids["verified"]]["requires_uv"] is True
    assert mine[ids["counter"]]["requires_uv"] is True
    # Each signature is a new revision of the counting passkey; the ones it replaced are gone
    # (they had nowhere to upload), so one revision of it remains, with the count.
    assert len([r for r in vault.revisions() if vault.item_id(r) == vault.item_id(record_of(vault, ids["counter"]))]) == 1
    assert record_of(vault, ids["plain"]).version == 1
    assert vault.generation == 0
    assert len(vault.vault_id) == 16


def test_private_key_without_user_verification(authctl):
    credential_id = register(authctl, "plain", "--user-verification", "discouraged")
    vault = read(authctl)
    cred = by_id(vault)[credential_id]
    assert cred["requires_uv"] is False
    der = vault.private_key_der(record_of(vault, credential_id), None)
    assert point_of(der) == cred["public_point"]

    private_key = serialization.load_der_private_key(der, password=None)
    message = os.urandom(64)
    signature = private_key.sign(message, ec.ECDSA(hashes.SHA256()))
    (entry,) = [e for e in authctl.listing() if e["id"] == credential_id]
    listed = serialization.load_der_public_key(unb64url(entry["publicKey"]))
    listed.verify(signature, message, ec.ECDSA(hashes.SHA256()))
    with pytest.raises(InvalidSignature):
        listed.verify(signature, message + b"!", ec.ECDSA(hashes.SHA256()))


def test_private_key_with_user_verification_needs_the_pin(authctl):
    credential_id = register(authctl, "verified")
    vault = read(authctl)
    record = record_of(vault, credential_id)
    assert by_id(vault)[credential_id]["requires_uv"] is True
    with pytest.raises(PinRequired):
        vault.private_key_der(record, None)
    with pytest.raises(WrongPin):
        vault.private_key_der(record, b"0000" if PIN != "0000" else b"1111")
    der = vault.private_key_der(record, PIN.encode())
    assert point_of(der) == by_id(vault)[credential_id]["public_point"]
    # The reader only reads: a wrong PIN tried here costs no attempt in the vault.
    assert authctl.run("sign", "--origin", ORIGIN, "--credential", credential_id).code == 0


def test_wrong_passphrase_is_locked(populated):
    authctl, _ = populated
    with pytest.raises(Locked):
        open_vault(authctl.vault, b"not " + PASSPHRASE.encode())


@pytest.mark.parametrize("where", ["length field", "first nonce", "middle", "last byte"])
def test_flipped_log_byte_is_corrupted(populated, where):
    authctl, _ = populated
    path = log_file(authctl.vault)
    data = bytearray(path.read_bytes())
    index = {"length field": 3, "first nonce": 10, "middle": len(data) // 2, "last byte": len(data) - 1}[where]
    data[index] ^= 0x01
    path.write_bytes(bytes(data))
    with pytest.raises(Corrupted):
        read(authctl)
    assert authctl.run("vault", "check").code != 0  # authctl agrees


@pytest.mark.parametrize("name,index", [("header", 0), ("header", 30), ("header", 100), ("header", 162),
                                        ("commit", 0), ("commit", 40), ("commit", 63)])
def test_flipped_header_or_commit_byte_is_corrupted(populated, name, index):
    authctl, _ = populated
    path = authctl.vault / name
    data = bytearray(path.read_bytes())
    data[index] ^= 0x01
    path.write_bytes(bytes(data))
    with pytest.raises(Corrupted):
        read(authctl)


def test_structural_checks(populated):
    authctl, _ = populated
    vault = read(authctl)
    log = log_file(authctl.vault)
    original = {p: p.read_bytes() for p in (log, authctl.vault / "header", authctl.vault / "commit")}

    def restore():
        for p, data in original.items():
            p.write_bytes(data)

    # A truncated log.
    log.write_bytes(original[log][:-1])
    with pytest.raises(Corrupted, match="shorter"):
        read(authctl)
    restore()
    # A header of the wrong size.
    (authctl.vault / "header").write_bytes(original[authctl.vault / "header"] + b"\0")
    with pytest.raises(Corrupted):
        read(authctl)
    restore()
    # A header whose version is 2 (checksum recomputed): refused, not guessed at.
    header = bytearray(original[authctl.vault / "header"])
    header[8:10] = struct.pack(">H", 2)
    header[131:] = hashlib.blake2b(bytes(header[:131]), digest_size=32).digest()
    (authctl.vault / "header").write_bytes(bytes(header))
    with pytest.raises(Corrupted, match="version 2"):
        read(authctl)
    restore()
    # An edited salt with a recomputed checksum: the unwrap fails, so it reads as a wrong passphrase.
    header = bytearray(original[authctl.vault / "header"])
    header[30] ^= 0x01
    header[131:] = hashlib.blake2b(bytes(header[:131]), digest_size=32).digest()
    (authctl.vault / "header").write_bytes(bytes(header))
    with pytest.raises(Locked):
        read(authctl)
    restore()
    assert by_id(read(authctl)) == by_id(vault)


def test_unfinished_append_rules(populated):
    authctl, ids = populated
    log = log_file(authctl.vault)
    committed = log.read_bytes()
    expected = by_id(read(authctl))
    # Up to one (partial) frame after the committed length is a crash's leftover: ignored.
    for tail in (b"\0\0", struct.pack(">I", 100) + b"x" * 60, struct.pack(">I", 50) + b"x" * 50):
        log.write_bytes(committed + tail)
        assert by_id(read(authctl)) == expected
        assert authctl.run("vault", "check").code == 0
    # More than one frame after it: the commit is older than the log.
    log.write_bytes(committed + struct.pack(">I", 50) + b"x" * 51)
    with pytest.raises(Corrupted, match="more than one frame"):
        read(authctl)
    log.write_bytes(committed)

    # A commit put back by one frame reads as the earlier state; by two, as corruption. A passkey
    # made without UV, signed without UV, writes exactly one frame per signature (its counter);
    # a PIN check would write its failure count too.
    quiet = register(authctl, "quiet", "--sign-counter", "--user-verification", "discouraged")
    quiet_sign = lambda: authctl.run("sign", "--origin", ORIGIN, "--credential", quiet,  # noqa: E731
                                     "--user-verification", "discouraged").json
    commit = authctl.vault / "commit"
    quiet_sign()
    before_one = commit.read_bytes()
    quiet_sign()
    after_one = commit.read_bytes()
    quiet_sign()
    assert by_id(read(authctl))[quiet]["sign_count"] == 3
    commit.write_bytes(after_one)
    assert by_id(read(authctl))[quiet]["sign_count"] == 2
    commit.write_bytes(before_one)
    with pytest.raises(Corrupted):
        read(authctl)


def test_compaction_keeps_credentials(populated):
    authctl, ids = populated
    before = read(authctl)
    credentials = by_id(before)
    assert authctl.run("vault", "compact").code == 0
    assert log_file(authctl.vault).name == f"log.{before.generation + 1}"
    after = read(authctl)
    assert after.generation == before.generation + 1
    assert after.vault_id == before.vault_id
    assert by_id(after) == credentials
    assert_matches_listing(after, authctl.listing())
    # Versions survive compaction (the settings record's counts its PIN checks); tombstones and
    # superseded versions do not.
    assert after.settings.version == before.settings.version > 1
    assert after.frame_count == 1
    assert {r.kind for r in after.records.values()} == {vault_reader.KIND_CREDENTIAL, vault_reader.KIND_SETTINGS}
    # Sealed keys still open: their associated data does not involve the generation.
    plain = after.private_key_der(record_of(after, ids["plain"]))
    assert point_of(plain) == credentials[ids["plain"]]["public_point"]
    verified = after.private_key_der(record_of(after, ids["verified"]), PIN.encode())
    assert point_of(verified) == credentials[ids["verified"]]["public_point"]
    # And the generation after that.
    sign(authctl, ids["counter"])
    assert authctl.run("vault", "compact").code == 0
    again = read(authctl)
    assert again.generation == before.generation + 2
    assert by_id(again)[ids["counter"]]["sign_count"] == 4


@pytest.mark.parametrize("alg,profile", [("eddsa", "authctl"), ("rs256", "windows-hello"), ("es256", "security-key")])
def test_every_algorithm_profile_and_counter_reads_back(authctl, alg, profile):
    """The reader, knowing only docs/vault-format.md, finds each passkey's algorithm, key, profile,
    AAGUID and counter mode, and its opened private key is the pair of the listed public key."""
    credential_id = register(authctl, alg, "--profile", profile, "--alg", alg, "--user-verification", "discouraged")
    vault = read(authctl)
    cred = by_id(vault)[credential_id]
    (entry,) = [e for e in authctl.listing() if e["id"] == credential_id]
    assert cred["algorithm"] == entry["publicKeyAlgorithm"] == {"eddsa": -8, "rs256": -257, "es256": -7}[alg]
    assert cred["profile"] == profile
    details = authctl.run("--json", "credential", "show", "--", credential_id).json
    assert cred["aaguid"].hex() == details["aaguid"].replace("-", "")
    assert cred["global_counter"] == (profile == "security-key") and cred["counts_signatures"] == (profile != "authctl")
    private_key = serialization.load_der_private_key(vault.private_key_der(record_of(vault, credential_id), None), None)
    listed = serialization.load_der_public_key(unb64url(entry["publicKey"]))
    own = private_key.public_key().public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    assert own == listed.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    if alg != "es256":  # the COSE_Key, not a bare point
        import cbor2
        assert cbor2.loads(cred["public_point"])[3] == cred["algorithm"]


def test_the_attestation_ca_reads_back(authctl):
    from cryptography import x509
    ca = read(authctl).attestation_ca()
    pem = authctl.run("ca", "export").stdout.encode()
    assert x509.load_der_x509_certificate(ca["root"]) == x509.load_pem_x509_certificate(pem)
    for cert, key in (("root", "rootKey"), ("intermediate", "intermediateKey")):
        certificate = x509.load_der_x509_certificate(ca[cert])
        private = serialization.load_der_private_key(ca[key], None)
        assert certificate.public_key().public_numbers() == private.public_key().public_numbers()
    x509.load_der_x509_certificate(ca["intermediate"]).verify_directly_issued_by(x509.load_der_x509_certificate(ca["root"]))


def test_a_pin_check_is_one_commit(authctl):
    """A sign-in with the biometric PIN writes one frame, the settings record's failure count as
    the guess left it (it wrote two: one more failure before the try, none after it); a wrong PIN
    one frame too, counted before `failed` shows. A synced passkey's sign-in writes nothing else."""
    credential_id = register(authctl, "verified")
    frames = read(authctl).frame_count

    def failures(vault):
        return struct.unpack(">I", vault.settings.fields[vault_reader.S_FAILED_ATTEMPTS])[0]

    sign(authctl, credential_id)
    vault = read(authctl)
    assert (vault.frame_count, failures(vault)) == (frames + 1, 0)
    wrong = authctl.run("sign", "--origin", ORIGIN, "--credential", credential_id, env={"AUTHCTL_PIN": "0000"})
    assert wrong.code == 11, wrong.stderr
    vault = read(authctl)
    assert (vault.frame_count, failures(vault)) == (frames + 2, 1)
    sign(authctl, credential_id)
    vault = read(authctl)
    assert (vault.frame_count, failures(vault)) == (frames + 3, 0)


def test_a_vault_holding_replicas_reads_back(authctl, tmp_path):
    """A device in a vault of its own (`device add --vault-dir`) keeps what it downloads from the
    store as replica records (tags 40, 41, 43; tag 42 naming the vault whose biometry seal the key
    carries): the reader finds every passkey `list` shows there, and opens a replica's private key
    — sealed under the account key, and under the biometry key with the first vault's id — with
    the second device's own PIN."""
    from conftest import Authctl
    desk_pin = "9753"
    second = tmp_path / "desk-vault"
    added = authctl.run("device", "add", "desk", "--vault-dir", str(second), "--kdf", "min", env={"AUTHCTL_NEW_PIN": desk_pin})
    assert added.code == 0, added.stderr
    desk = Authctl(second)
    desk.env["AUTHCTL_PIN"] = desk_pin
    made = {"verified": register(authctl, "verified"), "plain": register(authctl, "plain", "--user-verification", "discouraged")}
    own = register(desk, "desk-own", "--user-verification", "discouraged")
    listing = desk.listing()  # the desk downloads the first vault's passkeys (no delays)
    assert sorted(e["id"] for e in listing) == sorted([*made.values(), own])

    vault = open_vault(second, PASSPHRASE.encode())
    replicas = vault.replicas()
    assert {b64url(r.fields[vault_reader.T_CREDENTIAL_ID]) for r in replicas} == set(made.values())
    first_id = read(authctl).vault_id
    by_credential = {b64url(r.fields[vault_reader.T_CREDENTIAL_ID]): r for r in replicas}
    assert by_credential[made["verified"]].fields[vault_reader.T_UV_VAULT_ID] == first_id != vault.vault_id
    assert all(vault_reader.T_SEALED_PRIVATE_KEY not in r.fields and vault_reader.T_REPLICA_SEALED_KEY in r.fields for r in replicas)
    assert_matches_listing(type("Held", (), {"credentials": lambda self: vault.credentials(replicas=True)})(), listing)
    # Without the replicas, the desk's own revisions alone: its one passkey.
    assert [b64url(c["credential_id"]) for c in vault.credentials()] == [own]

    points = {b64url(c["credential_id"]): c["public_point"] for c in vault.credentials(replicas=True)}
    with pytest.raises(PinRequired):
        vault.private_key_der(by_credential[made["verified"]])
    assert point_of(vault.private_key_der(by_credential[made["verified"]], desk_pin.encode())) == points[made["verified"]]
    assert point_of(vault.private_key_der(by_credential[made["plain"]])) == points[made["plain"]]
