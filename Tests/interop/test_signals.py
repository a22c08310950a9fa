"""The RP's signal methods (WebAuthn L3 §5.1.10) from the command line: each one's effect on
`list`, on a second device after sync, and on sign-in; silence when nothing matches; the client's
checks (TypeError, SecurityError) leaving the vault as it was. py_webauthn judges the sign-ins."""
import json
import subprocess

import pytest
from webauthn import (generate_authentication_options, generate_registration_options, options_to_json,
                      verify_authentication_response, verify_registration_response)
from webauthn.helpers.structs import (AuthenticatorSelectionCriteria, PublicKeyCredentialDescriptor,
                                      ResidentKeyRequirement, UserVerificationRequirement)

from conftest import BIN, b64url

RP_ID, ORIGIN = "example.com", "https://example.com"


@pytest.fixture
def account(authctl):
    """The first device (`default`) and a laptop, with no sync delay: changes arrive at once."""
    result = authctl.run("device", "add", "laptop", env={"AUTHCTL_NEW_PIN": "5678"})
    assert result.code == 0, result.stderr
    return authctl


def register(tool, user: bytes, name: str):
    options = generate_registration_options(
        rp_id=RP_ID, rp_name="RP", user_name=name, user_id=user, user_display_name=name.title(),
        authenticator_selection=AuthenticatorSelectionCriteria(
            resident_key=ResidentKeyRequirement.REQUIRED, user_verification=UserVerificationRequirement.PREFERRED))
    response = tool.register(json.loads(options_to_json(options)), ORIGIN).json
    verified = verify_registration_response(credential=response, expected_challenge=options.challenge,
                                            expected_rp_id=RP_ID, expected_origin=ORIGIN)
    return response["id"], verified.credential_public_key


def sign(tool, credential_id: str, device=None):
    options = generate_authentication_options(
        rp_id=RP_ID, allow_credentials=[PublicKeyCredentialDescriptor(id=__import__("conftest").unb64url(credential_id))])
    extra = ["--device", device] if device else []
    pin = {"AUTHCTL_PIN": "5678"} if device == "laptop" else {}
    return options, tool.sign(json.loads(options_to_json(options)), ORIGIN, *extra, env=pin)


def signal(tool, kind: str, options: dict, origin=ORIGIN, device=None):
    extra = ["--device", device] if device else []
    return tool.run("signal", kind, "--origin", origin, "--options", "-", *extra, stdin=json.dumps(options))


def listing(tool, device=None):
    args = (["--device", device] if device else []) + ["list", "--json"]
    return {c["id"]: c for c in tool.run(*args).json["credentials"]}


def state(tool):
    """The vault's files byte for byte (the lock and the store's directory aside), and what each device lists."""
    files = {p.name: p.read_bytes() for p in sorted(tool.vault.iterdir()) if p.is_file() and p.name != "lock"}
    return files, listing(tool), listing(tool, "laptop")


@pytest.fixture
def two_users(account):
    alice = register(account, b"alice-id", "alice")
    bob = register(account, b"bob-id", "bob")
    return account, alice, bob


def test_unknown_credential_deletes_the_passkey_everywhere(two_users):
    tool, (alice, alice_key), (bob, _) = two_users
    assert set(listing(tool, "laptop")) == {alice, bob}
    result = signal(tool, "unknown-credential", {"rpId": RP_ID, "credentialId": bob})
    assert result.code == 0 and result.stdout == "", result.stderr
    assert set(listing(tool)) == {alice}
    assert set(listing(tool, "laptop")) == {alice}
    for device in (None, "laptop"):
        assert sign(tool, bob, device)[1].code == 13  # notHandled: the passkey is gone
    options, result = sign(tool, alice, "laptop")
    verify_authentication_response(credential=result.json, expected_challenge=options.challenge, expected_rp_id=RP_ID,
                                   expected_origin=ORIGIN, credential_public_key=alice_key, credential_current_sign_count=0)


def test_accepted_credentials_hides_the_others_and_restores_them(two_users):
    tool, (alice, alice_key), (bob, bob_key) = two_users
    result = signal(tool, "accepted-credentials", {"rpId": RP_ID, "userId": b64url(b"alice-id"), "allAcceptedCredentialIds": []})
    assert result.code == 0 and result.stdout == "", result.stderr
    for device in (None, "laptop"):
        listed = listing(tool, device)
        assert listed[alice]["hidden"] is True and listed[bob]["hidden"] is False
        assert sign(tool, alice, device)[1].code == 13
    assert "hidden" in tool.run("list").stdout
    options, result = sign(tool, bob)
    verify_authentication_response(credential=result.json, expected_challenge=options.challenge, expected_rp_id=RP_ID,
                                   expected_origin=ORIGIN, credential_public_key=bob_key, credential_current_sign_count=0)
    # Listed again (from the laptop this time): restored, on both devices.
    result = signal(tool, "accepted-credentials", {"rpId": RP_ID, "userId": b64url(b"alice-id"), "allAcceptedCredentialIds": [alice]},
                    device="laptop")
    assert result.code == 0, result.stderr
    assert listing(tool)[alice]["hidden"] is False
    options, result = sign(tool, alice)
    verify_authentication_response(credential=result.json, expected_challenge=options.challenge, expected_rp_id=RP_ID,
                                   expected_origin=ORIGIN, credential_public_key=alice_key, credential_current_sign_count=0)


def test_current_user_details_renames_the_users_passkeys(two_users):
    tool, (alice, alice_key), (bob, _) = two_users
    result = signal(tool, "current-user-details",
                    {"rpId": RP_ID, "userId": b64url(b"alice-id"), "name": "alice@new.example", "displayName": "Alice Liddell"},
                    origin="https://login.example.com")  # a registrable suffix of the origin's host is allowed
    assert result.code == 0 and result.stdout == "", result.stderr
    for device in (None, "laptop"):
        listed = listing(tool, device)
        assert (listed[alice]["userName"], listed[alice]["userDisplayName"]) == ("alice@new.example", "Alice Liddell")
        assert (listed[bob]["userName"], listed[bob]["userDisplayName"]) == ("bob", "Bob")
    options, result = sign(tool, alice, "laptop")
    verify_authentication_response(credential=result.json, expected_challenge=options.challenge, expected_rp_id=RP_ID,
                                   expected_origin=ORIGIN, credential_public_key=alice_key, credential_current_sign_count=0)


def test_a_signal_whose_json_report_cannot_be_written_is_io_error_with_its_effect_made(two_users):
    """`signal --json` prints its effect once the change is durable: on a full disk that is
    `ioError` (74, never a signal death), the one JSON object on stderr (what changed is said
    there only after the report), and the passkey is hidden all the same, as a ceremony's result
    is stored; a closed stdout is seen before anything is done and changes nothing."""
    tool, (alice, _), (bob, _) = two_users
    options = json.dumps({"rpId": RP_ID, "userId": b64url(b"alice-id"), "allAcceptedCredentialIds": []})
    args = [BIN, "--json", "signal", "accepted-credentials", "--origin", ORIGIN, "--options", "-"]
    before = state(tool)
    closed = subprocess.run(["sh", "-c", '"$@" >&-', "sh", *args], input=options, env=tool.env, capture_output=True, text=True, timeout=60)
    assert closed.returncode == 74 and json.loads(closed.stderr)["error"] == "ioError", closed.stderr
    assert state(tool) == before
    with open("/dev/full", "w") as full:
        failed = subprocess.run(args, input=options, env=tool.env, stdout=full, stderr=subprocess.PIPE, text=True, timeout=60)
    assert failed.returncode == 74 and json.loads(failed.stderr)["error"] == "ioError", failed.stderr
    assert listing(tool)[alice]["hidden"] is True and listing(tool)[bob]["hidden"] is False


def test_a_signal_that_matches_nothing_is_silent(two_users):
    tool, (alice, _), _ = two_users
    before = state(tool)
    for kind, options in [
        ("unknown-credential", {"rpId": RP_ID, "credentialId": b64url(b"nobody-knows-me!")}),
        ("unknown-credential", {"rpId": "login.example.com", "credentialId": alice}),  # another RP's id space
        ("accepted-credentials", {"rpId": RP_ID, "userId": b64url(b"carol-id"), "allAcceptedCredentialIds": []}),
        ("accepted-credentials", {"rpId": RP_ID, "userId": b64url(b"alice-id"), "allAcceptedCredentialIds": [alice]}),
        ("current-user-details", {"rpId": RP_ID, "userId": b64url(b"alice-id"), "name": "alice", "displayName": "Alice"}),
    ]:
        origin = "https://login.example.com"
        result = signal(tool, kind, options, origin=origin)
        assert (result.code, result.stdout, result.stderr) == (0, "", ""), (kind, options)
    assert state(tool) == before


@pytest.mark.parametrize("kind,options,code", [
    ("unknown-credential", {"rpId": RP_ID, "credentialId": "not+base64url"}, 65),
    ("unknown-credential", {"rpId": RP_ID}, 65),
    ("accepted-credentials", {"rpId": RP_ID, "userId": "!!", "allAcceptedCredentialIds": []}, 65),
    ("accepted-credentials", {"rpId": RP_ID, "userId": b64url(b"alice-id"), "allAcceptedCredentialIds": ["a b"]}, 65),
    ("accepted-credentials", {"rpId": RP_ID, "userId": b64url(b"alice-id")}, 65),
    ("current-user-details", {"rpId": RP_ID, "userId": b64url(b"alice-id"), "name": "x"}, 65),
    ("unknown-credential", {"rpId": "other.example", "credentialId": "AAAA"}, 16),
    ("unknown-credential", {"rpId": "com", "credentialId": "AAAA"}, 16),  # a public suffix
    ("accepted-credentials", {"rpId": "evil.com", "userId": b64url(b"alice-id"), "allAcceptedCredentialIds": []}, 16),
    ("current-user-details", {"rpId": "login.example.com", "userId": b64url(b"alice-id"), "name": "x", "displayName": "y"}, 16),
])
def test_refused_signals_change_nothing(two_users, kind, options, code):
    tool = two_users[0]
    before = state(tool)
    result = signal(tool, kind, options)  # the origin is https://example.com: login.example.com is not its suffix
    assert result.code == code and result.stdout == "", result.stderr
    error = json.loads(tool.run("--json", "signal", kind, "--origin", ORIGIN, "--options", "-", stdin=json.dumps(options)).stderr)
    assert error["domException"] == {65: "TypeError", 16: "SecurityError"}[code]
    assert state(tool) == before


def test_an_insecure_origin_is_a_security_error(two_users):
    tool, (alice, _), _ = two_users
    result = signal(tool, "unknown-credential", {"rpId": RP_ID, "credentialId": alice}, origin="http://example.com")
    assert result.code == 16
    assert alice in listing(tool)


def test_malformed_json_and_missing_options(two_users):
    tool = two_users[0]
    assert tool.run("signal", "unknown-credential", "--origin", ORIGIN, "--options", "-", stdin="{").code == 65
    assert tool.run("signal", "unknown-credential", "--origin", ORIGIN).code == 64  # --options is required
    assert tool.run("signal", "frobnicate").code == 64


def test_a_hidden_passkey_still_counts_for_exclude_credentials(two_users):
    tool, (alice, _), _ = two_users
    assert signal(tool, "accepted-credentials", {"rpId": RP_ID, "userId": b64url(b"alice-id"),
                                                 "allAcceptedCredentialIds": []}).code == 0
    options = generate_registration_options(
        rp_id=RP_ID, rp_name="RP", user_name="alice", user_id=b"alice-id",
        exclude_credentials=[PublicKeyCredentialDescriptor(id=__import__("conftest").unb64url(alice))])
    before = listing(tool)
    result = tool.register(json.loads(options_to_json(options)), ORIGIN)
    assert result.code == 15, result.stderr  # still on the authenticator: InvalidStateError
    assert listing(tool) == before
