"""Every profile × algorithm, judged by py_webauthn, python-fido2 and fido2-cred with the vault's
exported attestation root as the only trusted root; and tampered attestations refused."""
import base64
import hashlib
import json
import shutil
import subprocess

import cbor2
import pytest
from fido2.attestation import Attestation, AttestationType, verify_x509_chain
from fido2.server import Fido2Server
from fido2.webauthn import (PublicKeyCredentialParameters, PublicKeyCredentialRpEntity,
                            PublicKeyCredentialType, PublicKeyCredentialUserEntity)
from webauthn import (generate_authentication_options, generate_registration_options, options_to_json,
                      verify_authentication_response, verify_registration_response)
from webauthn.helpers.cose import COSEAlgorithmIdentifier
from webauthn.helpers.structs import (AttestationConveyancePreference, AttestationFormat,
                                      AuthenticatorSelectionCriteria, CredentialDeviceType,
                                      ResidentKeyRequirement, UserVerificationRequirement)

from conftest import b64url, unb64url

ORIGIN, RP_ID = "https://example.com", "example.com"

# profile: (format sent for "direct", algorithms it makes, BE, counts signatures, attachment, AAGUID, credential id
# length: the real authenticator's, from the recorded registrations docs/profiles.md names)
PROFILES = {
    "icloud-keychain": ("none", [-7], True, False, "platform", "fbfc3007-154e-4ecc-8c0b-6e020557d7bd", 20),
    "apple-device-bound": ("apple", [-7], False, False, "platform", "f24a8e70-d0d3-f82c-2937-32523cc4de5a", 20),
    "google-password-manager": ("none", [-7], True, False, "platform", "ea9b8d66-4d01-1d21-3ce4-b6b48cb575d4", 16),
    "windows-hello": ("tpm", [-7, -257], False, True, "platform", "08987058-cadc-4b81-b6e1-30de50dcbe96", 32),
    "android-device": ("android-key", [-7, -257], False, True, "platform", "b93fd961-f2e6-462f-b122-82002247de78", 65),
    "managed-device": ("packed", [-7], False, True, "platform", "dd4ec289-e01d-41c9-bb89-70fa845d4bf2", 16),
    "security-key": ("packed", [-7, -8, -257], False, True, "cross-platform", "2fc0579f-8113-47ea-b116-bb5a8db9202a", 48),
    "authctl": ("packed", [-7, -8, -257], True, False, "platform", "6f0e1a4c-2b3d-4e5f-8a9b-0c1d2e3f4a5b", 16),
}
CASES = [(profile, alg) for profile, spec in PROFILES.items() for alg in spec[1]]
# Formats python-fido2 has a verifier for (it has none for android-key).
FIDO2_FORMATS = {"none", "packed", "tpm", "apple", "fido-u2f"}


def root_pem(authctl) -> bytes:
    result = authctl.run("ca", "export")
    assert result.code == 0, result.stderr
    assert result.stdout.startswith("-----BEGIN CERTIFICATE-----")
    return result.stdout.encode()


def root_der(authctl) -> bytes:
    pem = root_pem(authctl).decode()
    return base64.b64decode("".join(line for line in pem.splitlines() if "-----" not in line))


def py_webauthn_register(authctl, profile, alg, *extra):
    options = generate_registration_options(
        rp_id=RP_ID, rp_name="RP", user_name="alice", user_id=b"user-" + profile.encode(),
        attestation=AttestationConveyancePreference.DIRECT,
        authenticator_selection=AuthenticatorSelectionCriteria(
            resident_key=ResidentKeyRequirement.REQUIRED, user_verification=UserVerificationRequirement.PREFERRED),
        supported_pub_key_algs=[COSEAlgorithmIdentifier(alg)])
    response = authctl.register(json.loads(options_to_json(options)), ORIGIN, "--profile", profile, *extra).json
    return options, response


def attestation_of(response):
    return cbor2.loads(unb64url(response["response"]["attestationObject"]))


def verify_with_root(options, response, root, alg, fmt):
    roots = {AttestationFormat(fmt): [root]} if fmt != "none" else None
    return verify_registration_response(
        credential=response, expected_challenge=options.challenge, expected_rp_id=RP_ID, expected_origin=ORIGIN,
        supported_pub_key_algs=[COSEAlgorithmIdentifier(alg)], pem_root_certs_bytes_by_fmt=roots)


@pytest.mark.parametrize("profile,alg", CASES)
def test_py_webauthn_accepts_every_profile_and_algorithm(authctl, profile, alg):
    fmt, _, backup_eligible, counts, attachment, aaguid, id_length = PROFILES[profile]
    root = root_pem(authctl)
    options, response = py_webauthn_register(authctl, profile, alg)
    assert attestation_of(response)["fmt"] == fmt
    assert response["authenticatorAttachment"] == attachment
    assert response["response"]["publicKeyAlgorithm"] == alg
    verified = verify_with_root(options, response, root, alg, fmt)
    assert getattr(verified.fmt, "value", verified.fmt) == fmt
    assert verified.aaguid == aaguid
    assert len(verified.credential_id) == id_length and unb64url(response["id"]) == verified.credential_id
    assert verified.credential_device_type == (CredentialDeviceType.MULTI_DEVICE if backup_eligible
                                               else CredentialDeviceType.SINGLE_DEVICE)
    assert verified.sign_count == 0

    # The assertion is signed in the credential's algorithm and counts as the profile does.
    auth_options = generate_authentication_options(rp_id=RP_ID)
    assertion = authctl.sign(json.loads(options_to_json(auth_options)), ORIGIN).json
    assert assertion["authenticatorAttachment"] == attachment
    checked = verify_authentication_response(
        credential=assertion, expected_challenge=auth_options.challenge, expected_rp_id=RP_ID, expected_origin=ORIGIN,
        credential_public_key=verified.credential_public_key, credential_current_sign_count=0)
    assert checked.new_sign_count == (1 if counts else 0)


@pytest.mark.parametrize("profile,alg", [c for c in CASES if PROFILES[c[0]][0] in FIDO2_FORMATS])
def test_python_fido2_accepts_every_profile_it_can_judge(authctl, profile, alg):
    fmt = PROFILES[profile][0]
    root = root_der(authctl)
    results = []

    def verify_attestation(attestation_object, client_data_hash):
        result = Attestation.for_type(attestation_object.fmt)().verify(
            attestation_object.att_stmt, attestation_object.auth_data, client_data_hash)
        if result.trust_path:
            verify_x509_chain(result.trust_path + [root])  # raises unless the chain ends at our root
        results.append((attestation_object.fmt, result.attestation_type))

    rp = Fido2Server(PublicKeyCredentialRpEntity(id=RP_ID, name="RP"), attestation="direct",
                     verify_origin=lambda o: o == ORIGIN, verify_attestation=verify_attestation)
    rp.allowed_algorithms = [PublicKeyCredentialParameters(type=PublicKeyCredentialType.PUBLIC_KEY, alg=alg)]
    options, state = rp.register_begin(PublicKeyCredentialUserEntity(id=b"u1", name="alice", display_name="Alice"),
                                       user_verification="preferred", resident_key_requirement="required")
    response = authctl.register(dict(options), ORIGIN, "--profile", profile).json
    auth_data = rp.register_complete(state, response)
    expected_type = {"none": AttestationType.NONE, "packed": AttestationType.BASIC, "tpm": AttestationType.ATT_CA,
                     "apple": AttestationType.ANON_CA}[fmt]
    if profile == "authctl":
        expected_type = AttestationType.SELF
    assert results == [(fmt, expected_type)]
    assert auth_data.credential_data.public_key.ALGORITHM == alg

    options, state = rp.authenticate_begin([auth_data.credential_data])
    assertion = authctl.sign(dict(options), ORIGIN).json
    rp.authenticate_complete(state, [auth_data.credential_data], assertion)


def test_security_key_answers_as_a_u2f_device(authctl):
    root = root_pem(authctl)
    options, response = py_webauthn_register(authctl, "security-key", -7, "--u2f")
    statement = attestation_of(response)
    assert statement["fmt"] == "fido-u2f" and len(statement["attStmt"]["x5c"]) == 1
    verified = verify_with_root(options, response, root, -7, "fido-u2f")
    assert verified.aaguid == "00000000-0000-0000-0000-000000000000"
    assert len(verified.credential_id) == 64  # a key handle that wraps the key, as a YubiKey's over U2F
    # A U2F device has only ES256 keys.
    _, only_eddsa = registration_json(-8)
    result = authctl.register(only_eddsa, ORIGIN, "--profile", "security-key", "--u2f")
    assert result.code == 13 and "notHandled" in result.stderr  # the authenticator's refusal: NotAllowedError


def test_profiles_lists_each_profiles_credential_id_length(authctl):
    listed = {p["name"]: p["credentialIdLength"] for p in authctl.run("profiles", "--json").json}
    assert listed == {name: spec[6] for name, spec in PROFILES.items()}
    table = authctl.run("profiles").stdout.splitlines()
    assert table[0].split()[-3:] == ["ID", "BYTES", "AAGUID"]
    assert {line.split()[0]: int(line.split()[-2]) for line in table[1:len(PROFILES) + 1]} == listed


def registration_json(alg, attestation="direct"):
    options = generate_registration_options(rp_id=RP_ID, rp_name="RP", user_name="bob", user_id=b"bob",
                                            attestation=AttestationConveyancePreference(attestation),
                                            supported_pub_key_algs=[COSEAlgorithmIdentifier(alg)])
    return options, json.loads(options_to_json(options))


def test_attestation_none_is_none_for_every_profile(authctl):
    for profile in PROFILES:
        options, as_json = registration_json(-7, attestation="none")
        response = authctl.register(as_json, ORIGIN, "--profile", profile).json
        assert attestation_of(response)["fmt"] == "none"
        verified = verify_registration_response(credential=response, expected_challenge=options.challenge,
                                                expected_rp_id=RP_ID, expected_origin=ORIGIN)
        assert verified.aaguid == PROFILES[profile][5]  # the AAGUID is kept, as browsers keep it
        assert len(verified.credential_id) == PROFILES[profile][6]


def test_an_algorithm_the_profile_does_not_make_is_the_authenticators_refusal(authctl):
    # CTAP2_ERR_UNSUPPORTED_ALGORITHM, which the browser reports as NotAllowedError.
    _, as_json = registration_json(-8)
    result = authctl.register(as_json, ORIGIN, "--profile", "icloud-keychain")
    assert result.code == 13 and "notHandled" in result.stderr
    assert authctl.listing() == []


def test_windows_hello_prefers_rs256_when_offered(authctl):
    options = generate_registration_options(
        rp_id=RP_ID, rp_name="RP", user_name="carol", user_id=b"carol",
        supported_pub_key_algs=[COSEAlgorithmIdentifier(-7), COSEAlgorithmIdentifier(-257)])
    response = authctl.register(json.loads(options_to_json(options)), ORIGIN, "--profile", "windows-hello").json
    assert response["response"]["publicKeyAlgorithm"] == -257
    response = authctl.register(json.loads(options_to_json(options)), ORIGIN, "--profile", "security-key").json
    assert response["response"]["publicKeyAlgorithm"] == -7  # the RP's order otherwise


def test_the_vault_default_profile_and_a_custom_aaguid(tmp_path):
    from conftest import Authctl
    tool = Authctl(tmp_path / "hello")
    assert tool.run("init", "--kdf", "min", "--profile", "windows-hello", "--aaguid",
                    "12345678-1234-4234-8234-123456789abc").code == 0
    options, as_json = registration_json(-257)
    response = tool.register(as_json, ORIGIN).json
    assert attestation_of(response)["fmt"] == "tpm"
    verified = verify_with_root(options, response, root_pem(tool), -257, "tpm")
    assert verified.aaguid == "12345678-1234-4234-8234-123456789abc"
    bad = tool.register(as_json, ORIGIN, "--aaguid", "not-a-uuid")
    assert bad.code == 64 and "--aaguid" in bad.stderr


# MARK: tampering: the verifiers say no

def with_statement(response, change):
    copy = json.loads(json.dumps(response))
    obj = attestation_of(copy)
    change(obj["attStmt"])
    copy["response"]["attestationObject"] = b64url(cbor2.dumps(obj))
    return copy


def flip(data: bytes, index: int) -> bytes:
    raw = bytearray(data)
    raw[index] ^= 0x01
    return bytes(raw)


def find(haystack: bytes, needle: bytes) -> int:
    at = haystack.find(needle)
    assert at >= 0
    return at


TAMPERINGS = {
    # the leaf certificate's signature (its last byte)
    "packed-certificate": ("managed-device", -7, lambda s, r: s.__setitem__("x5c", [flip(s["x5c"][0], -1)] + s["x5c"][1:])),
    # a byte inside the nonce in the apple extension
    "apple-nonce": ("apple-device-bound", -7, lambda s, r: s.__setitem__(
        "x5c", [flip(s["x5c"][0], find(s["x5c"][0], bytes.fromhex("a1220420")) + 8)] + s["x5c"][1:])),
    # extraData (the hash of authenticatorData ‖ clientDataHash) inside certInfo
    "tpm-certInfo": ("windows-hello", -257, lambda s, r: s.__setitem__("certInfo", flip(s["certInfo"], 40))),
    "tpm-pubArea": ("windows-hello", -7, lambda s, r: s.__setitem__("pubArea", flip(s["pubArea"], -1))),
    # the attestationChallenge inside the KeyDescription
    "android-KeyDescription": ("android-device", -7, lambda s, r: s.__setitem__(
        "x5c", [flip(s["x5c"][0], find(s["x5c"][0], r) + 3)] + s["x5c"][1:])),
}


@pytest.mark.parametrize("name", TAMPERINGS)
def test_tampered_attestations_are_refused(authctl, name):
    profile, alg, change = TAMPERINGS[name]
    root = root_pem(authctl)
    options, response = py_webauthn_register(authctl, profile, alg)
    fmt = PROFILES[profile][0]
    verify_with_root(options, response, root, alg, fmt)  # the honest one passes
    client_data_hash = hashlib.sha256(unb64url(response["response"]["clientDataJSON"])).digest()
    bad = with_statement(response, lambda s: change(s, client_data_hash))
    with pytest.raises(Exception):
        verify_with_root(options, bad, root, alg, fmt)
    if fmt in FIDO2_FORMATS:
        obj = attestation_of(bad)
        with pytest.raises(Exception):
            result = Attestation.for_type(fmt)().verify(obj["attStmt"], obj["authData"], client_data_hash)
            verify_x509_chain(result.trust_path + [root_der(authctl)])


def test_another_vaults_root_is_not_trusted(authctl, tmp_path):
    from conftest import Authctl
    other = Authctl(tmp_path / "other")
    assert other.run("init", "--kdf", "min").code == 0
    options, response = py_webauthn_register(authctl, "managed-device", -7)
    with pytest.raises(Exception):
        verify_with_root(options, response, root_pem(other), -7, "packed")


@pytest.mark.skipif(shutil.which("fido2-cred") is None, reason="fido2-tools is not installed")
@pytest.mark.parametrize("profile,extra", [("managed-device", ()), ("security-key", ()), ("security-key", ("--u2f",))])
def test_fido2_cred_verifies_certificate_attestation(authctl, profile, extra):
    _, response = py_webauthn_register(authctl, profile, -7, *extra)
    obj = attestation_of(response)
    client_data_hash = hashlib.sha256(unb64url(response["response"]["clientDataJSON"])).digest()
    data = obj["authData"]
    wrapped = bytes([0x58, len(data)]) + data if len(data) < 256 else bytes([0x59, len(data) >> 8, len(data) & 0xFF]) + data
    b64 = lambda b: base64.b64encode(b).decode()
    lines = [b64(client_data_hash), RP_ID, obj["fmt"], b64(wrapped), b64(unb64url(response["id"])),
             b64(obj["attStmt"]["sig"]), b64(obj["attStmt"]["x5c"][0])]
    ok = subprocess.run(["fido2-cred", "-V"], input="\n".join(lines) + "\n", capture_output=True, text=True, timeout=30)
    assert ok.returncode == 0, ok.stderr
    lines[5] = b64(flip(obj["attStmt"]["sig"], -1))
    bad = subprocess.run(["fido2-cred", "-V"], input="\n".join(lines) + "\n", capture_output=True, text=True, timeout=30)
    assert bad.returncode != 0


def test_options_are_checked_before_any_prompt(authctl):
    # No new PIN is available: a bad --aaguid must still be the error, not the missing PIN.
    result = authctl.run("device", "add", "pc", "--profile", "security-key", "--aaguid", "xx", env={"AUTHCTL_NEW_PIN": None})
    assert result.code == 64 and "--aaguid" in result.stderr
    result = authctl.run("device", "add", "pc", "--aaguid", "12345678-1234-4234-8234-123456789abc")
    assert result.code == 64 and "--profile" in result.stderr


def test_ca_export_only_looks_when_the_ca_exists(authctl):
    first = root_pem(authctl)
    # A reader: the vault's files are not written by an export.
    before = authctl.snapshot()
    assert root_pem(authctl) == first
    assert authctl.snapshot() == before
