"""An iOS app's passkey code against a real relying party: docs/examples/ios-bank, a package that
depends on this one by path and imports AuthenticationServices (on Linux, this repository's). Each
flow of the example runs against the example bank (docs/examples/rp_server.py, py_webauthn) on an
iPhone and an iPad of one throw-away account, and is checked against the bank's state: the
upgrade to a passkey declined three times then added, sign-in by name and with no name, the
transfer's re-verification, the iPad before and after the sync delay, exclusion, an app not
associated with the domain, a dismissed sheet, AutoFill canceled and resumed then picked from,
the automatic upgrade, a phone without a passcode, a double tap. python-fido2 and py_webauthn
judge a registration and a sign-in made through the module, and refuse them tampered. The package
(the example and SeedShapes, the guide's code in its own shapes) is built once per run, into the
run's own scratch directory: a cold debug build of both targets took 28 s on two cores (measured;
up to 61 s with other builds running); the app's own Swift tests are built with it and run with
`swift test`. One bank serves every flow, each with a user of its own."""
import json
import os
import subprocess
import time

import pytest
from fido2.server import Fido2Server
from fido2.webauthn import PublicKeyCredentialRpEntity, PublicKeyCredentialUserEntity
from webauthn import verify_authentication_response, verify_registration_response

from conftest import ROOT, Running, b64url, load_example, own_environment, tamper, unb64url

RP_ID, ORIGIN = "yourbank.example", "https://yourbank.example"  # the origin iOS gives an app associated with yourbank.example
DOMAIN = "com.apple.AuthenticationServices.AuthorizationError"


@pytest.fixture(scope="module")
def example(tmp_path_factory):
    """The example's binary, built once with the package's other targets, and an environment of
    its own to run it in."""
    base = tmp_path_factory.mktemp("ios-bank")
    env = own_environment(base)
    started = time.monotonic()
    build = subprocess.run(["swift", "build", "--build-tests", "--package-path", str(ROOT / "docs" / "examples" / "ios-bank"),
                            "--scratch-path", str(base / "build")],
                           env=env, capture_output=True, text=True, timeout=1800)
    print(f"ios-bank built in {time.monotonic() - started:.0f} s")
    assert build.returncode == 0, build.stdout + build.stderr
    assert "warning:" not in build.stdout + build.stderr
    # The guide's code in its own shapes compiled against the module (docs/ios.md lists what it swaps).
    assert (base / "build" / "debug" / "Modules" / "SeedShapes.swiftmodule").exists()
    return base / "build" / "debug" / "ios-bank", env


@pytest.fixture(scope="module")
def bank():
    running = Running(load_example("rp_server").serve(0, origin=ORIGIN))
    yield running
    running.close()


def test_the_apps_own_tests_pass_in_swift_test(example):
    """The app's PasskeyCoordinator in `swift test` on a throw-away phone (docs/ios.md's quick
    start is that test file): a passkey made and used, a dismissed sheet, an excluded passkey."""
    binary, env = example
    done = subprocess.run(["swift", "test", "--skip-build", "--package-path", str(ROOT / "docs" / "examples" / "ios-bank"),
                           "--scratch-path", str(binary.parent.parent)], env=env, capture_output=True, text=True, timeout=600)
    out = done.stdout + done.stderr
    assert done.returncode == 0, out
    assert "Test run with 3 tests in 1 suite passed" in out, out
    # docs/ios.md's quick start shows this file as it is.
    test_file = (ROOT / "docs" / "examples" / "ios-bank" / "Tests" / "ios-bankTests" / "PasskeyCoordinatorTests.swift").read_text()
    page = (ROOT / "docs" / "ios.md").read_text()
    start = page.index("   ```swift\n   #if os(Linux)") + len("   ```swift\n")
    shown = page[start:page.index("   ```\n", start)]
    assert "".join(line[3:] if line.strip() else line for line in shown.splitlines(True)) == test_file


def run(example, *args):
    binary, env = example
    done = subprocess.run([str(binary), *args], env=env, capture_output=True, text=True, timeout=300)
    steps = [tuple(line.partition(" ")[::2]) for line in done.stdout.splitlines()]
    return done.returncode, steps, done.stderr


def flow(example, bank, name, user, *options):
    return run(example, name, bank.url, user, *options)


def details(steps, name):
    return [detail for step, detail in steps if step == name]


def answers(steps, name):
    """The bank's JSON answers at the steps called `name`, in order."""
    return [json.loads(detail) for detail in details(steps, name)]


def errors(steps):
    """The passkey requests' errors, as the delegate was handed them."""
    return answers(steps, "passkey-error")


def user(bank, name):
    return bank.server.RequestHandlerClass.bank.users[name]


def signed_in(bank, name) -> bool:
    """Whether a session of the bank's is signed in as `name`."""
    return any(s.get("user") == name for s in bank.server.RequestHandlerClass.bank.sessions.values())


def passkey_id(steps, verb):
    """The credential ids the phone reported `verb` ("created", "signed"), in order."""
    return [detail.split()[1] for detail in details(steps, "passkey") if detail.startswith(verb + " ")]


def test_the_upgrade_declined_three_times_is_added_in_settings_and_signs_in(example, bank):
    code, steps, stderr = flow(example, bank, "upgrade", "carol", "--decline", "3")
    assert code == 0, (steps, stderr)
    # Three offers, each sheet dismissed (canceled, a real dismissal) and the offer declined; the
    # fourth sign-in is offered nothing, and the person adds the passkey in Settings.
    assert [a["offerPasskey"] for a in answers(steps, "password-login")] == [True, True, True, False]
    assert [(e["code"], e["domain"], e["handling"]) for e in errors(steps)] == [(1001, DOMAIN, "userCanceled")] * 3
    assert answers(steps, "upgrade-decline") == [{"declined": 1}, {"declined": 2}, {"declined": 3}]
    assert ("app", "not offered: Settings, add a passkey") in steps
    assert answers(steps, "register-finish") == [{"verified": True, "passkeys": 1}]
    assert answers(steps, "login-finish") == [{"verified": True, "user": "carol"}]
    created, = passkey_id(steps, "created")
    assert passkey_id(steps, "signed") == [created]
    # The bank counted the declines, keeps the one passkey py_webauthn verified (synced, as an
    # iCloud Keychain passkey is), and carol is signed in with it.
    carol = user(bank, "carol")
    assert carol["declined"] == 3
    assert list(carol["passkeys"]) == [created]
    assert carol["passkeys"][created]["deviceType"] == "multi_device"
    assert signed_in(bank, "carol")


def test_a_tampered_signature_is_refused_by_the_bank(example, bank):
    code, steps, _ = flow(example, bank, "upgrade", "eve", "--tamper-signature")
    assert code == 1
    assert answers(steps, "register-finish") == [{"verified": True, "passkeys": 1}]
    status, _, body = details(steps, "refused")[0].partition(" ")
    assert (status, json.loads(body)) == ("400", {"error": "Could not verify authentication signature"})
    assert "login-finish" not in [step for step, _ in steps]
    assert not signed_in(bank, "eve")


def test_a_sign_in_with_no_name_is_the_user_the_passkeys_user_id_names(example, bank):
    code, steps, stderr = flow(example, bank, "discoverable", "dewi")
    assert code == 0, (steps, stderr)
    assert details(steps, "login-begin")[-1] == "allowed=0"
    signed, = [detail.split() for detail in details(steps, "passkey") if detail.startswith("signed ")]
    # userID, sent as the userHandle, is the user id the bank registered the passkey with.
    assert signed[3] == "user=" + b64url(user(bank, "dewi")["id"])
    assert answers(steps, "login-finish") == [{"verified": True, "user": "dewi"}]
    assert signed_in(bank, "dewi")


def test_a_transfer_is_sent_only_once_the_person_is_verified(example, bank):
    code, steps, stderr = flow(example, bank, "transfer", "budi2", "--amount", "750000")
    assert code == 0, (steps, stderr)
    assert details(steps, "transfer-begin") == ["amount=750000 userVerification=required"] * 2
    # Face ID does not match and the passcode is dismissed: canceled (1001), nothing sent; then
    # Face ID does not match again and the passcode is typed: the transfer is approved.
    mismatch, = errors(steps)
    assert (mismatch["code"], mismatch["handling"]) == (1001, "userCanceled") and "reason" not in mismatch
    assert [d for d in details(steps, "person") if "passcode" in d] == ["dismisses the passcode", "types the passcode"]
    assert answers(steps, "transfer-finish") == [{"approved": True, "amount": 750000}]
    # One transfer in the bank's history, verified again with the account's passkey.
    created, = passkey_id(steps, "created")
    transfers = user(bank, "budi2")["transfers"]
    assert [(t["amount"], t["credentialId"]) for t in transfers] == [(750000, created)]
    assert answers(steps, "transfers") == [{"transfers": transfers}]


def test_the_ipad_has_no_passkey_before_the_sync_delay_and_signs_in_after_it(example, bank):
    code, steps, stderr = flow(example, bank, "second-device", "fajar")
    assert code == 0, (steps, stderr)
    assert ("phone", "ipad passkeys=0") in steps
    # No passkey here with .preferImmediatelyAvailableCredentials: iOS answers canceled, not
    # notHandled, so the app's switch takes the dismissed branch; the password form never shows.
    none_yet, = errors(steps)
    assert (none_yet["code"], none_yet["handling"]) == (1001, "userCanceled")
    assert ("clock", "+5000ms ipad passkeys=1") in steps
    created, = passkey_id(steps, "created")
    assert passkey_id(steps, "signed") == [created]  # the iPhone's passkey, synced
    assert answers(steps, "login-finish") == [{"verified": True, "user": "fajar"}]
    assert list(user(bank, "fajar")["passkeys"]) == [created]
    assert signed_in(bank, "fajar")


def test_autofill_canceled_by_the_app_is_resumed_and_signs_in_with_the_passkey_picked(example, bank):
    code, steps, stderr = flow(example, bank, "autofill", "hana")
    assert code == 0, (steps, stderr)
    created, = passkey_id(steps, "created")
    # The QuickType bar offers hana's passkey; dismissed, nothing, and the request waits, its
    # delegate told nothing; after the app's cancel() (canceled) its switch resumes AutoFill with
    # fresh options, and the bar offers the passkey again.
    bar = [d for d in details(steps, "phone") if d.startswith("autofill waiting offers=")]
    assert bar == ["autofill waiting offers=[hana]", "autofill waiting offers=[]", "autofill waiting offers=[hana]",
                   "autofill waiting offers=[hana]"]
    assert [(e["code"], e["handling"]) for e in errors(steps)] == [(1001, "userCanceled")] * 2
    assert details(steps, "app") == [
        "cancel(): the sign-in options are a minute old", "dismissed: nothing is shown, the AutoFill sign-in resumes",
        "cancel(): one request at a time, the AutoFill request ends before the sheet", "AutoFill ended: the sheet has the screen, AutoFill is not resumed"]
    # Picked from the bar (discoverable options), then, AutoFill ended for the sheet, by name.
    assert details(steps, "login-begin") == ["allowed=0"] * 3 + ["allowed=1"]
    assert ("phone", "autofill waiting=false") in steps
    assert passkey_id(steps, "signed") == [created] * 2
    assert answers(steps, "login-finish") == [{"verified": True, "user": "hana"}] * 2
    assert list(user(bank, "hana")["passkeys"]) == [created]
    assert signed_in(bank, "hana")


def test_the_automatic_upgrade_follows_a_saved_password_and_the_bank_takes_it_without_uv(example, bank):
    code, steps, stderr = flow(example, bank, "auto-upgrade", "indra")
    assert code == 0, (steps, stderr)
    # After a typed password iOS makes nothing: canceled, no reason, and the bank still offers.
    typed, = errors(steps)
    assert (typed["code"], typed["handling"]) == (1001, "userCanceled") and "reason" not in typed
    assert [a["offerPasskey"] for a in answers(steps, "password-login")] == [True, True]
    # After the saved password picked in the sheet, the passkey is made though the person would
    # dismiss any sheet, and the bank's upgrade verifies it.
    assert details(steps, "password") == ["picked user=indra"]
    assert details(steps, "upgrade-begin") == ["rp=yourbank.example user=indra userVerification=preferred"] * 2
    assert answers(steps, "upgrade-finish") == [{"verified": True, "passkeys": 1}]
    created, = passkey_id(steps, "created")
    assert passkey_id(steps, "signed") == [created]
    assert answers(steps, "login-finish") == [{"verified": True, "user": "indra"}]
    indra = user(bank, "indra")
    assert indra["declined"] == 0 and list(indra["passkeys"]) == [created]
    assert indra["passkeys"][created]["userVerified"] is False  # UV 0: nobody was asked
    assert indra["passkeys"][created]["deviceType"] == "multi_device"
    assert signed_in(bank, "indra")


def test_a_double_tap_fails_the_second_request_with_ioss_reason_and_the_first_signs_in(example, bank):
    code, steps, stderr = flow(example, bank, "busy", "kartika")
    assert code == 0, (steps, stderr)
    assert errors(steps) == [{"code": 1004, "domain": DOMAIN, "handling": "authenticationFailed",
                              "reason": "Request already in progress for specified application identifier."}]
    created, = passkey_id(steps, "created")
    assert passkey_id(steps, "signed") == [created]
    assert answers(steps, "login-finish") == [{"verified": True, "user": "kartika"}]
    assert signed_in(bank, "kartika")


@pytest.mark.parametrize("name,code,handling,reason,passkeys", [
    ("exclude", 1006, "duplicateCredential", None, 1),
    ("not-associated", 1004, "authenticationFailed",
     "Application with identifier ABCDE12345.example.yourbank is not associated with domain yourbank.example", 0),
    ("cancel", 1001, "userCanceled", None, 1),
    ("no-passcode", 1010, "unknownError", "Device not configured for passkey requests.", 0),
])
def test_a_flow_ending_on_a_passkey_error_exits_3_with_what_ios_answers(example, bank, name, code, handling, reason, passkeys):
    person = "gita-" + name
    status, steps, stderr = flow(example, bank, name, person)
    assert status == 3, (steps, stderr)
    error, = errors(steps)
    assert error == {"code": code, "domain": DOMAIN, "handling": handling, **({"reason": reason} if reason else {})}
    assert steps[-2][0] == "passkey-error" and steps[-1][0] == "app"
    account = user(bank, person)
    assert len(account["passkeys"]) == passkeys
    assert account["declined"] == 0
    if name == "exclude":  # the bank excluded the passkey the iPhone holds
        assert details(steps, "register-begin")[-1].endswith("excluded=1")
        assert steps[-1] == ("app", "shows: this device already has a passkey for this account")
    if name == "cancel":  # signed out, and not signed in again
        assert not signed_in(bank, person)
    if name == "no-passcode":  # the guide's switch has no 1010 branch: its default; the password account works
        assert steps[-1] == ("app", "shows: something went wrong (1010)")
        assert signed_in(bank, person)


def test_a_refused_password_an_unreachable_bank_and_bad_usage_have_their_exit_codes(example, bank):
    code, steps, _ = flow(example, bank, "upgrade", "budi", "--password", "not rahasia")
    assert code == 1
    assert steps[-1][0] == "refused" and steps[-1][1].startswith("401 ")
    code, steps, _ = run(example, "upgrade", "http://127.0.0.1:1", "dave")
    assert code == 4
    assert steps[0][0] == "unreachable" and steps[0][1].startswith("http://127.0.0.1:1")
    for arguments in (["upgrade", "not a url", "dave"], ["teleport", bank.url, "dave"], ["upgrade", bank.url, "dave", "--amount", "5"],
                      ["upgrade", bank.url, "dave", "--decline", "-1"], ["raw", "dave", "--user-id", "AA"],
                      ["autofill", bank.url, "dave", "--decline", "1"]):
        code, steps, stderr = run(example, *arguments)
        assert (code, steps) == (2, []), arguments
        assert "usage: ios-bank " in stderr
    assert user(bank, "budi")["passkeys"] == {} and "dave" not in bank.server.RequestHandlerClass.bank.users


def test_python_fido2_and_py_webauthn_accept_the_modules_passkey_and_refuse_it_tampered(example):
    user_id, registration_challenge, assertion_challenge = os.urandom(16), os.urandom(32), os.urandom(32)
    code, steps, stderr = run(example, "raw", "alice", "--user-id", b64url(user_id), "--registration-challenge",
                              b64url(registration_challenge), "--assertion-challenge", b64url(assertion_challenge))
    assert code == 0, (steps, stderr)
    registration, = answers(steps, "registration")
    assertion, = answers(steps, "assertion")

    # python-fido2 as the RP, its origin check exact: its default (verify_rp_id) also takes any
    # https origin of a subdomain, which a native app's origin never is.
    rp = Fido2Server(PublicKeyCredentialRpEntity(id=RP_ID, name="Your Bank"), verify_origin=lambda o: o == ORIGIN)
    _, state = rp.register_begin(PublicKeyCredentialUserEntity(id=user_id, name="alice", display_name="alice"),
                                 user_verification="required", resident_key_requirement="required", challenge=registration_challenge)
    auth_data = rp.register_complete(state, registration)
    assert auth_data.is_user_verified() and auth_data.is_backup_eligible() and auth_data.is_backed_up()
    credential = auth_data.credential_data
    _, state = rp.authenticate_begin([credential], user_verification="required", challenge=assertion_challenge)
    assert rp.authenticate_complete(state, [credential], assertion).credential_id == unb64url(assertion["rawId"])

    # py_webauthn, as the bank verifies.
    verified = verify_registration_response(credential=registration, expected_challenge=registration_challenge, expected_rp_id=RP_ID,
                                            expected_origin=ORIGIN, require_user_verification=True)
    assert verify_authentication_response(credential=assertion, expected_challenge=assertion_challenge, expected_rp_id=RP_ID,
                                          expected_origin=ORIGIN, credential_public_key=verified.credential_public_key,
                                          credential_current_sign_count=verified.sign_count, require_user_verification=True)

    # Tampered: a signature byte flipped; the registration's clientDataJSON naming another origin
    # (fmt none signs nothing: only the origin check stands in its way).
    forged_signature = tamper(assertion, "signature")
    forged_origin = json.loads(json.dumps(registration))
    client_data = json.loads(unb64url(registration["response"]["clientDataJSON"]))
    forged_origin["response"]["clientDataJSON"] = b64url(json.dumps({**client_data, "origin": "https://yourbank.example.evil"},
                                                                    separators=(",", ":")).encode())
    _, state = rp.authenticate_begin([credential], user_verification="required", challenge=assertion_challenge)
    with pytest.raises(ValueError, match="Invalid signature"):
        rp.authenticate_complete(state, [credential], forged_signature)
    _, state = rp.register_begin(PublicKeyCredentialUserEntity(id=user_id, name="alice", display_name="alice"),
                                 user_verification="required", challenge=registration_challenge)
    with pytest.raises(ValueError, match="Invalid origin"):
        rp.register_complete(state, forged_origin)
    with pytest.raises(Exception, match="signature"):
        verify_authentication_response(credential=forged_signature, expected_challenge=assertion_challenge, expected_rp_id=RP_ID,
                                       expected_origin=ORIGIN, credential_public_key=verified.credential_public_key,
                                       credential_current_sign_count=verified.sign_count, require_user_verification=True)
    with pytest.raises(Exception, match="origin"):
        verify_registration_response(credential=forged_origin, expected_challenge=registration_challenge, expected_rp_id=RP_ID,
                                     expected_origin=ORIGIN, require_user_verification=True)
