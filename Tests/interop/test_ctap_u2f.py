"""CTAP1/U2F on authctl's security key: python-fido2's own `Ctap1` registers and authenticates
over CTAPHID_MSG through the connector, and python-fido2's U2F verifiers judge both (the batch
attestation over the registration, the credential's signature over each authentication, and a
tampered one refused). One `ctap serve` for the module, its touch a button the controller holds."""
import hashlib
import os

import pytest
from fido2.ctap import CtapError
from fido2.ctap1 import APDU, ApduError, Ctap1
from fido2.hid import CAPABILITY

from authctl_client import ctap
from ctap_support import CtapServe

APP = hashlib.sha256(b"https://example.com").digest()


@pytest.fixture(scope="module")
def key(tmp_path_factory):
    serve = CtapServe(tmp_path_factory.mktemp("ctap-u2f"), unix=True, touch="button")
    try:
        yield serve
    finally:
        serve.stop()


@pytest.fixture
def ctap1(key):
    device = ctap.open_device(f"authctl:{key.unix_key}")
    try:
        yield Ctap1(device), device
    finally:
        device.close()


def test_a_u2f_registration_and_authentication_verify_and_a_tampered_signature_does_not(key, ctap1):
    u2f, device = ctap1
    assert not device.capabilities & CAPABILITY.NMSG
    assert u2f.get_version() == "U2F_V2"
    challenge = os.urandom(32)
    # Not touched: the key answers "conditions not satisfied", as a U2F key does until the touch.
    with pytest.raises(ApduError) as refused:
        u2f.register(challenge, APP)
    assert refused.value.code == APDU.USE_NOT_SATISFIED
    key.touch(True)
    try:
        registration = u2f.register(challenge, APP)
        registration.verify(APP, challenge)          # the batch certificate's signature
        assert len(registration.key_handle) == 64
        # check-only: the handle is this key's for APP (USE_NOT_SATISFIED), not for another app (WRONG_DATA)
        with pytest.raises(ApduError) as mine:
            u2f.send_apdu(ins=Ctap1.INS.AUTHENTICATE, p1=0x07, data=challenge + APP + bytes([64]) + registration.key_handle)
        assert mine.value.code == APDU.USE_NOT_SATISFIED
        with pytest.raises(ApduError) as other:
            u2f.authenticate(challenge, hashlib.sha256(b"https://other.example").digest(), registration.key_handle)
        assert other.value.code == APDU.WRONG_DATA

        first = u2f.authenticate(challenge, APP, registration.key_handle)
        first.verify(APP, challenge, registration.public_key)
        assert first.user_presence & 1
        second = u2f.authenticate(challenge, APP, registration.key_handle)
        assert second.counter > first.counter
        tampered = bytearray(second.signature)
        tampered[-1] ^= 1
        second.signature = bytes(tampered)
        with pytest.raises(Exception):
            second.verify(APP, challenge, registration.public_key)
    finally:
        key.touch(False)


def test_malformed_apdus_get_u2f_status_words(ctap1):
    u2f, _ = ctap1
    with pytest.raises(ApduError) as length:
        u2f.send_apdu(ins=Ctap1.INS.REGISTER, data=b"\x00" * 10)
    assert length.value.code == 0x6700
    with pytest.raises(ApduError) as instruction:
        u2f.send_apdu(ins=0x55)
    assert instruction.value.code == 0x6D00
    with pytest.raises(ApduError) as cla:
        u2f.send_apdu(cla=0x80, ins=Ctap1.INS.VERSION)
    assert cla.value.code == 0x6E00
