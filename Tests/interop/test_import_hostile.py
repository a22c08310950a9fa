"""Crafted exported passkeys, sealed exactly as docs/vault-format.md says ("Exported passkeys"), so
that `credential import` meets the payload itself: each is refused as badInput and leaves the vault
as it was; a well-formed one (built the same way) is accepted, so the refusals are the payloads'."""
import os
import struct
import time

import cbor2
import nacl.bindings
import nacl.pwhash
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519

PASSPHRASE = b"crafted"
OPS, MEM = 1, 8192  # libsodium's minimum limits


def seal(plaintext: bytes) -> bytes:
    salt = os.urandom(16)
    header = b"AUTHCTL-PASSKEY1" + struct.pack(">QQ", OPS, MEM) + salt
    key = nacl.pwhash.argon2id.kdf(32, PASSPHRASE, salt, opslimit=OPS, memlimit=MEM)
    nonce = os.urandom(24)
    return header + nonce + nacl.bindings.crypto_aead_xchacha20poly1305_ietf_encrypt(plaintext, header, nonce, key)


def der(key) -> bytes:
    return key.private_bytes(serialization.Encoding.DER, serialization.PrivateFormat.TraditionalOpenSSL
                             if not isinstance(key, ed25519.Ed25519PrivateKey) else serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


def tlv(tag: int, value: bytes) -> bytes:
    n = len(value)
    length = bytes([n]) if n < 128 else bytes([0x81, n]) if n < 256 else bytes([0x82, n >> 8, n & 0xFF])
    return bytes([tag]) + length + value


def compressed_p256() -> bytes:
    """RFC 5915 ECPrivateKey whose public key is in compressed form (02/03 ‖ x)."""
    key = ec.generate_private_key(ec.SECP256R1())
    d = key.private_numbers().private_value.to_bytes(32, "big")
    point = key.public_key().public_bytes(serialization.Encoding.X962, serialization.PublicFormat.CompressedPoint)
    curve = bytes.fromhex("06082a8648ce3d030107")
    return tlv(0x30, tlv(0x02, b"\x01") + tlv(0x04, d) + tlv(0xA0, curve) + tlv(0xA1, tlv(0x03, b"\x00" + point)))


def mismatched_p256() -> bytes:
    """A P-256 scalar with another key's public point."""
    key, other = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    d = key.private_numbers().private_value.to_bytes(32, "big")
    point = other.public_key().public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)
    curve = bytes.fromhex("06082a8648ce3d030107")
    return tlv(0x30, tlv(0x02, b"\x01") + tlv(0x04, d) + tlv(0xA0, curve) + tlv(0xA1, tlv(0x03, b"\x00" + point)))


def payload(**changes) -> dict:
    fields = {1: os.urandom(16), 2: "example.com", 3: os.urandom(16), 4: "mallory", 5: "Mallory", 6: 1_700_000_000,
              7: 0, 8: True, 9: True, 10: der(ec.generate_private_key(ec.SECP256R1())), 11: False, 12: False,
              13: "icloud-keychain", 14: bytes.fromhex("fbfc3007154e4ecc8c0b6e020557d7bd")}
    for key, value in changes.items():
        number = int(key[1:])
        if value is None:
            fields.pop(number)
        else:
            fields[number] = value
    return fields


HOSTILE = {
    "secp256k1 key": lambda: cbor2.dumps(payload(f10=der(ec.generate_private_key(ec.SECP256K1())))),
    "brainpool key": lambda: cbor2.dumps(payload(f10=der(ec.generate_private_key(ec.BrainpoolP256R1())))),
    "mismatched key pair": lambda: cbor2.dumps(payload(f10=mismatched_p256())),
    "control characters in the RP ID": lambda: cbor2.dumps(payload(f2="\x1b[31mevil\n.com")),
    "empty RP ID": lambda: cbor2.dumps(payload(f2="")),
    "unknown profile": lambda: cbor2.dumps(payload(f13="no-such-profile")),
    "EdDSA under icloud-keychain": lambda: cbor2.dumps(payload(f10=der(ed25519.Ed25519PrivateKey.generate()))),
    "AAGUID of 3 bytes": lambda: cbor2.dumps(payload(f14=b"abc")),
    "counter with no value left": lambda: cbor2.dumps(payload(f7=0xFFFFFFFF, f11=True)),
    "uv flag as text": lambda: cbor2.dumps(payload(f12="yes")),
    "BS without BE": lambda: cbor2.dumps(payload(f8=False, f9=True)),
    # {1: id, 1: id, ...}: a repeated field, written by hand (cbor2 writes each key once).
    "repeated field": lambda: b"\xaf\x01\x50" + os.urandom(16) + cbor2.dumps(payload())[1:],
    "missing private key": lambda: cbor2.dumps(payload(f10=None)),
    # What registration never makes (each accepted before import checked every field as
    # registration would; later sign-ins failed with `unknown` and `vault check` passed).
    "large blob of 800 KB": lambda: cbor2.dumps(payload(f19=os.urandom(800_000))),
    "large blob one byte over the limit": lambda: cbor2.dumps(payload(f19=os.urandom(4096 + 28 + 1))),
    "large blob that does not open under its key": lambda: cbor2.dumps(payload(f19=os.urandom(28 + 64))),
    "large blob shorter than its seal": lambda: cbor2.dumps(payload(f19=os.urandom(27))),
    "RP ID that is a public suffix (com)": lambda: cbor2.dumps(payload(f2="com")),
    "RP ID that is a private-section public suffix (github.io)": lambda: cbor2.dumps(payload(f2="github.io")),
    "RP ID in upper case": lambda: cbor2.dumps(payload(f2="EXAMPLE.com")),
    "credBlob of 33 bytes": lambda: cbor2.dumps(payload(f18=os.urandom(33))),
    "credProtect level 4": lambda: cbor2.dumps(payload(f17=4)),
    "user handle of 65 bytes": lambda: cbor2.dumps(payload(f3=os.urandom(65))),
    "credential id of 15 bytes": lambda: cbor2.dumps(payload(f1=os.urandom(15))),
    "credential id of 1,024 bytes": lambda: cbor2.dumps(payload(f1=os.urandom(1024))),
    "created ten days from now": lambda: cbor2.dumps(payload(f6=int(time.time()) + 10 * 86_400)),
    "EdDSA with no profile (made before profiles, when every passkey was ES256)":
        lambda: cbor2.dumps(payload(f13=None, f10=der(ed25519.Ed25519PrivateKey.generate()))),
    "AAGUID as text": lambda: cbor2.dumps(payload(f14="fbfc3007154e4ecc8c0b6e020557d7bd")),
}


def test_a_crafted_well_formed_passkey_is_accepted(authctl, tmp_path):
    path = tmp_path / "good.passkey"
    path.write_bytes(seal(cbor2.dumps(payload(f13="authctl", f10=der(ed25519.Ed25519PrivateKey.generate())))))
    result = authctl.run("credential", "import", str(path), env={"AUTHCTL_EXPORT_PASSPHRASE": PASSPHRASE.decode()})
    assert result.code == 0, result.stderr
    assert [c["rpId"] for c in authctl.listing()] == ["example.com"]


@pytest.mark.parametrize("length", [16, 20, 32, 48, 64, 65, 1023])
def test_a_passkey_with_an_id_of_any_length_a_registration_can_make_imports_and_signs(authctl, tmp_path, length):
    """Each profile makes its own length (docs/profiles.md); a passkey from elsewhere may have any
    that WebAuthn and CTAP 2.1 allow, 16 to 1,023 bytes."""
    from conftest import b64url
    credential_id = os.urandom(length)
    path = tmp_path / "any.passkey"
    path.write_bytes(seal(cbor2.dumps(payload(f1=credential_id))))
    result = authctl.run("credential", "import", str(path), env={"AUTHCTL_EXPORT_PASSPHRASE": PASSPHRASE.decode()})
    assert result.code == 0, result.stderr
    assert [c["id"] for c in authctl.listing()] == [b64url(credential_id)]
    request = {"challenge": "AAAAAAAAAAAAAAAAAAAAAA", "rpId": "example.com",
               "allowCredentials": [{"type": "public-key", "id": b64url(credential_id)}]}
    assert authctl.sign(request, "https://example.com").json["rawId"] == b64url(credential_id)
    assert authctl.run("credential", "show", b64url(credential_id)).code == 0
    assert authctl.run("vault", "check").code == 0


def test_a_key_with_a_compressed_public_point_is_read_by_its_coordinates(authctl, tmp_path):
    key = compressed_p256()
    path = tmp_path / "compressed.passkey"
    path.write_bytes(seal(cbor2.dumps(payload(f10=key))))
    result = authctl.run("credential", "import", str(path), env={"AUTHCTL_EXPORT_PASSPHRASE": PASSPHRASE.decode()})
    assert result.code == 0, result.stderr
    loaded = serialization.load_der_private_key(key, None)
    spki = loaded.public_key().public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    from conftest import b64url
    assert authctl.listing()[0]["publicKey"] == b64url(spki)


@pytest.mark.parametrize("name", HOSTILE)
def test_a_hostile_payload_is_refused_and_changes_nothing(authctl, tmp_path, name):
    path = tmp_path / "hostile.passkey"
    path.write_bytes(seal(HOSTILE[name]()))
    before = authctl.state()
    result = authctl.run("credential", "import", str(path), env={"AUTHCTL_EXPORT_PASSPHRASE": PASSPHRASE.decode()})
    assert result.code == 65, (result.code, result.stderr)
    assert "authctl: error: badInput" in result.stderr and "\x1b" not in result.stderr
    assert authctl.state() == before
    assert authctl.run("vault", "check").code == 0


def test_a_long_user_name_is_kept_as_a_registration_keeps_it(authctl, tmp_path):
    """Names over 64 bytes are cut at the end of a character, as the authenticator cuts an RP's
    (CTAP 2.1 §6.1, WebAuthn L3 §6.4.1), not stored whole."""
    path = tmp_path / "long.passkey"
    path.write_bytes(seal(cbor2.dumps(payload(f4="é" * 40 + "x", f5="D" * 100_000))))
    result = authctl.run("credential", "import", str(path), env={"AUTHCTL_EXPORT_PASSPHRASE": PASSPHRASE.decode()})
    assert result.code == 0, result.stderr
    [listed] = authctl.listing()
    assert listed["userName"] == "é" * 32 and listed["userDisplayName"] == "D" * 64
    assert authctl.run("vault", "check").code == 0


def test_an_exported_passkey_with_a_large_blob_imports_and_reads_it_back(authctl, tmp_path):
    """The blob's seal is checked under the imported key, so a real one passes."""
    import json
    registered = authctl.run("register", "--origin", "https://example.com", "--user-name", "blob")
    assert registered.code == 0, registered.stderr
    credential = json.loads(registered.stdout)["id"]
    request = {"challenge": "AAAAAAAAAAAAAAAAAAAAAA", "rpId": "example.com",
               "allowCredentials": [{"type": "public-key", "id": credential}], "extensions": {"largeBlob": {"write": "YmxvYg"}}}
    assert authctl.sign(request, "https://example.com").json["clientExtensionResults"]["largeBlob"] == {"written": True}
    out = tmp_path / "blob.passkey"
    env = {"AUTHCTL_EXPORT_PASSPHRASE": PASSPHRASE.decode()}
    assert authctl.run("credential", "export", "--kdf", "min", "--out", str(out), "--", credential, env=env).code == 0
    from conftest import Authctl
    other = Authctl(tmp_path / "other")
    assert other.run("init", "--kdf", "min").code == 0
    imported = other.run("credential", "import", str(out), env=env)
    assert imported.code == 0, imported.stderr
    request["extensions"] = {"largeBlob": {"read": True}}
    assert other.sign(request, "https://example.com").json["clientExtensionResults"]["largeBlob"] == {"blob": "YmxvYg"}
    assert other.run("vault", "check").code == 0
