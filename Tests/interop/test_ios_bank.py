"""An iOS app's passkey code against a real relying party: docs/examples/ios-bank, a package that
depends on this one by path and imports AuthenticationServices (on Linux, this repository's), signs
up at the example bank (docs/examples/rp_server.py, py_webauthn) with a password, adds a passkey
through ASAuthorizationController when the bank offers it, and signs in with it; the bank verifies
both. The package is built once per run, into the run's own scratch directory: a cold debug build of
the example and what it needs (Session and below) took 31-43 s on two cores (measured;
the higher figure with other builds running)."""
import json
import subprocess
import time

import pytest

from conftest import ROOT, Running, load_example, own_environment, unb64url

ORIGIN = "https://yourbank.example"  # the origin iOS gives an app associated with yourbank.example


@pytest.fixture(scope="module")
def example(tmp_path_factory):
    """The example's binary, built once, and an environment of its own to run it in."""
    base = tmp_path_factory.mktemp("ios-bank")
    env = own_environment(base)
    started = time.monotonic()
    build = subprocess.run(["swift", "build", "--package-path", str(ROOT / "docs" / "examples" / "ios-bank"),
                            "--scratch-path", str(base / "build"), "--product", "ios-bank"],
                           env=env, capture_output=True, text=True, timeout=1800)
    print(f"ios-bank built in {time.monotonic() - started:.0f} s")
    assert build.returncode == 0, build.stdout + build.stderr
    assert "warning:" not in build.stdout + build.stderr
    return base / "build" / "debug" / "ios-bank", env


@pytest.fixture
def bank():
    running = Running(load_example("rp_server").serve(0, origin=ORIGIN))
    yield running
    running.close()


def run(example, bank, *args):
    binary, env = example
    done = subprocess.run([str(binary), bank.url, *args], env=env, capture_output=True, text=True, timeout=300)
    steps = [line.partition(" ")[::2] for line in done.stdout.splitlines()]
    return done.returncode, steps, done.stderr


def answer(steps, name):
    """The bank's JSON answer at step `name` (the last such step)."""
    return json.loads([detail for step, detail in steps if step == name][-1])


def stored(bank, username):
    return bank.server.RequestHandlerClass.bank.users[username]["passkeys"]


def test_the_app_adds_a_passkey_after_a_password_sign_in_and_signs_in_with_it(example, bank):
    code, steps, stderr = run(example, bank, "alice")
    assert code == 0, (steps, stderr)
    assert [step for step, _ in steps] == ["signup", "password-login", "register-begin", "passkey", "register-finish",
                                           "logout", "login-begin", "passkey", "login-finish"]
    assert answer(steps, "password-login") == {"user": "alice", "offerPasskey": True}
    assert answer(steps, "register-finish") == {"verified": True, "passkeys": 1}
    assert answer(steps, "login-finish") == {"verified": True, "user": "alice"}
    created, signed = [detail.split() for step, detail in steps if step == "passkey"]
    assert created[0] == "created" and signed[0] == "signed" and created[1:] == signed[1:]
    assert created[2] == "platform"
    # The bank keeps the passkey the app made, synced as an iCloud Keychain passkey is, and the
    # sign-in moved nothing but what a verified one moves.
    (passkey_id, passkey), = stored(bank, "alice").items()
    assert passkey_id == created[1]
    assert len(unb64url(passkey_id)) == 16
    assert passkey["deviceType"] == "multi_device"


def test_a_tampered_signature_is_refused_by_the_bank(example, bank):
    code, steps, _ = run(example, bank, "eve", "--tamper-signature")
    assert code == 1
    assert answer(steps, "register-finish") == {"verified": True, "passkeys": 1}
    status, _, body = [detail for step, detail in steps if step == "refused"][0].partition(" ")
    assert status == "400"
    assert json.loads(body) == {"error": "Could not verify authentication signature"}
    assert "login-finish" not in [step for step, _ in steps]


def test_the_upgrade_is_offered_three_times_and_a_dismissed_sheet_declines_it(example, bank):
    for declined in (1, 2, 3):
        code, steps, stderr = run(example, bank, "carol", "--cancel-sheet")
        assert code == 0, (steps, stderr)
        assert answer(steps, "password-login") == {"user": "carol", "offerPasskey": True}
        assert ("passkey", "canceled") in steps
        assert answer(steps, "upgrade-decline") == {"declined": declined}
    code, steps, _ = run(example, bank, "carol")
    assert code == 0
    assert answer(steps, "password-login") == {"user": "carol", "offerPasskey": False}
    assert steps[-1] == ("upgrade", "not offered")
    assert stored(bank, "carol") == {}


def test_a_refused_password_and_an_unreachable_bank_have_their_exit_codes(example, bank, tmp_path):
    code, steps, _ = run(example, bank, "budi", "--password", "not rahasia")
    assert code == 1
    assert steps[-1][0] == "refused" and steps[-1][1].startswith("401 ")
    binary, env = example
    done = subprocess.run([str(binary), "http://127.0.0.1:1", "dave"], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 4
    assert done.stdout.startswith("unreachable http://127.0.0.1:1")
    done = subprocess.run([str(binary), "not a url"], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 2
    assert done.stderr.startswith("usage: ios-bank ")
