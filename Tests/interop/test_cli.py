"""The command line itself: every error has its name and exit code, stdout stays empty on failure,
and no failure changes the vault."""
import json
import os
import stat

import pytest

from conftest import PASSPHRASE, log_file, unb64url

ORIGIN = "https://example.com"
GOOD = {"rp": {"id": "example.com", "name": "Example"}, "user": {"id": "dXNlcg", "name": "u", "displayName": "U"},
        "challenge": "Y2hhbGxlbmdlLWNoYWxsZW5nZQ", "pubKeyCredParams": [{"type": "public-key", "alg": -7}],
        "authenticatorSelection": {"userVerification": "required"}}


def with_changes(**changes):
    options = json.loads(json.dumps(GOOD))
    options.update(changes)
    return options


def expect_error(result, name, code):
    assert result.code == code, (result.code, result.stderr)
    assert result.stdout == ""
    assert result.stderr.startswith(f"authctl: error: {name}: "), result.stderr
    assert result.stderr.count("\n") == 1


@pytest.fixture
def registered(authctl):
    authctl.register(GOOD, ORIGIN).json
    return authctl


REGISTER_FAILURES = [
    ("malformed JSON", "{not json", ORIGIN, (), "badInput", 65),
    ("top level not object", "[1,2]", ORIGIN, (), "badInput", 65),
    ("missing challenge", {k: v for k, v in GOOD.items() if k != "challenge"}, ORIGIN, (), "badInput", 65),
    ("bad base64url", with_changes(challenge="not base64!"), ORIGIN, (), "encodingError", 27),
    ("user id too long", with_changes(user={"id": "A" * 100, "name": "u", "displayName": "u"}), ORIGIN, (), "badInput", 65),
    ("http origin", GOOD, "http://example.com", (), "securityError", 16),
    ("rp id not a suffix", GOOD, "https://example.org", (), "securityError", 16),
    ("rp id a public suffix", with_changes(rp={"id": "co.uk", "name": "x"}), "https://shop.co.uk", (), "securityError", 16),
    ("IP origin", GOOD, "https://127.0.0.1", (), "securityError", 16),
    ("no ES256", with_changes(pubKeyCredParams=[{"type": "public-key", "alg": -257}]), ORIGIN, (), "notHandled", 13),
    ("no public-key entry", with_changes(pubKeyCredParams=[{"type": "password", "alg": -7}]), ORIGIN, (), "notSupported", 17),
    ("cross-platform wanted", with_changes(authenticatorSelection={"authenticatorAttachment": "cross-platform"}),
     ORIGIN, (), "notHandled", 13),
    ("wrong PIN", GOOD, ORIGIN, ({"AUTHCTL_PIN": "0000"},), "failed", 11),
    ("no PIN source", GOOD, ORIGIN, ({"AUTHCTL_PIN": None},), "notInteractive", 14),
    ("wrong passphrase", GOOD, ORIGIN, ({"AUTHCTL_PASSPHRASE": "wrong"},), "vaultLocked", 20),
    ("no passphrase", GOOD, ORIGIN, ({"AUTHCTL_PASSPHRASE": None},), "notInteractive", 14),
]


@pytest.mark.parametrize("label,options,origin,env,name,code", REGISTER_FAILURES, ids=[c[0] for c in REGISTER_FAILURES])
def test_register_failures_are_named_and_change_nothing(registered, label, options, origin, env, name, code):
    before = registered.snapshot()
    listed = registered.listing()
    text = options if isinstance(options, str) else json.dumps(options)
    result = registered.run("register", "--origin", origin, "--options", "-", stdin=text, env=env[0] if env else None)
    expect_error(result, name, code)
    if name == "failed":  # a wrong PIN is counted, and nothing else changes
        assert registered.listing() == listed
        assert registered.run("--json", "biometry", "status").json["failures"] == 1
    else:
        assert registered.snapshot() == before


def test_json_errors_carry_every_mapping(authctl):
    result = authctl.run("--json", "register", "--origin", ORIGIN, "--options", "-", stdin=json.dumps(GOOD),
                         env={"AUTHCTL_PIN": "9999"})
    assert result.code == 11 and result.stdout == ""
    error = json.loads(result.stderr)
    assert error == {"error": "failed", "message": error["message"], "domException": "NotAllowedError",
                     "appleCode": 1004, "ctapStatus": 0x3F, "exitCode": 11}


def test_sign_without_a_passkey_is_not_handled(authctl):
    result = authctl.sign({"challenge": "Y2hhbGxlbmdl", "rpId": "example.com"}, ORIGIN)
    expect_error(result, "notHandled", 13)


def test_missing_and_foreign_vaults(authctl, tmp_path):
    expect_error(authctl.run("list", env={"AUTHCTL_VAULT": str(tmp_path / "absent")}), "vaultNotFound", 22)
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("hello")
    expect_error(authctl.run("list", env={"AUTHCTL_VAULT": str(foreign)}), "vaultNotFound", 22)
    expect_error(authctl.run("init", "--kdf", "min", env={"AUTHCTL_VAULT": str(foreign)}), "badInput", 65)
    assert sorted(os.listdir(foreign)) == ["notes.txt"]
    expect_error(authctl.run("init", "--kdf", "min"), "vaultExists", 23)


@pytest.mark.parametrize("target", ["log", "header"])
def test_corruption_is_reported_not_used(registered, target):
    path = log_file(registered.vault) if target == "log" else registered.vault / target
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x40
    path.write_bytes(bytes(data))
    expect_error(registered.run("list"), "vaultCorrupted", 21)
    expect_error(registered.sign({"challenge": "Y2hhbGxlbmdl"}, ORIGIN), "vaultCorrupted", 21)


def test_usage_errors(authctl):
    expect_error(authctl.run("frobnicate"), "usage", 64)
    expect_error(authctl.run("register"), "usage", 64)
    expect_error(authctl.run("list", "--bogus"), "usage", 64)
    expect_error(authctl.run("init", "--kdf", "fast"), "usage", 64)


def test_vault_files_are_private_and_sealed(registered):
    assert stat.S_IMODE(registered.vault.stat().st_mode) == 0o700
    for path in registered.vault.iterdir():
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path
    listing = registered.listing()[0]
    spki = unb64url(listing["publicKey"])
    blob = b"".join(registered.snapshot().values())
    # Neither the public key, the rp id nor the user name appears in clear: records are sealed.
    for clear in (spki[-32:], b"example.com", PASSPHRASE.encode()):
        assert clear not in blob


def test_convenience_flags_register_list_sign_delete(authctl):
    reg = authctl.run("register", "--origin", ORIGIN, "--rp-id", "example.com", "--user-name", "carol",
                      "--user-id", "Y2Fyb2w", "--attestation", "direct").json
    assert reg["clientExtensionResults"] == {"credProps": {"rk": True}}
    listing = authctl.listing()
    assert [(c["id"], c["rpId"], c["userName"], c["userHandle"]) for c in listing] == \
        [(reg["id"], "example.com", "carol", "Y2Fyb2w")]
    table = authctl.run("list").stdout.splitlines()
    assert table[0].split()[:3] == ["CREDENTIAL", "ID", "RP"] and reg["id"] in table[1]
    signed = authctl.run("sign", "--origin", ORIGIN, f"--allow={reg['id']}").json
    assert signed["id"] == reg["id"]
    expect_error(authctl.run("sign", "--origin", ORIGIN, "--credential=AAAAAAAAAAAAAAAAAAAAAA"), "notHandled", 13)
    assert authctl.run("delete", reg["id"]).code == 0
    assert authctl.listing() == []
    expect_error(authctl.run("delete", reg["id"]), "notHandled", 13)


def test_options_from_a_file_and_wrapped_in_public_key(authctl, tmp_path):
    path = tmp_path / "options.json"
    path.write_text(json.dumps({"publicKey": GOOD}))
    response = authctl.run("register", "--origin", ORIGIN, "--options", str(path)).json
    client_data = unb64url(response["response"]["clientDataJSON"])
    assert client_data == (b'{"type":"webauthn.create","challenge":"Y2hhbGxlbmdlLWNoYWxsZW5nZQ",'
                           b'"origin":"https://example.com","crossOrigin":false}')


def test_pin_and_passphrase_files(tmp_path, authctl):
    (tmp_path / "pass").write_text("file passphrase\n")
    (tmp_path / "pin").write_text("9876\n")
    env = {"AUTHCTL_PASSPHRASE": None, "AUTHCTL_PIN": None, "AUTHCTL_VAULT": str(tmp_path / "v2")}
    files = ("--passphrase-file", str(tmp_path / "pass"), "--pin-file", str(tmp_path / "pin"))
    assert authctl.run("init", "--kdf", "min", *files, env=env).code == 0
    assert authctl.run("register", "--origin", ORIGIN, "--options", "-", *files, stdin=json.dumps(GOOD), env=env).code == 0
    env_wrong_pin = dict(env, AUTHCTL_PIN="1111")
    # The file wins over the environment, for both secrets.
    assert authctl.run("sign", "--origin", ORIGIN, *files, env=env_wrong_pin).code == 0


def test_hostile_inputs_get_named_errors_not_crashes(authctl):
    # A Punycode label whose decoding overflows, in an origin whose RP ID is a suffix of it.
    expect_error(authctl.run("register", "--origin", "https://xn--1x767205604493046e.example.com",
                             "--rp-id", "example.com"), "securityError", 16)
    # A timeout larger than any clock: clamped to ten minutes, like a browser.
    authctl.run("register", "--origin", ORIGIN).json
    result = authctl.run("sign", "--origin", ORIGIN, "--options", "-", "--user-action", "timeout", "--instant-timeout",
                         stdin=json.dumps({"challenge": "Y2hhbGxlbmdl", "timeout": 9300000000000000}))
    expect_error(result, "timedOut", 19)
    assert "600000 ms" in result.stderr
    expect_error(authctl.run("bench", "vault", "--runs", "0"), "usage", 64)


def test_list_json_keeps_backslashes(authctl):
    authctl.run("register", "--origin", ORIGIN, "--user-name", "a\\/b").json
    assert authctl.listing()[0]["userName"] == "a\\/b"


def test_header_kdf_limits_out_of_range_are_corruption(registered):
    import hashlib
    path = registered.vault / "header"
    original = path.read_bytes()
    for offset, value in ((19, 1 << 63), (11, 0), (11, (1 << 32) - 1)):  # memlimit, opslimit, opslimit
        data = bytearray(original)
        data[offset:offset + 8] = value.to_bytes(8, "big")
        data[131:] = hashlib.blake2b(bytes(data[:131]), digest_size=32).digest()  # a checksum is no key
        path.write_bytes(bytes(data))
        expect_error(registered.run("list"), "vaultCorrupted", 21)
    path.write_bytes(original)
    assert registered.run("list").code == 0


def test_passphrase_change_to_another_kdf_level_keeps_the_pin_working(registered):
    result = registered.run("vault", "passwd", "--kdf", "interactive", env={"AUTHCTL_NEW_PASSPHRASE": "new one"})
    assert result.code == 0, result.stderr
    signed = registered.run("sign", "--origin", ORIGIN, env={"AUTHCTL_PASSPHRASE": "new one"})
    assert signed.code == 0, signed.stderr
    assert registered.run("--json", "biometry", "status", env={"AUTHCTL_PASSPHRASE": "new one"}).json["failures"] == 0


def test_vault_check_reports_what_it_checked(registered):
    registered.run("register", "--origin", ORIGIN, "--user-name", "plain", "--user-id", "cA",
                   "--user-verification", "discouraged").json
    report = registered.run("--json", "vault", "check").json
    assert (report["credentialsChecked"], report["sealedUnderBiometry"]) == (1, 1)
