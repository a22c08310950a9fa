"""The client rules where headless Chromium 156's own client answers (docs/conformance.md,
"Chromium's client rules"): credProtect consistency, credProps and appid in a sign-in, the
allow list's transports, excludeCredentials and credProtect, unsupported algorithms, mediation
and uiMode, prf's evalByCredential, and the options Chromium accepts with a warning."""
import copy
import json

import pytest
from webauthn import verify_authentication_response, verify_registration_response
from webauthn.helpers import parse_authenticator_data

from conftest import b64url, unb64url

ORIGIN, RP_ID = "https://example.com", "example.com"
CREATE = {
    "rp": {"id": RP_ID, "name": "Example"},
    "user": {"id": "dXNlcg", "name": "alice", "displayName": "Alice"},
    "challenge": "Y2hhbGxlbmdlLWJ5dGVz",
    "pubKeyCredParams": [{"type": "public-key", "alg": -7}],
}
GET = {"challenge": "Z2V0LWNoYWxsZW5nZQ", "rpId": RP_ID}


def creation(uv="preferred", user="dXNlcg", **members):
    options = copy.deepcopy(CREATE)
    options["authenticatorSelection"] = {"userVerification": uv}
    options["user"]["id"] = user
    options.update(members)
    return options


def request(**members):
    return {**copy.deepcopy(GET), **members}


def register(authctl, options, *extra):
    return authctl.run("--json", "register", "--origin", ORIGIN, "--options", "-", *extra, stdin=json.dumps(options))


def sign(authctl, options, *extra):
    return authctl.run("--json", "sign", "--origin", ORIGIN, "--options", "-", *extra, stdin=json.dumps(options))


def refused(result, name, code, dom):
    assert (result.code, result.stdout) == (code, ""), result.stderr
    error = json.loads(result.stderr)
    assert (error["error"], error["domException"]) == (name, dom), error
    return error


def client_data(response):
    return json.loads(unb64url(response["response"]["clientDataJSON"]))


def descriptor(credential_id, transports=None):
    entry = {"type": "public-key", "id": credential_id}
    if transports is not None:
        entry["transports"] = transports
    return entry


# 1, 2. credProtect

@pytest.mark.parametrize("uv", ["preferred", "discouraged"])
@pytest.mark.parametrize("enforce", [False, True])
def test_a_uv_required_policy_without_required_uv_is_not_supported(authctl, uv, enforce):
    extensions = {"credentialProtectionPolicy": "userVerificationRequired", "enforceCredentialProtectionPolicy": enforce}
    error = refused(register(authctl, creation(uv, extensions=extensions)), "notSupported", 17, "NotSupportedError")
    assert "inconsistent" in error["message"]
    assert authctl.listing() == []
    assert register(authctl, creation("required", extensions=extensions)).code == 0


def test_an_unknown_protection_policy_is_not_supported(authctl):
    refused(register(authctl, creation(extensions={"credentialProtectionPolicy": "userVerificationSometimes"})),
            "notSupported", 17, "NotSupportedError")
    assert authctl.listing() == []


# 3, 4. credProps and appid in a sign-in

def test_cred_props_in_a_sign_in_is_not_supported(authctl):
    register(authctl, creation()).json
    error = refused(sign(authctl, request(extensions={"credProps": True})), "notSupported", 17, "NotSupportedError")
    assert "only valid when creating" in error["message"]
    assert sign(authctl, request(extensions={"credProps": False})).code == 0


def test_appid_in_a_sign_in_is_answered_false(authctl):
    register(authctl, creation()).json
    response = sign(authctl, request(extensions={"appid": "https://example.com/appid.json"})).json
    assert response["clientExtensionResults"] == {"appid": False}


# 5. allowCredentials transports

@pytest.mark.parametrize("transports", [["usb", "nfc"], ["hybrid"], ["ble"], ["smart-card"], ["cable"]])
def test_an_allow_list_the_platform_cannot_answer_waits_for_its_timeout(authctl, transports):
    made = register(authctl, creation()).json
    before = authctl.listing()
    result = sign(authctl, request(allowCredentials=[descriptor(made["id"], transports)]), "--instant-timeout")
    error = refused(result, "timedOut", 19, "NotAllowedError")
    assert "not asked" in error["message"]
    assert authctl.listing() == before  # the counter and everything else as they were


@pytest.mark.parametrize("transports", [None, [], ["internal"], ["usb", "internal"], ["hybrid", "internal"], ["carrier-pigeon"]])
def test_an_allow_list_naming_internal_or_nothing_still_signs(authctl, transports):
    made = register(authctl, creation()).json
    assert sign(authctl, request(allowCredentials=[descriptor(made["id"], transports)])).json["id"] == made["id"]


def test_a_hybrid_only_descriptor_is_answered_over_hybrid(authctl):
    # The passkey is on the default device; the laptop's browser reaches it over hybrid (--via).
    assert authctl.run("device", "add", "laptop", env={"AUTHCTL_NEW_PIN": "5678"}).code == 0
    made = register(authctl, creation()).json
    hybrid = request(allowCredentials=[descriptor(made["id"], ["hybrid"])])
    via = sign(authctl, hybrid, "--device", "laptop", "--via", "default").json
    assert via["id"] == made["id"] and via["authenticatorAttachment"] == "cross-platform"
    # A descriptor for a security key only reaches neither.
    usb = request(allowCredentials=[descriptor(made["id"], ["usb"])])
    refused(sign(authctl, usb, "--device", "laptop", "--via", "default", "--instant-timeout"), "timedOut", 19, "NotAllowedError")


# 6. excludeCredentials and credProtect

def test_a_passkey_made_with_uv_is_excluded_from_a_discouraged_create(authctl):
    first = register(authctl, creation("required")).json
    again = creation("discouraged", user="b3RoZXI", excludeCredentials=[descriptor(first["id"])])
    refused(register(authctl, again), "matchedExcludedCredential", 15, "InvalidStateError")
    assert [c["id"] for c in authctl.listing()] == [first["id"]]


def test_only_cred_protect_level_3_hides_it_from_an_unverified_create(authctl):
    level3 = creation("required", extensions={"credentialProtectionPolicy": "userVerificationRequired"})
    first = register(authctl, level3).json
    again = creation("discouraged", user="b3RoZXI", excludeCredentials=[descriptor(first["id"])])
    assert register(authctl, again).code == 0  # CTAP 2.1 §6.1.2 step 11: removed from the list without UV
    assert len(authctl.listing()) == 2


# 7. pubKeyCredParams

def test_unsupported_algorithms_are_not_allowed_even_with_an_excluded_match(authctl):
    first = register(authctl, creation()).json
    unsupported = creation(pubKeyCredParams=[{"type": "public-key", "alg": -257}, {"type": "public-key", "alg": -47}])
    refused(register(authctl, unsupported), "notHandled", 13, "NotAllowedError")
    # The authenticator checks the algorithms (step 3) before the excludeList (step 11), and asks nothing.
    both = creation(pubKeyCredParams=[{"type": "public-key", "alg": -257}], excludeCredentials=[descriptor(first["id"])])
    refused(register(authctl, both, "--user-action", "cancel"), "notHandled", 13, "NotAllowedError")
    # No entry of a supported type is the client's NotSupportedError, whatever else.
    no_type = creation(pubKeyCredParams=[{"type": "password", "alg": -7}], excludeCredentials=[descriptor(first["id"])])
    error = refused(register(authctl, no_type), "notSupported", 17, "NotSupportedError")
    assert error["ctapStatus"] is None
    assert len(authctl.listing()) == 1


# 8, 9, 11. mediation and uiMode

def test_silent_mediation_is_optional(authctl):
    made = register(authctl, creation(), "--mediation", "silent").json
    assert parse_authenticator_data(unb64url(made["response"]["authenticatorData"])).flags.up
    assert sign(authctl, request(), "--mediation", "silent").json["id"] == made["id"]


def test_a_conditional_create_without_a_recent_password_sign_in_is_pending(authctl):
    result = register(authctl, creation(), "--mediation", "conditional", "--instant-timeout")
    refused(result, "timedOut", 19, "NotAllowedError")
    assert authctl.listing() == []


def test_immediate_is_a_ui_mode_not_a_mediation(authctl):
    refused(sign(authctl, request(), "--mediation", "immediate"), "badInput", 65, "TypeError")
    refused(register(authctl, creation(), "--mediation", "immediate"), "badInput", 65, "TypeError")
    refused(sign(authctl, request(), "--ui-mode", "immediate"), "notHandled", 13, "NotAllowedError")  # nothing local
    made = register(authctl, creation()).json
    assert sign(authctl, request(), "--ui-mode", "immediate").json["id"] == made["id"]
    # No allow list, not with conditional mediation, never over hybrid.
    listed = request(allowCredentials=[descriptor(made["id"])])
    refused(sign(authctl, listed, "--ui-mode", "immediate"), "notHandled", 13, "NotAllowedError")
    refused(sign(authctl, request(), "--ui-mode", "immediate", "--mediation", "conditional"), "notSupported", 17, "NotSupportedError")
    refused(sign(authctl, request(), "--ui-mode", "immediate", "--no-user-activation"), "notHandled", 13, "NotAllowedError")
    assert sign(authctl, request(), "--no-user-activation").code == 0  # only immediate sign-in needs one
    assert authctl.run("device", "add", "laptop", env={"AUTHCTL_NEW_PIN": "5678"}).code == 0
    refused(sign(authctl, request(), "--device", "laptop", "--via", "default", "--ui-mode", "immediate"),
            "notHandled", 13, "NotAllowedError")


def test_ambient_sign_in_is_conditional_with_passive_ui(authctl):
    ambient = ("--mediation", "conditional", "--ui-mode", "passive")
    refused(sign(authctl, request(), *ambient, "--instant-timeout"), "timedOut", 19, "NotAllowedError")
    made = register(authctl, creation()).json
    assert sign(authctl, request(), *ambient).json["id"] == made["id"]
    caps = authctl.run("capabilities", "--json").json["capabilities"]
    assert caps["immediateGet"] is True and caps["ambientGet"] is True


# 10. prf evalByCredential

def test_an_eval_by_credential_key_not_allowed_is_a_syntax_error(authctl):
    made = register(authctl, creation()).json
    options = request(allowCredentials=[descriptor(made["id"])],
                      extensions={"prf": {"evalByCredential": {"AAAA": {"first": "AQ"}}}})
    error = refused(sign(authctl, options), "syntaxError", 29, "SyntaxError")
    assert error["ctapStatus"] is None and error["appleCode"] is None


# 12. accepted with a warning, refused with --strict

def test_an_empty_challenge_and_user_id_are_accepted_with_warnings(authctl):
    options = creation(challenge="", user="")
    result = authctl.run("register", "--origin", ORIGIN, "--options", "-", stdin=json.dumps(options))
    response = result.json
    assert client_data(response)["challenge"] == ""
    assert "warning: options.challenge is empty" in result.stderr and "replay" in result.stderr
    assert "warning: options.user.id is empty" in result.stderr
    verified = verify_registration_response(credential=response, expected_challenge=b"", expected_rp_id=RP_ID,
                                            expected_origin=ORIGIN)
    signed = authctl.run("sign", "--origin", ORIGIN, "--options", "-", stdin=json.dumps(request(challenge="")))
    assert signed.code == 0 and "replay" in signed.stderr
    assert "userHandle" not in signed.json["response"]  # an empty user handle is left out, as Chromium does
    verify_authentication_response(credential=signed.json, expected_challenge=b"", expected_rp_id=RP_ID,
                                   expected_origin=ORIGIN, credential_public_key=verified.credential_public_key,
                                   credential_current_sign_count=0)
    strict = register(authctl, options, "--strict")
    refused(strict, "badInput", 65, "TypeError")
    refused(sign(authctl, request(challenge=""), "--strict"), "badInput", 65, "TypeError")


def test_non_zero_trailing_bits_are_read_as_the_canonical_bytes(authctl):
    result = authctl.run("register", "--origin", ORIGIN, "--options", "-", stdin=json.dumps(creation(challenge="AB")))
    response = result.json
    assert client_data(response)["challenge"] == "AA"  # re-encoded, as Chromium writes it
    assert "'AB' has non-zero trailing bits" in result.stderr
    verify_registration_response(credential=response, expected_challenge=b"\x00", expected_rp_id=RP_ID,
                                 expected_origin=ORIGIN)
    assert result.stdout.count("\n") <= 1 and "warning" not in result.stdout
    refused(register(authctl, creation(challenge="AB", user="b3RoZXI"), "--strict"), "encodingError", 27, "EncodingError")
    refused(sign(authctl, request(challenge="AB"), "--strict"), "encodingError", 27, "EncodingError")
    assert b64url(b"\x00") == "AA"


def test_a_scenario_refuses_mediation_immediate(authctl, tmp_path):
    scenario = tmp_path / "immediate.scn"
    scenario.write_text("device add phone pin 1111\nphone sign mediation immediate => notHandled\n")
    result = authctl.run("scenario", "run", str(scenario))
    assert result.code == 65 and f"{scenario}:2:22: mediation is silent, optional, required, conditional" in result.stderr


def test_a_scenario_step_reports_what_the_browser_accepted_with_a_warning(authctl, tmp_path):
    scenario = tmp_path / "warned.scn"
    scenario.write_text('device add phone pin 1111\nphone register user alice options {"rp": {"name": "RP"}, '
                        '"user": {"id": "YQ", "name": "alice", "displayName": "A"}, "challenge": "", '
                        '"pubKeyCredParams": [{"type": "public-key", "alg": -7}]} => ok\n')
    report = authctl.run("--json", "scenario", "run", str(scenario)).json
    step = [s for s in report["steps"] if "register" in s["step"]][0]
    assert "options.challenge is empty" in step["result"]["warnings"]
