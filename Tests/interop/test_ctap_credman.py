"""A security key's management commands through python-fido2's own classes over `authctl ctap
serve`: CredentialManagement lists, renames and deletes what Fido2Client made (py_webauthn judging
the registrations and sign-ins), LargeBlobs and Fido2Client's largeBlob extension keep a blob in
the key's large-blob array, and Config raises the minimum PIN length and turns alwaysUv on. The
key is a device of a vault: what it keeps outlives `ctap serve`, and the independent vault reader
(written from docs/vault-format.md alone) finds it where the document says — the array in the
device's security key record, each credential's largeBlobKey the HKDF of its private key."""
import hashlib
import json
import zlib
from collections.abc import Mapping

import pytest
import fido2.hid
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from fido2 import cbor
from fido2.client import ClientError, DefaultClientDataCollector, Fido2Client, UserInteraction
from fido2.ctap import CtapError
from fido2.ctap2 import Ctap2
from fido2.ctap2.blob import LargeBlobs
from fido2.ctap2.config import Config
from fido2.ctap2.credman import CredentialManagement
from fido2.ctap2.pin import ClientPin
from fido2.utils import sha256
from fido2.webauthn import PublicKeyCredentialCreationOptions, PublicKeyCredentialRequestOptions
from webauthn import (generate_authentication_options, generate_registration_options, options_to_json,
                      verify_authentication_response, verify_registration_response)
from webauthn.helpers.structs import AuthenticatorSelectionCriteria, ResidentKeyRequirement, UserVerificationRequirement

import vault_reader
from authctl_client import ctap
from conftest import PASSPHRASE, Authctl
from ctap_support import CtapServe

KEY_PIN = "a1b2c3d4"
R = CredentialManagement.RESULT


class Person(UserInteraction):
    """The person at the key: types its PIN when asked (the key touches at once)."""

    def request_pin(self, permissions, rp_id):
        return KEY_PIN

    def request_uv(self, permissions, rp_id):
        return True


def plain(value):
    if isinstance(value, Mapping):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


class VaultKey:
    """A vault with a device `key` of the security-key profile, and `ctap serve` on it."""

    def __init__(self, tmp_path):
        self.tmp_path = tmp_path
        self.tool = Authctl(tmp_path / "vault")
        for command in (("init", "--kdf", "min", "--no-biometry"), ("device", "add", "key", "--no-biometry", "--profile", "security-key",
                                                   "--max-pin-attempts", "8")):
            result = self.tool.run(*command)
            assert result.code == 0, result.stderr
        self.passphrase_file = tmp_path / "passphrase"
        self.passphrase_file.write_text(PASSPHRASE)
        self.serve = None
        self.device = None

    def start(self):
        self.serve = CtapServe(self.tmp_path, unix=True, touch="always",
                               args=("--vault", str(self.tool.vault), "--passphrase-file", str(self.passphrase_file),
                                     "--device", "key"))
        ctap.install([self.serve.unix_key])
        self.device = fido2.hid.open_device(f"authctl:{self.serve.unix_key}")
        return Ctap2(self.device)

    def stop(self):
        if self.device is not None:
            self.device.close()
            self.device = None
        ctap.uninstall()
        if self.serve is not None:
            self.serve.stop()
            self.serve = None

    def client(self, origin="https://example.com"):
        return Fido2Client(self.device, DefaultClientDataCollector(origin), user_interaction=Person())

    def reader(self):
        """The vault as the independent reader sees it (the key stopped: it holds the vault)."""
        assert self.serve is None
        vault = vault_reader.open_vault(self.tool.vault, PASSPHRASE.encode())
        device = next(r for r in vault.records.values()
                      if r.kind == vault_reader.KIND_DEVICE and vault.device_name(r) == "key")
        return vault, device


@pytest.fixture
def key(tmp_path):
    made = VaultKey(tmp_path)
    try:
        yield made
    finally:
        made.stop()


def register(client, rp_id, user, *, extensions=None):
    """A discoverable credential of `rp_id` made by Fido2Client, py_webauthn verifying it."""
    options = generate_registration_options(
        rp_id=rp_id, rp_name=rp_id, user_id=user, user_name=user.decode(), user_display_name=user.decode().title(),
        authenticator_selection=AuthenticatorSelectionCriteria(resident_key=ResidentKeyRequirement.REQUIRED,
                                                               user_verification=UserVerificationRequirement.REQUIRED))
    public_key = json.loads(options_to_json(options))
    if extensions:
        public_key["extensions"] = extensions
    result = client.make_credential(PublicKeyCredentialCreationOptions.from_dict(public_key))
    verified = verify_registration_response(credential=plain(dict(result)), expected_challenge=options.challenge,
                                            expected_rp_id=rp_id, expected_origin=f"https://{rp_id}", require_user_verification=True)
    return result, verified


def sign_in(client, rp_id, credential_id, public_key, *, extensions=None):
    options = generate_authentication_options(rp_id=rp_id, user_verification=UserVerificationRequirement.REQUIRED)
    request = json.loads(options_to_json(options))
    request["allowCredentials"] = [{"type": "public-key", "id": fido2.utils.websafe_encode(credential_id)}]
    if extensions:
        request["extensions"] = extensions
    response = client.get_assertion(PublicKeyCredentialRequestOptions.from_dict(request)).get_response(0)
    verify_authentication_response(credential=plain(dict(response)), expected_challenge=options.challenge, expected_rp_id=rp_id,
                                   expected_origin=f"https://{rp_id}", credential_public_key=public_key,
                                   credential_current_sign_count=0, require_user_verification=True)
    return response


def test_credential_management_lists_renames_and_deletes_what_fido2_client_made(key):
    ctap2 = key.start()
    ClientPin(ctap2).set_pin(KEY_PIN)
    made = {}
    for rp_id, user in (("example.com", b"ann"), ("example.com", b"bob"), ("other.example", b"cat")):
        result, verified = register(key.client(f"https://{rp_id}"), rp_id, user)
        made[user] = verified
    pin = ClientPin(ctap2)
    credman = CredentialManagement(ctap2, pin.protocol, pin.get_pin_token(KEY_PIN, ClientPin.PERMISSION.CREDENTIAL_MGMT))

    metadata = credman.get_metadata()
    assert metadata[R.EXISTING_CRED_COUNT] == 3 and metadata[R.MAX_REMAINING_COUNT] == 97
    rps = credman.enumerate_rps()
    assert [rp[R.RP] for rp in rps] == [{"id": "example.com"}, {"id": "other.example"}]
    assert [rp[R.RP_ID_HASH] for rp in rps] == [sha256(b"example.com"), sha256(b"other.example")]
    listed = credman.enumerate_creds(sha256(b"example.com"))
    assert [c[R.USER] for c in listed] == [{"id": b"ann", "name": "ann", "displayName": "Ann"},
                                           {"id": b"bob", "name": "bob", "displayName": "Bob"}]
    for entry, user in zip(listed, (b"ann", b"bob")):
        # The key's public key is the one py_webauthn verified the registration with.
        assert entry[R.CREDENTIAL_ID]["id"] == made[user].credential_id
        assert cbor.encode(entry[R.PUBLIC_KEY]) == made[user].credential_public_key
        assert entry[R.CRED_PROTECT] == 1 and R.LARGE_BLOB_KEY not in entry

    ann = {"id": made[b"ann"].credential_id, "type": "public-key"}
    credman.update_user_info(ann, {"id": b"ann", "name": "ann@example.com"})
    credman.delete_cred({"id": made[b"bob"].credential_id, "type": "public-key"})
    with pytest.raises(CtapError, match="NO_CREDENTIALS"):
        credman.delete_cred({"id": made[b"bob"].credential_id, "type": "public-key"})
    with pytest.raises(CtapError, match="INVALID_PARAMETER"):
        credman.update_user_info(ann, {"id": b"someone else", "name": "x"})
    assert [c[R.USER] for c in credman.enumerate_creds(sha256(b"example.com"))] == [{"id": b"ann", "name": "ann@example.com"}]
    assert credman.get_metadata()[R.EXISTING_CRED_COUNT] == 2

    # The deleted credential signs nothing; the renamed one still signs, py_webauthn judging.
    with pytest.raises(ClientError):
        sign_in(key.client(), "example.com", made[b"bob"].credential_id, made[b"bob"].credential_public_key)
    sign_in(key.client(), "example.com", made[b"ann"].credential_id, made[b"ann"].credential_public_key)

    key.stop()
    vault, device = key.reader()
    held = {c["credential_id"]: c for c in vault.credentials(device)}
    assert set(held) == {made[b"ann"].credential_id, made[b"cat"].credential_id}
    assert held[made[b"ann"].credential_id]["user_name"] == "ann@example.com"
    assert held[made[b"ann"].credential_id]["user_display_name"] == ""


def large_blob_key_of(vault, device, credential_id) -> bytes:
    """docs/ctap.md's largeBlobKey: HKDF-SHA-256 of the private key's DER, read independently."""
    record = next(r for r, _ in vault.held(device) if r.fields[vault_reader.T_CREDENTIAL_ID] == credential_id)
    der = vault.private_key_der(record)
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=b"AUTHCTL-CREDENTIAL-SECRET", info=b"largeBlobKey").derive(der)


def test_a_large_blob_lives_in_the_vault_under_the_credentials_derived_key_and_outlives_the_key(key):
    ctap2 = key.start()
    ClientPin(ctap2).set_pin(KEY_PIN)
    result, verified = register(key.client(), "example.com", b"ann", extensions={"largeBlob": {"support": "required"}})
    assert result.client_extension_results["largeBlob"] == {"supported": True}
    blob = b"the key's own large blob " * 40
    written = sign_in(key.client(), "example.com", verified.credential_id, verified.credential_public_key,
                      extensions={"largeBlob": {"write": fido2.utils.websafe_encode(blob)}})
    assert written.client_extension_results["largeBlob"] == {"written": True}
    array = LargeBlobs(ctap2).read_blob_array()
    assert len(array) == 1
    pin = ClientPin(ctap2)
    credman = CredentialManagement(ctap2, pin.protocol, pin.get_pin_token(KEY_PIN, ClientPin.PERMISSION.CREDENTIAL_MGMT))
    listed_key = credman.enumerate_creds(sha256(b"example.com"))[0][R.LARGE_BLOB_KEY]

    # A write whose checksum is wrong is refused at its end, and the array stays.
    blobs = LargeBlobs(ctap2, pin.protocol, pin.get_pin_token(KEY_PIN, ClientPin.PERMISSION.LARGE_BLOB_WRITE))
    data = cbor.encode([])
    data += sha256(data)[:15] + bytes([sha256(data)[15] ^ 1])
    message = b"\xff" * 32 + b"\x0c\x00" + (0).to_bytes(4, "little") + sha256(data)
    with pytest.raises(CtapError, match="INTEGRITY_FAILURE"):
        ctap2.large_blobs(0, set=data, length=len(data), pin_uv_protocol=blobs.pin_uv.protocol.VERSION,
                          pin_uv_param=blobs.pin_uv.protocol.authenticate(blobs.pin_uv.token, message))
    assert LargeBlobs(ctap2).read_blob_array() == array
    key.stop()

    vault, device = key.reader()
    stored = vault.security_key(device)["large_blob_array"]
    contents, checksum = stored[:-16], stored[-16:]
    assert checksum == hashlib.sha256(contents).digest()[:16]
    entries = cbor.decode(contents)
    assert entries == array
    derived = large_blob_key_of(vault, device, verified.credential_id)
    assert derived == listed_key
    entry = entries[0]
    plaintext = AESGCM(derived).decrypt(entry[2], entry[1], b"blob" + entry[3].to_bytes(8, "little"))
    assert zlib.decompress(plaintext, -zlib.MAX_WBITS) == blob
    # Not under another key: the seal is the credential's.
    with pytest.raises(Exception):
        AESGCM(bytes(32)).decrypt(entry[2], entry[1], b"blob" + entry[3].to_bytes(8, "little"))

    # A new `ctap serve` on the vault reads it back.
    key.start()
    read = sign_in(key.client(), "example.com", verified.credential_id, verified.credential_public_key,
                   extensions={"largeBlob": {"read": True}})
    assert fido2.utils.websafe_decode(read.client_extension_results["largeBlob"]["blob"]) == blob


def test_config_raises_the_minimum_pin_length_and_turns_always_uv_on_for_good(key):
    ctap2 = key.start()
    ClientPin(ctap2).set_pin(KEY_PIN)
    pin = ClientPin(ctap2)
    config = Config(ctap2, pin.protocol, pin.get_pin_token(KEY_PIN, ClientPin.PERMISSION.AUTHENTICATOR_CFG))
    config.set_min_pin_length(min_pin_length=6, rp_ids=["example.com"])
    with pytest.raises(CtapError, match="PIN_POLICY_VIOLATION"):
        config.set_min_pin_length(min_pin_length=5)
    config.toggle_always_uv()
    info = ctap2.get_info()
    assert info.min_pin_length == 6 and info.options["alwaysUv"] is True and info.options["makeCredUvNotRqd"] is False
    assert info.force_pin_change is False   # the PIN has 8 code points
    with pytest.raises(CtapError, match="PIN_POLICY_VIOLATION"):
        ClientPin(ctap2).change_pin(KEY_PIN, "12345")
    # alwaysUv: even a credential the key does not keep needs a token.
    with pytest.raises(CtapError, match="PUAT_REQUIRED"):
        ctap2.make_credential(sha256(b"client data"), {"id": "example.com"}, {"id": b"u"}, [{"type": "public-key", "alg": -7}])
    key.stop()

    vault, device = key.reader()
    state = vault.security_key(device)
    assert state["always_uv"] is True and state["min_pin_length"] == 6
    assert state["min_pin_length_rp_ids"] == ["example.com"] and state["pin_length"] == 8
    assert state["force_pin_change"] is False

    ctap2 = key.start()
    info = ctap2.get_info()
    assert info.min_pin_length == 6 and info.options["alwaysUv"] is True
    # minPinLength goes to the RP IDs named, and only there.
    for rp_id, reported in (("example.com", 6), ("other.example", None)):
        result, _ = register(key.client(f"https://{rp_id}"), rp_id, b"ann", extensions={"minPinLength": True})
        extensions = result.response.attestation_object.auth_data.extensions or {}
        assert extensions.get("minPinLength") == reported, rp_id
