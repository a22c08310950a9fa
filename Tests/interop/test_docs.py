"""The CLI reference's examples run as written (docs are part of the feature)."""
import os
import pathlib
import re
import subprocess
import sys

from conftest import BIN, ROOT, own_environment


def test_cli_reference_examples_run(tmp_path):
    text = (ROOT / "docs" / "cli.md").read_text()
    blocks = re.findall(r"```sh\n(.*?)```", text, re.S)
    assert len(blocks) >= 5
    script = "set -eu\n" + "\n".join(blocks).replace("$PWD/.build/debug/authctl", BIN)
    script = script.replace(" docs/scenarios/", f" {ROOT}/docs/scenarios/")
    env = own_environment(tmp_path)
    result = subprocess.run(["bash", "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "deleted passkey" in result.stderr
    assert "passed: 22 steps" in result.stdout and "added device laptop" in result.stderr


def test_sync_guide_examples_run(tmp_path):
    text = (ROOT / "docs" / "sync.md").read_text()
    blocks = re.findall(r"```sh\n(.*?)```", text, re.S)
    assert len(blocks) == 3
    script = "set -eu\nauthctl() { \"$BIN\" \"$@\"; }\n" + "\n".join(blocks).replace("/tmp/keychain", str(tmp_path / "v"))
    env = own_environment(tmp_path)
    env["BIN"] = BIN
    result = subprocess.run(["bash", "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "laptop  yes     enrolled  0         0/0" in result.stdout
    assert "account: upload 2s, download 1s..5s, seed 7, backup state after-upload" in result.stdout
    # The second vault lists the first's devices, and its `sync set` reached the first vault.
    assert re.search(r"phone +yes +enrolled +- +- +[0-9a-f]{8}", result.stdout), result.stdout
    assert "account: upload 2s, download 3s, seed 7, backup state after-upload" in result.stdout


def test_banking_example_runs_as_documented(tmp_path):
    script = ROOT / "docs" / "examples" / "banking-flow.sh"
    env = own_environment(tmp_path)
    env.update(AUTHCTL=BIN, PYTHON=sys.executable)
    result = subprocess.run(["bash", str(script)], env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    assert out.count("transfer approved (user verified)") == 2 and "welcome, budi" in out
    assert "exit 11 (failed)" in out and "exit 18 (biometryLockout)" in out
    assert "Could not verify authentication signature" in result.stderr
