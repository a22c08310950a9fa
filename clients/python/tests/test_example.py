"""The worked example, examples/bank.py, runs end to end against the example bank."""
import os
import pathlib
import subprocess
import sys

EXAMPLE = pathlib.Path(__file__).resolve().parents[1] / "examples" / "bank.py"


def run(*args, env=None):
    return subprocess.run([sys.executable, str(EXAMPLE), *args], capture_output=True, text=True, timeout=300,
                          env=env or os.environ.copy())


def test_the_bank_example_succeeds(authctl_server):
    result = run("--authctl-bin", authctl_server.binary)
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    for number in range(1, 6):
        assert any(line.startswith(f"[{number}] ") for line in lines), result.stdout
    assert "syncArrived" in result.stdout
    assert "refused it with HTTP 400" in result.stdout
    assert lines[-1] == "every step went as expected"


def test_the_bank_example_fails_when_the_bank_does(tmp_path, authctl_server):
    # A "bank" that never starts: the example says so and exits non-zero.
    broken = tmp_path / "rp_server.py"
    broken.write_text("import sys\nprint('no port today', flush=True)\nsys.exit(3)\n")
    result = run("--rp-server", str(broken), "--authctl-bin", authctl_server.binary)
    assert result.returncode == 1
    assert "FAILED: the bank did not start" in result.stderr


def test_the_bank_example_notices_a_bank_that_accepts_a_broken_signature(tmp_path, authctl_server):
    # The example bank, its assertion check made to let every signature through.
    source = (EXAMPLE.parents[3] / "docs" / "examples" / "rp_server.py").read_text()
    assert source.count("verified = verify_authentication_response(") == 1
    assert source.count("\ndef serve(") == 1
    lenient = source.replace("verified = verify_authentication_response(", "verified = lenient_verify(").replace(
        "\ndef serve(", """
def lenient_verify(**arguments):
    try:
        return verify_authentication_response(**arguments)
    except Exception:
        class Accepted:
            new_sign_count = 0
            credential_device_type = "multi_device"  # as the bank registered the synced passkey
        return Accepted()


def serve(""")
    bank = tmp_path / "rp_server.py"
    bank.write_text(lenient)
    result = run("--rp-server", str(bank), "--authctl-bin", authctl_server.binary)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "[4] " in result.stdout  # the steps before passed
    assert "FAILED: the bank accepted a broken signature" in result.stderr
