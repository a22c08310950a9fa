"""The caller's context: calls from a cross-origin iframe (crossOrigin, topOrigin), mediation
(conditional sign-in and create, immediate, silent), and related origins (WebAuthn L3 §5.11),
judged by py_webauthn and python-fido2."""
import base64
import http.server
import json
import threading

import pytest
from fido2.webauthn import CollectedClientData
from webauthn import (generate_authentication_options, generate_registration_options, options_to_json,
                      verify_authentication_response, verify_registration_response)
from webauthn.helpers import parse_authenticator_data

from conftest import unb64url

RP_ID = "example.com"


def creation(rp_id=RP_ID, uv="preferred", user=b"alice"):
    options = generate_registration_options(rp_id=rp_id, rp_name="RP", user_name=user.decode(), user_id=user)
    body = json.loads(options_to_json(options))
    body["authenticatorSelection"] = {"residentKey": "required", "userVerification": uv}
    return options, body


def request(rp_id=RP_ID):
    options = generate_authentication_options(rp_id=rp_id)
    return options, json.loads(options_to_json(options))


def client_data(response):
    return unb64url(response["response"]["clientDataJSON"])


# MARK: cross-origin iframes

def test_a_call_from_a_cross_origin_iframe_says_so_in_client_data(authctl):
    origin, top = "https://login.example.com", "https://shop.example.net"
    options, body = creation()
    response = authctl.register(body, origin, "--top-origin", top).json
    challenge = base64.urlsafe_b64encode(options.challenge).rstrip(b"=").decode()
    expected = ('{"type":"webauthn.create","challenge":"%s","origin":"%s","crossOrigin":true,"topOrigin":"%s"}'
                % (challenge, origin, top)).encode()
    assert client_data(response) == expected  # §5.8.1.2, byte for byte
    parsed = CollectedClientData(client_data(response))
    assert parsed.cross_origin is True and parsed.origin == origin
    verified = verify_registration_response(credential=response, expected_challenge=options.challenge,
                                            expected_rp_id=RP_ID, expected_origin=origin)

    auth, body = request()
    assertion = authctl.sign(body, origin, "--top-origin", top).json
    assert json.loads(client_data(assertion))["topOrigin"] == top
    verify_authentication_response(credential=assertion, expected_challenge=auth.challenge, expected_rp_id=RP_ID,
                                   expected_origin=origin, credential_public_key=verified.credential_public_key,
                                   credential_current_sign_count=0)
    # The same origin on top is no cross-origin call: no topOrigin member.
    _, body = request()
    same = authctl.sign(body, origin, "--top-origin", origin + "/cart").json
    assert json.loads(client_data(same)) == {**json.loads(client_data(same)), "crossOrigin": False}
    assert "topOrigin" not in json.loads(client_data(same))


def test_what_an_iframe_may_not_do(authctl):
    origin, top = "https://login.example.com", "https://shop.example.net"
    _, body = creation()
    before = authctl.state()
    assert authctl.register(body, origin, "--top-origin", top, "--no-frame-permission").code == 13
    assert authctl.register(body, origin, "--top-origin", top, "--no-user-activation").code == 13
    assert authctl.register(body, origin, "--top-origin", "http://shop.example.net").code == 16  # not a secure context
    assert authctl.state() == before
    assert authctl.register(body, origin).code == 0
    _, body = request()
    assert authctl.sign(body, origin, "--top-origin", top, "--no-frame-permission").code == 13
    assert authctl.sign(body, origin, "--top-origin", top, "--mediation", "conditional").code == 13


# MARK: mediation

def test_conditional_sign_in_waits_instead_of_failing(authctl):
    _, body = request()
    # No passkey: an autofill request stays pending until its timeout — timedOut, not notHandled.
    result = authctl.sign(body, "https://example.com", "--mediation", "conditional", "--instant-timeout")
    assert result.code == 19, result.stderr
    assert authctl.sign(body, "https://example.com").code == 13  # a modal request fails at once
    _, made = creation()
    registration = authctl.register(made, "https://example.com").json
    auth, body = request()
    picked = authctl.sign(body, "https://example.com", "--mediation", "conditional").json
    assert picked["id"] == registration["id"]
    # Passing the autofill by is not an error either.
    ignored = authctl.sign(body, "https://example.com", "--mediation", "conditional", "--user-action", "cancel",
                           "--instant-timeout")
    assert ignored.code == 19


def test_a_conditional_sign_in_signs_the_passkey_picked_from_its_autofill_list(authctl):
    origin = "https://example.com"
    keys = {}
    for user in (b"alice", b"bob", b"carol"):
        _, body = creation(user=user, uv="required" if user == b"carol" else "preferred")
        if user == b"carol":  # credProtect 3: no candidate of a sign-in without user verification
            body["extensions"] = {"credentialProtectionPolicy": "userVerificationRequired"}
        verified = verify_registration_response(credential=authctl.register(body, origin).json, expected_challenge=unb64url(body["challenge"]),
                                                expected_rp_id=RP_ID, expected_origin=origin)
        keys[user.decode()] = (base64.urlsafe_b64encode(verified.credential_id).rstrip(b"=").decode(), verified.credential_public_key)
    ids = {name: key[0] for name, key in keys.items()}
    auth, body = request()
    # The list is the authenticator's own candidates: carol's passkey only when the call verifies the user.
    offered = authctl.sign(body, origin, "--mediation", "conditional", "--offers").json
    assert [(o["credentialId"], o["userName"], o["userDisplayName"]) for o in offered] == [(ids[n], n, n) for n in ("alice", "bob", "carol")]
    discouraged = {**body, "userVerification": "discouraged"}
    assert [o["userName"] for o in authctl.sign(discouraged, origin, "--mediation", "conditional", "--offers").json] == ["alice", "bob"]
    allowing = {**body, "allowCredentials": [{"type": "public-key", "id": ids["bob"]}]}
    assert [o["userName"] for o in authctl.sign(allowing, origin, "--mediation", "conditional", "--offers").json] == ["bob"]
    # A pick signs with that passkey, as the RP verifies.
    picked = authctl.sign(body, origin, "--mediation", "conditional", "--pick", ids["bob"]).json
    assert picked["id"] == ids["bob"]
    verify_authentication_response(credential=picked, expected_challenge=auth.challenge, expected_rp_id=RP_ID, expected_origin=origin,
                                   credential_public_key=keys["bob"][1], credential_current_sign_count=0, require_user_verification=True)
    # A passkey the list does not offer cannot be picked: notHandled, nothing printed or written.
    before = authctl.state()
    refused = authctl.sign(discouraged, origin, "--mediation", "conditional", "--pick", ids["carol"], "--json")
    assert refused.code == 13 and refused.stdout == "" and authctl.state() == before
    assert json.loads(refused.stderr)["error"] == "notHandled" and "does not offer" in json.loads(refused.stderr)["message"]
    long = authctl.sign(body, origin, "--mediation", "conditional", "--pick", "A" * 60000)  # the id it repeats is cut
    assert long.code == 13 and "(45000 bytes)" in long.stderr and len(long.stderr) < 400, long.stderr[:200]
    # Dismissed, the call stays pending until its timeout: timedOut (NotAllowedError).
    dismissed = authctl.sign(body, origin, "--mediation", "conditional", "--dismiss", "--instant-timeout", "--json")
    assert dismissed.code == 19 and dismissed.stdout == "" and json.loads(dismissed.stderr)["domException"] == "NotAllowedError"
    # What the person does with the list needs a conditional call, one thing at a time, and a credential id.
    for extra in (("--pick", ids["bob"]), ("--offers",), ("--dismiss",), ("--mediation", "conditional", "--pick", ids["bob"], "--offers"),
                  ("--mediation", "conditional", "--pick", ids["bob"], "--user", "bob")):
        assert authctl.sign(body, origin, *extra).code == 64, extra
    assert authctl.sign(body, origin, "--mediation", "conditional", "--pick", "not base64!").code == 65
    assert authctl.state() == before


def test_immediate_ui_mode_and_silent_mediation(authctl):
    _, body = request()
    # Chromium 156: `mediation: "immediate"` is no CredentialMediationRequirement (TypeError).
    refused = authctl.sign(body, "https://example.com", "--mediation", "immediate")
    assert refused.code == 65 and "badInput" in refused.stderr and "--ui-mode immediate" in refused.stderr
    assert authctl.sign(body, "https://example.com", "--mediation", "sometimes").code == 65
    # Immediate sign-in is uiMode immediate: no local passkey is NotAllowedError at once.
    assert authctl.sign(body, "https://example.com", "--ui-mode", "immediate").code == 13
    _, made = creation()
    registration = authctl.register(made, "https://example.com").json
    assert authctl.sign(body, "https://example.com", "--ui-mode", "immediate").json["id"] == registration["id"]
    # silent is treated as optional (Chromium 156): it signs.
    assert authctl.sign(body, "https://example.com", "--mediation", "silent").json["id"] == registration["id"]


def test_conditional_create_needs_a_recent_password_sign_in_and_asks_nothing(authctl):
    options, body = creation()
    # Without a recent password sign-in the call stays pending until its timeout (Chromium 156).
    refused = authctl.register(body, "https://example.com", "--mediation", "conditional", "--instant-timeout")
    assert refused.code == 19 and "pending" in refused.stderr and authctl.listing() == []
    response = authctl.register(body, "https://example.com", "--mediation", "conditional",
                                "--recent-password-sign-in", "--user-action", "cancel").json  # no prompt to cancel
    flags = parse_authenticator_data(unb64url(response["response"]["authenticatorData"])).flags
    assert not flags.up and not flags.uv
    with pytest.raises(Exception):  # an RP that insists on user presence refuses it
        verify_registration_response(credential=response, expected_challenge=options.challenge,
                                     expected_rp_id=RP_ID, expected_origin="https://example.com")
    verify_registration_response(credential=response, expected_challenge=options.challenge, expected_rp_id=RP_ID,
                                 expected_origin="https://example.com", require_user_presence=False)
    _, required = creation(uv="required", user=b"bob")
    assert authctl.register(required, "https://example.com", "--mediation", "conditional",
                            "--recent-password-sign-in").code == 13


# MARK: related origins

def related(tmp_path, origins):
    path = tmp_path / "webauthn"
    path.write_text(json.dumps({"origins": origins}))
    return str(path)


def test_a_related_origin_may_use_the_rp_id(authctl, tmp_path):
    origin = "https://shop.example.co.uk"
    options, body = creation()
    assert authctl.register(body, origin).code == 16  # example.com is no suffix of it
    document = related(tmp_path, ["https://example.de", origin])
    response = authctl.register(body, origin, "--related-origins", document).json
    verified = verify_registration_response(credential=response, expected_challenge=options.challenge,
                                            expected_rp_id=RP_ID, expected_origin=origin)
    auth, body = request()
    assertion = authctl.sign(body, origin, "--related-origins", document).json
    verify_authentication_response(credential=assertion, expected_challenge=auth.challenge, expected_rp_id=RP_ID,
                                   expected_origin=origin, credential_public_key=verified.credential_public_key,
                                   credential_current_sign_count=0)


def test_only_the_first_five_labels_count(authctl, tmp_path):
    origin = "https://shop.example.co.uk"
    _, body = creation()
    five = [f"https://site{i}.example" for i in range(5)]
    assert authctl.register(body, origin, "--related-origins", related(tmp_path, five + [origin])).code == 16
    # The same label again is no new label: shop.example.co.uk's label "example" is among the five.
    with_label = ["https://example.org"] + five[:4] + [origin]
    assert authctl.register(body, origin, "--related-origins", related(tmp_path, with_label)).code == 0
    assert authctl.register(body, origin, "--related-origins", related(tmp_path, ["https://other.example"])).code == 16
    (tmp_path / "bad").write_text("[]")
    assert authctl.register(body, origin, "--related-origins", str(tmp_path / "bad")).code == 16


def test_the_document_can_be_fetched(authctl, tmp_path):
    origin = "https://shop.example.co.uk"
    replies = {"/.well-known/webauthn": (200, json.dumps({"origins": [origin]}).encode()), "/gone": (404, b"")}

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            status, body = replies.get(self.path, (404, b""))
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        base = f"http://127.0.0.1:{server.server_port}"
        _, body = creation()
        assert authctl.register(body, origin, "--related-origins", base + "/.well-known/webauthn").code == 0
        assert authctl.register(body, origin, "--related-origins", base + "/gone").code == 16
    finally:
        server.shutdown()


def test_entries_that_are_not_secure_origins_still_take_up_labels(authctl, tmp_path):
    origin = "https://shop.example.co.uk"
    _, body = creation()
    plain = [f"http://a.{n}.com" for n in ("one", "two", "three", "four", "five")]
    assert authctl.register(body, origin, "--related-origins", related(tmp_path, plain + [origin])).code == 16
    spaced = [" https://shop.example.co.uk\t"]  # the URL parser trims white space and drops tabs
    assert authctl.register(body, origin, "--related-origins", related(tmp_path, spaced)).code == 0


def test_a_related_origin_may_signal(authctl, tmp_path):
    origin = "https://shop.example.co.uk"
    _, body = creation()
    document = related(tmp_path, [origin])
    made = authctl.register(body, origin, "--related-origins", document).json
    signal = json.dumps({"rpId": RP_ID, "credentialId": made["id"]})
    assert authctl.run("signal", "unknown-credential", "--origin", origin, "--options", "-", stdin=signal).code == 16
    result = authctl.run("signal", "unknown-credential", "--origin", origin, "--options", "-", "--related-origins", document,
                         stdin=signal)
    assert result.code == 0, result.stderr
    assert authctl.listing() == []


def test_any_secure_top_level_page_may_embed_a_call(authctl):
    _, body = creation()
    for top in ("https://127.0.0.1", "https://[::1]:8443", "http://127.0.0.1:8000"):
        response = authctl.register(body, "https://example.com", "--top-origin", top).json
        assert json.loads(client_data(response))["topOrigin"] == top


def test_hybrid_to_the_same_device_is_a_usage_error(authctl):
    _, body = request()
    result = authctl.sign(body, "https://example.com", "--via", "default")
    assert result.code == 64 and "another device" in result.stderr
