"""The vault never loses an acknowledged passkey and never uses a damaged byte: processes killed
at random instants, many processes at once, and every byte of a small vault flipped in turn."""
import base64
import json
import random
import resource
import shutil
import signal
import struct
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

import vault_reader
from conftest import BIN, PASSPHRASE, log_file, own_environment, unb64url

ORIGIN = "https://example.com"


def start(authctl, *args, stdin=""):
    proc = subprocess.Popen([BIN, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=authctl.env, text=True)
    return proc


def sign_count(assertion):
    return struct.unpack(">I", unb64url(assertion["response"]["authenticatorData"])[33:37])[0]


def ids(authctl):
    return {c["id"] for c in authctl.listing()}


def index_file(vault):
    """The vault's current index (`index.N`, of log N)."""
    indexes = sorted(vault.glob("index.*"))
    assert len(indexes) == 1, indexes
    return indexes[0]


def assert_index_agrees(authctl):
    """The independent reader finds an index, and it holds what the log holds (open_vault checks
    every record of the index against the log replayed to the index's frame)."""
    vault = vault_reader.open_vault(authctl.vault, PASSPHRASE)
    assert vault.index is not None and vault.index.frames <= vault.frame_count
    info = authctl.run("--json", "vault", "info").json
    assert info["indexedFrames"] == vault.index.frames and info["indexBytes"] == vault.index.length
    return vault


def test_sigkill_at_random_instants_loses_no_acknowledged_passkey(authctl):
    rng = random.Random(20261129)
    counting = authctl.run("register", "--origin", ORIGIN, "--user-name", "counter", "--sign-counter").json["id"]
    acknowledged, maybe, deleted, maybe_deleted = {counting}, set(), set(), set()
    counts = []
    # Kills are aimed at measured durations: each kind of command is timed here, now, and every
    # fourth run of a kind runs to its end, timed, so the kill instants follow the machine's speed
    # as it changes (a loaded machine makes every command slower). A kill lands uniformly in
    # [0, 2 × the median of that command's last timed runs]: about half land while it runs, all
    # over its life, and half after it ended. Timed runs count as neither outcome.
    durations = {kind: [] for kind in ("register", "sign", "delete", "compact")}
    spare = authctl.run("register", "--origin", ORIGIN, "--user-name", "spare").json["id"]
    for kind, args in (("register", ["register", "--origin", ORIGIN, "--user-name", "calibration"]),
                       ("sign", ["sign", "--origin", ORIGIN, f"--credential={counting}"]),
                       ("delete", ["delete", spare]), ("compact", ["vault", "compact"])):
        began = time.monotonic()
        result = authctl.run(*args)
        durations[kind].append(time.monotonic() - began)
        if kind == "register":
            acknowledged.add(result.json["id"])
        elif kind == "sign":
            counts.append(sign_count(result.json))
        else:
            assert result.code == 0, result.stderr

    def kill_instant(kind):
        recent = sorted(durations[kind][-5:])
        return rng.uniform(0, 2 * recent[len(recent) // 2])

    killed = finished = 0
    i = 0
    runs = {kind: 0 for kind in durations}
    # At least 90 commands; more while either outcome has fewer than 10 (a bounded number more).
    while i < 90 or (min(killed, finished) < 10 and i < 400):
        i += 1
        action = rng.choice(["register", "register", "sign", "sign", "delete", "compact"])
        if action == "register":
            # Several RPs, so the index's refreshes (every 16 frames) change some partitions and not others.
            origin = ORIGIN if i % 3 else f"https://rp{i % 4}.example"
            args = ["register", "--origin", origin, "--user-name", f"user{i}", "--user-id",
                    base64.urlsafe_b64encode(f"u{i}".encode()).rstrip(b"=").decode()]
        elif action == "sign":
            args = ["sign", "--origin", ORIGIN, f"--credential={counting}"]
        elif action == "compact":
            args = ["vault", "compact"]
        else:
            candidates = sorted(acknowledged - {counting})
            if not candidates:
                continue
            victim = rng.choice(candidates)
            args = ["delete", victim]
        runs[action] += 1
        timed = runs[action] % 4 == 0
        began = time.monotonic()
        proc = start(authctl, *args)
        if timed:
            out, err = proc.communicate(timeout=60)
            durations[action].append(time.monotonic() - began)
            assert proc.returncode == 0, err
        else:
            try:
                proc.wait(timeout=kill_instant(action))
            except subprocess.TimeoutExpired:
                proc.send_signal(signal.SIGKILL)
            out, err = proc.communicate()
        ok = proc.returncode == 0
        killed += not ok and not timed
        finished += ok and not timed
        if action == "register":
            if ok:
                acknowledged.add(json.loads(out)["id"])
            else:
                assert proc.returncode == -signal.SIGKILL, err
                maybe.add(f"user{i}")
        elif action == "sign" and ok:
            counts.append(sign_count(json.loads(out)))
        elif action == "delete":
            # Killed, a deletion may or may not have happened (the kill can land after its commit,
            # before it exits): the passkey is no longer one that must be there.
            acknowledged.discard(victim)
            (deleted if ok else maybe_deleted).add(victim)
        if i % 15 == 0:
            check = authctl.run("vault", "check")
            assert check.code == 0, check.stderr
            assert_index_agrees(authctl)

    assert killed >= 10 and finished >= 10, (killed, finished)  # both outcomes were exercised
    assert authctl.run("vault", "check").code == 0
    assert_index_agrees(authctl)
    listing = {c["id"]: c for c in authctl.listing()}
    assert acknowledged <= set(listing), "an acknowledged passkey was lost"
    assert not (deleted & set(listing)), "an acknowledged deletion came back"
    for extra in set(listing) - acknowledged:  # only unacknowledged registrations or deletions may appear
        assert listing[extra]["userName"] in maybe or extra in maybe_deleted
    # Acknowledged signature counts strictly increase, and the stored count is at least the last.
    assert counts == sorted(set(counts))
    assert listing[counting]["signCount"] >= (counts[-1] if counts else 0)
    # Every passkey still signs, each through its RP's partition of the index.
    by_id = {c["id"]: c for c in authctl.listing()}
    for credential_id in list(acknowledged)[:8]:
        origin = "https://" + by_id[credential_id]["rpId"]
        assert authctl.run("sign", "--origin", origin, f"--credential={credential_id}").code == 0


def test_parallel_processes_lose_no_update(authctl):
    counting = authctl.run("register", "--origin", ORIGIN, "--user-name", "shared", "--sign-counter").json["id"]

    def worker(n):
        made, counts, deleted = [], [], []
        for k in range(6):
            user_id = base64.urlsafe_b64encode(f"w{n}-{k}".encode()).rstrip(b"=").decode()
            origin = ORIGIN if k % 2 else f"https://rp{n % 3}.example"
            reg = authctl.run("register", "--origin", origin, "--user-name", f"w{n}-{k}", "--user-id", user_id)
            assert reg.code == 0, reg.stderr
            made.append(reg.json["id"])
            signed = authctl.run("sign", "--origin", ORIGIN, f"--credential={counting}")
            assert signed.code == 0, signed.stderr
            counts.append(sign_count(signed.json))
            assert authctl.run("list", "--json").code == 0
            if k % 3 == 2:
                assert authctl.run("delete", made[0]).code == 0
                deleted.append(made.pop(0))
        return made, counts, deleted

    with ThreadPoolExecutor(max_workers=6) as pool:
        results = list(pool.map(worker, range(6)))
    made = {i for r in results for i in r[0]}
    deleted = {i for r in results for i in r[2]}
    counts = [c for r in results for c in r[1]]
    listing = {c["id"]: c for c in authctl.listing()}
    assert set(listing) == made | {counting} and not deleted & set(listing)
    # 36 signatures, 36 distinct counts 1..36: no two processes ever read the same counter.
    assert sorted(counts) == list(range(1, 37))
    assert listing[counting]["signCount"] == 36
    assert authctl.run("vault", "check").code == 0
    assert_index_agrees(authctl)


@pytest.fixture
def small_vault(authctl):
    first = authctl.run("register", "--origin", ORIGIN, "--user-name", "a").json["id"]
    authctl.run("register", "--origin", ORIGIN, "--user-name", "b", "--user-id", "Yg").json
    assert authctl.run("delete", first).code == 0
    return authctl


def positions_to_flip(name, data):
    """Every byte of the header and the commit pointer, and of each log frame's length, nonce and
    tag; every eleventh byte of the ciphertext between (one run per byte would take minutes, and any
    ciphertext byte fails the same authentication)."""
    if not name.startswith("log."):
        return range(len(data))
    out, offset = [], 0
    while offset + 4 <= len(data):
        end = offset + 4 + struct.unpack(">I", data[offset:offset + 4])[0]
        out += [i for i in range(offset, min(end, len(data)))
                if i < offset + 32 or i >= end - 16 or (i - offset) % 11 == 0]
        offset = end
    return out + list(range(offset, len(data)))


def test_every_flipped_byte_is_reported_as_corruption(small_vault):
    vault = small_vault.vault
    # The index too: every byte of it is in use (its root, and the one version of each bucket it
    # has before its first refresh), so each flip must be caught like one in the log.
    assert vault_reader.open_vault(vault, PASSPHRASE).index.length == index_file(vault).stat().st_size
    files = {name: (vault / name).read_bytes()
             for name in ("header", "commit", log_file(vault).name, index_file(vault).name)}
    assert sum(len(b) for b in files.values()) > 1000
    outcomes = {}
    for name, original in files.items():
        for i in positions_to_flip(name, original):
            damaged = bytearray(original)
            damaged[i] ^= 0xFF if i % 2 else 0x01
            (vault / name).write_bytes(bytes(damaged))
            result = small_vault.run("list")
            outcomes.setdefault((result.code, result.stdout == ""), []).append(f"{name}[{i}]")
        (vault / name).write_bytes(original)
    assert list(outcomes) == [(21, True)], {k: v[:5] for k, v in outcomes.items()}
    assert small_vault.run("vault", "check").code == 0  # restored, the vault is whole again


@pytest.mark.parametrize("damage", ["truncate log", "truncate header", "truncate commit", "drop last frame",
                                    "swap frames", "truncate index", "remove index", "index of another vault",
                                    "index of an older generation"])
def test_structural_damage_is_reported(small_vault, damage):
    vault = small_vault.vault
    log = log_file(vault).read_bytes()
    frames, offset = [], 0
    while offset < len(log):
        length = struct.unpack(">I", log[offset:offset + 4])[0]
        frames.append(log[offset:offset + 4 + length])
        offset += 4 + length
    if damage == "truncate log":
        log_file(vault).write_bytes(log[:-7])
    elif damage in ("truncate header", "truncate commit"):
        path = vault / damage.split()[1]
        path.write_bytes(path.read_bytes()[:-1])
    elif damage == "drop last frame":
        log_file(vault).write_bytes(b"".join(frames[:-1]))
    elif damage == "swap frames":
        frames[1], frames[2] = frames[2], frames[1]
        log_file(vault).write_bytes(b"".join(frames))
    elif damage == "truncate index":
        index_file(vault).write_bytes(index_file(vault).read_bytes()[:-1])
    elif damage == "remove index":
        index_file(vault).unlink()
    elif damage == "index of another vault":
        other = small_vault.vault.parent / "other-vault"
        env = dict(small_vault.env, AUTHCTL_VAULT=str(other))
        assert small_vault.run("init", "--kdf", "min", env=env).code == 0
        assert small_vault.run("register", "--origin", ORIGIN, "--user-name", "a", env=env).code == 0
        assert small_vault.run("register", "--origin", ORIGIN, "--user-name", "b", "--user-id", "Yg", env=env).code == 0
        index_file(vault).write_bytes(index_file(other).read_bytes())
    elif damage == "index of an older generation":
        # The index compaction made, renamed to the name the generation after it would have.
        path = index_file(vault)
        old = path.read_bytes()
        assert small_vault.run("vault", "compact").code == 0
        index_file(vault).write_bytes(old)
    result = small_vault.run("list")
    assert (result.code, result.stdout) == (21, ""), result.stderr
    assert "vaultCorrupted" in result.stderr


def test_an_old_commit_file_put_back_is_caught_past_one_frame(authctl):
    # Without user verification a registration writes one frame (no PIN failure count).
    quiet = ("--user-verification", "discouraged")
    authctl.run("register", "--origin", ORIGIN, "--user-name", "a", *quiet).json
    old = (authctl.vault / "commit").read_bytes()
    authctl.run("register", "--origin", ORIGIN, "--user-name", "b", "--user-id", "Yg", *quiet).json
    one_back = (authctl.vault / "commit").read_bytes()
    authctl.run("register", "--origin", ORIGIN, "--user-name", "c", "--user-id", "Yw", *quiet).json
    # Two complete frames past the commit point cannot be one interrupted append.
    (authctl.vault / "commit").write_bytes(old)
    result = authctl.run("list")
    assert result.code == 21 and "vaultCorrupted" in result.stderr
    # One frame past it is exactly what a crash between the log's fsync and the commit leaves:
    # the vault opens as of the commit (the unacknowledged passkey is not there). See
    # docs/vault-format.md on rollback.
    (authctl.vault / "commit").write_bytes(one_back)
    assert sorted(c["userName"] for c in authctl.listing()) == ["a", "b"]


def test_a_frame_from_another_vault_with_the_same_passphrase_is_refused(authctl, tmp_path):
    other_env = dict(authctl.env, AUTHCTL_VAULT=str(tmp_path / "other"))
    for env in (authctl.env, other_env):
        subprocess.run([BIN, "init", "--kdf", "min"], env=env, capture_output=True) if env is other_env else None
        subprocess.run([BIN, "register", "--origin", ORIGIN], env=env, capture_output=True, check=True)
    mine, theirs = log_file(authctl.vault).read_bytes(), log_file(tmp_path / "other").read_bytes()
    # Same shape, same position, same passphrase: only the vault binding tells them apart.
    log_file(authctl.vault).write_bytes(theirs)
    (authctl.vault / "commit").write_bytes((tmp_path / "other" / "commit").read_bytes())
    result = authctl.run("list")
    assert result.code == 21 and "vaultCorrupted" in result.stderr
    assert len(mine) > 0


def test_an_unfinished_append_is_ignored_then_cut_off(authctl):
    first = authctl.run("register", "--origin", ORIGIN, "--user-name", "a").json["id"]
    committed = log_file(authctl.vault).read_bytes()
    with open(log_file(authctl.vault), "ab") as log:  # a frame whose write never completed
        log.write(struct.pack(">I", 400) + b"\x00" * 50)
    assert ids(authctl) == {first}
    info = authctl.run("--json", "vault", "info").json
    assert info["uncommittedBytes"] == 54
    second = authctl.run("register", "--origin", ORIGIN, "--user-name", "b", "--user-id", "Yg").json["id"]
    assert ids(authctl) == {first, second}
    assert log_file(authctl.vault).read_bytes().startswith(committed)
    assert authctl.run("--json", "vault", "info").json["uncommittedBytes"] == 0


def test_compaction_keeps_live_records_and_drops_the_rest(authctl):
    counting = authctl.run("register", "--origin", ORIGIN, "--user-name", "c", "--sign-counter").json["id"]
    doomed = authctl.run("register", "--origin", ORIGIN, "--user-name", "d", "--user-id", "ZA").json["id"]
    assert authctl.run("delete", doomed).code == 0
    for _ in range(20):
        assert authctl.run("sign", "--origin", ORIGIN, f"--credential={counting}").code == 0
    before = authctl.run("--json", "vault", "info").json
    listing = authctl.listing()
    assert authctl.run("vault", "compact").code == 0
    after = authctl.run("--json", "vault", "info").json
    assert after["generation"] == before["generation"] + 1 and after["frames"] == 1
    assert after["committedBytes"] < before["committedBytes"] / 4
    assert log_file(authctl.vault).name == f"log.{after['generation']}"  # the old log is gone
    assert authctl.listing() == listing
    signed = authctl.run("sign", "--origin", ORIGIN, f"--credential={counting}").json
    assert sign_count(signed) == 21
    assert authctl.run("vault", "check").code == 0


def test_passphrase_change_rotates_the_key_and_keeps_everything(authctl, tmp_path):
    made = authctl.run("register", "--origin", ORIGIN).json["id"]
    old_log = log_file(authctl.vault)
    result = authctl.run("vault", "passwd", env={"AUTHCTL_NEW_PASSPHRASE": "new passphrase"})
    assert result.code == 0, result.stderr
    assert log_file(authctl.vault) != old_log and not old_log.exists()  # rewritten as a new generation
    assert authctl.run("list").code == 20  # the old passphrase no longer opens it
    new = {"AUTHCTL_PASSPHRASE": "new passphrase"}
    assert authctl.run("sign", "--origin", ORIGIN, env=new).json["id"] == made


def every_file(directory):
    """Every file under `directory`, its store included, byte for byte (lock files aside: taking
    a lock is not a change)."""
    return {str(p.relative_to(directory)): p.read_bytes()
            for p in sorted(directory.rglob("*")) if p.is_file() and p.name != "lock"}


def frame_offsets(log):
    """Where each frame of a log starts."""
    out, offset = [], 0
    while offset < len(log):
        out.append(offset)
        offset += 4 + struct.unpack(">I", log[offset:offset + 4])[0]
    return out


@pytest.mark.parametrize("command", [("vault", "compact"), ("sync", "rebuild"), ("vault", "passwd", "--kdf", "min")])
def test_a_command_that_reads_the_whole_vault_writes_nothing_when_a_frame_is_damaged(authctl, tmp_path, command):
    """`vault compact`, `sync rebuild` and `vault passwd` read every frame of the log; opening, for a
    writer, syncs with the account store, which writes (a download kept as replica records, the
    acknowledgements published, the sync state). A frame damaged where only the index was read at
    open must fail the command before any of that: vaultCorrupted, and every file of the vault and
    of its store as it was."""
    second = tmp_path / "desk-vault"
    added = authctl.run("device", "add", "desk", "--vault-dir", str(second), "--kdf", "min", env={"AUTHCTL_NEW_PIN": "9753"})
    assert added.code == 0, added.stderr
    quiet = ("--user-verification", "discouraged")
    for n in range(20):
        authctl.run("register", "--origin", ORIGIN, "--user-name", f"u{n}", "--user-id", base64.urlsafe_b64encode(
            f"user-{n}".encode()).rstrip(b"=").decode(), *quiet).json
    # A passkey of the other vault's device, in the store: the first vault's next writer downloads it.
    desk = dict(authctl.env, AUTHCTL_VAULT=str(second), AUTHCTL_PIN="9753")
    assert authctl.run("register", "--origin", ORIGIN, "--user-name", "desk", *quiet, env=desk).code == 0
    info = authctl.run("--json", "vault", "info").json
    log = log_file(authctl.vault)
    assert log.name == "log.0" and info["indexedFrames"] >= 8, info
    # A frame in the middle of what the index covers: opening does not read it, the command must.
    target = info["indexedFrames"] // 2
    start = frame_offsets(log.read_bytes())[target]
    damaged = bytearray(log.read_bytes())
    damaged[start + 40] ^= 0x01
    log.write_bytes(bytes(damaged))
    before = every_file(authctl.vault)
    assert any(name.startswith("cloud/") for name in before)

    result = authctl.run("--json", *command, env={"AUTHCTL_NEW_PASSPHRASE": "another passphrase"})
    assert (result.code, result.stdout) == (21, ""), result.stderr
    error = json.loads(result.stderr)
    assert (error["error"], error["exitCode"]) == ("vaultCorrupted", 21), error
    assert f"log frame {target} " in error["message"], error
    after = every_file(authctl.vault)
    assert sorted(after) == sorted(before)
    assert [name for name in before if before[name] != after[name]] == []

    # The same byte put back, the same command succeeds: the damage was what stopped it.
    damaged[start + 40] ^= 0x01
    log.write_bytes(bytes(damaged))
    result = authctl.run(*command, env={"AUTHCTL_NEW_PASSPHRASE": "another passphrase"})
    assert result.code == 0, result.stderr


def test_an_init_whose_writes_fail_leaves_no_vault_behind(tmp_path):
    """`init` on a disk that takes no more: `ioError` (exit 74), and nothing of the vault left —
    not its files, not the directories it made (the vault's and its parents), so the path is as
    it was; an empty directory given stays, empty, and `init` then succeeds in it. Here a limit on
    the size of a file stops the first write, as a full disk would."""
    env = dict(own_environment(tmp_path), AUTHCTL_PASSPHRASE=PASSPHRASE, AUTHCTL_PIN="1234")
    tiny = lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (1024, 1024))  # noqa: E731 (log.0's first frame is larger)
    given = tmp_path / "given"
    given.mkdir(mode=0o700)
    for vault in (tmp_path / "made" / "deeper" / "vault", given):
        failed = subprocess.run([BIN, "--json", "--vault", str(vault), "init", "--kdf", "min"], env=env, preexec_fn=tiny,
                                capture_output=True, text=True, timeout=120)
        assert failed.returncode == 74 and json.loads(failed.stderr)["error"] == "ioError", failed.stderr
        assert "File too large" in failed.stderr, failed.stderr
    assert not (tmp_path / "made").exists()
    assert list(given.iterdir()) == []
    made = subprocess.run([BIN, "--vault", str(given), "init", "--kdf", "min"], env=env, capture_output=True, text=True, timeout=120)
    assert made.returncode == 0 and (given / "header").exists(), made.stderr


@pytest.mark.parametrize("size", ["4k", "8k", "12k"])  # full at the log, at its commit pointer, at the header
def test_an_init_on_a_full_disk_leaves_no_vault_behind(tmp_path, size):
    """The same on a file system that is full (a tmpfs of `size`, in a mount namespace of the
    command's own): whichever write meets the full disk, the disk holds nothing after."""
    if subprocess.run(["unshare", "--mount", "--propagation", "private", "true"], capture_output=True).returncode != 0:
        pytest.skip("no mount namespace here (unshare --mount needs CAP_SYS_ADMIN)")
    disk = tmp_path / "disk"
    disk.mkdir()
    env = dict(own_environment(tmp_path), AUTHCTL_PASSPHRASE=PASSPHRASE, AUTHCTL_PIN="1234")
    # The disk exists only in the namespace: what is left on it is listed there, after the command.
    script = f'mount -t tmpfs -o size={size} authctl-full "$0" && "$1" --vault "$0/deep/vault" init --kdf min; echo "exit $?"; find "$0" -mindepth 1'
    run = subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c", script, str(disk), BIN], env=env,
                         capture_output=True, text=True, timeout=120)
    assert run.stdout.splitlines() == ["exit 74"], (run.stdout, run.stderr)
    assert "ioError" in run.stderr and "No space left on device" in run.stderr, run.stderr


def test_an_init_whose_writes_fail_leaves_a_directory_reached_through_dot_dot(tmp_path):
    """A failing `init` takes back only the directories its own mkdir made: given a path through
    a directory it makes and `..` (`made/../given`), the empty directory `given` that was there
    already stays; only `made` goes."""
    env = dict(own_environment(tmp_path), AUTHCTL_PASSPHRASE=PASSPHRASE, AUTHCTL_PIN="1234")
    tiny = lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (1024, 1024))  # noqa: E731 (log.0's first frame is larger)
    given = tmp_path / "given"
    given.mkdir(mode=0o700)
    failed = subprocess.run([BIN, "--json", "--vault", str(tmp_path / "made" / ".." / "given"), "init", "--kdf", "min"], env=env,
                            preexec_fn=tiny, capture_output=True, text=True, timeout=120)
    assert failed.returncode == 74 and json.loads(failed.stderr)["error"] == "ioError", failed.stderr
    assert given.is_dir() and list(given.iterdir()) == []
    assert not (tmp_path / "made").exists()
