"""A device syncs when it is opened and after a write; what only looks reads the store once and
writes nothing. The binary runs under strace, which counts its reads of the directory store's
changes: with the store's checks on, every read of the changes after the vault's cursor reads the
change at the cursor again, to see it is still the one the vault read (sync.md, "What the devices
check") — so with nothing new in the store, each read opens one file of `cloud/log/`. Every file
of the vault and of the store is compared before and after, bytes and modification times
(test_reads.tree)."""
import json
import pathlib
import re
import shutil
import subprocess

import pytest
from webauthn import generate_authentication_options, generate_registration_options, options_to_json
from webauthn.helpers.structs import AuthenticatorSelectionCriteria, ResidentKeyRequirement, UserVerificationRequirement

from conftest import BIN, PIN, Authctl, wait_until
from test_reads import changes, tree
from test_serve import call, server  # noqa: F401 (the fixture)

ORIGIN, RP_ID = "https://example.com", "example.com"


def registration_options(user: bytes) -> dict:
    return json.loads(options_to_json(generate_registration_options(
        rp_id=RP_ID, rp_name="RP", user_name=user.decode(), user_id=user,
        authenticator_selection=AuthenticatorSelectionCriteria(
            resident_key=ResidentKeyRequirement.REQUIRED, user_verification=UserVerificationRequirement.DISCOURAGED))))


def sign_options() -> dict:
    return json.loads(options_to_json(generate_authentication_options(
        rp_id=RP_ID, user_verification=UserVerificationRequirement.DISCOURAGED)))


def store_reads(tool: Authctl, *args, stdin: str = "") -> tuple[int, subprocess.CompletedProcess]:
    """Runs `authctl ARGS` under strace and counts the changes of the store it opens to read."""
    assert shutil.which("strace"), "strace is needed (scripts/test.sh installs it)"
    proc = subprocess.run(["strace", "-f", "-qq", "-e", "trace=open,openat", "-o", "/dev/stderr", BIN, *args],
                          input=stdin, env=tool.env, capture_output=True, text=True, timeout=300)
    log = f'"{tool.vault / "cloud" / "log"}/'
    reads = [line for line in proc.stderr.splitlines()
             if re.search(r"\bopen(at)?\(", line) and log in line and "O_RDONLY" in line and "ENOENT" not in line]
    return len(reads), proc


@pytest.fixture
def account(authctl):
    """Devices `default` and `laptop` of one vault, so its directory store is in use, with a
    passkey that counts and one that does not, both landed and arrived."""
    assert authctl.run("device", "add", "laptop", env={"AUTHCTL_NEW_PIN": "9753"}).code == 0
    plain = authctl.register(registration_options(b"alice"), ORIGIN)
    counting = authctl.register(registration_options(b"bob"), ORIGIN, "--sign-counter")
    assert plain.code == 0 and counting.code == 0, plain.stderr + counting.stderr
    assert authctl.run("sync", "now").code == 0
    assert (authctl.vault / "cloud" / "state").is_file(), "the store is in use"
    return authctl, plain.json["id"], counting.json["id"]


def test_a_command_that_looks_reads_the_store_once_and_writes_nothing(account):
    authctl, plain, _ = account
    for command in (["list"], ["--json", "sync", "status"], ["credential", "show", "--", plain]):
        before = tree(authctl.vault)
        reads, proc = store_reads(authctl, *command)
        assert proc.returncode == 0, proc.stderr[-2000:]
        assert reads == 1, f"`authctl {' '.join(command)}` read the store's changes {reads} times"
        assert changes(before, tree(authctl.vault)) == [], f"`authctl {' '.join(command)}` wrote"


def test_a_sign_in_with_a_passkey_that_does_not_count_reads_the_store_once_and_writes_nothing(account):
    authctl, plain, _ = account
    before = tree(authctl.vault)
    reads, proc = store_reads(authctl, "sign", "--origin", ORIGIN, "--options", "-", "--credential", plain,
                              stdin=json.dumps(sign_options()))
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert reads == 1, f"a sign-in read the store's changes {reads} times"
    assert changes(before, tree(authctl.vault)) == [], "a sign-in with a passkey that does not count wrote"


def test_a_sign_in_with_a_counting_passkey_reads_the_store_once_and_writes_its_count(account):
    authctl, _, counting = account
    before = tree(authctl.vault)
    reads, proc = store_reads(authctl, "sign", "--origin", ORIGIN, "--options", "-", "--credential", counting,
                              stdin=json.dumps(sign_options()))
    assert proc.returncode == 0, proc.stderr[-2000:]
    # The new count lands at once: the sync after the write appends it, without reading again.
    assert reads == 1, f"a counting sign-in read the store's changes {reads} times"
    written = changes(before, tree(authctl.vault))
    assert any("cloud/log/" in c for c in written), f"the new count is uploaded: {written}"


def test_the_servers_get_routes_write_nothing_when_a_change_has_landed_since_the_last_write(server, tmp_path):  # noqa: F811
    """An account kept open on a vault (`storage` `vault`, its store a directory beside it), on a
    virtual clock: a passkey registered with a 2 s upload delay lands while nothing is written.
    Listing it, reading a device and the sync status then change no file; the next write
    uploads it."""
    status, _, account = call(server, "POST", "/accounts", {
        "devices": [{"name": "phone"}, {"name": "laptop"}], "storage": "vault",
        "clock": {"mode": "virtual", "start": "2026-01-01T00:00:00Z"}, "sync": {"upload": "2s", "download": "3s"}})
    assert status == 201, account
    base = f"/accounts/{account['id']}"
    status, _, made = call(server, "POST", base + "/devices/phone/register",
                           {"options": registration_options(b"alice"), "origin": ORIGIN})
    assert status == 200, made
    assert call(server, "POST", base + "/clock", {"advance": "10s"})[0] == 200
    [root] = list((tmp_path / "tmp").glob("authctl-serve-*"))
    assert (root / "vault" / "cloud").is_dir(), "the account's store is the directory beside its vault"
    before = tree(root)
    for path in ("/devices/laptop/passkeys", "/devices/phone/passkeys", f"/devices/phone/passkeys/{made['id']}",
                 "/devices/laptop", "/devices", "/sync"):
        status, _, answer = call(server, "GET", base + path)
        assert status == 200, (path, answer)
        assert changes(before, tree(root)) == [], f"GET {path} wrote: {changes(before, tree(root))}"
    _, _, listed = call(server, "GET", base + "/devices/laptop/passkeys")
    assert [c["id"] for c in listed["credentials"]] == [made["id"]], "it arrived, computed from its schedule"
    _, _, synced = call(server, "GET", base + "/sync")
    assert all(not d["pendingUploads"] and not d["pendingDownloads"] for d in synced["devices"]), synced
    # A write syncs: what landed is uploaded then.
    status, _, _ = call(server, "PUT", base + "/sync", {"upload": "1s"})
    assert status == 200
    assert any("cloud/log/" in c for c in changes(before, tree(root))), "the write uploaded what had landed"


def test_looking_at_the_autofill_list_writes_nothing_when_an_upload_has_landed_since(authctl):
    # A change made with an upload delay lands a second later; a writer opening the vault then
    # uploads it. Looking at what the autofill list offers is a read: it leaves the vault and its
    # store as they were, as `list` does.
    assert authctl.run("device", "add", "laptop", env={"AUTHCTL_NEW_PIN": "9753"}).code == 0
    assert authctl.run("sync", "set", "--upload-delay", "1s").code == 0
    made = authctl.register(registration_options(b"alice"), ORIGIN)
    assert made.code == 0, made.stderr

    def landed():
        status = authctl.run("--json", "sync", "status").json
        return not any(d["pendingUploads"] for d in status["devices"] if d.get("vault") == "this")
    wait_until(landed, "the upload's landing time passed")
    before = tree(authctl.vault)
    for command in (["list"], ["sign", "--origin", ORIGIN, "--mediation", "conditional", "--offers"]):
        looked = authctl.run(*command)
        assert looked.code == 0, looked.stderr
        assert changes(before, tree(authctl.vault)) == [], f"`authctl {' '.join(command)}` wrote"
    assert [o["credentialId"] for o in looked.json] == [made.json["id"]]
    # A sign-in that picks from the list writes: the landed upload goes with it.
    assert authctl.run("sign", "--origin", ORIGIN, "--mediation", "conditional", "--pick", made.json["id"]).code == 0
    assert changes(before, tree(authctl.vault)) != []
