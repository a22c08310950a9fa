"""Commands that only look write nothing: on an account of three devices in two vaults sharing one
store, with passkeys, a deletion and transfers still pending, every read-only command of cli.md
leaves each file of both vaults and of the store as it was — the same names, the same bytes and
the same modification times (st_mtime_ns; tests run as root, so a read-only mode would prove
nothing). The same comparison catches what a `sign` writes, so it can fail."""
import json
import os
import pathlib

import pytest
from webauthn import generate_authentication_options, generate_registration_options, options_to_json
from webauthn.helpers.structs import AuthenticatorSelectionCriteria, ResidentKeyRequirement, UserVerificationRequirement

from conftest import PIN, Authctl

ORIGIN, RP_ID = "https://example.com", "example.com"
LAPTOP_PIN, DESK_PIN = "9753", "8642"


def tree(root: pathlib.Path) -> dict:
    """Every entry under `root`, by relative path: a file's bytes and mtime, a directory's mtime
    (a file made and removed again changes it), a link's target."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = pathlib.Path(dirpath) / name
            st = path.lstat()
            key = str(path.relative_to(root))
            if path.is_symlink():
                out[key] = ("link", os.readlink(path), st.st_mtime_ns)
            elif path.is_dir():
                out[key] = ("dir", None, st.st_mtime_ns)
            else:
                out[key] = ("file", path.read_bytes(), st.st_mtime_ns)
    out["."] = ("dir", None, root.lstat().st_mtime_ns)
    return out


def changes(before: dict, after: dict) -> list:
    """What differs between two `tree`s, named: files added, removed, rewritten or touched."""
    out = [f"added {k}" for k in sorted(after.keys() - before.keys())]
    out += [f"removed {k}" for k in sorted(before.keys() - after.keys())]
    for key in sorted(before.keys() & after.keys()):
        (kind, content, mtime), (kind2, content2, mtime2) = before[key], after[key]
        if (kind, content) != (kind2, content2):
            out.append(f"rewrote {key}")
        elif mtime != mtime2:
            out.append(f"touched {key} (mtime {mtime} -> {mtime2})")
    return out


def register(tool, user: bytes, *extra, pin=PIN):
    options = generate_registration_options(
        rp_id=RP_ID, rp_name="RP", user_name=user.decode(), user_id=user,
        authenticator_selection=AuthenticatorSelectionCriteria(
            resident_key=ResidentKeyRequirement.REQUIRED, user_verification=UserVerificationRequirement.PREFERRED))
    result = tool.register(json.loads(options_to_json(options)), ORIGIN, *extra, env={"AUTHCTL_PIN": pin})
    return result.json["id"]


def sign_options() -> dict:
    return json.loads(options_to_json(generate_authentication_options(rp_id=RP_ID)))


@pytest.fixture
def account(authctl, tmp_path):
    """Vault `vault` (devices `default` and `laptop`) and vault `desk-vault` (device `desk`) of one
    account, sharing the store; passkeys made on each vault, one deleted, and a one-hour upload
    delay, so that the store is in use and transfers are pending when the reads run."""
    added = authctl.run("device", "add", "laptop", env={"AUTHCTL_NEW_PIN": LAPTOP_PIN})
    assert added.code == 0, added.stderr
    desk_dir = tmp_path / "desk-vault"
    added = authctl.run("device", "add", "desk", "--vault-dir", str(desk_dir), "--kdf", "min",
                        env={"AUTHCTL_NEW_PIN": DESK_PIN})
    assert added.code == 0, added.stderr
    desk = Authctl(desk_dir)
    kept = register(authctl, b"alice")
    gone = register(authctl, b"bob")
    from_desk = register(desk, b"carol", pin=DESK_PIN)
    assert authctl.run("delete", "--", gone).code == 0
    # Uploads landed so far are in the store; from here on, what changes waits an hour.
    assert authctl.run("sync", "set", "--upload-delay", "1h").code == 0
    pending = register(authctl, b"dave")
    status = authctl.run("--json", "sync", "status").json
    assert any(d["pendingUploads"] for d in status["devices"] if d.get("vault") == "this"), status
    assert any(p.is_file() for p in (authctl.vault / "cloud").rglob("*")), "the store is in use"
    return authctl, desk, {"kept": kept, "fromDesk": from_desk, "pending": pending, "gone": gone}


def read_commands(ids: dict, out_dir: pathlib.Path) -> list:
    """Every command cli.md describes as only looking, with its JSON form where it has one, as a
    device of the first vault (the default one and `--device laptop`)."""
    commands = []
    for device in ([], ["--device", "laptop"]):
        commands += [device + c for c in (
            ["list"], ["--json", "list"], ["list", "--rp-id", RP_ID],
            ["credential", "show", "--", ids["kept"]], ["--json", "credential", "show", "--", ids["pending"]],
            ["--json", "credential", "show", "--", ids["fromDesk"]],
            ["device", "list"], ["--json", "device", "list"],
            ["sync", "status"], ["--json", "sync", "status"],
            ["capabilities"], ["--json", "capabilities"],
            ["biometry", "status"], ["--json", "biometry", "status"],
        )]
    commands += [
        ["vault", "info"], ["--json", "vault", "info"], ["vault", "check"], ["--json", "vault", "check"],
        ["ca", "export"], ["profiles"], ["faults"], ["help"], ["help", "sign"], ["sign", "--help"],
        ["--version"], ["completion", "bash"], ["completion", "zsh"],
        ["manpages", "--output", str(out_dir / "man")],
    ]
    # Not reads: `credential export` checks the PIN, whose failures count in the vault, as a
    # ceremony's do; `sync rebuild` and every `set`, `add` and `remove` write by definition.
    return commands


def test_every_read_command_leaves_both_vaults_and_the_store_as_they_were(account, tmp_path):
    authctl, desk, ids = account
    roots = [authctl.vault, desk.vault]
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    for command in read_commands(ids, out_dir):
        # `laptop` is a device of the first vault only.
        for tool in (authctl,) if "laptop" in command else (authctl, desk):
            before = [tree(root) for root in roots]
            result = tool.run(*command)
            # Only `default` holds the pending passkey yet: a failed read must write nothing too.
            expected = 13 if ids["pending"] in command and (tool is desk or "laptop" in command) else 0
            assert result.code == expected, f"{command} on {tool.vault.name}: {result.stderr}"
            found = [f"{root.name}/{c}" for root, b in zip(roots, before) for c in changes(b, tree(root))]
            assert found == [], f"`authctl {' '.join(command)}` on {tool.vault.name} wrote: {found}"
    # The desk lists the passkeys of the whole account, the pending one aside (it has not uploaded).
    listed = {c["id"] for c in desk.run("--json", "list").json["credentials"]}
    assert {ids["kept"], ids["fromDesk"]} <= listed and ids["gone"] not in listed and ids["pending"] not in listed


def test_the_comparison_sees_what_a_sign_in_writes(account):
    """The check above can fail: a sign-in on either vault changes a file the comparison covers."""
    authctl, desk, ids = account
    for tool, pin in ((authctl, PIN), (desk, DESK_PIN)):
        before = tree(tool.vault)
        result = tool.sign(sign_options(), ORIGIN, "--credential", ids["kept"], env={"AUTHCTL_PIN": pin})
        assert result.code == 0, result.stderr
        assert changes(before, tree(tool.vault)), f"a sign-in on {tool.vault.name} changed nothing the snapshot sees"
