"""The security key's PIN (authenticatorClientPIN, CTAP 2.1 §6.5) against python-fido2: the
known answers the Swift tests hold the PIN/UV auth protocols to are python-fido2's own."""
import json
import subprocess
import sys

from conftest import ROOT

FIXTURES = ROOT / "Tests" / "interop" / "fixtures"


def test_the_pin_vectors_are_python_fido2s():
    # make_pin_uv_auth_vectors.py computes them with python-fido2's PinProtocolV1/V2 and fixed
    # keys; the file the Swift tests read is what it prints with the installed python-fido2.
    made = subprocess.run([sys.executable, str(FIXTURES / "make_pin_uv_auth_vectors.py")], capture_output=True, text=True,
                          timeout=120)
    assert made.returncode == 0, made.stderr
    stored = json.loads((FIXTURES / "pin-uv-auth-protocols.json").read_text())
    fresh = json.loads(made.stdout)
    assert fresh["protocols"] == stored["protocols"] and fresh["offCurve"] == stored["offCurve"]
    assert [p["version"] for p in stored["protocols"]] == [1, 2]
