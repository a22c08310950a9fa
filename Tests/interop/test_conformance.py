"""The options JSON is refused where a browser refuses it (docs/conformance.md): WebAuthn L3
parseCreationOptionsFromJSON / parseRequestOptionsFromJSON, WebIDL conversions, and Chrome's
client rules (RP ID compared as given, timeouts clamped, enterprise attestation by policy)."""
import copy
import json

import cbor2
import pytest

from conftest import unb64url

ORIGIN = "https://example.com"
CREATE = {
    "rp": {"id": "example.com", "name": "Example"},
    "user": {"id": "dXNlcg", "name": "alice", "displayName": "Alice"},
    "challenge": "Y2hhbGxlbmdlLWJ5dGVz",
    "pubKeyCredParams": [{"type": "public-key", "alg": -7}],
}
GET = {"challenge": "Z2V0LWNoYWxsZW5nZQ", "rpId": "example.com"}


def changed(base, path, value):
    """A deep copy of `base` with the member at `path` ("user.name") set to `value`, or removed
    when `value` is DELETE."""
    out = copy.deepcopy(base)
    *parents, last = path.split(".")
    node = out
    for p in parents:
        node = node[p]
    if value is DELETE:
        del node[last]
    else:
        node[last] = value
    return out


DELETE = object()


def register(authctl, options, *extra, origin=ORIGIN):
    return authctl.run("--json", "register", "--origin", origin, "--options", "-", *extra, stdin=json.dumps(options))


def sign(authctl, options, *extra, origin=ORIGIN):
    return authctl.run("--json", "sign", "--origin", origin, "--options", "-", *extra, stdin=json.dumps(options))


def refused(result, name, code, dom):
    assert (result.code, result.stdout) == (code, ""), result.stderr
    error = json.loads(result.stderr)
    assert (error["error"], error["domException"]) == (name, dom), error


def type_error(result):
    refused(result, "badInput", 65, "TypeError")


def encoding_error(result):
    refused(result, "encodingError", 27, "EncodingError")


def client_data(response):
    return json.loads(unb64url(response["response"]["clientDataJSON"]))


# 1. Required members: missing is a TypeError; null converts as WebIDL says.

@pytest.mark.parametrize("path", ["rp", "rp.name", "user", "user.id", "user.name", "user.displayName",
                                  "challenge", "pubKeyCredParams"])
def test_a_missing_required_creation_member_is_a_type_error(authctl, path):
    type_error(register(authctl, changed(CREATE, path, DELETE)))
    assert authctl.listing() == []


def test_a_missing_request_challenge_is_a_type_error(authctl):
    authctl.run("register", "--origin", ORIGIN).json
    type_error(sign(authctl, {"rpId": "example.com"}))


@pytest.mark.parametrize("path", ["rp", "user", "pubKeyCredParams"])
def test_null_for_a_required_dictionary_or_sequence_is_a_type_error(authctl, path):
    type_error(register(authctl, changed(CREATE, path, None)))


def test_null_for_a_domstring_is_the_string_null(authctl):
    # WebIDL ToString(null) is "null": a browser accepts it, and so does authctl.
    response = register(authctl, changed(changed(CREATE, "user.name", None), "rp.name", None)).json
    assert authctl.listing()[0]["userName"] == "null"
    assert response["id"]


# 2. Base64url: only the unpadded URL alphabet, or EncodingError.

@pytest.mark.parametrize("path,value", [
    ("challenge", "Y2hhbGxlbmdl="),
    ("challenge", "Y2hh+GxlbmdlLWJ5dGVz"),
    ("challenge", "Y2hh/GxlbmdlLWJ5dGVz"),
    ("challenge", "Y2hhbGxl bmdl"),
    ("challenge", "Y2hhbGxlbmdlLWJ5dGVz\n"),
    ("challenge", "Y"),
    ("user.id", "dXNlcg=="),
    ("excludeCredentials", [{"type": "public-key", "id": "AAA+"}]),
    ("excludeCredentials", [{"type": "an-unknown-type", "id": "AA=="}]),
    ("extensions", {"credBlob": "AQ=="}),
    ("extensions", {"prf": {"eval": {"first": "AQ/D"}}}),
])
def test_creation_base64url_members_are_strict(authctl, path, value):
    encoding_error(register(authctl, changed(CREATE, path, value)))
    assert authctl.listing() == []


@pytest.mark.parametrize("path,value", [
    ("challenge", "Z2V0LWNoYWxsZW5nZQ=="),
    ("allowCredentials", [{"type": "public-key", "id": "AA/A"}]),
    ("extensions", {"largeBlob": {"write": "AQ+D"}}),
])
def test_request_base64url_members_are_strict(authctl, path, value):
    authctl.run("register", "--origin", ORIGIN).json
    encoding_error(sign(authctl, changed(GET, path, value)))


def test_a_type_error_wins_over_an_encoding_error(authctl):
    # Conversion of the whole dictionary comes before any decoding.
    type_error(register(authctl, changed(changed(CREATE, "challenge", "a+b="), "hints", "client-device")))


def test_the_client_data_challenge_is_the_challenge_as_given(authctl):
    response = register(authctl, CREATE).json
    assert client_data(response)["challenge"] == CREATE["challenge"]


def test_typed_ids_stay_lenient(authctl):
    # --challenge, --user-id, --exclude are typed by people: padding and standard base64 are read,
    # and the built options carry the canonical form.
    response = authctl.run("register", "--origin", ORIGIN, "--challenge", "+/8=", "--user-id", "dXNlcg==").json
    assert client_data(response)["challenge"] == "-_8"
    result = authctl.run("--json", "register", "--origin", ORIGIN, "--challenge", "!!")
    refused(result, "badInput", 65, "TypeError")


# 3. The RP ID is compared as given.

@pytest.mark.parametrize("rp_id,origin", [("EXAMPLE.com", ORIGIN), ("Example.com", "https://login.example.com"),
                                          ("example.com.", ORIGIN)])
def test_an_rp_id_is_not_lower_cased(authctl, rp_id, origin):
    refused(register(authctl, changed(CREATE, "rp.id", rp_id), origin=origin), "securityError", 16, "SecurityError")
    authctl.run("register", "--origin", ORIGIN).json
    refused(sign(authctl, changed(GET, "rpId", rp_id), origin=origin), "securityError", 16, "SecurityError")


def test_a_lower_case_rp_id_still_works(authctl):
    register(authctl, CREATE).json
    sign(authctl, GET).json


# 4. Enterprise attestation only for the RP IDs the client permits.

def attestation(response):
    obj = cbor2.loads(unb64url(response["response"]["attestationObject"]))
    return obj["fmt"], obj["authData"][37:53]


def managed_aaguid(authctl):
    profiles = authctl.run("profiles", "--json").json
    entry = next(p for p in profiles if p["name"] == "managed-device")
    return bytes.fromhex(entry["aaguid"].replace("-", ""))


def test_unpermitted_enterprise_attestation_is_none_with_a_zero_aaguid(authctl):
    response = register(authctl, changed(CREATE, "attestation", "enterprise"), "--profile", "managed-device").json
    assert attestation(response) == ("none", bytes(16))
    other = register(authctl, changed(changed(CREATE, "attestation", "enterprise"), "user.id", "b3RoZXI"),
                     "--profile", "managed-device", "--enterprise-rp", "other.example").json
    assert attestation(other) == ("none", bytes(16))


def test_permitted_enterprise_attestation_is_the_profiles(authctl):
    response = register(authctl, changed(CREATE, "attestation", "enterprise"), "--profile", "managed-device",
                        "--enterprise-rp", "example.com").json
    assert attestation(response) == ("packed", managed_aaguid(authctl))


def test_direct_attestation_needs_no_permission(authctl):
    response = register(authctl, changed(CREATE, "attestation", "direct"), "--profile", "managed-device").json
    assert attestation(response) == ("packed", managed_aaguid(authctl))


def test_enterprise_rp_must_be_a_domain(authctl):
    refused(authctl.run("--json", "register", "--origin", ORIGIN, "--enterprise-rp", "not a domain"), "usage", 64, "TypeError")


# 5. Timeouts: WebIDL unsigned long, then clamped to 10 s … 10 min.

@pytest.mark.parametrize("timeout,effective", [
    (1.5, 10000), ("1000", 10000), (4294967296, 10000), (-1, 600000), ("soon", 10000), (True, 10000),
    (None, 10000), (30000, 30000), ("45000", 45000), (600001, 600000), (4294997296, 30000), ([20000], 20000),
])
def test_timeouts_convert_and_clamp_like_chrome(authctl, timeout, effective):
    authctl.run("register", "--origin", ORIGIN).json
    result = sign(authctl, dict(GET, timeout=timeout), "--user-action", "timeout", "--instant-timeout")
    refused(result, "timedOut", 19, "NotAllowedError")
    assert f"within {effective} ms" in result.stderr


def test_an_absent_timeout_is_the_default(authctl):
    authctl.run("register", "--origin", ORIGIN).json
    result = sign(authctl, GET, "--user-action", "timeout", "--instant-timeout")
    assert "within 300000 ms" in result.stderr


# 6. WebIDL types everywhere.

@pytest.mark.parametrize("path,value", [
    ("hints", "client-device"),
    ("hints", None),
    ("attestationFormats", "packed"),
    ("excludeCredentials", {"type": "public-key", "id": "AAAA"}),
    ("excludeCredentials", [{"type": "public-key"}]),
    ("excludeCredentials", [{"id": "AAAA"}]),
    ("excludeCredentials", [{"type": "public-key", "id": "AAAA", "transports": "usb"}]),
    ("excludeCredentials", ["AAAA"]),
    ("pubKeyCredParams", [{"type": "an-unknown-type"}]),
    ("pubKeyCredParams", [{"alg": -7}]),
    ("pubKeyCredParams", {"type": "public-key", "alg": -7}),
    ("authenticatorSelection", "platform"),
    ("extensions", "credProps"),
    ("extensions", {"prf": "yes"}),
    ("rp", "example.com"),
    ("user", ["alice"]),
])
def test_creation_members_of_the_wrong_kind_are_type_errors(authctl, path, value):
    type_error(register(authctl, changed(CREATE, path, value)))


@pytest.mark.parametrize("path,value", [
    ("hints", "security-key"),
    ("allowCredentials", "AAAA"),
    ("allowCredentials", None),
    ("allowCredentials", [{"id": "AAAA"}]),
    ("extensions", {"prf": {"evalByCredential": "AAAA"}}),
    ("extensions", {"prf": {"eval": {"second": "AAAA"}}}),
])
def test_request_members_of_the_wrong_kind_are_type_errors(authctl, path, value):
    authctl.run("register", "--origin", ORIGIN).json
    type_error(sign(authctl, changed(GET, path, value)))


@pytest.mark.parametrize("path,value", [
    ("rp.name", 5),
    ("user.displayName", False),
    ("authenticatorSelection", {"requireResidentKey": "no", "residentKey": 1, "userVerification": "sometimes"}),
    ("authenticatorSelection", None),
    ("attestation", "everything"),
    ("timeout", "soon"),
    ("extensions", {"credProps": "yes", "anUnknownExtension": {"x": 1}}),
    ("pubKeyCredParams", [{"type": "an-unknown-type", "alg": "x"}, {"type": "public-key", "alg": "-7"}]),
    ("hints", ["an-unknown-hint", 5]),
])
def test_values_a_browser_converts_are_accepted(authctl, path, value):
    register(authctl, changed(CREATE, path, value)).json


def test_a_number_for_a_string_becomes_its_javascript_text(authctl):
    register(authctl, changed(CREATE, "user.name", 1e21)).json
    assert authctl.listing()[0]["userName"] == "1e+21"


# 7. An empty port is no port.

@pytest.mark.parametrize("origin", ["https://example.com:", "https://example.com:/login", "https://example.com:?next=1"])
def test_an_origin_with_an_empty_port_is_the_origin_without_one(authctl, origin):
    created = register(authctl, CREATE, origin=origin).json
    assert client_data(created)["origin"] == ORIGIN
    signed = sign(authctl, GET, origin=origin).json
    assert client_data(signed)["origin"] == ORIGIN
