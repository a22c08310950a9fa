"""The CLI reference's examples run as written (docs are part of the feature)."""
import os
import pathlib
import re
import shutil
import subprocess
import sys

import pytest

from conftest import BIN, ROOT, own_environment
from postgres_support import Cluster


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
    assert len(blocks) == 4
    cluster = Cluster()
    # The server the guide names is a private cluster; its scratch paths, the test's own.
    server = "\n".join(blocks[3:]).replace("postgresql://authctl@db.example/keys", cluster.address().split("#")[0])
    for name in ("phone", "laptop", "tablet", "code", "alice.recovery"):
        server = server.replace(f"/tmp/{name}", str(tmp_path / name))
    script = "set -eu\nauthctl() { \"$BIN\" \"$@\"; }\n" + "\n".join(blocks[:3]).replace("/tmp/keychain", str(tmp_path / "v")) + "\n" + server
    env = own_environment(tmp_path)
    env["BIN"] = BIN
    try:
        result = subprocess.run(["bash", "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    finally:
        cluster.destroy()
    assert result.returncode == 0, result.stderr
    assert "laptop  yes     enrolled  0         0/0" in result.stdout
    assert "account: upload 2s, download 1s..5s, seed 7, backup state after-upload" in result.stdout
    # The second vault lists the first's devices, and its `sync set` reached the first vault.
    assert re.search(r"phone +yes +enrolled +- +- +[0-9a-f]{8}", result.stdout), result.stdout
    assert "account: upload 2s, download 3s, seed 7, backup state after-upload" in result.stdout
    # The account on a server: the laptop joined by approval, the tablet by the recovery secret.
    assert re.search(r"laptop +yes +enrolled +0 +0/0 +this\nphone +yes +enrolled +- +- +[0-9a-f]{8}\ntablet", result.stdout), result.stdout


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


def test_browser_guide_examples_run(tmp_path):
    """docs/browser.md's Selenium, Playwright and Firefox examples, as written, from the
    repository's root with this authctl first on PATH."""
    import shutil
    if not (shutil.which("/usr/bin/chromium") and shutil.which("/usr/bin/chromedriver") and shutil.which("/usr/bin/firefox-esr")):
        pytest.skip("Debian's chromium, chromium-driver and firefox-esr are not installed")
    text = (ROOT / "docs" / "browser.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert len(blocks) == 3
    env = own_environment(tmp_path)
    env["PATH"] = str(pathlib.Path(BIN).parent) + os.pathsep + env["PATH"]
    # Chromium's singleton socket lives under TMPDIR, and a socket's path is at most 107 bytes:
    # pytest's own temporary directories are too deep for it.
    env["TMPDIR"] = "/tmp"
    for block, says in zip(blocks, ("passkey ", "made ", "passkey ")):
        script = tmp_path / "example.py"
        script.write_text(block)
        # Its own session: whatever it started is killed with it if it overruns.
        process = subprocess.Popen([sys.executable, str(script)], cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   text=True, start_new_session=True)
        try:
            stdout, stderr = process.communicate(timeout=300)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, 9)
            stdout, stderr = process.communicate()
        result = subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)
        assert result.returncode == 0, result.stdout + result.stderr
        assert result.stdout.startswith(says), result.stdout


def test_audit_guide_ci_examples_run(tmp_path):
    """docs/audit.md's "In CI" examples as written, from the repository's root: the shell one with
    this authctl first on PATH, the pytest one with the client's plugin (its authctl_audit fixture)."""
    text = (ROOT / "docs" / "audit.md").read_text()
    section = text.split("## In CI", 1)[1].split("\n## ", 1)[0]
    shell, = re.findall(r"```sh\n(.*?)```", section, re.S)
    test, = re.findall(r"```python\n(.*?)```", section, re.S)
    env = own_environment(tmp_path)
    env["PATH"] = str(pathlib.Path(BIN).parent) + os.pathsep + env["PATH"]
    port = free_port()
    script = "set -eu\n" + shell.replace("python3 ", f"{sys.executable} ").replace("8765", str(port)).replace("rp.log", str(tmp_path / "rp.log")) \
        .replace("audit.xml", str(tmp_path / "audit.xml"))
    result = subprocess.run(["bash", "-c", script], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 ACCEPTED" not in result.stdout and "rejected" in result.stdout
    assert (tmp_path / "audit.xml").read_text().startswith("<?xml")
    (tmp_path / "test_audit_example.py").write_text(test)
    env["AUTHCTL_BIN"] = BIN
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path / "test_audit_example.py")],
                            cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0 and "1 passed" in result.stdout, result.stdout + result.stderr


def free_port():
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_security_key_guide_example_runs(tmp_path):
    """docs/ctap.md's "Running the key": a key started, its controller's touch and power, SIGTERM."""
    text = (ROOT / "docs" / "ctap.md").read_text()
    section = text.split("## Running the key\n", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```sh\n(.*?)```", section, re.S)
    assert len(blocks) == 1
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "authctl").symlink_to(BIN)
    env = own_environment(tmp_path)
    env["PATH"] = f"{bin_dir}:{env['PATH']}"
    result = subprocess.run(["bash", "-c", "set -eu\n" + blocks[0] + 'echo "AUTHCTL_CTAP=$AUTHCTL_CTAP"\n'], cwd=tmp_path, env=env,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    assert "touch on\ntouch off\npower off\npower on\n" in out
    assert re.search(r"^ctap udp 127\.0\.0\.1:\d+\nctap unix .*/key\.sock\ncontroller http://127\.0\.0\.1:\d+$", out, re.M), out
    assert re.search(r"AUTHCTL_CTAP=udp:127\.0\.0\.1:\d+,unix:/.*/key\.sock", out), out
    assert not (tmp_path / "key.sock").exists()


def test_ctap_guide_python_fido2_example_runs(tmp_path):
    """docs/ctap.md's python-fido2 example as written, against `authctl ctap serve --socket
    /tmp/key.sock --touch always` (the socket in a directory of the test's own) with
    AUTHCTL_CTAP naming it, and the tree's client on the module path."""
    from ctap_support import CtapServe
    text = (ROOT / "docs" / "ctap.md").read_text()
    section = text.split("## python-fido2\n", 1)[1].split("\n## ", 1)[0]
    shell, = re.findall(r"```sh\n(.*?)```", section, re.S)
    example, = re.findall(r"```python\n(.*?)```", section, re.S)
    assert "ctap serve --socket /tmp/key.sock --touch always" in shell and "AUTHCTL_CTAP=unix:/tmp/key.sock" in shell
    key = CtapServe(tmp_path, unix=True, touch="always")
    try:
        (tmp_path / "example.py").write_text(example)
        result = subprocess.run([sys.executable, str(tmp_path / "example.py")], cwd=tmp_path, env=key.environment(),
                                capture_output=True, text=True, timeout=120)
    finally:
        key.stop()
    assert result.returncode == 0, result.stdout + result.stderr
    first, second = result.stdout.splitlines()
    assert first.startswith(f"authctl:{key.unix_key} authctl security key [") and "'FIDO_2_1'" in first, result.stdout
    assert re.fullmatch(r"signed in with [0-9a-f]{16}", second), result.stdout


def ctap_tools_walkthrough(tmp_path, fido2_library, blocks: list, **extra) -> subprocess.CompletedProcess:
    """docs/ctap.md's "libfido2 and OpenSSH" blocks, run as one script with this authctl first on
    PATH, the library the guide names replaced by this build's, and the key's socket and controller
    port the test's own. The script runs in a session of its own (the tools read PINs from standard
    input), which is ended at the end, key and all."""
    import signal
    import tempfile
    env = own_environment(tmp_path)
    env["PATH"] = str(pathlib.Path(BIN).parent) + os.pathsep + env["PATH"]
    env.pop("SSH_AUTH_SOCK", None)
    env.update(extra)
    short = tempfile.mkdtemp(prefix="authctl-doc-", dir="/tmp")  # a Unix socket's path fits in 107 bytes
    # (The trap, the test's own: a step that fails ends the script, and the key with it. Under
    # set -e a command of the trap that fails would be the script's status: a key the script
    # killed already, or none left, must not fail it.)
    script = ("set -eu\ntrap 'kill $(jobs -p) 2>/dev/null || true' EXIT\n" + "\n".join(blocks)).replace("/tmp/key.sock", f"{short}/key.sock") \
        .replace("127.0.0.1:8112", f"127.0.0.1:{free_port()}") \
        .replace('"$HOME/.local/lib/authctl/libauthctl-fido2.so"', f'"{fido2_library}"')
    process = subprocess.Popen(["bash", "-c", script], cwd=tmp_path, env=env, stdin=subprocess.DEVNULL,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        stdout, stderr = process.communicate(timeout=300)
    finally:
        try:
            os.killpg(process.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        process.wait()
        shutil.rmtree(short, ignore_errors=True)
    return subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)


def ctap_tools_blocks() -> list:
    text = (ROOT / "docs" / "ctap.md").read_text()
    section = text.split("## libfido2 and OpenSSH\n", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```sh\n(.*?)```", section, re.S)
    assert len(blocks) == 4, blocks
    return blocks


@pytest.mark.skipif(shutil.which("fido2-token") is None or shutil.which("ssh-keygen") is None,
                    reason="fido2-tools or openssh-client is not installed")
def test_ctap_guide_libfido2_and_openssh_walkthrough_runs(tmp_path, fido2_library):
    """The key started, listed and described; a credential made and verified, a sign-in verified;
    an OpenSSH key made, a file signed and the signature verified."""
    start, tools, _, ssh = ctap_tools_blocks()
    result = ctap_tools_walkthrough(tmp_path, fido2_library, [start, tools, ssh])
    assert result.returncode == 0, result.stdout + result.stderr
    assert re.search(r"^authctl:unix:/tmp/authctl-doc-\w+/key\.sock: vendor=0x0000, product=0x0000 \(authctl security key\)$",
                     result.stdout, re.M), result.stdout
    assert re.search(r"^options: rk, up, .*noclientPin", result.stdout, re.M) and "\nverified\n" in result.stdout
    assert 'Good "file" signature for alice@example.com with ED25519-SK key' in result.stdout, result.stdout + result.stderr


@pytest.mark.skipif(shutil.which("fido2-token") is None, reason="fido2-tools is not installed")
def test_ctap_guide_pin_recipes_run(tmp_path, fido2_library):
    """The PIN set, used, changed; the RPs listed with it; the key powered again and reset."""
    start, tools, pin, _ = ctap_tools_blocks()
    # libfido2's trace (FIDO_DEBUG) shows each CTAP status the key answered: a recipe whose command
    # the key does not answer yet (CTAP1_ERR_INVALID_COMMAND, 0x01) is skipped, saying which.
    result = ctap_tools_walkthrough(tmp_path, fido2_library, [start, tools, pin, "fido2-token -I \"$key\"\nkill %1\n"],
                                    FIDO_DEBUG="1")
    failure = re.search(r"^fido2-[a-z]+: fido_", result.stderr, re.M)  # set -e: the first tool that failed
    statuses = re.findall(r"cbor_parse_reply: blob\[0\]=(0x[0-9a-f]{2})$", result.stderr[:failure.start()] if failure else "", re.M)
    failed = [line for line in result.stderr.splitlines() if line.startswith("fido2-")]
    if result.returncode != 0 and statuses[-1:] == ["0x01"]:  # what the key last answered, before it failed
        pytest.skip(f"the key does not answer a command of the recipes yet (CTAP1_ERR_INVALID_COMMAND): {failed}")
    options = re.search(r"^options: (.*)$", result.stdout, re.M)
    if result.returncode != 0 and failure and "fido_credman" in failure.string[failure.start():].split("\n", 1)[0] \
            and options and "credMgmt" not in options.group(1).split(", "):
        pytest.skip(f"the key does not offer authenticatorCredentialManagement yet (no credMgmt in its getInfo): {failed}")
    assert result.returncode == 0, result.stdout + result.stderr[-4000:]
    last = result.stdout.rsplit("proto:", 1)[1]
    assert re.search(r"^options: rk, up, .*noclientPin", last, re.M), result.stdout  # no PIN after the reset

