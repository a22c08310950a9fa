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


def test_server_guide_walkthrough_runs(tmp_path):
    """docs/server.md's walk-through, against a live `authctl serve --token-file ./token`."""
    import signal
    text = (ROOT / "docs" / "server.md").read_text()
    blocks = re.findall(r"```sh\n(.*?)```", text, re.S)
    assert len(blocks) == 4
    env = own_environment(tmp_path)
    server = subprocess.Popen([BIN, "serve", "--token-file", "./token"], cwd=tmp_path, env=env, stdout=subprocess.PIPE, text=True)
    try:
        env["URL"] = server.stdout.readline().split()[-1]
        script = ("set -eu\njson() { python3 -c 'import json,sys; v=json.load(sys.stdin); print(eval(\"v\"+sys.argv[1]))' \"$1\"; }\n"
                  + "\n".join(blocks))
        result = subprocess.run(["bash", "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
        assert result.returncode == 0, result.stdout + result.stderr
        out = result.stdout
        assert '{"status":"ok"}' in out and '"mode":"virtual","now":1767225600000' in out
        assert "2026-01-01T00:00:05.000Z" in out and "\nalice\n" in out and "\nYWxpY2U\n" in out
        events = [line for line in out.splitlines() if line.startswith("event:")]
        assert events == ["event: credentialAdded", "event: syncLanded", "event: syncArrived", "event: credentialAsserted"], out
        assert '"name":"canceled"' in out and '"status":422' in out and out.rstrip().endswith("204")
    finally:
        server.send_signal(signal.SIGTERM)
        assert server.wait(timeout=60) == 0
