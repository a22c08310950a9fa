"""The synced keychain from the command line: devices of one account, sync delays in real time,
hybrid sign-in, concurrent processes, and what the account store may hold. py_webauthn judges every
response, from every device."""
import concurrent.futures
import json
import pathlib
import shutil
import time

import pytest
from webauthn import (generate_authentication_options, generate_registration_options, options_to_json,
                      verify_authentication_response, verify_registration_response)
from webauthn.helpers.structs import (AuthenticatorSelectionCriteria, ResidentKeyRequirement,
                                      UserVerificationRequirement)

import vault_reader
from conftest import PASSPHRASE, PIN, Authctl, b64url, unb64url, wait_until

RP_ID, ORIGIN = "example.com", "https://example.com"
LAPTOP_PIN = "9753"


@pytest.fixture
def account(authctl):
    """A vault whose first device is `phone` (PIN 4242) and a second, `laptop` (PIN 9753)."""
    result = authctl.run("device", "add", "laptop", env={"AUTHCTL_NEW_PIN": LAPTOP_PIN})
    assert result.code == 0, result.stderr
    devices = authctl.run("--json", "device", "list").json["devices"]
    assert [d["name"] for d in devices] == ["default", "laptop"], devices
    return authctl


def register(tool, user: bytes = b"user-1", name="alice", uv="required", device=None, pin=PIN, extra=(), **kw):
    options = generate_registration_options(
        rp_id=RP_ID, rp_name="RP", user_name=name, user_id=user,
        authenticator_selection=AuthenticatorSelectionCriteria(
            resident_key=ResidentKeyRequirement.REQUIRED, user_verification=UserVerificationRequirement(uv)))
    extra = (["--device", device] if device else []) + list(extra)
    result = tool.register(json.loads(options_to_json(options)), ORIGIN, *extra, env={"AUTHCTL_PIN": pin}, **kw)
    if result.code != 0:
        return result, None
    verified = verify_registration_response(credential=result.json, expected_challenge=options.challenge,
                                            expected_rp_id=RP_ID, expected_origin=ORIGIN,
                                            require_user_verification=(uv == "required"))
    return result, verified


def sign(tool, public_key: bytes, *extra, uv="required", pin=PIN, count=0):
    options = generate_authentication_options(rp_id=RP_ID, user_verification=UserVerificationRequirement(uv))
    result = tool.sign(json.loads(options_to_json(options)), ORIGIN, *extra, env={"AUTHCTL_PIN": pin})
    if result.code != 0:
        return result, None
    verified = verify_authentication_response(
        credential=result.json, expected_challenge=options.challenge, expected_rp_id=RP_ID, expected_origin=ORIGIN,
        credential_public_key=public_key, credential_current_sign_count=count,
        require_user_verification=(uv == "required"))
    return result, verified


def sign_once_arrived(tool, public_key: bytes, *extra, **kw):
    """Signs in as `sign` does, again while the device answers notHandled (the passkey has not
    reached it yet), up to a generous deadline: a loaded machine is slow, not wrong. Returns the
    first other outcome."""
    last = []

    def arrived():
        last[:] = [sign(tool, public_key, *extra, **kw)]
        result = last[0][0]
        return not (result.code == 13 and "notHandled" in result.stderr)

    wait_until(arrived, "the passkey to reach the device", poll=0.1)
    return last[0]


def listed_ids(tool, *extra) -> set:
    return {c["id"] for c in tool.run("--json", *extra, "list").json["credentials"]}


def test_delay_in_real_time_fails_before_and_succeeds_after(account):
    """A passkey made on the phone with 1 s upload and 2 s download reaches the laptop 3 s later:
    before, the laptop has no passkey (notHandled); after, it signs and py_webauthn accepts it.
    The passkey is made after `made` (a timestamp the test takes before the command), so it cannot
    have arrived before made + 3 s; the test signs again until it has, however slowly the machine
    runs, and never waits a fixed time."""
    assert account.run("sync", "set", "--upload-delay", "1s", "--download-delay", "2s").code == 0
    made = time.monotonic()
    result, registration = register(account)
    assert registration is not None, result.stderr
    # BS=0 until the first upload lands.
    assert registration.credential_device_type == "multi_device" and not registration.credential_backed_up

    status = account.run("--json", "sync", "status").json
    laptop = next(d for d in status["devices"] if d["name"] == "laptop")
    if time.monotonic() < made + 3.0:
        assert len(laptop["pendingDownloads"]) == 1, status

    before, _ = sign(account, registration.credential_public_key, "--device", "laptop", pin=LAPTOP_PIN)
    if time.monotonic() < made + 3.0:  # the sign-in ended before the earliest arrival
        assert before.code == 13 and "notHandled" in before.stderr, before.stderr
    listing = account.run("--json", "--device", "laptop", "list").json["credentials"]
    assert listing == [] or time.monotonic() >= made + 3.0

    # Once it has arrived: never before the earliest arrival.
    after, assertion = sign_once_arrived(account, registration.credential_public_key, "--device", "laptop", pin=LAPTOP_PIN)
    assert assertion is not None, after.stderr
    assert time.monotonic() >= made + 3.0
    assert assertion.user_verified and assertion.credential_backed_up
    assert after.json["authenticatorAttachment"] == "platform"
    assert account.run("--json", "sync", "status").json["devices"][1]["pendingDownloads"] == []
    # The phone, too, now reports BS=1 for it.
    _, on_phone = sign(account, registration.credential_public_key)
    assert on_phone.credential_backed_up


def test_backup_state_immediate(account):
    assert account.run("sync", "set", "--upload-delay", "1h", "--backup-state", "immediate").code == 0
    _, registration = register(account)
    assert registration.credential_backed_up


def test_every_device_signs_with_its_own_pin_and_hybrid_reports_cross_platform(account):
    _, registration = register(account)
    key = registration.credential_public_key
    # The laptop's own PIN verifies the user for a passkey the phone made with UV.
    result, laptop = sign(account, key, "--device", "laptop", pin=LAPTOP_PIN)
    assert laptop.user_verified and result.json["authenticatorAttachment"] == "platform"
    # The phone's PIN is not the laptop's.
    wrong, _ = sign(account, key, "--device", "laptop", pin=PIN)
    assert wrong.code == 11, wrong.stderr
    # Hybrid: the laptop signs in with the phone's passkey, the phone verifying with its PIN.
    result, hybrid = sign(account, key, "--device", "laptop", "--via", "default", pin=PIN)
    assert hybrid.user_verified and hybrid.credential_backed_up
    assert result.json["authenticatorAttachment"] == "cross-platform"


def test_hybrid_works_without_a_synced_copy(account):
    assert account.run("sync", "set", "--upload-delay", "1h").code == 0
    _, registration = register(account)
    assert account.run("--json", "--device", "laptop", "list").json["credentials"] == []
    result, hybrid = sign(account, registration.credential_public_key, "--device", "laptop", "--via", "default")
    assert hybrid is not None, result.stderr
    assert result.json["authenticatorAttachment"] == "cross-platform"
    assert not hybrid.credential_backed_up  # the phone's flags: not uploaded yet


def test_hybrid_registration_follows_the_same_rule_as_hybrid_sign_in(account):
    """`register --via` is the rule a scenario's `NAME register … via DEVICE` follows, and
    `sign --via`'s: the phone makes the passkey for the laptop's page with its own PIN and in its
    own store, the response says cross-platform (py_webauthn verifies it), and the laptop holds
    no copy until sync brings one."""
    assert account.run("sync", "set", "--upload-delay", "1h").code == 0
    result, registration = register(account, device="laptop", extra=("--via", "default"))
    assert registration is not None, result.stderr
    assert result.json["authenticatorAttachment"] == "cross-platform" and registration.user_verified
    credential_id = b64url(registration.credential_id)
    assert [c["id"] for c in account.run("--json", "list").json["credentials"]] == [credential_id]
    assert account.run("--json", "--device", "laptop", "list").json["credentials"] == []
    # The phone's PIN verifies; the laptop's does not.
    wrong, _ = register(account, user=b"user-2", name="bob", device="laptop", pin=LAPTOP_PIN, extra=("--via", "default"))
    assert wrong.code == 11, wrong.stderr
    # A device cannot reach itself over hybrid, in either ceremony; nor a device the account lacks.
    for ceremony in ("register", "sign"):
        for via in ("laptop", "tablet"):
            refused = (register(account, device="laptop", extra=("--via", via)) if ceremony == "register"
                       else sign(account, registration.credential_public_key, "--device", "laptop", "--via", via))[0]
            assert refused.code == 64 and "usage" in refused.stderr, (ceremony, via, refused.stderr)
    # The browser asking needs passkey support too.
    assert account.run("device", "unsupported", "laptop", "on").code == 0
    unsupported, _ = register(account, user=b"user-3", name="carol", device="laptop", extra=("--via", "default"))
    assert unsupported.code == 28 and "laptop" in unsupported.stderr, unsupported.stderr


def test_deletion_propagates_and_offline_device_catches_up(account):
    _, registration = register(account)
    credential_id = b64url(registration.credential_id)
    assert account.run("device", "offline", "laptop").code == 0
    assert account.run("delete", credential_id).code == 0
    assert account.run("--json", "list").json["credentials"] == []
    held = account.run("--json", "--device", "laptop", "list").json["credentials"]
    assert [c["id"] for c in held] == [credential_id]
    assert account.run("device", "online", "laptop").code == 0
    assert account.run("--json", "--device", "laptop", "list").json["credentials"] == []


def test_factory_reset_loses_the_replica_and_enrollment_until_sync(account):
    assert account.run("sync", "set", "--download-delay", "1s").code == 0
    _, registration = register(account, device="laptop", pin=LAPTOP_PIN)
    made = {b64url(registration.credential_id)}
    wait_until(lambda: listed_ids(account) == made, "the passkey to reach the phone")  # 1 s after it was made
    assert account.run("device", "reset", "default").code == 0
    status = account.run("--json", "biometry", "status").json
    assert status["enrolled"] is False, status
    # The reset phone downloads everything again, 1 s after the reset.
    wait_until(lambda: listed_ids(account) == made, "the passkey to reach the reset phone")
    # Without biometry the reset phone cannot verify the user for it; with a new PIN it can.
    refused, _ = sign(account, registration.credential_public_key)
    assert refused.code == 13, refused.stderr
    assert account.run("biometry", "enroll", env={"AUTHCTL_NEW_PIN": "1234"}).code == 0
    _, assertion = sign(account, registration.credential_public_key, pin="1234")
    assert assertion is not None and assertion.user_verified


def test_concurrent_processes_on_two_devices_lose_no_update(account):
    """Eight registrations on the phone and eight on the laptop, all at once in separate processes;
    then every passkey is on both devices."""
    def job(i):
        device, pin = ("default", PIN) if i % 2 == 0 else ("laptop", LAPTOP_PIN)
        result, verified = register(account, user=f"user-{i}".encode(), name=f"user{i}", device=device, pin=pin)
        assert verified is not None, result.stderr
        return b64url(verified.credential_id)

    with concurrent.futures.ThreadPoolExecutor(max_workers=16) as pool:
        made = set(pool.map(job, range(16)))
    assert len(made) == 16
    for device in ("default", "laptop"):
        held = {c["id"] for c in account.run("--json", "--device", device, "list").json["credentials"]}
        assert held == made, device
    # Concurrent deletions on both devices, likewise.
    ids = sorted(made)

    def delete(i):
        device = "default" if i % 2 == 0 else "laptop"
        result = account.run("--device", device, "delete", ids[i])
        assert result.code == 0, result.stderr

    with concurrent.futures.ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(delete, range(8)))
    for device in ("default", "laptop"):
        held = {c["id"] for c in account.run("--json", "--device", device, "list").json["credentials"]}
        assert held == set(ids[8:]), device
    assert account.run("vault", "check").code == 0


def test_store_holds_no_plaintext(account):
    """The account store holds only ciphertext: no private key, public key, credential id, user
    handle, name or RP ID, in raw bytes, hex or base64url."""
    user = b"store-secret-user-handle"
    name = "store.secret.alice@example.com"
    _, registration = register(account, user=user, name=name)
    _, laptop_made = register(account, user=b"second-handle-xyz", name="laptop.person@example.com",
                              device="laptop", pin=LAPTOP_PIN)
    files = [p for p in (account.vault / "cloud").rglob("*") if p.is_file()]
    blobs = [p.read_bytes() for p in files]
    assert any(p.parent.name == "log" for p in files), "nothing reached the store"
    names = b"".join(p.name.encode() for p in files)

    vault = vault_reader.open_vault(account.vault, PASSPHRASE.encode())
    secrets = [user, name.encode(), b"second-handle-xyz", b"laptop.person@example.com", RP_ID.encode()]
    for made in (registration, laptop_made):
        record = next(r for r in vault.credential_records()
                      if r.fields.get(vault_reader.T_CREDENTIAL_ID) == made.credential_id
                      and vault_reader.T_SEALED_PRIVATE_KEY in r.fields)
        der = vault.private_key_der(record, pin=PIN.encode())
        scalar = der[7:39]  # ECPrivateKey: 30 len 02 01 01 04 20 <d>
        assert der[5:7] == b"\x04\x20"
        secrets += [scalar, der, made.credential_id, made.credential_public_key[-32:]]
    for secret in secrets:
        for form in (secret, secret.hex().encode(), b64url(secret).encode()):
            assert all(form not in blob for blob in blobs), secret
            assert form not in names


def test_device_command_errors(account):
    duplicate = account.run("device", "add", "laptop", env={"AUTHCTL_NEW_PIN": "1111"})
    assert duplicate.code == 65 and "laptop" in duplicate.stderr, duplicate.stderr
    unknown = account.run("--device", "tablet", "list")
    assert unknown.code == 64 and "tablet" in unknown.stderr, unknown.stderr
    env_unknown = account.run("list", env={"AUTHCTL_DEVICE": "watch"})
    assert env_unknown.code == 64 and "watch" in env_unknown.stderr
    assert account.run("device", "remove", "default").code == 65  # not the first device
    assert account.run("device", "offline", "tablet").code == 64
    wrong_approval = account.run("device", "add", "tablet", env={"AUTHCTL_NEW_PIN": "1111", "AUTHCTL_PIN": "0000"})
    assert wrong_approval.code == 11, wrong_approval.stderr
    assert [d["name"] for d in account.run("--json", "device", "list").json["devices"]] == ["default", "laptop"]
    for bad in ("5", "-1s", "1s..", "2s..1s", "1x", "", "99999999999h"):
        result = account.run("sync", "set", "--upload-delay", bad)
        assert result.code == 64, (bad, result.stderr)
    assert account.run("sync", "set", "--seed", "x").code == 64
    assert account.run("device", "remove", "laptop").code == 0
    assert account.run("--device", "laptop", "list").code == 64


def test_device_list_and_sync_status_text(account):
    assert account.run("sync", "set", "--upload-delay", "1h").code == 0
    register(account)
    table = account.run("device", "list").stdout.splitlines()
    assert table[0].split() == ["DEVICE", "ONLINE", "BIOMETRY", "PASSKEYS", "PENDING", "UP/DOWN"]
    # Columns line up: each header starts where its cells do.
    column = table[0].index("PASSKEYS")
    assert [line[column] for line in table[1:]] == ["1", "0"]
    status = account.run("sync", "status").stdout
    assert "uploads" in status and "in 59m59" in status or "in 3599" in status or "in 1h" in status, status


def test_device_bound_passkey_stays_on_its_device(account):
    result, registration = register(account, device="laptop", pin=LAPTOP_PIN, extra=("--device-bound",))
    assert registration is not None, result.stderr
    assert not registration.credential_backed_up and registration.credential_device_type == "single_device"
    assert account.run("--json", "list").json["credentials"] == []  # not on the phone
    assert account.run("--json", "--device", "laptop", "list").json["credentials"][0]["backupEligible"] is False
    store = account.vault / "cloud" / "log"
    assert not store.exists() or list(store.iterdir()) == []


def test_an_unusable_store_is_set_aside_with_a_warning(account):
    _, registration = register(account)
    (account.vault / "cloud").chmod(0o777)
    listed = account.run("--json", "--device", "laptop", "list")
    assert listed.code == 0
    assert "authctl: warning: the account store at" in listed.stderr and "not used" in listed.stderr
    assert [c["id"] for c in json.loads(listed.stdout)["credentials"]] == [b64url(registration.credential_id)]
    _, second = register(account, user=b"user-2", name="bob", device="laptop", pin=LAPTOP_PIN)
    assert second is not None
    status = account.run("--json", "sync", "status").json
    assert status["storeProblem"] and "not used" in status["storeProblem"]
    (account.vault / "cloud").chmod(0o700)
    assert account.run("--json", "sync", "status").json.get("storeProblem") is None
    assert len(account.run("--json", "list").json["credentials"]) == 2


def test_a_store_problem_is_the_same_warning_on_the_command_lines_stderr_and_in_the_servers_json(account, tmp_path):
    from test_serve_hostile import vault_server
    _, registration = register(account)
    assert registration is not None
    (account.vault / "cloud").chmod(0o777)
    try:
        listed = account.run("list")
        assert listed.code == 0, listed.stderr
        said = [line for line in listed.stderr.splitlines() if line.startswith("authctl: warning: ")]
        assert len(said) == 1 and "not used" in said[0], listed.stderr
        warning = said[0][len("authctl: warning: "):]
        # Served, the same store problem is a `warnings` member of the first answer that found it, once.
        server = vault_server(account, tmp_path)
        try:
            status = server.call("GET", "/accounts/vault/sync")
            assert status.status == 200 and status.json["warnings"] == [warning], status.body[:500]
            assert status.json["storeProblem"] == warning
            again = server.call("GET", "/accounts/vault/sync")
            assert again.status == 200 and "warnings" not in again.json
            code, _ = server.terminate()
            assert code == 0, server.stderr()
            assert "warning" not in server.stderr()
        finally:
            server.kill()
    finally:
        (account.vault / "cloud").chmod(0o700)


def test_removed_device_leaves_what_it_uploaded(account):
    _, made = register(account, device="laptop", pin=LAPTOP_PIN)
    assert account.run("device", "remove", "laptop").code == 0
    shutil.rmtree(account.vault / "cloud")  # even without the store's copy
    assert [c["id"] for c in account.run("--json", "list").json["credentials"]] == [b64url(made.credential_id)]
    assert account.run("device", "add", "laptop", env={"AUTHCTL_NEW_PIN": LAPTOP_PIN}).code == 0  # the name is free
    assert len(account.run("--json", "--device", "laptop", "list").json["credentials"]) == 1


def test_former_pin_guesses_lock_out(account):
    assert account.run("device", "reset", "laptop").code == 0
    for guess in ("0001", "0002", "0003", "0004", "0005"):
        wrong = account.run("--device", "laptop", "biometry", "enroll", env={"AUTHCTL_PIN": guess, "AUTHCTL_NEW_PIN": "3333"})
        assert wrong.code == 11, wrong.stderr
    locked = account.run("--device", "laptop", "biometry", "enroll", env={"AUTHCTL_PIN": LAPTOP_PIN, "AUTHCTL_NEW_PIN": "3333"})
    assert locked.code == 18, locked.stderr
    assert account.run("--json", "--device", "laptop", "biometry", "status").json["lockedOut"] is True
    assert account.run("--device", "laptop", "biometry", "unlock").code == 0
    again = account.run("--device", "laptop", "biometry", "enroll", env={"AUTHCTL_PIN": LAPTOP_PIN, "AUTHCTL_NEW_PIN": "3333"})
    assert again.code == 0, again.stderr


def test_an_approver_that_is_no_device_is_a_usage_error(account):
    for args in (["device", "add", "tablet", "--no-biometry", "--approve-with", "watch"],
                 ["biometry", "enroll", "--approve-with", "watch"]):
        result = account.run(*args, env={"AUTHCTL_NEW_PIN": "5555"})
        assert result.code == 64 and "watch" in result.stderr, (args, result.stderr)


def test_a_megabyte_user_name_is_kept_to_64_bytes_and_every_store_object_reads_back(account, tmp_path):
    """A 1 MiB options file whose user.name fills it made a store object over the store's own 1 MiB
    read limit: never read back, uploaded again by every writer. The authenticator keeps 64 bytes
    of a name, cut at a character boundary (CTAP 2.1 §6.1, WebAuthn L3 §6.4.1)."""
    options = json.loads(options_to_json(generate_registration_options(rp_id=RP_ID, rp_name="RP", user_name="x",
                                                                       user_id=b"big-name")))
    options["user"]["name"] = "€" + "n" * (1_048_000 - 200)
    options["user"]["displayName"] = "D" * 70
    path = tmp_path / "big.json"
    path.write_text(json.dumps(options))
    assert path.stat().st_size <= 1 << 20
    made = account.run("register", "--origin", ORIGIN, "--options", str(path))
    assert made.code == 0, made.stderr
    for _ in range(3):  # writers after it: nothing is uploaded again
        assert account.run("--device", "laptop", "sign", "--origin", ORIGIN, env={"AUTHCTL_PIN": LAPTOP_PIN}).code == 0
    [listed] = account.run("--json", "--device", "laptop", "list").json["credentials"]
    assert listed["userName"] == "€" + "n" * 61 and len(listed["userName"].encode()) == 64
    assert listed["userDisplayName"] == "D" * 64
    objects = list((account.vault / "cloud" / "log").iterdir())
    assert objects and all(o.stat().st_size < 64 * 1024 for o in objects), [o.stat().st_size for o in objects]
    assert account.run("--json", "sync", "status").json.get("storeProblem") is None


def fnv(data: bytes) -> bytes:
    h = 0xcbf29ce484222325
    for b in data:
        h = ((h ^ b) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h.to_bytes(8, "big")


def append_store_object(store: pathlib.Path, object_id: bytes, payload: bytes) -> int:
    """Appends an object to a directory store as another writer of it would (docs/vault-format.md,
    "The account store"): the framed object, then the counter moved past it."""
    state = (store / "state").read_bytes()
    assert state[:8] == b"ASTSTAT1" and fnv(state[:24]) == state[24:]
    snapshot, head = int.from_bytes(state[8:16], "big"), int.from_bytes(state[16:24], "big")
    sequence = head + 1
    framed = b"ASTOBJ01" + sequence.to_bytes(8, "big") + bytes([len(object_id)]) + object_id + payload
    (store / "log" / f"{sequence:016x}").write_bytes(framed + fnv(framed))
    body = b"ASTSTAT1" + snapshot.to_bytes(8, "big") + sequence.to_bytes(8, "big")
    (store / "state").write_bytes(body + fnv(body))
    return sequence


def test_an_object_the_store_cannot_read_is_a_store_problem(account):
    _, registration = register(account)
    store = account.vault / "cloud"
    big = append_store_object(store, b"\xab" * 16, b"x")
    (store / "log" / f"{big:016x}").write_bytes(b"\0" * ((1 << 20) + 4096))  # over the store's read limit
    damaged = append_store_object(store, b"\xcd" * 16, b"damaged")  # does not open under the account key
    status = account.run("--json", "sync", "status")
    assert status.code == 0, status.stderr
    problem = status.json["storeProblem"]
    assert status.json["storeInUse"] is True
    assert "2 object(s) that cannot be read" in problem and f"change {big} (" in problem and f"change {damaged} (" in problem
    text = account.run("sync", "status")
    assert text.code == 0 and "store problem: " in text.stdout
    # Passed over, not trusted: every device still holds the passkey, from the vault.
    listed = account.run("--json", "--device", "laptop", "list").json["credentials"]
    assert [c["id"] for c in listed] == [b64url(registration.credential_id)]


def test_two_vaults_sharing_one_store_sync_through_it_alone(authctl, tmp_path):
    """A device in a vault of its own (`device add --vault-dir`) learns the account's passkeys
    from the store alone: a passkey made with user verification in the first vault signs in the
    second after the download delay, with the second device's own PIN, and one made there signs
    back in the first; py_webauthn verifies each. `sync rebuild` forgets the second vault's copy
    of the store (cursor, queue, replicas) and gets the same passkeys back from the store."""
    assert authctl.run("sync", "set", "--download-delay", "2s").code == 0
    second = tmp_path / "desk-vault"
    added = authctl.run("device", "add", "desk", "--vault-dir", str(second), "--kdf", "min", env={"AUTHCTL_NEW_PIN": LAPTOP_PIN})
    assert added.code == 0, added.stderr
    desk = Authctl(second)
    # Each lists the account's devices, its own first (the store's directory).
    assert [d["name"] for d in desk.run("--json", "device", "list").json["devices"]] == ["desk", "default"]
    assert [d["name"] for d in authctl.run("--json", "device", "list").json["devices"]] == ["default", "desk"]

    made = time.monotonic()
    result, registration = register(authctl)
    assert registration is not None, result.stderr
    early, _ = sign(desk, registration.credential_public_key, pin=LAPTOP_PIN)
    if time.monotonic() < made + 2.0:
        assert early.code == 13 and "notHandled" in early.stderr, early.stderr
    result, assertion = sign_once_arrived(desk, registration.credential_public_key, pin=LAPTOP_PIN)
    assert assertion is not None, result.stderr
    assert time.monotonic() >= made + 2.0
    assert assertion.user_verified and assertion.credential_backed_up
    assert result.json["id"] == b64url(registration.credential_id)
    # The desk's own PIN, not the first vault's.
    wrong, _ = sign(desk, registration.credential_public_key, pin=PIN)
    assert wrong.code == 11, wrong.stderr

    result, from_desk = register(desk, user=b"user-2", name="bob", uv="discouraged", pin=LAPTOP_PIN)
    assert from_desk is not None, result.stderr
    back, verified = sign_once_arrived(authctl, from_desk.credential_public_key, "--credential", b64url(from_desk.credential_id),
                                       uv="discouraged")
    assert verified is not None, back.stderr
    # What the store holds: only ciphertext, of both vaults' passkeys.
    blobs = b"".join(p.read_bytes() for p in (authctl.vault / "cloud").rglob("*") if p.is_file())
    for secret in (registration.credential_id, from_desk.credential_id, RP_ID.encode(), b"alice", b"bob"):
        assert secret not in blobs

    checked = desk.run("vault", "check")
    assert checked.code == 0, checked.stderr
    listed = sorted(c["id"] for c in desk.run("--json", "list").json["credentials"])
    rebuilt = desk.run("sync", "rebuild")
    assert rebuilt.code == 0, rebuilt.stderr
    assert sorted(c["id"] for c in desk.run("--json", "list").json["credentials"]) == listed
    result, again = sign(desk, registration.credential_public_key, "--credential", b64url(registration.credential_id),
                         pin=LAPTOP_PIN, count=0)
    assert again is not None, result.stderr
    # The first vault still receives what the desk makes after the rebuild.
    result, later = register(desk, user=b"user-3", name="carol", uv="discouraged", pin=LAPTOP_PIN)
    assert later is not None, result.stderr
    wait_until(lambda: b64url(later.credential_id) in listed_ids(authctl), "the desk's passkey to reach the first vault")


def two_vaults(authctl, tmp_path):
    """The first vault (device `default`) and a second sharing its store (device `desk`), no delays."""
    second = tmp_path / "desk-vault"
    added = authctl.run("device", "add", "desk", "--vault-dir", str(second), "--kdf", "min", env={"AUTHCTL_NEW_PIN": LAPTOP_PIN})
    assert added.code == 0, added.stderr
    return Authctl(second)


def item_records(tool, credential_id: bytes, store=False) -> int:
    """How many records of the passkey `credential_id` the vault (or its store) holds."""
    vault = vault_reader.open_vault(tool.vault, PASSPHRASE.encode())
    records = vault.store_records(tool.vault / "cloud") if store else vault.credential_records()
    return sum(1 for r in records if r.fields.get(1) == credential_id)


def test_every_vault_lists_the_account_s_devices_from_the_store_and_refuses_their_names(authctl, tmp_path):
    """Each vault publishes its devices in the store's directory: the second vault lists the
    first's device, the first the second's, each marked with the vault it lives in; a name taken in
    the other vault is refused for `device add` (badInput, as a name taken in the same vault), in either vault."""
    assert authctl.run("device", "add", "laptop", env={"AUTHCTL_NEW_PIN": LAPTOP_PIN}).code == 0
    desk = two_vaults(authctl, tmp_path)
    mine = desk.run("--json", "device", "list").json["devices"]
    assert [(d["name"], d["vault"] == "this") for d in mine] == [("desk", True), ("default", False), ("laptop", False)]
    assert mine[1].get("passkeys") is None and mine[1]["vault"] == mine[2]["vault"] != "this"
    first = authctl.run("--json", "device", "list").json["devices"]
    assert [(d["name"], d["vault"] == "this") for d in first] == [("default", True), ("laptop", True), ("desk", False)]
    assert "VAULT" in desk.run("device", "list").stdout
    taken = desk.run("device", "add", "laptop", env={"AUTHCTL_NEW_PIN": "1357"})
    assert taken.code == 65 and "in another vault" in taken.stderr, taken.stderr
    again = authctl.run("device", "add", "desk", env={"AUTHCTL_NEW_PIN": "1357"})
    assert again.code == 65 and "in another vault" in again.stderr, again.stderr
    # Removed in its vault, the name is free in the other again.
    assert authctl.run("device", "remove", "laptop").code == 0
    assert [d["name"] for d in desk.run("--json", "device", "list").json["devices"]] == ["desk", "default"]
    assert desk.run("device", "add", "laptop", env={"AUTHCTL_NEW_PIN": "1357", "AUTHCTL_PIN": LAPTOP_PIN}).code == 0


def test_sync_set_in_one_vault_changes_the_delays_the_other_uses(authctl, tmp_path):
    """`sync set` publishes the account's settings in the store; the other vault takes them up at
    its next command, and a passkey made there then waits for the new upload delay."""
    desk = two_vaults(authctl, tmp_path)
    assert desk.run("sync", "set", "--upload-delay", "30s", "--seed", "9").code == 0
    status = authctl.run("--json", "sync", "status").json
    assert (status["uploadDelay"], status["seed"]) == ("30s", 9), status
    result, registration = register(authctl)
    assert registration is not None, result.stderr
    pending = authctl.run("--json", "sync", "status").json["devices"][0]["pendingUploads"]
    assert [p["credentialId"] for p in pending] == [b64url(registration.credential_id)]
    assert pending[0]["at"] - pending[0]["changedAt"] == 30_000
    # And back: a later change in the first vault travels to the second.
    assert authctl.run("sync", "set", "--download-delay", "4s").code == 0
    assert desk.run("--json", "sync", "status").json["downloadDelay"] == "4s"
    assert desk.run("--json", "sync", "status").json["uploadDelay"] == "30s"


def test_a_deletion_is_collected_only_once_every_vault_s_device_has_read_it(authctl, tmp_path):
    """A deletion made in the first vault stays (its passkey's records with it) while the second
    vault's device has not read it, and is collected — from the first vault, and from the store at
    its next compaction — once that device has acknowledged it in the store's directory."""
    desk = two_vaults(authctl, tmp_path)
    result, registration = register(authctl)
    assert registration is not None, result.stderr
    cred = registration.credential_id
    # The desk has it, and signs with it (py_webauthn verifies).
    result, verified = sign(desk, registration.credential_public_key, pin=LAPTOP_PIN)
    assert verified is not None, result.stderr
    assert authctl.run("delete", b64url(cred)).code == 0
    result, _ = register(authctl, user=b"user-9", name="zed")  # a writer, after the deletion
    assert item_records(authctl, cred) >= 2, "collected while the desk had not read the deletion"
    # The desk reads it (a command that writes acknowledges it), and collects it itself.
    result, own = register(desk, user=b"user-2", name="bob", uv="discouraged", pin=LAPTOP_PIN)
    assert own is not None, result.stderr
    assert item_records(desk, cred) == 0
    result, _ = register(authctl, user=b"user-8", name="yan")
    assert item_records(authctl, cred) == 0
    assert item_records(authctl, cred, store=True) >= 2
    # Compaction (after more than 32 changes) leaves it out of the store's snapshot.
    for n in range(34):
        result, _ = register(authctl, user=b"bulk-%d" % n, name="bulk%d" % n, uv="discouraged")
        assert result.code == 0, result.stderr
    assert (authctl.vault / "cloud" / "snapshot").is_dir() and any((authctl.vault / "cloud" / "snapshot").iterdir())
    assert item_records(authctl, cred, store=True) == 0
    assert b64url(cred) not in {c["id"] for c in desk.run("--json", "list").json["credentials"]}


def test_a_late_revision_of_a_collected_passkey_brings_it_back_in_neither_vault(authctl, tmp_path):
    """The desk signs with a counting passkey after the first vault deleted it, before the deletion
    reached it (a 5 s download delay of its own): its sign-count revision uploads, but the first
    vault, which has collected the passkey, drops it; and once the desk has the deletion the
    passkey is gone there too, for good."""
    desk = two_vaults(authctl, tmp_path)
    assert desk.run("sync", "set", "--device", "desk", "--download-delay", "3s").code == 0
    result, registration = register(authctl, extra=["--sign-counter"])
    assert registration is not None, result.stderr
    cred = b64url(registration.credential_id)
    wait_until(lambda: sign(desk, registration.credential_public_key, pin=LAPTOP_PIN)[1] is not None, "the desk to hold the passkey")
    assert authctl.run("delete", cred).code == 0
    # The desk has not received the deletion: it still signs, and counts.
    result, late = sign(desk, registration.credential_public_key, pin=LAPTOP_PIN, count=1)
    assert late is not None and late.new_sign_count >= 2, result.stderr
    wait_until(lambda: cred not in {c["id"] for c in desk.run("--json", "list").json["credentials"]}, "the deletion to reach the desk")
    register(desk, user=b"user-2", name="bob", uv="discouraged", pin=LAPTOP_PIN)  # the desk acknowledges it
    register(authctl, user=b"user-3", name="cat", uv="discouraged")               # the first vault collects
    assert item_records(authctl, registration.credential_id) == 0
    for n, (tool, pin) in enumerate(((authctl, PIN), (desk, LAPTOP_PIN))):
        assert cred not in {c["id"] for c in tool.run("--json", "list").json["credentials"]}
        register(tool, user=b"user-5%d" % n, name="dan", uv="discouraged", pin=pin)
        assert cred not in {c["id"] for c in tool.run("--json", "list").json["credentials"]}
        result, _ = sign(tool, registration.credential_public_key, "--credential", cred, pin=pin)
        assert result.code != 0


def test_a_store_that_cannot_be_used_never_shows_a_recovery_secret(tmp_path):
    # The secret is shown once the store is claimed for the new account, before anything is made:
    # a script that keeps what init prints never keeps a secret of an account that was not made.
    store = tmp_path / "store"
    first = Authctl(tmp_path / "first" / "vault").run("init", "--store", str(store), "--kdf", "min")
    assert first.code == 0 and len(first.stdout.strip()) == 29, first.stderr
    (tmp_path / "a-file").write_text("")
    for address, code in (("relative", 65), (str(store), 65), (str(tmp_path / "a-file" / "store"), 31)):
        tool = Authctl(tmp_path / f"other-{len(address)}" / "vault")
        refused = tool.run("init", "--store", address, "--kdf", "min")
        assert refused.code == code and refused.stdout == "", (address, refused.stdout, refused.stderr)
        assert not tool.vault.exists()


def test_a_store_path_that_is_not_a_directory_is_store_unavailable_and_left_as_it_is(tmp_path):
    # docs/errors.md: a store directory that is a symbolic link or not a directory cannot be used
    # (31), whatever it is or points to; only a real directory holding something else is badInput.
    (tmp_path / "a-file").write_text("keep")
    full = tmp_path / "full"
    full.mkdir()
    (full / "notes").write_text("keep")
    links = {"to-full": full, "to-file": tmp_path / "a-file", "dangling": tmp_path / "nowhere"}
    for name, target in links.items():
        (tmp_path / name).symlink_to(target)
    for address in ["a-file", *links]:
        tool = Authctl(tmp_path / f"vault-{address}")
        refused = tool.run("--json", "init", "--store", str(tmp_path / address), "--kdf", "min")
        assert refused.code == 31 and json.loads(refused.stderr)["error"] == "storeUnavailable", (address, refused.stderr)
        assert refused.stdout == "" and not tool.vault.exists()
    assert (tmp_path / "a-file").read_text() == "keep" and (full / "notes").read_text() == "keep" and len(list(full.iterdir())) == 1
    assert all((tmp_path / name).is_symlink() for name in links) and not (tmp_path / "nowhere").exists()
    refused = Authctl(tmp_path / "vault-full").run("init", "--store", str(full), "--kdf", "min")
    assert refused.code == 65 and "neither empty nor an account store" in refused.stderr, refused.stderr
