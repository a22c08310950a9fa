"""An account whose store is a PostgreSQL server (docs/sync.md, "An account on a server"):
`init --store` makes it, `init --join` on another vault joins it — approved by an enrolled
device's PIN (`device approve CODE`) or with the recovery secret — and passkeys cross between the
vaults through the server alone, verified by py_webauthn; the server sees only ciphertext; a
device that cannot reach the server keeps working and catches up once it can."""
import json
import signal
import subprocess
import time

import nacl.bindings
import nacl.encoding
import nacl.hash
import nacl.pwhash
import pytest

from conftest import BIN, PIN, Authctl, b64url, own_environment, wait_until
from postgres_support import Cluster
from test_sync import LAPTOP_PIN, RP_ID, register, sign, sign_once_arrived


@pytest.fixture(scope="module")
def cluster():
    made = Cluster()
    yield made
    made.destroy()


def shared_account(cluster, tmp_path, account: str, *extra):
    """The phone's vault, first device of a new account on the cluster; and its recovery secret."""
    phone = Authctl(tmp_path / "phone")
    recovery = tmp_path / "recovery"
    made = phone.run("init", "--store", cluster.address(account), "--device", "phone", "--kdf", "min",
                     "--recovery-file", str(recovery), *extra)
    assert made.code == 0, made.stderr
    assert made.stdout == "" and oct(recovery.stat().st_mode & 0o777) == "0o600"
    return phone, recovery.read_text().strip()


def start_join(tool, address, device="laptop", *extra, pin=LAPTOP_PIN):
    """Starts `init --join`; returns the process and the code it printed."""
    env = dict(tool.env, AUTHCTL_PIN=pin)
    proc = subprocess.Popen([BIN, "init", "--join", address, "--device", device, "--kdf", "min", *extra], env=env,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    code = proc.stdout.readline().strip()
    assert len(code) == 14, (code, proc.stderr.read() if proc.poll() is not None else "")
    return proc, code


def join(phone, tool, address, device="laptop"):
    proc, code = start_join(tool, address, device)
    approved = phone.run("device", "approve", code.lower())  # case does not matter
    assert approved.code == 0, approved.stderr
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    return tool


def test_a_passkey_crosses_vaults_through_the_server_and_the_server_sees_only_ciphertext(cluster, tmp_path):
    phone, _ = shared_account(cluster, tmp_path, "crossing")
    assert phone.run("sync", "set", "--download-delay", "2s").code == 0
    laptop = join(phone, Authctl(tmp_path / "laptop"), cluster.address("crossing"))
    assert [d["name"] for d in laptop.run("--json", "device", "list").json["devices"]] == ["laptop", "phone"]
    assert [d["name"] for d in phone.run("--json", "device", "list").json["devices"]] == ["phone", "laptop"]

    made = time.monotonic()
    result, registration = register(phone)
    assert registration is not None, result.stderr
    early, _ = sign(laptop, registration.credential_public_key, pin=LAPTOP_PIN)
    if time.monotonic() < made + 2.0:
        assert early.code == 13 and "notHandled" in early.stderr, early.stderr
    result, assertion = sign_once_arrived(laptop, registration.credential_public_key, pin=LAPTOP_PIN)
    assert assertion is not None, result.stderr
    assert time.monotonic() >= made + 2.0
    # Made with user verification on the phone, it opens on the laptop with the laptop's PIN: the
    # approval carried the account's biometry key.
    assert assertion.user_verified and assertion.credential_backed_up
    wrong, _ = sign(laptop, registration.credential_public_key, pin=PIN)
    assert wrong.code == 11, wrong.stderr

    result, back = register(laptop, user=b"user-2", name="bob", uv="discouraged", pin=LAPTOP_PIN)
    assert back is not None, result.stderr
    result, verified = sign_once_arrived(phone, back.credential_public_key, "--credential", b64url(back.credential_id), uv="discouraged")
    assert verified is not None, result.stderr

    # What the server holds of the account: ciphertext only.
    held = cluster.sql("SELECT encode(string_agg(bytes, ''::bytea), 'hex') FROM (SELECT bytes FROM authctl_changes "
                       "UNION ALL SELECT bytes FROM authctl_metadata UNION ALL SELECT bytes FROM authctl_snapshot) t")
    for secret in (registration.credential_id, back.credential_id, RP_ID.encode(), b"alice", b"bob", b"laptop", b"phone"):
        assert secret.hex() not in held


def test_joining_with_the_recovery_secret_and_what_is_refused(cluster, tmp_path):
    phone, secret = shared_account(cluster, tmp_path, "recovering")
    address = cluster.address("recovering")
    result, registration = register(phone)
    assert registration is not None, result.stderr
    # The recovery secret: no approval needed; the biometry key came with it.
    tablet = Authctl(tmp_path / "tablet")
    joined = tablet.run("init", "--join", address, "--recovery", "--device", "tablet", "--kdf", "min",
                        env={"AUTHCTL_RECOVERY_SECRET": secret.lower().replace("-", " "), "AUTHCTL_PIN": LAPTOP_PIN})
    assert joined.code == 0, joined.stderr
    result, assertion = sign_once_arrived(tablet, registration.credential_public_key, pin=LAPTOP_PIN)
    assert assertion is not None and assertion.user_verified, result.stderr
    # A wrong secret opens nothing, and makes no vault.
    wrong = Authctl(tmp_path / "wrong")
    bad = wrong.run("init", "--join", address, "--recovery", "--device", "pc", "--kdf", "min",
                    env={"AUTHCTL_RECOVERY_SECRET": "0000-0000-0000-0000-0000-0000"})
    assert bad.code == 20 and "vaultLocked" in bad.stderr and "wrong recovery secret" in bad.stderr, bad.stderr
    assert not (tmp_path / "wrong").exists()
    # A code no device waits with; a name the account has (both sides told); an account the
    # server does not hold; a second account on a store that holds one.
    mistyped = phone.run("device", "approve", "AAAA-BBBB-CCCC")
    assert mistyped.code == 65 and "no device is waiting to join" in mistyped.stderr, mistyped.stderr
    proc, code = start_join(Authctl(tmp_path / "dup"), address, "tablet")
    taken = phone.run("device", "approve", code)
    assert taken.code == 65 and "already has a device named 'tablet'" in taken.stderr, taken.stderr
    _, err = proc.communicate(timeout=120)
    assert proc.returncode != 0 and "refused" in err and "tablet" in err, err
    assert not (tmp_path / "dup").exists()
    absent = Authctl(tmp_path / "absent").run("init", "--join", cluster.address("nobody-made-this"), "--device", "x", "--kdf", "min",
                                              "--no-biometry")
    assert absent.code != 0 and "holds no account 'nobody-made-this'" in absent.stderr, absent.stderr
    again = Authctl(tmp_path / "again").run("init", "--store", address, "--kdf", "min", "--no-biometry")
    assert again.code == 65 and "already holds an account" in again.stderr, again.stderr
    # Nobody approves in time: timedOut, no vault, the request withdrawn.
    late = Authctl(tmp_path / "late")
    proc, code = start_join(late, address, "late", "--approval-timeout", "1s")
    _, err = proc.communicate(timeout=120)
    assert proc.returncode != 0 and "timedOut" in err, err
    assert not (tmp_path / "late").exists()
    assert phone.run("device", "approve", code).code == 65


def test_a_device_that_cannot_reach_the_server_keeps_working_and_catches_up(cluster, tmp_path):
    """The server down: each vault warns, works from its replica and queues what it makes; once
    the server is back, what each made reaches the other."""
    phone, _ = shared_account(cluster, tmp_path, "offline")
    laptop = join(phone, Authctl(tmp_path / "laptop"), cluster.address("offline"))
    cluster.stop()
    try:
        result, registration = register(phone)
        assert registration is not None, result.stderr
        assert "is not used" in result.stderr and "cannot connect" in result.stderr, result.stderr
        status = laptop.run("--json", "sync", "status")
        assert status.code == 0 and "cannot connect" in status.json["storeProblem"], status.stdout
        early, _ = sign(laptop, registration.credential_public_key, pin=LAPTOP_PIN)
        assert early.code == 13, early.stderr
    finally:
        cluster.start()
    # The phone's next command that writes uploads what it queued (a reader writes nothing); then
    # the laptop has it.
    assert phone.run("list").code == 0
    early, _ = sign(laptop, registration.credential_public_key, pin=LAPTOP_PIN)
    assert early.code == 13, early.stderr
    synced = phone.run("--json", "sync", "now")
    assert synced.code == 0 and "storeProblem" not in synced.json, synced.stdout
    result, assertion = sign_once_arrived(laptop, registration.credential_public_key, pin=LAPTOP_PIN)
    assert assertion is not None, result.stderr


def test_an_account_a_server_makes_on_a_store_is_joined_from_the_command_line(cluster, tmp_path):
    """`POST /accounts` with a `store`: the answer carries the recovery secret; a vault on
    another machine joins with it, and a passkey the served account registers over HTTP signs in
    there (py_webauthn verifies it). A store that holds an account is refused, and one that
    cannot be reached is the request's problem."""
    from test_serve import call
    from webauthn import generate_registration_options, options_to_json, verify_registration_response

    env = own_environment(tmp_path)
    proc = subprocess.Popen([BIN, "serve"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        url = proc.stdout.readline().split()[-1]
        token = proc.stdout.readline().split()[-1]
        server = (url, token)
        address = cluster.address("served")
        status, _, account = call(server, "POST", "/accounts", {"devices": [{"name": "phone", "pin": PIN}], "store": address})
        assert status == 201 and account["storage"] == "vault" and len(account["recoverySecret"]) == 29, account
        status, _, problem = call(server, "POST", "/accounts", {"store": address})
        assert status == 400 and "already holds an account" in problem["detail"], problem
        status, _, problem = call(server, "POST", "/accounts", {"store": cluster.address("other"), "storage": "memory"})
        assert status == 400, problem
        # A server nothing listens on: the request's store cannot be used, which is no failure of
        # the server's (never a 5xx).
        status, _, problem = call(server, "POST", "/accounts", {"store": "postgresql://authctl@127.0.0.1:1/keys#nobody"})
        assert status == 422 and problem["name"] == "storeUnavailable" and "Connection refused" in problem["detail"], problem

        options = generate_registration_options(rp_id=RP_ID, rp_name="RP", user_name="alice", user_id=b"alice")
        status, _, response = call(server, "POST", f"/accounts/{account['id']}/devices/phone/register",
                                   {"options": json.loads(options_to_json(options)), "origin": "https://" + RP_ID})
        assert status == 200, response
        registered = verify_registration_response(credential=response, expected_challenge=options.challenge,
                                                  expected_rp_id=RP_ID, expected_origin="https://" + RP_ID)
        laptop = Authctl(tmp_path / "laptop")
        joined = laptop.run("init", "--join", address, "--recovery", "--device", "laptop", "--kdf", "min",
                            env={"AUTHCTL_RECOVERY_SECRET": account["recoverySecret"], "AUTHCTL_PIN": LAPTOP_PIN})
        assert joined.code == 0, joined.stderr
        result, assertion = sign_once_arrived(laptop, registered.credential_public_key, pin=LAPTOP_PIN)
        assert assertion is not None, result.stderr
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 0


def test_what_a_hostile_user_tries_on_a_shared_store(cluster, tmp_path):
    """Four `init --store` at once on one account: one wins, the others are badInput and leave
    no vault. A recovery join under a name the account has, or with another account's envelope
    copied over this one's, is refused. A recovery secret that cannot be shown leaves nothing
    behind. A password in any spelling libpq reads never shows. A join that could not finish
    (a PIN too short, a vault in the way) is refused before it asks for an approval."""
    address = cluster.address("raced")
    procs = [subprocess.Popen([BIN, "init", "--store", address, "--device", f"d{i}", "--kdf", "min", "--no-biometry"],
                              env=dict(own_environment(tmp_path), AUTHCTL_PASSPHRASE="pw", AUTHCTL_VAULT=str(tmp_path / f"race{i}")),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for i in range(4)]
    codes = [p.wait(timeout=120) for p in procs]
    assert sorted(codes) == [0, 65, 65, 65], [p.stderr.read() for p in procs]
    assert sum((tmp_path / f"race{i}").exists() for i in range(4)) == 1

    phone, secret = shared_account(cluster, tmp_path, "named")
    twin = Authctl(tmp_path / "twin").run("init", "--join", cluster.address("named"), "--recovery", "--device", "phone", "--kdf", "min",
                                          "--no-biometry", env={"AUTHCTL_RECOVERY_SECRET": secret})
    assert twin.code == 65 and "already has a device named 'phone'" in twin.stderr, twin.stderr
    assert not (tmp_path / "twin").exists()
    # Account `other`'s envelope copied over `named`'s: `other`'s secret opens it, and is refused.
    _, other_secret = shared_account(cluster, tmp_path / "o", "other")
    cluster.sql("UPDATE authctl_metadata SET bytes = (SELECT bytes FROM authctl_metadata WHERE account = 'other' AND key = 'recovery') "
                "WHERE account = 'named' AND key = 'recovery'")
    swapped = Authctl(tmp_path / "swapped").run("init", "--join", cluster.address("named"), "--recovery", "--device", "intruder",
                                                "--kdf", "min", "--no-biometry", env={"AUTHCTL_RECOVERY_SECRET": other_secret})
    assert swapped.code == 74 and "not this account's" in swapped.stderr, swapped.stderr
    assert not (tmp_path / "swapped").exists()

    # stdout full: nothing made, and the store is free for the next try.
    env = dict(own_environment(tmp_path), AUTHCTL_PASSPHRASE="pw", AUTHCTL_VAULT=str(tmp_path / "full"))
    with open("/dev/full", "w") as full:
        lost = subprocess.run([BIN, "init", "--store", cluster.address("full"), "--kdf", "min", "--no-biometry"], env=env, stdout=full,
                              stderr=subprocess.PIPE, text=True, timeout=60)
    assert lost.returncode == 74 and not (tmp_path / "full").exists(), lost.stderr
    again = Authctl(tmp_path / "full").run("init", "--store", cluster.address("full"), "--kdf", "min", "--no-biometry")
    assert again.code == 0, again.stderr

    for leaky in (f"postgresql://authctl:s3cretPW@127.0.0.1:1/x", "postgresql://authctl@127.0.0.1:1/x?pass%77ord=s3cretPW",
                  "postgresql://authctl@127.0.0.1:1/x?password=a&password=s3cretPW", "postgresql://authctl@127.0.0.1/x?password=%zzs3cretPW",
                  "postgresql://authctl@127.0.0.1:1/x?s3cretPW"):
        result = Authctl(tmp_path / "leak").run("init", "--store", leaky, "--kdf", "min", "--no-biometry")
        assert result.code != 0 and "s3cretPW" not in result.stderr + result.stdout, result.stderr
    # A short password is hidden where it stands alone, never cut out of libpq's words.
    result = Authctl(tmp_path / "leak").run("init", "--store", "postgresql://authctl:rt@127.0.0.1:1/x?password=ion", "--kdf", "min",
                                            "--no-biometry")
    assert result.code == 31 and 'connection to server at "127.0.0.1", port 1 failed' in result.stderr, result.stderr

    short = Authctl(tmp_path / "short").run("init", "--join", cluster.address("named"), "--device", "pc", "--kdf", "min",
                                            env={"AUTHCTL_PIN": "12"})
    assert short.code == 65 and short.stdout == "", (short.stdout, short.stderr)
    in_the_way = phone.run("init", "--join", cluster.address("named"), "--device", "pc", "--kdf", "min", "--no-biometry")
    assert in_the_way.code != 0 and in_the_way.stdout == "", in_the_way.stderr
    assert cluster.sql("SELECT count(*) FROM authctl_metadata WHERE account = 'named' AND key LIKE 'join-%'").strip() == "0"


def test_a_join_interrupted_while_it_waits_withdraws_its_request(cluster, tmp_path):
    phone, _ = shared_account(cluster, tmp_path, "interrupted")
    proc, code = start_join(Authctl(tmp_path / "laptop"), cluster.address("interrupted"))
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 10 and "withdrawn" in err, err
    assert not (tmp_path / "laptop").exists()
    late = phone.run("device", "approve", code)
    assert late.code == 65 and "no device is waiting" in late.stderr, late.stderr


def test_a_password_in_the_address_of_a_waiting_join_draws_a_warning_and_never_shows(cluster, tmp_path):
    shared_account(cluster, tmp_path, "passworded")
    address = cluster.address("passworded").replace("authctl@", "authctl:s3cretPW@")  # trust: libpq never sends it
    proc, code = start_join(Authctl(tmp_path / "laptop"), address)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 10, err
    assert "warning: the store's address holds a password" in err and "PGPASSWORD" in err and "s3cretPW" not in err, err


def test_a_killed_joiners_request_expires_and_is_refused_without_spending_the_approvers_pin(cluster, tmp_path):
    """SIGKILL leaves the request in the store (nothing withdraws it); once past the joining
    device's wait, approving it is timedOut before any PIN is asked for or counted."""
    phone, _ = shared_account(cluster, tmp_path, "killed")
    proc, code = start_join(Authctl(tmp_path / "laptop"), cluster.address("killed"), "laptop", "--approval-timeout", "2s")
    posted = time.time()
    proc.kill()
    proc.wait(timeout=60)
    # What it left is what docs/sync.md says, read here with libsodium alone: the lookup and the
    # code key from one Argon2id of the code, the request bound to its expiry.
    seed = nacl.pwhash.argon2id.kdf(32, code.encode(), b"AUTHCTL-JOIN-KDF", opslimit=2, memlimit=64 * 1024 * 1024)
    lookup = nacl.hash.blake2b(b"AUTHCTL-JOIN-LOOKUP", digest_size=16, key=seed, encoder=nacl.encoding.RawEncoder)
    code_key = nacl.hash.blake2b(b"AUTHCTL-JOIN-CODE-KEY", digest_size=32, key=seed, encoder=nacl.encoding.RawEncoder)
    rows = dict(line.split("|") for line in cluster.sql("SELECT key, encode(bytes, 'hex') FROM authctl_metadata "
                                                        "WHERE account = 'killed' AND key LIKE 'join%'").split())
    request = bytes.fromhex(rows.pop("join-" + lookup.hex()))
    assert request[:4] == b"AJQ2" and abs(int.from_bytes(request[4:12], "big") / 1000 - (posted + 2)) < 60, request[:12]
    body = nacl.bindings.crypto_aead_xchacha20poly1305_ietf_decrypt(request[36:], b"AUTHCTL-JOIN-REQUEST" + request[4:12],
                                                                     request[12:36], code_key)
    assert body[32:] == b"laptop"
    assert rows == {"joins": (b"AJL1" + lookup + request[4:12]).hex()}
    wait_until(lambda: time.time() > posted + 2.5, "the request's expiry has passed")
    late = phone.run("device", "approve", code, env={"AUTHCTL_PIN": "0000"})  # a wrong PIN: never asked for
    assert late.code == 19 and "timedOut" in late.stderr and "expired" in late.stderr, late.stderr
    assert phone.run("--json", "biometry", "status").json["failures"] == 0
    assert not (tmp_path / "laptop").exists()


def test_a_join_that_cannot_read_the_store_makes_no_vault_and_a_store_directory_must_be_a_new_one(cluster, tmp_path):
    phone, secret = shared_account(cluster, tmp_path, "damaged")
    for user in (b"user-1", b"user-2"):
        result, made = register(phone, user=user)
        assert made is not None, result.stderr
    cluster.sql("UPDATE authctl_accounts SET head = -1 WHERE account = 'damaged'")
    joined = Authctl(tmp_path / "laptop").run("init", "--join", cluster.address("damaged"), "--recovery", "--device", "laptop",
                                              "--kdf", "min", "--no-biometry", env={"AUTHCTL_RECOVERY_SECRET": secret})
    assert joined.code == 74 and "did not join" in joined.stderr and "negative sequence" in joined.stderr, joined.stderr
    assert not (tmp_path / "laptop").exists()
    junk = tmp_path / "junk"
    junk.mkdir(mode=0o700)
    (junk / "notes.txt").write_text("mine")
    refused = Authctl(tmp_path / "v").run("init", "--store", str(junk), "--kdf", "min", "--no-biometry")
    assert refused.code == 65 and "neither empty nor an account store" in refused.stderr, refused.stderr
    assert sorted(p.name for p in junk.iterdir()) == ["notes.txt"] and not (tmp_path / "v").exists()


def test_a_store_restored_from_an_older_copy_is_read_again_and_given_back_what_it_lost(cluster, tmp_path):
    """The server restored from a backup taken before the phone's last upload: the phone's cursor
    is past the store's head. Its next sync reads the store again from the start and uploads what
    the store lacks, so a device that joins afterwards gets the passkey the restore lost."""
    phone, secret = shared_account(cluster, tmp_path, "rewound")
    result, first = register(phone)
    assert first is not None, result.stderr
    assert phone.run("sync", "now").code == 0
    backup = int(cluster.sql("SELECT head FROM authctl_accounts WHERE account = 'rewound'"))
    result, second = register(phone, user=b"user-2", name="bob")
    assert second is not None, result.stderr
    assert phone.run("sync", "now").code == 0
    assert int(cluster.sql("SELECT head FROM authctl_accounts WHERE account = 'rewound'")) > backup
    cluster.sql(f"DELETE FROM authctl_changes WHERE account = 'rewound' AND sequence > {backup}; "
                f"DELETE FROM authctl_ids WHERE account = 'rewound' AND sequence > {backup}; "
                f"UPDATE authctl_accounts SET head = {backup} WHERE account = 'rewound'")
    synced = phone.run("sync", "now")
    assert synced.code == 0, synced.stderr
    tablet = Authctl(tmp_path / "tablet")
    joined = tablet.run("init", "--join", cluster.address("rewound"), "--recovery", "--device", "tablet", "--kdf", "min",
                        env={"AUTHCTL_RECOVERY_SECRET": secret, "AUTHCTL_PIN": LAPTOP_PIN})
    assert joined.code == 0, joined.stderr
    result, assertion = sign_once_arrived(tablet, second.credential_public_key, "--credential", b64url(second.credential_id),
                                          pin=LAPTOP_PIN)
    assert assertion is not None, result.stderr


def ids(tool, *extra) -> set:
    listed = tool.run("--json", *extra, "list")
    assert listed.code == 0, listed.stderr
    return {c["id"] for c in listed.json["credentials"]}


def pg_tool(cluster, name, *argv):
    """One of the server's own tools (pg_dump, pg_restore) against the cluster, as its superuser."""
    command = [str(cluster.bin / name), "-h", str(cluster.directory), "-p", str(cluster.port), "-U", "authctl", *map(str, argv)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("checks", ["on", "off"])
def test_a_server_restored_from_last_nights_dump_and_written_again_loses_no_passkey(cluster, tmp_path, checks):
    """The server restored from a dump taken before the phone's last upload, and then written by
    the laptop, which never read that upload: the store's numbers are given again. The phone finds
    it (its cursor's change is another), names it (`rolledBack`), and uploads what the store lost;
    every device, and one that joins afterwards, holds every passkey. With the devices' checks
    off (as authctl 0.3 read the store) the same steps lose the phone's passkey for every
    device but the phone — the test can fail."""
    account = f"restored{checks}"
    env = {} if checks == "on" else {"AUTHCTL_STORE_CHECKS": "off"}
    phone, secret = shared_account(cluster, tmp_path, account)
    phone.env.update(env)
    laptop = join(phone, Authctl(tmp_path / "laptop"), cluster.address(account))
    laptop.env.update(env)
    result, first = register(phone)
    assert first is not None, result.stderr
    wait_until(lambda: b64url(first.credential_id) in ids(laptop), "the laptop holds the first passkey")
    dump = tmp_path / "dump"
    pg_tool(cluster, "pg_dump", "-Fc", "-f", dump, "postgres")
    result, lost = register(phone, user=b"user-2", name="bob")
    assert lost is not None, result.stderr
    # The restore, as an operator makes it: every connection ended, the tables as in the dump.
    cluster.sql("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND datname = 'postgres'")
    pg_tool(cluster, "pg_restore", "--clean", "--if-exists", "-d", "postgres", dump)
    result, later = register(laptop, user=b"user-3", name="carol", pin=LAPTOP_PIN)
    assert later is not None, result.stderr
    every = {b64url(c.credential_id) for c in (first, lost, later)}
    synced = phone.run("sync", "now")
    assert synced.code == 0, synced.stderr
    tablet = Authctl(tmp_path / "tablet")
    tablet.env.update(env)
    joined = tablet.run("init", "--join", cluster.address(account), "--recovery", "--device", "tablet", "--kdf", "min",
                        env={"AUTHCTL_RECOVERY_SECRET": secret, "AUTHCTL_PIN": LAPTOP_PIN})
    assert joined.code == 0, joined.stderr
    if checks == "off":
        assert ids(laptop) == every - {b64url(lost.credential_id)} and ids(tablet) == ids(laptop)
        return
    assert "rolledBack" not in synced.stderr and "the account store:" in synced.stderr, synced.stderr
    problems = phone.run("--json", "sync", "status").json["storeProblems"]
    assert [p["kind"] for p in problems] == ["rolledBack"] and problems[0]["healedAt"] is not None, problems
    assert "lost this vault's uploads" in problems[0]["message"]
    wait_until(lambda: ids(laptop) == every, "the laptop holds every passkey")
    assert ids(tablet) == every and ids(phone) == every
    # The passkey the restore lost signs in on the device that joined after it.
    result, assertion = sign_once_arrived(tablet, lost.credential_public_key, "--credential", b64url(lost.credential_id),
                                          pin=LAPTOP_PIN)
    assert assertion is not None, result.stderr


def test_a_sync_delay_holds_across_machines_with_nothing_left_running(cluster, tmp_path):
    """With an upload delay on a shared store, a passkey made on the phone reaches the laptop once
    its delays have passed — made + upload delay + the laptop's download delay — though nothing of
    the phone's runs after the registration: the change left at once, with the moment it lands."""
    phone, _ = shared_account(cluster, tmp_path, "delays")
    laptop = join(phone, Authctl(tmp_path / "laptop"), cluster.address("delays"))
    assert phone.run("sync", "set", "--upload-delay", "1s", "--download-delay", "1500ms").code == 0
    assert laptop.run("sync", "now").code == 0  # the laptop takes the account's delays up (a writer records them)
    made = time.monotonic()
    result, registration = register(phone)
    assert registration is not None, result.stderr
    status = phone.run("--json", "sync", "status").json  # a reader: it uploads nothing
    assert status["devices"][0]["pendingUploads"], "lands after its upload delay, as the phone sees it"
    credential = b64url(registration.credential_id)

    def arrived():
        shown = credential in ids(laptop)
        if shown:
            assert time.monotonic() >= made + 2.5, "not before its delays have passed"
        return shown
    wait_until(arrived, "the passkey reaches the laptop with nothing of the phone's running", timeout=60)
    # A device offline holds its changes back: they leave when it is back.
    assert phone.run("device", "offline", "phone").code == 0
    result, held = register(phone, user=b"user-2", name="bob")
    assert held is not None, result.stderr
    back = time.monotonic()
    wait_until(lambda: time.monotonic() > back + 3.0, "past every delay", timeout=30)
    assert b64url(held.credential_id) not in ids(laptop)
    assert phone.run("device", "online", "phone").code == 0
    wait_until(lambda: b64url(held.credential_id) in ids(laptop), "the change leaves once its device is back", timeout=60)


def test_a_lost_snapshot_part_and_metadata_that_does_not_open_are_named_and_healed(cluster, tmp_path):
    """The server loses a part of the snapshot, then its device directory and sync settings are
    replaced by bytes that do not open: a device that joins names the lost part (`snapshot`) and
    asks every vault for what it holds; once the others have synced, it holds every passkey. The
    laptop names the directory (`metadata`), still knows the phone's device — its name stays taken
    — and publishes the directory again."""
    phone, secret = shared_account(cluster, tmp_path, "parts")
    laptop = join(phone, Authctl(tmp_path / "laptop"), cluster.address("parts"))
    made = set()
    for n in range(34):
        result, registration = register(phone, user=b"user-%d" % n, name=f"user{n}", uv="discouraged")
        assert registration is not None, result.stderr
        made.add(b64url(registration.credential_id))
    assert cluster.sql("SELECT count(*) FROM authctl_snapshot WHERE account = 'parts'").strip() != "0", "compacted"
    wait_until(lambda: ids(laptop) == made, "the laptop holds every passkey")
    cluster.sql("DELETE FROM authctl_snapshot WHERE account = 'parts' AND length(id) = 16")
    tablet = Authctl(tmp_path / "tablet")
    joined = tablet.run("init", "--join", cluster.address("parts"), "--recovery", "--device", "tablet", "--kdf", "min",
                        "--no-biometry", env={"AUTHCTL_RECOVERY_SECRET": secret})
    assert joined.code == 0, joined.stderr
    status = tablet.run("--json", "sync", "status").json
    assert any(p["kind"] == "snapshot" and p["healedAt"] is None and "lacks" in p["message"] for p in status["storeProblems"]), status
    assert "waiting for the vaults of" in status.get("storeProblem", "")
    assert ids(tablet) != made
    for vault in (phone, laptop):
        assert vault.run("sync", "now").code == 0  # each answers the repair request: uploads what the store lacks
    assert tablet.run("sync", "now").code == 0
    assert ids(tablet) == made
    healed = tablet.run("--json", "sync", "status").json
    assert all(p["healedAt"] is not None for p in healed["storeProblems"]) and healed.get("storeProblem") is None, healed

    for key in ("directory", "settings"):
        cluster.sql(f"UPDATE authctl_metadata SET bytes = '\\x{'5a' * 200}'::bytea, version = version + 1 "
                    f"WHERE account = 'parts' AND key = '{key}'")
    listed = laptop.run("--json", "device", "list")
    assert listed.code == 0 and {"laptop", "phone"} <= {d["name"] for d in listed.json["devices"]}, listed.stdout
    taken = laptop.run("device", "add", "phone", env={"AUTHCTL_NEW_PIN": "9999"})
    assert taken.code == 65 and "already has a device named 'phone'" in taken.stderr, taken.stderr
    assert laptop.run("sync", "now").code == 0
    problems = laptop.run("--json", "sync", "status").json["storeProblems"]
    assert {"device directory", "sync settings"} <= {w for p in problems if p["kind"] == "metadata" for w in ("device directory", "sync settings") if w in p["message"]}, problems
    # Published again: the phone reads a directory that opens, with the laptop's device in it.
    assert {"laptop", "tablet"} <= {d["name"] for d in phone.run("--json", "device", "list").json["devices"]}


def test_a_device_that_joins_a_store_gone_back_before_anyone_noticed_loses_a_deleted_passkey_once_they_do(cluster, tmp_path):
    """A passkey deleted and collected everywhere; the server restored from a dump taken before the
    deletion; a tablet joins with the recovery secret before any vault has run since, and reads the
    passkey alive. The phone's next sync finds the store gone back, finds the passkey it collected
    alive in it, and restates its deletion: the tablet deletes it, and a device that joins later
    never holds it."""
    phone, secret = shared_account(cluster, tmp_path, "regone")
    laptop = join(phone, Authctl(tmp_path / "laptop"), cluster.address("regone"))
    result, keep = register(phone)
    assert keep is not None, result.stderr
    result, doomed = register(phone, user=b"user-2", name="bob")
    assert doomed is not None, result.stderr
    both = {b64url(keep.credential_id), b64url(doomed.credential_id)}
    wait_until(lambda: ids(laptop) == both, "the laptop holds both")
    dump = tmp_path / "dump"
    pg_tool(cluster, "pg_dump", "-Fc", "-f", dump, "postgres")
    assert phone.run("delete", b64url(doomed.credential_id)).code == 0
    for vault in (laptop, phone, laptop, phone):
        assert vault.run("sync", "now").code == 0
    assert ids(phone) == ids(laptop) == {b64url(keep.credential_id)}
    cluster.sql("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND datname = 'postgres'")
    pg_tool(cluster, "pg_restore", "--clean", "--if-exists", "-d", "postgres", dump)
    tablet = Authctl(tmp_path / "tablet")
    joined = tablet.run("init", "--join", cluster.address("regone"), "--recovery", "--device", "tablet", "--kdf", "min",
                        "--no-biometry", env={"AUTHCTL_RECOVERY_SECRET": secret})
    assert joined.code == 0, joined.stderr
    assert ids(tablet) == both, "the store gone back says it is alive"
    noticed = phone.run("sync", "now")
    assert noticed.code == 0 and "its deletion is uploaded again" in noticed.stderr, noticed.stderr
    wait_until(lambda: ids(tablet) == {b64url(keep.credential_id)}, "the tablet deletes it")
    late = Authctl(tmp_path / "late")
    joined = late.run("init", "--join", cluster.address("regone"), "--recovery", "--device", "late", "--kdf", "min",
                      "--no-biometry", env={"AUTHCTL_RECOVERY_SECRET": secret})
    assert joined.code == 0, joined.stderr
    assert ids(late) == ids(laptop) == {b64url(keep.credential_id)}


def test_a_change_deleted_from_the_server_is_named_asked_for_and_given_back(cluster, tmp_path):
    """One row of the log deleted by hand: every device reads on past it (it stopped every writer's
    sync for good before), names the upload it lacks (`missing`) and asks for it; the phone, which
    made it, gives it back when it syncs; and the store compacts as before."""
    phone, secret = shared_account(cluster, tmp_path, "holed")
    laptop = join(phone, Authctl(tmp_path / "laptop"), cluster.address("holed"))
    made = set()
    for n in range(3):
        result, registration = register(phone, user=b"user-%d" % n, name=f"user{n}", uv="discouraged")
        assert registration is not None, result.stderr
        made.add(b64url(registration.credential_id))
    wait_until(lambda: ids(laptop) == made, "the laptop holds every passkey")
    second = cluster.sql("SELECT sequence FROM authctl_changes WHERE account = 'holed' ORDER BY sequence LIMIT 1 OFFSET 1").strip()
    cluster.sql(f"DELETE FROM authctl_changes WHERE account = 'holed' AND sequence = {second}")
    tablet = Authctl(tmp_path / "tablet")
    joined = tablet.run("init", "--join", cluster.address("holed"), "--recovery", "--device", "tablet", "--kdf", "min",
                        "--no-biometry", env={"AUTHCTL_RECOVERY_SECRET": secret})
    assert joined.code == 0, joined.stderr
    assert len(ids(tablet)) == 2
    problems = tablet.run("--json", "sync", "status").json["storeProblems"]
    assert any(p["kind"] == "missing" and p["healedAt"] is None for p in problems), problems
    for vault in (phone, laptop, tablet):
        synced = vault.run("sync", "now")
        assert synced.code == 0, synced.stderr
    assert ids(tablet) == made
    for n in range(34):
        result, registration = register(laptop, user=b"more-%d" % n, name=f"more{n}", uv="discouraged", pin=LAPTOP_PIN)
        assert registration is not None, result.stderr
    assert int(cluster.sql("SELECT snapshot FROM authctl_accounts WHERE account = 'holed'")) > int(second)
    assert all(p["healedAt"] is not None for p in tablet.run("--json", "sync", "status").json["storeProblems"])
