"""An independent, read-only reader of authctl's vault format (version 1).

Written from docs/vault-format.md alone, to show that the document is enough to read a vault
without the Swift sources. It never writes to the vault and never takes the lock: use it on a
vault no authctl process is writing.
"""
from __future__ import annotations

import hashlib
import pathlib
import struct
from dataclasses import dataclass, field

from nacl import bindings as sodium
from nacl.exceptions import CryptoError

__all__ = [
    "VaultError", "Locked", "Corrupted", "PinRequired", "WrongPin",
    "Record", "Vault", "open_vault",
    "KIND_TOMBSTONE", "KIND_CREDENTIAL", "KIND_SETTINGS", "KIND_DEVICE", "KIND_SECURITY_KEY",
]

FORMAT_VERSION = 1
MAGIC = b"AUTHCTLV"
HEADER_SIZE = 163
COMMIT_SIZES = (64, 92)  # without and with the index fields
KDF_ARGON2ID13 = 2
NONCE = 24
TAG = 16
KEY = 32

KIND_TOMBSTONE = 0
KIND_CREDENTIAL = 1
KIND_SETTINGS = 2
KIND_DEVICE = 3
KIND_SECURITY_KEY = 5

# Credential tags
T_CREDENTIAL_ID = 1
T_RP_ID = 2
T_USER_HANDLE = 3
T_USER_NAME = 4
T_USER_DISPLAY_NAME = 5
T_CREATED_AT = 6
T_SIGN_COUNT = 7
T_BACKUP_FLAGS = 8
T_PUBLIC_KEY = 9
T_SEALED_PRIVATE_KEY = 10
T_COSE_ALG = 11
T_COUNTS_SIGNATURES = 12
T_REQUIRES_UV = 13
T_ITEM_ID = 14
T_DEVICE_ID = 15
T_CHANGED_AT = 16
T_REMOVED = 17
T_DEVICE_NAME = 18
T_CHANGED_ORDER = 19
T_PROFILE = 20
T_AAGUID = 21
T_CRED_PROTECT = 22
T_CRED_BLOB = 23
T_LARGE_BLOB = 24
T_HIDDEN = 25
T_NOT_DISCOVERABLE = 27
T_CREATED = 26
T_LARGE_BLOB_KEY = 28  # 1: made with a largeBlobKey, derived from the private key
T_REPLICA_REVISION_ID = 40  # a replica record (a revision another vault uploaded): the revision's own id
T_REPLICA_LANDED_AT = 41  # when it landed in the store: an instant, ms (8) ‖ order (8)
T_UV_VAULT_ID = 42  # the vault whose biometry-key seal the private key carries; absent: this vault
T_REPLICA_SEALED_KEY = 43  # a replica's private key, sealed under the account key as the store has it

# Settings tags
S_BIOMETRY_SALT = 2
S_WRAPPED_BIOMETRY_KEY = 3
S_PIN_OPSLIMIT = 6
S_PIN_MEMLIMIT = 7
S_FAILED_ATTEMPTS = 4
S_ATTEMPTS_ALLOWED = 5
S_DEVICE_NAME = 8
S_ACCOUNT_KEY = 20
S_ACCOUNT_ID = 21
S_ATTESTATION_CA = 29


class VaultError(Exception):
    pass


class Locked(VaultError):
    """The passphrase does not unwrap the vault key (`vaultLocked`)."""


class Corrupted(VaultError):
    """The vault's bytes are damaged or inconsistent (`vaultCorrupted`)."""


class PinRequired(VaultError):
    """The credential was made with user verification; its key is also sealed under the biometry key."""


class WrongPin(VaultError):
    """The PIN does not unwrap the biometry key."""


@dataclass
class Record:
    kind: int
    version: int
    fields: dict = field(default_factory=dict)  # tag -> bytes, in ascending tag order
    record_id: bytes = b""


def _u16(b: bytes, o: int) -> int:
    return struct.unpack_from(">H", b, o)[0]


def _u32(b: bytes, o: int) -> int:
    return struct.unpack_from(">I", b, o)[0]


def _u64(b: bytes, o: int) -> int:
    return struct.unpack_from(">Q", b, o)[0]


def _open(ciphertext_and_tag: bytes, ad: bytes, nonce: bytes, key: bytes) -> bytes:
    """XChaCha20-Poly1305 IETF decryption; raises CryptoError when authentication fails."""
    if len(ciphertext_and_tag) < TAG:
        raise CryptoError("sealed value shorter than its tag")
    return sodium.crypto_aead_xchacha20poly1305_ietf_decrypt(ciphertext_and_tag, ad, nonce, key)


def _pwhash(secret: bytes, salt: bytes, opslimit: int, memlimit: int) -> bytes:
    return sodium.crypto_pwhash_alg(KEY, secret, salt, opslimit, memlimit, sodium.crypto_pwhash_ALG_ARGON2ID13)


@dataclass
class Header:
    version: int
    kdf: int
    opslimit: int
    memlimit: int
    salt: bytes
    vault_id: bytes
    nonce: bytes
    wrapped_key: bytes
    raw: bytes


def parse_header(data: bytes) -> Header:
    if len(data) != HEADER_SIZE:
        raise Corrupted(f"header is {len(data)} bytes, not {HEADER_SIZE}")
    if data[0:8] != MAGIC:
        raise Corrupted("header magic is not AUTHCTLV")
    if hashlib.blake2b(data[0:131], digest_size=32).digest() != data[131:163]:
        raise Corrupted("header checksum mismatch")
    version = _u16(data, 8)
    if version != FORMAT_VERSION:
        raise Corrupted(f"unknown format version {version}")
    kdf = data[10]
    if kdf != KDF_ARGON2ID13:
        raise Corrupted(f"unknown KDF algorithm {kdf}")
    return Header(
        version=version, kdf=kdf,
        opslimit=_u64(data, 11), memlimit=_u64(data, 19),
        salt=data[27:43], vault_id=data[43:59],
        nonce=data[59:83], wrapped_key=data[83:131], raw=data,
    )


def parse_batch(plaintext: bytes) -> list[tuple[bytes, Record]]:
    """A frame's plaintext: count (4) ‖ count records. Returns [(record id, Record)]."""
    try:
        count = _u32(plaintext, 0)
        offset = 4
        records = []
        for _ in range(count):
            record_id = plaintext[offset:offset + 16]
            if len(record_id) != 16:
                raise Corrupted("record runs past the end of its batch")
            kind = plaintext[offset + 16]
            version = _u64(plaintext, offset + 17)
            field_count = _u16(plaintext, offset + 25)
            offset += 27
            fields: dict[int, bytes] = {}
            previous = -1
            for _ in range(field_count):
                tag = plaintext[offset]
                length = _u32(plaintext, offset + 1)
                offset += 5
                value = plaintext[offset:offset + length]
                if len(value) != length:
                    raise Corrupted("field value runs past the end of its batch")
                offset += length
                if tag <= previous:
                    raise Corrupted(f"field tag {tag} repeated or out of order")
                previous = tag
                fields[tag] = value
            records.append((record_id, Record(kind=kind, version=version, fields=fields, record_id=record_id)))
    except (struct.error, IndexError):
        raise Corrupted("batch is truncated") from None
    if offset != len(plaintext):
        raise Corrupted(f"{len(plaintext) - offset} stray bytes after the last record of a batch")
    return records


@dataclass
class Index:
    """What `index.<g>` holds, checked against the log (see `_check_index`)."""
    frames: int
    log_length: int
    next_sequence: int
    partition_kind: int
    partition_tag: int
    buckets: list  # [(offset, length, records, the id the bucket is sealed with)]
    records: dict  # record id -> (sequence, Record), root and buckets together
    length: int
    lookup_tag: int | None = None  # index format 2: the credential-id lookup's field tag
    lookups: dict | None = None  # lookup value (credential id) -> {partition (RP ID)}
    shard_tag: int | None = None  # index format 3: the field that splits a big RP (the user handle)
    splits: dict | None = None  # RP ID -> shard count
    bounds: dict | None = None  # index format 4: RP ID -> each shard's bound (32 bytes, big-endian)

    def partition_of(self, record) -> bytes | None:
        """The partition a record of the partitioned kind is filed under: its RP ID, or, for a
        split RP, that RP ID + 0xFF + the shard (u16) its user handle falls in."""
        value = record.fields.get(self.partition_tag)
        if value is None or not self.splits or value not in self.splits:
            return value
        count, handle = self.splits[value], record.fields.get(self.shard_tag)
        shard = 0 if handle is None or count < 2 else int.from_bytes(hashlib.blake2b(handle, digest_size=32).digest()[:8], "big") % count
        return value + b"\xff" + struct.pack(">H", shard)


class Vault:
    def __init__(self, path: pathlib.Path, header: Header, vault_key: bytes,
                 generation: int, frame_count: int, log_length: int, records: dict, index: Index | None = None):
        self.index = index
        self.path = path
        self.header = header
        self.vault_id = header.vault_id
        self._vault_key = vault_key
        self.generation = generation
        self.frame_count = frame_count
        self.log_length = log_length
        self.records: dict[bytes, Record] = records

    # -- records -------------------------------------------------------------------------

    @property
    def settings(self) -> Record | None:
        found = [r for r in self.records.values() if r.kind == KIND_SETTINGS]
        return found[0] if found else None

    def credential_records(self) -> list[Record]:
        return [r for r in self.records.values() if r.kind == KIND_CREDENTIAL]

    def device_name(self, record: Record) -> str:
        return record.fields.get(S_DEVICE_NAME, b"default").decode("utf-8")

    def revisions(self, device: Record | None = None, replicas: bool = False) -> list[Record]:
        """The credential records (revisions) a device made: tag 15 names it, or is absent for the
        first device. With `replicas`, also the revisions of other vaults' devices this vault
        downloaded from the store (tags 40 and 41), each once it has landed (every one has, once
        downloaded, when the account's delays are zero)."""
        device = device or self.settings
        return [r for r in self.credential_records()
                if (replicas and self.is_replica(r))
                or (not self.is_replica(r) and r.fields.get(T_DEVICE_ID, self.settings.record_id) == device.record_id)]

    @staticmethod
    def is_replica(record: Record) -> bool:
        return T_REPLICA_REVISION_ID in record.fields and T_REPLICA_LANDED_AT in record.fields

    def security_key(self, device: Record | None = None) -> dict:
        """A device's state as a security key (kind 5), every field read or given its default: the
        record whose id is the device record's id XORed with 0x6b, which names the device in tag 1."""
        device = device or self.settings
        record = self.records.get(bytes(b ^ 0x6B for b in device.record_id))
        f = record.fields if record is not None and record.kind == KIND_SECURITY_KEY else {}
        if f and f.get(1) != device.record_id:
            raise Corrupted("a security key record names another device")
        rp_ids, list_bytes, o = [], f.get(4, b""), 0
        while o < len(list_bytes):
            n = _u16(list_bytes, o)
            rp_ids.append(list_bytes[o + 2:o + 2 + n].decode("utf-8"))
            o += 2 + n
        empty = b"\x80" + hashlib.sha256(b"\x80").digest()[:16]
        return {
            "always_uv": f.get(2) == b"\x01",
            "min_pin_length": _u32(f[3], 0) if 3 in f else 4,
            "min_pin_length_rp_ids": rp_ids,
            "force_pin_change": f.get(5) == b"\x01",
            "pin_length": _u32(f[6], 0) if 6 in f else None,
            "large_blob_array": f.get(7, empty),
        }

    def replicas(self) -> list[Record]:
        """Replica records: revisions other vaults' devices uploaded, kept as downloaded. The record id
        is the revision id with every byte XORed with 0xa5."""
        found = [r for r in self.credential_records() if self.is_replica(r)]
        for r in found:
            if r.record_id != bytes(b ^ 0xA5 for b in r.fields[T_REPLICA_REVISION_ID]) or len(r.fields[T_REPLICA_LANDED_AT]) != 16:
                raise Corrupted(f"replica record {r.record_id.hex()} is not named after its revision, or its landing is no instant")
        return found

    def account_key(self) -> bytes:
        """The account key (settings tag 20), sealed like a private key under the vault key."""
        settings = self.settings
        sealed = settings.fields.get(S_ACCOUNT_KEY, b"")
        if len(sealed) < NONCE + TAG:
            raise Corrupted("the settings record has no (or a malformed) account key")
        try:
            return _open(sealed[NONCE:], b"AUTHCTL-SECRET" + self.vault_id + settings.record_id, sealed[:NONCE], self._vault_key)
        except CryptoError:
            raise Corrupted("the account key fails authentication") from None

    @staticmethod
    def item_id(record: Record) -> bytes:
        return record.fields.get(T_ITEM_ID, record.record_id)

    def _order(self, record: Record):
        f = record.fields
        changed = _u64(f[T_CHANGED_AT], 0) if T_CHANGED_AT in f else _u64(f[T_CREATED_AT], 0) * 1000
        order = _u64(f[T_CHANGED_ORDER], 0) if T_CHANGED_ORDER in f else 0
        name = f.get(T_DEVICE_NAME, self.settings.fields.get(S_DEVICE_NAME, b"default"))
        return (changed, order, name, record.record_id)

    def held(self, device: Record | None = None, replicas: bool = False) -> list[tuple[Record, int]]:
        """The passkeys a device holds from its own revisions: per item the winner by (changed at,
        changed order, device name, record id), unless a revision of the item is a removal (a deletion
        is final: no change brings a deleted passkey back), with the highest sign count of the item."""
        groups: dict[bytes, list[Record]] = {}
        for record in self.revisions(device, replicas):
            groups.setdefault(self.item_id(record), []).append(record)
        out = []
        for revisions in groups.values():
            winner = max(revisions, key=self._order)
            if any(r.fields.get(T_REMOVED) == b"\x01" for r in revisions):
                continue
            counts = [_u32(r.fields[T_SIGN_COUNT], 0) for r in revisions
                      if r.fields.get(T_REMOVED) != b"\x01" and len(r.fields.get(T_SIGN_COUNT, b"")) == 4]
            out.append((winner, max(counts, default=0)))
        return out

    def credentials(self, device: Record | None = None, replicas: bool = False) -> list[dict]:
        out = []
        for record, sign_count in self.held(device, replicas):
            f = record.fields
            out.append({
                "credential_id": f.get(T_CREDENTIAL_ID, b""),
                "rp_id": f.get(T_RP_ID, b"").decode("utf-8"),
                "user_handle": f.get(T_USER_HANDLE, b""),
                "user_name": f.get(T_USER_NAME, b"").decode("utf-8"),
                "user_display_name": f.get(T_USER_DISPLAY_NAME, b"").decode("utf-8"),
                "created_at": _u64(f[T_CREATED_AT], 0) if len(f.get(T_CREATED_AT, b"")) == 8 else None,
                "public_point": f.get(T_PUBLIC_KEY, b""),  # ES256: 04 ‖ x ‖ y; else the COSE_Key
                "algorithm": int.from_bytes(f[T_COSE_ALG], "big", signed=True) if len(f.get(T_COSE_ALG, b"")) == 4 else -7,
                "profile": f.get(T_PROFILE, b"").decode("utf-8") or None,
                "aaguid": f.get(T_AAGUID),
                "global_counter": f.get(T_COUNTS_SIGNATURES, b"\x00") == b"\x02",
                "hidden": f.get(T_HIDDEN, b"\x00") == b"\x01",
                "discoverable": f.get(T_NOT_DISCOVERABLE, b"\x00") != b"\x01",
                "large_blob_key": f.get(T_LARGE_BLOB_KEY, b"\x00") == b"\x01",
                "requires_uv": f.get(T_REQUIRES_UV, b"\x00") == b"\x01",
                "counts_signatures": f.get(T_COUNTS_SIGNATURES, b"\x00") in (b"\x01", b"\x02"),
                "sign_count": sign_count,
                "backup_flags": f.get(T_BACKUP_FLAGS, b"\x00")[0] if f.get(T_BACKUP_FLAGS) else 0,
                "record_id": record.record_id,
            })
        return out

    def record_for_credential(self, credential_id: bytes) -> Record:
        """The winning revision of a passkey the first device holds."""
        for record, _ in self.held():
            if record.fields.get(T_CREDENTIAL_ID) == credential_id:
                return record
        raise KeyError(credential_id)

    # -- secrets -------------------------------------------------------------------------

    def biometry_key(self, pin: bytes) -> bytes:
        settings = self.settings
        if settings is None or S_BIOMETRY_SALT not in settings.fields or S_WRAPPED_BIOMETRY_KEY not in settings.fields:
            raise Corrupted("a credential requires user verification but no biometry key is enrolled")
        salt = settings.fields[S_BIOMETRY_SALT]
        wrapped = settings.fields[S_WRAPPED_BIOMETRY_KEY]
        if len(salt) != 16 or len(wrapped) != NONCE + KEY + TAG:
            raise Corrupted("malformed biometry fields in the settings record")
        limits = (settings.fields.get(S_PIN_OPSLIMIT), settings.fields.get(S_PIN_MEMLIMIT))
        if any(value is None or len(value) != 8 for value in limits):
            raise Corrupted("the settings record lacks the PIN key's KDF limits (tags 6 and 7)")
        pin_key = _pwhash(pin, salt, _u64(limits[0], 0), _u64(limits[1], 0))
        try:
            return _open(wrapped[NONCE:], b"AUTHCTL-BIOMETRY" + self.vault_id, wrapped[:NONCE], pin_key)
        except CryptoError:
            raise WrongPin("the PIN does not unwrap the biometry key") from None

    def attestation_ca(self) -> dict:
        """The account's attestation CA (settings tag 29): a CBOR map with `root` and `intermediate`
        (DER certificates) and `rootKey`, `intermediateKey`, `attestationKey` (DER private keys)."""
        import cbor2
        settings = self.settings
        sealed = settings.fields.get(S_ATTESTATION_CA) if settings else None
        if sealed is None or len(sealed) < NONCE + TAG:
            raise Corrupted("the settings record has no (or a malformed) attestation CA")
        try:
            plain = _open(sealed[NONCE:], b"AUTHCTL-SECRET" + self.vault_id + settings.record_id, sealed[:NONCE], self._vault_key)
        except CryptoError:
            raise Corrupted("the attestation CA fails authentication") from None
        return cbor2.loads(plain)

    def private_key_der(self, record: Record | bytes, pin: bytes | None = None) -> bytes:
        """The credential's DER private key (RFC 5915 for ES256, PKCS #1 for RS256, PKCS #8 for
        EdDSA). `record` may be a Record or a record id."""
        if isinstance(record, (bytes, bytearray)):
            record = self.records[bytes(record)]
        if record.kind != KIND_CREDENTIAL:
            raise ValueError("not a credential record")
        if self.is_replica(record):
            # A replica keeps the store's seal: the account key, AD "AUTHCTL-ITEM" ‖ account id ‖ revision id.
            sealed, key = record.fields.get(T_REPLICA_SEALED_KEY), self.account_key()
            ad = b"AUTHCTL-ITEM" + self.settings.fields.get(S_ACCOUNT_ID, b"") + record.fields[T_REPLICA_REVISION_ID]
        else:
            sealed, key = record.fields.get(T_SEALED_PRIVATE_KEY), self._vault_key
            ad = b"AUTHCTL-SECRET" + self.vault_id + record.record_id
        if sealed is None or len(sealed) < NONCE + TAG:
            raise Corrupted("credential has no (or a malformed) sealed private key")
        try:
            inner = _open(sealed[NONCE:], ad, sealed[:NONCE], key)
        except CryptoError:
            raise Corrupted("sealed private key fails authentication") from None
        if record.fields.get(T_REQUIRES_UV, b"\x00") != b"\x01":
            return inner
        if pin is None:
            raise PinRequired("this passkey was made with user verification: its key needs the PIN")
        bio_key = self.biometry_key(pin)
        if len(inner) < NONCE + TAG:
            raise Corrupted("malformed user-verification seal")
        try:
            return _open(inner[NONCE:], b"AUTHCTL-UV-SECRET" + record.fields.get(T_UV_VAULT_ID, self.vault_id) + self.item_id(record),
                         inner[:NONCE], bio_key)
        except CryptoError:
            raise Corrupted("user-verification seal fails authentication") from None


    # -- the account store -----------------------------------------------------------------

    def account_key(self) -> bytes:
        """The account key (settings tag 20), sealed like a private key under the vault key."""
        settings = self.settings
        sealed = settings.fields[20]
        return _open(sealed[NONCE:], b"AUTHCTL-SECRET" + self.vault_id + settings.record_id, sealed[:NONCE], self._vault_key)

    def store_records(self, store: pathlib.Path) -> list[Record]:
        """Every revision record the account store at `store` holds, as vault-format.md ("The
        account store") lays it out: the snapshot's parts, then the log's changes after it up to the
        head; each object a StorePack opened with the account key. A snapshot's parts are checked
        against its list (the part named "M" ‖ 16 bytes, sealed with AD "AUTHCTL-SNAPSHOT"): every
        part it names, with the digest it names, and no other."""
        key, account_id = self.account_key(), self.settings.fields[21]
        state = (store / "state").read_bytes()
        snapshot, head = _u64(state, 8), _u64(state, 16)
        objects = []
        if snapshot:
            part_dir = store / "snapshot" / f"{snapshot:016x}"
            parts = [_store_object(p.read_bytes()) for p in sorted(part_dir.iterdir()) if p.name != "count"]
            manifests = [(i, s) for i, s in parts if len(i) == 17 and i[:1] == b"M"]
            assert len(manifests) == 1, f"snapshot {snapshot} holds {len(manifests)} lists of its parts"
            listed = _snapshot_manifest(manifests[0], key, account_id)
            assert listed["through"] == snapshot, listed["through"]
            rest = {i: s for i, s in parts if not (len(i) == 17 and i[:1] == b"M")}
            assert set(rest) == set(listed["parts"]), "the snapshot's parts are not the ones its list names"
            for object_id, digest in listed["parts"].items():
                assert _link_digest(object_id, rest[object_id]) == digest, "a snapshot part is not the one its list names"
                objects.append((object_id, rest[object_id]))
        objects += [_store_object((store / "log" / f"{n:016x}").read_bytes()) for n in range(snapshot + 1, head + 1)]
        out = []
        for object_id, sealed in objects:
            plain = _open(sealed[NONCE:], b"AUTHCTL-STORE" + account_id + object_id, sealed[:NONCE], key)
            start = 0
            if plain[:4] == b"\xff\xff\xff\xff":  # an upload (kind 1, with its 64-byte link) or a snapshot part (kind 2)
                start = 5 + (64 if plain[4] == 1 else 0)
            count = _u32(plain, start)
            out += [record for _, record in parse_batch(plain[start + 4 + 16 * count:])]
        return out


def _store_object(data: bytes) -> tuple[bytes, bytes]:
    """A directory store's framed object: its id and sealed bytes."""
    assert data[:8] == b"ASTOBJ01"
    id_length = data[16]
    return data[17:17 + id_length], data[17 + id_length:-8]


def _link_digest(object_id: bytes, sealed: bytes) -> bytes:
    """SHA-256 over "AUTHCTL-LINK" ‖ id length ‖ id ‖ sealed bytes: what a device holds of an object."""
    return hashlib.sha256(b"AUTHCTL-LINK" + bytes([len(object_id)]) + object_id + sealed).digest()


def _snapshot_manifest(part: tuple[bytes, bytes], key: bytes, account_id: bytes) -> dict:
    object_id, sealed = part
    plain = _open(sealed[NONCE:], b"AUTHCTL-SNAPSHOT" + account_id + object_id, sealed[:NONCE], key)
    assert plain[0] == 1, plain[0]
    through, head_count, offset = _u64(plain, 1), _u32(plain, 9), 13
    heads = {}
    for _ in range(head_count):
        vault = plain[offset:offset + 16]
        heads[vault] = (_u64(plain, offset + 16), plain[offset + 24:offset + 56])
        offset += 56
    parts = {}
    count = _u32(plain, offset)
    offset += 4
    for _ in range(count):
        length = plain[offset]
        object_id = plain[offset + 1:offset + 1 + length]
        parts[object_id] = plain[offset + 1 + length:offset + 33 + length]
        offset += 33 + length
    assert offset == len(plain), "a snapshot's list holds more than its parts"
    return {"through": through, "heads": heads, "parts": parts}


def _frame_ad(vault_id: bytes, generation: int, index: int) -> bytes:
    return b"AUTHCTL-FRAME" + struct.pack(">H", FORMAT_VERSION) + vault_id + struct.pack(">QQ", generation, index)


def _commit_ad(vault_id: bytes) -> bytes:
    return b"AUTHCTL-COMMIT" + struct.pack(">H", FORMAT_VERSION) + vault_id


def open_vault(path, passphrase: bytes) -> Vault:
    path = pathlib.Path(path)
    if isinstance(passphrase, str):
        passphrase = passphrase.encode("utf-8")

    # 1. header
    try:
        header_bytes = (path / "header").read_bytes()
    except FileNotFoundError:
        raise Corrupted(f"{path} is not a vault (no header)") from None
    header = parse_header(header_bytes)

    # 2-3. passphrase -> wrapping key -> vault key
    wrapping_key = _pwhash(passphrase, header.salt, header.opslimit, header.memlimit)
    try:
        vault_key = _open(header.wrapped_key, header_bytes[0:59], header.nonce, wrapping_key)
    except CryptoError:
        raise Locked("the passphrase does not unwrap the vault key") from None

    # 4. commit (or commit.next, after a key rotation stopped past its switch)
    def read_pointer(name):
        commit = (path / name).read_bytes()
        if len(commit) not in COMMIT_SIZES:
            raise Corrupted(f"{name} is {len(commit)} bytes, not one of {COMMIT_SIZES}")
        return _open(commit[NONCE:], _commit_ad(header.vault_id), commit[:NONCE], vault_key)

    if not (path / "commit").exists():
        raise Corrupted("commit file is missing")
    try:
        pointer = read_pointer("commit")
    except CryptoError:
        try:
            pointer = read_pointer("commit.next")
        except (CryptoError, Corrupted, FileNotFoundError):
            raise Corrupted("commit fails authentication") from None
    generation, frame_count, log_length = struct.unpack(">QQQ", pointer[:24])
    index_length, root_length, root_id = (*struct.unpack(">QI", pointer[24:36]), pointer[36:52]) if len(pointer) == 52 else (0, 0, b"")

    # 5. log
    try:
        log = (path / f"log.{generation}").read_bytes()
    except FileNotFoundError:
        raise Corrupted(f"log.{generation} named by commit is missing") from None
    if len(log) < log_length:
        raise Corrupted(f"log.{generation} is {len(log)} bytes, shorter than the committed {log_length}")

    frames: list[bytes] = []
    offset = 0
    while offset < log_length:
        if offset + 4 > log_length:
            raise Corrupted("frame length field runs past the committed length")
        length = _u32(log, offset)
        end = offset + 4 + length
        if length < NONCE + TAG or end > log_length:
            raise Corrupted(f"frame {len(frames)} runs past the committed length (or is too short)")
        if len(frames) >= frame_count:
            raise Corrupted("the committed length holds more frames than committed")
        nonce = log[offset + 4:offset + 4 + NONCE]
        try:
            plaintext = _open(log[offset + 4 + NONCE:end], _frame_ad(header.vault_id, generation, len(frames)),
                              nonce, vault_key)
        except CryptoError:
            raise Corrupted(f"frame {len(frames)} of log.{generation} fails authentication") from None
        frames.append(plaintext)
        offset = end
    if len(frames) != frame_count:
        raise Corrupted(f"committed part holds {len(frames)} frames, commit says {frame_count}")

    # Unfinished append: at most one (possibly partial) frame after the committed length.
    tail = log[log_length:]
    if len(tail) >= 4:
        tail_length = _u32(tail, 0)
        if 4 + tail_length < len(tail):
            raise Corrupted("more than one frame after the committed length: commit is older than the log")

    # Apply batches in order.
    # A record (tombstones included) must carry a higher version than the *live* record with its
    # id; the document compares against the live record only, so once a tombstone has removed an
    # id nothing is remembered about it (authctl behaves the same way). Tombstones "have no
    # fields", but like every reader we keep going past fields we do not expect.
    live: dict[bytes, Record] = {}
    if index_length == 0 and root_length != 0:
        raise Corrupted("commit names an index root but no index")
    index = _read_index(path, header.vault_id, vault_key, generation, index_length, root_length, root_id) if index_length else None
    if index is not None and (index.frames > frame_count or index.log_length > log_length):
        raise Corrupted("the index root claims more of the log than commit")
    for number, plaintext in enumerate(frames):
        if index is not None and number == index.frames:
            _check_index(index, live)
        for record_id, record in parse_batch(plaintext):
            current = live.get(record_id)
            if current is not None and record.version <= current.version:
                raise Corrupted(f"frame {number}: record {record_id.hex()} goes back to version "
                                f"{record.version} from {current.version}")
            if record.kind == KIND_TOMBSTONE:
                live.pop(record_id, None)
            else:
                live[record_id] = record

    if index is not None and index.frames == len(frames):
        _check_index(index, live)

    settings = [r for r in live.values() if r.kind == KIND_SETTINGS]
    if len(settings) != 1:
        raise Corrupted(f"{len(settings)} settings records; a vault has exactly one")

    return Vault(path, header, vault_key, generation, frame_count, log_length, live, index)


def _index_root_ad(vault_id: bytes, generation: int, offset: int, root_id: bytes) -> bytes:
    return b"AUTHCTL-INDEX" + struct.pack(">H", FORMAT_VERSION) + vault_id + struct.pack(">QQ", generation, offset) + root_id


def _index_bucket_ad(vault_id: bytes, generation: int, number: int, offset: int, bucket_id: bytes) -> bytes:
    return (b"AUTHCTL-INDEX-BUCKET" + struct.pack(">H", FORMAT_VERSION) + vault_id
            + struct.pack(">QIQ", generation, number, offset) + bucket_id)


def _parse_indexed_records(data: bytes, offset: int, count: int, what: str) -> tuple[list, int]:
    """`count` × (sequence u64 ‖ record) from `offset`; returns [(sequence, id, Record)] and the end."""
    out = []
    for _ in range(count):
        sequence = _u64(data, offset)
        # A record is parsed as a one-record batch: count (4) ‖ record.
        start = offset + 8
        field_count = _u16(data, start + 25)
        end = start + 27
        for _ in range(field_count):
            end += 5 + _u32(data, end + 1)
        if end > len(data):
            raise Corrupted(f"{what} runs past its end")
        [(record_id, record)] = parse_batch(struct.pack(">I", 1) + data[start:end])
        if record.kind == KIND_TOMBSTONE:
            raise Corrupted(f"{what} holds a tombstone")
        out.append((sequence, record_id, record))
        offset = end
    return out, offset


def _read_index(path, vault_id: bytes, vault_key: bytes, generation: int, index_length: int, root_length: int,
                root_id: bytes) -> Index:
    """Reads and authenticates `index.<generation>`: the root at the end of the committed part,
    then every bucket it names. Does not yet compare it with the log (`_check_index`)."""
    try:
        data = (path / f"index.{generation}").read_bytes()
    except FileNotFoundError:
        raise Corrupted(f"index.{generation} named by commit is missing") from None
    if len(data) < index_length or root_length > index_length or root_length < NONCE + TAG:
        raise Corrupted(f"index.{generation} is {len(data)} bytes; commit names {index_length}, root {root_length}")
    root_offset = index_length - root_length
    sealed = data[root_offset:index_length]
    try:
        root = _open(sealed[NONCE:], _index_root_ad(vault_id, generation, root_offset, root_id), sealed[:NONCE], vault_key)
    except CryptoError:
        raise Corrupted("the index root fails authentication") from None
    try:
        root_generation, frames, log_length, next_sequence = struct.unpack(">QQQQ", root[:32])
        kind, tag = root[32], root[33]
        bucket_count = _u32(root, 34)
        offset = 38
        buckets = []
        for _ in range(bucket_count):
            buckets.append((*struct.unpack(">QII", root[offset:offset + 16]), root[offset + 16:offset + 32]))
            offset += 32
        always_count = _u32(root, offset)
        always, offset = _parse_indexed_records(root, offset + 4, always_count, "the index root")
        # Index format 2 adds the lookup section; a format-1 root ends here.
        lookup_tag, lookup_table, lookup_start = None, [], None
        if offset < len(root):
            lookup_tag, lookup_count = root[offset], _u32(root, offset + 1)
            offset += 5
            lookup_start = offset
            for _ in range(lookup_count):
                lookup_table.append((*struct.unpack(">QII", root[offset:offset + 16]), root[offset + 16:offset + 32]))
                offset += 32
            if lookup_count < 1:
                raise Corrupted("the index root has a lookup section without lookup buckets")
        # Index format 3 adds the split section: the RPs split into shards by user handle.
        shard_tag, splits, bounds = None, None, None
        if offset < len(root):
            shard_tag, split_count = root[offset], _u32(root, offset + 1)
            offset += 5
            splits = {}
            for _ in range(split_count):
                value = root[offset + 2:offset + 2 + _u16(root, offset)]
                if len(value) != _u16(root, offset):
                    raise IndexError
                offset += 2 + len(value)
                shards = _u16(root, offset)
                offset += 2
                if shards < 2 or (splits and value <= list(splits)[-1]):
                    raise Corrupted("the index root lists split RPs out of order, twice, or with fewer than two shards")
                splits[value] = shards
            # Index format 4: a root that splits an RP writes the shard tag with bit 6 set, and
            # its lookup entries end in one 32-byte bound per shard, split RP by split RP in the
            # split section's order.
            if shard_tag & 0x40:
                shard_tag &= ~0x40
                total = sum(splits.values())
                if total >= len(lookup_table):
                    raise Corrupted("the index root's shard bounds do not fit its lookup section")
                words = root[lookup_start + 32 * (len(lookup_table) - total):lookup_start + 32 * len(lookup_table)]
                lookup_table = lookup_table[:len(lookup_table) - total]
                bounds, at = {}, 0
                for value in sorted(splits):
                    bounds[value] = [words[at + 32 * n:at + 32 * (n + 1)] for n in range(splits[value])]
                    at += 32 * splits[value]
    except (struct.error, IndexError, ValueError):
        raise Corrupted("the index root is truncated") from None
    if offset != len(root) or root_generation != generation or bucket_count < 1:
        raise Corrupted("the index root does not parse, or names another generation")
    shape = Index(frames, log_length, next_sequence, kind, tag, buckets, {}, index_length, lookup_tag, None, shard_tag, splits, bounds)
    records = {}
    for sequence, record_id, record in always:
        if record.kind == kind and tag in record.fields:
            raise Corrupted("the index root holds a partitioned record")
        records[record_id] = (sequence, record)
    for number, (bucket_offset, length, count, bucket_id) in enumerate(buckets):
        if bucket_offset + length > root_offset:
            raise Corrupted(f"index bucket {number} lies past the root")
        blob = data[bucket_offset:bucket_offset + length]
        try:
            plain = _open(blob[NONCE:], _index_bucket_ad(vault_id, generation, number, bucket_offset, bucket_id), blob[:NONCE],
                          vault_key)
        except CryptoError:
            raise Corrupted(f"index bucket {number} fails authentication") from None
        try:
            partitions = _u32(plain, 0)
            offset = 4
            found = 0
            for _ in range(partitions):
                value_length = _u16(plain, offset)
                value = plain[offset + 2:offset + 2 + value_length]
                record_count, byte_length = struct.unpack(">II", plain[offset + 2 + value_length:offset + 10 + value_length])
                offset += 10 + value_length
                if int.from_bytes(hashlib.blake2b(value, digest_size=32).digest()[:8], "big") % bucket_count != number:
                    raise Corrupted(f"index bucket {number} holds a partition of another bucket")
                parsed, end = _parse_indexed_records(plain, offset, record_count, f"index bucket {number}")
                if end != offset + byte_length:
                    raise Corrupted(f"index bucket {number}: a partition's length is wrong")
                for sequence, record_id, record in parsed:
                    if record.kind != kind or shape.partition_of(record) != value:
                        raise Corrupted(f"index bucket {number} files a record under another partition")
                    if record_id in records:
                        raise Corrupted("the index holds a record twice")
                    records[record_id] = (sequence, record)
                found += record_count
                offset = end
        except (struct.error, IndexError, ValueError):
            raise Corrupted(f"index bucket {number} is truncated") from None
        if offset != len(plain) or found != count:
            raise Corrupted(f"index bucket {number} does not hold what the root counts")
    lookups = None
    if lookup_tag is not None:
        lookups = {}
        for number, (lookup_offset, length, count, lookup_id) in enumerate(lookup_table):
            if lookup_offset + length > root_offset:
                raise Corrupted(f"index lookup bucket {number} lies past the root")
            blob = data[lookup_offset:lookup_offset + length]
            ad = (b"AUTHCTL-INDEX-LOOKUP" + struct.pack(">H", FORMAT_VERSION) + vault_id
                  + struct.pack(">QIQ", generation, number, lookup_offset) + lookup_id)
            try:
                plain = _open(blob[NONCE:], ad, blob[:NONCE], vault_key)
            except CryptoError:
                raise Corrupted(f"index lookup bucket {number} fails authentication") from None
            try:
                entries, offset = _u32(plain, 0), 4
                for _ in range(entries):
                    value = plain[offset + 2:offset + 2 + _u16(plain, offset)]
                    offset += 2 + len(value)
                    partition = plain[offset + 2:offset + 2 + _u16(plain, offset)]
                    offset += 2 + len(partition)
                    if int.from_bytes(hashlib.blake2b(value, digest_size=32).digest()[:8], "big") % len(lookup_table) != number:
                        raise Corrupted(f"index lookup bucket {number} holds a value of another bucket")
                    lookups.setdefault(value, set()).add(partition)
            except (struct.error, IndexError, ValueError):
                raise Corrupted(f"index lookup bucket {number} is truncated") from None
            if offset != len(plain) or entries != count:
                raise Corrupted(f"index lookup bucket {number} does not hold what the root counts")
    return Index(frames, log_length, next_sequence, kind, tag, buckets, records, index_length, lookup_tag, lookups, shard_tag, splits, bounds)


def shard_place(record, record_id: bytes) -> bytes:
    """A passkey revision's place in creation order as a shard bound counts it (docs/vault-format.md,
    "Shard bounds"): the creation instant (tag 26: ms ‖ order; else `createdAt` seconds × 1,000 ‖ 0)
    ‖ the item id (tag 14, else a replica's revision id, tag 40, else the record id; another length
    than 16: all ones); all zeros for a removal, all ones for a creation field that does not read."""
    f = record.fields
    if f.get(T_REMOVED) == b"\x01":
        return bytes(32)
    if T_CREATED in f:
        if len(f[T_CREATED]) != 16:
            return b"\xff" * 32
        instant = f[T_CREATED]
    elif len(f.get(T_CREATED_AT, b"")) == 8:
        seconds = _u64(f[T_CREATED_AT], 0)
        instant = struct.pack(">QQ", min(seconds * 1000, 2**64 - 1), 0)
    else:
        return b"\xff" * 32
    item = f.get(T_ITEM_ID, f.get(T_REPLICA_REVISION_ID, record_id))
    return instant + (item if len(item) == 16 else b"\xff" * 16)


def _check_index(index: Index, live: dict) -> None:
    """The index must hold exactly the live records after its first `frames` frames, and their
    sequence numbers must order them as they became live (ids are unique, so distinct numbers)."""
    if set(index.records) != set(live):
        raise Corrupted(f"the index holds {len(index.records)} records, the log {len(live)} at frame {index.frames}")
    for record_id, record in live.items():
        _, indexed = index.records[record_id]
        if (indexed.kind, indexed.version, indexed.fields) != (record.kind, record.version, record.fields):
            raise Corrupted(f"the index holds another version of record {record_id.hex()}")
    # The lookup may name more than is live (an append rewrites only what changed), never less.
    if index.lookups is not None:
        for record_id, record in live.items():
            value, partition = record.fields.get(index.lookup_tag), index.partition_of(record)
            if record.kind == index.partition_kind and value is not None and partition is not None \
                    and partition not in index.lookups.get(value, set()):
                raise Corrupted(f"the index's lookup misses record {record_id.hex()}")
    # Index format 4: each shard's bound is at or above the place in creation order of every
    # passkey revision the index files under that shard (appends and deletions leave it high).
    if index.bounds:
        for record_id, (_, record) in index.records.items():
            partition = index.partition_of(record) if record.kind == index.partition_kind else None
            if partition is None or partition == record.fields.get(index.partition_tag):
                continue
            rp, shard = partition[:-3], struct.unpack(">H", partition[-2:])[0]
            if shard_place(record, record_id) > index.bounds[rp][shard]:
                raise Corrupted(f"the index's bound of shard {shard} of a split RP is below record {record_id.hex()}")
    sequences = [s for s, _ in index.records.values()]
    if len(set(sequences)) != len(sequences) or any(s >= index.next_sequence for s in sequences):
        raise Corrupted("the index's sequence numbers are not distinct, or not below its next one")
