"""Durability: a scenario's throw-away vault is written without a single fsync, and every command
that writes a user's vault flushes what it writes. strace counts the flushes the real binary asks
the kernel for (fsync, fdatasync, sync_file_range, syncfs, sync)."""
import base64
import json
import re
import shutil
import subprocess

from conftest import BIN, Authctl

FLUSHES = "fsync,fdatasync,sync_file_range,syncfs,sync"
ORIGIN = "https://example.com"


def flushes(tool: Authctl | None, *args, stdin="", env=None) -> tuple[int, subprocess.CompletedProcess]:
    """Runs authctl ARGS under strace (children followed) and counts the flush calls it made."""
    assert shutil.which("strace"), "strace is needed (scripts/test.sh installs it)"
    environment = dict(tool.env) if tool else {}
    environment.update(env or {})
    proc = subprocess.run(["strace", "-f", "-qq", "-e", f"trace={FLUSHES}", "-o", "/dev/stderr", BIN, *args],
                          input=stdin, env=environment or None, capture_output=True, text=True, timeout=300)
    calls = [line for line in proc.stderr.splitlines() if re.search(r"\b(fsync|fdatasync|sync_file_range|syncfs|sync)\(", line)]
    return len(calls), proc


def registration_options(user: str) -> str:
    return json.dumps({
        "rp": {"id": "example.com", "name": "RP"},
        "user": {"id": base64.urlsafe_b64encode(user.encode()).rstrip(b"=").decode(), "name": user, "displayName": user},
        "challenge": "AAAAAAAAAAAAAAAAAAAAAA",
        "pubKeyCredParams": [{"type": "public-key", "alg": -7}],
        "authenticatorSelection": {"residentKey": "required", "userVerification": "discouraged"},
    })


def test_a_scenario_never_flushes_its_throwaway_vault(tmp_path):
    lines = ["seed 4", "device add phone pin 1111", "device add laptop pin 2222", "sync upload 1s download 2s"]
    lines += [f"phone register user u{i}" for i in range(40)]
    lines += ["wait 5s", "laptop holds => " + ",".join(f"u{i}" for i in range(40)), "laptop sign user u3 => ok",
              "phone delete u3", "wait 5s", "laptop holds => " + ",".join(f"u{i}" for i in range(40) if i != 3)]
    path = tmp_path / "many.scn"
    path.write_text("\n".join(lines) + "\n")
    env = {"HOME": str(tmp_path), "TMPDIR": str(tmp_path), "PATH": "/usr/bin:/bin"}
    count, proc = flushes(None, "scenario", "run", str(path), env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "passed:" in proc.stdout
    assert count == 0, proc.stderr[-2000:]
    assert not any(p.name.startswith("authctl-scenario-") for p in tmp_path.iterdir())  # and it is gone


def test_every_command_that_writes_a_users_vault_flushes(tmp_path):
    tool = Authctl(tmp_path / "vault")
    count, proc = flushes(tool, "init", "--kdf", "min")
    assert proc.returncode == 0, proc.stderr
    assert count > 0
    count, proc = flushes(tool, "register", "--origin", ORIGIN, "--options", "-", stdin=registration_options("alice"))
    assert proc.returncode == 0, proc.stderr
    assert count > 0, "a registration must be on disk before its response is printed"
    credential = json.loads(proc.stdout)["id"]
    count, proc = flushes(tool, "device", "add", "laptop", "--no-biometry")
    assert proc.returncode == 0, proc.stderr
    assert count > 0
    count, proc = flushes(tool, "--device", "laptop", "register", "--origin", ORIGIN, "--options", "-",
                          stdin=registration_options("bob"))
    assert proc.returncode == 0, proc.stderr
    assert count > 0
    count, proc = flushes(tool, "delete", credential)
    assert proc.returncode == 0, proc.stderr
    assert count > 0
    count, proc = flushes(tool, "vault", "compact")
    assert proc.returncode == 0, proc.stderr
    assert count > 0
