"""`authctl capabilities`: what getClientCapabilities() (WebAuthn L3 §5.1.7) gives a page, and
isUserVerifyingPlatformAuthenticatorAvailable() / isConditionalMediationAvailable(), for an
enrolled device, a vault without biometry, a security-key device and a device without passkey
support — and how ceremonies fail on the last."""
import json

import pytest
from webauthn import (generate_authentication_options, generate_registration_options, options_to_json,
                      verify_authentication_response, verify_registration_response)

from conftest import BIN

ORIGIN, RP_ID = "https://example.com", "example.com"
L3_KEYS = {"ambientGet", "immediateGet", "conditionalCreate", "conditionalGet", "hybridTransport", "passkeyPlatformAuthenticator", "relatedOrigins",
           "signalAllAcceptedCredentials", "signalCurrentUserDetails", "signalUnknownCredential",
           "userVerifyingPlatformAuthenticator"}
EXTENSIONS = {"extension:" + name for name in ("credBlob", "credProps", "credProtect", "largeBlob", "minPinLength", "prf")}


def capabilities(tool, device=None, **kw):
    args = (["--device", device] if device else []) + ["capabilities", "--json"]
    answer = tool.run(*args, **kw).json
    assert set(answer) == {"capabilities", "isUserVerifyingPlatformAuthenticatorAvailable", "isConditionalMediationAvailable"}
    assert set(answer["capabilities"]) == L3_KEYS | EXTENSIONS
    assert all(isinstance(v, bool) for v in answer["capabilities"].values())
    return answer


def test_an_enrolled_platform_device(authctl):
    answer = capabilities(authctl)
    caps = answer["capabilities"]
    assert caps["userVerifyingPlatformAuthenticator"] and answer["isUserVerifyingPlatformAuthenticatorAvailable"]
    assert caps["passkeyPlatformAuthenticator"] and caps["conditionalGet"] and answer["isConditionalMediationAvailable"]
    assert caps["signalAllAcceptedCredentials"] and caps["signalCurrentUserDetails"] and caps["signalUnknownCredential"]
    assert all(caps[k] for k in EXTENSIONS)
    assert caps["conditionalCreate"] and caps["relatedOrigins"]  # --mediation conditional, --related-origins
    assert not caps["hybridTransport"]  # no other device to answer over hybrid
    assert authctl.run("device", "add", "phone", env={"AUTHCTL_NEW_PIN": "5678"}).code == 0
    assert capabilities(authctl)["capabilities"]["hybridTransport"]
    table = authctl.run("capabilities")
    assert table.code == 0 and "isUserVerifyingPlatformAuthenticatorAvailable()  true" in table.stdout


def test_a_vault_without_biometry(tmp_path, authctl):
    env = {"AUTHCTL_VAULT": str(tmp_path / "plain")}
    assert authctl.run("init", "--kdf", "min", "--no-biometry", env=env).code == 0
    answer = capabilities(authctl, env=env)
    caps = answer["capabilities"]
    assert not caps["userVerifyingPlatformAuthenticator"] and not answer["isUserVerifyingPlatformAuthenticatorAvailable"]
    assert not caps["passkeyPlatformAuthenticator"]  # neither UV here nor hybrid: Chrome's reading
    assert caps["conditionalGet"] and answer["isConditionalMediationAvailable"] and caps["signalUnknownCredential"]


def test_a_security_key_device(authctl):
    assert authctl.run("device", "add", "key", "--profile", "security-key", env={"AUTHCTL_NEW_PIN": "5678"}).code == 0
    answer = capabilities(authctl, "key")
    caps = answer["capabilities"]
    assert not caps["userVerifyingPlatformAuthenticator"] and not answer["isUserVerifyingPlatformAuthenticatorAvailable"]
    assert not caps["conditionalGet"] and not answer["isConditionalMediationAvailable"]
    assert caps["hybridTransport"] and caps["passkeyPlatformAuthenticator"]  # the first device answers over hybrid
    assert caps["signalUnknownCredential"] and caps["extension:prf"]
    # and the platform device, for which the key is no hybrid partner
    assert not capabilities(authctl)["capabilities"]["hybridTransport"]


@pytest.fixture
def unsupported(authctl):
    """The first device holds a passkey; `old` (an old phone, a browser without WebAuthn) has it too, and no support."""
    options = generate_registration_options(rp_id=RP_ID, rp_name="RP", user_name="alice", user_id=b"alice-id")
    response = authctl.register(json.loads(options_to_json(options)), ORIGIN).json
    verified = verify_registration_response(credential=response, expected_challenge=options.challenge,
                                            expected_rp_id=RP_ID, expected_origin=ORIGIN)
    assert authctl.run("device", "add", "old", env={"AUTHCTL_NEW_PIN": "5678"}).code == 0
    result = authctl.run("device", "unsupported", "old", "on")
    assert result.code == 0, result.stderr
    return authctl, response["id"], verified.credential_public_key


def test_an_unsupported_device_has_no_capability(unsupported):
    tool = unsupported[0]
    answer = capabilities(tool, "old")
    assert not any(answer["capabilities"].values())
    assert not answer["isUserVerifyingPlatformAuthenticatorAvailable"] and not answer["isConditionalMediationAvailable"]
    assert not capabilities(tool)["capabilities"]["hybridTransport"]  # it cannot answer for the first device either


def test_ceremonies_on_an_unsupported_device_fail_with_passkeys_not_supported(unsupported):
    tool, credential_id, key = unsupported
    listed = tool.run("--device", "old", "list", "--json").json["credentials"]
    assert [c["id"] for c in listed] == [credential_id]  # its replica stays, and sync goes on
    env = {"AUTHCTL_PIN": "5678"}
    attempts = [
        ["--device", "old", "register", "--origin", ORIGIN, "--user-name", "bob"],
        ["--device", "old", "sign", "--origin", ORIGIN],
        ["--device", "old", "sign", "--origin", ORIGIN, "--via", "default"],  # its browser cannot start hybrid
        ["sign", "--origin", ORIGIN, "--via", "old"],  # nor can it answer over hybrid
    ]
    for args in attempts:
        result = tool.run("--json", *args, env=env)
        assert result.code == 28 and result.stdout == "", (args, result.stderr)
        error = json.loads(result.stderr)
        assert (error["error"], error["domException"], error["appleCode"], error["ctapStatus"]) == \
            ("passkeysNotSupported", "NotSupportedError", None, None)
    signal = tool.run("--device", "old", "signal", "unknown-credential", "--origin", ORIGIN, "--options", "-",
                      stdin=json.dumps({"rpId": RP_ID, "credentialId": credential_id}))
    assert signal.code == 28
    assert [c["id"] for c in tool.run("list", "--json").json["credentials"]] == [credential_id]
    # Switched back on, the same device signs, and py_webauthn accepts it.
    assert tool.run("device", "unsupported", "old", "off").code == 0
    options = generate_authentication_options(rp_id=RP_ID)
    result = tool.sign(json.loads(options_to_json(options)), ORIGIN, "--device", "old", env=env)
    verify_authentication_response(credential=result.json, expected_challenge=options.challenge, expected_rp_id=RP_ID,
                                   expected_origin=ORIGIN, credential_public_key=key, credential_current_sign_count=0)
    assert capabilities(tool, "old")["capabilities"]["userVerifyingPlatformAuthenticator"]


def test_the_switch_takes_on_or_off(unsupported):
    tool = unsupported[0]
    assert tool.run("device", "unsupported", "old", "maybe").code == 64
    assert tool.run("device", "unsupported", "nobody", "on").code == 64
    assert tool.run("device", "unsupported", "old", "on").code == 0  # already so: nothing to do
