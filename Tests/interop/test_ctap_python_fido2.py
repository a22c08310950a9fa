"""python-fido2 drives `authctl ctap serve` through the connector (authctl_client.ctap), over its
Unix socket and over UDP: fido2.hid's discovery finds the keys `$AUTHCTL_CTAP` names, a key
powered off leaves the listing and comes back at its path, long messages cross the framing, and
`Fido2Client` registers and signs in, with py_webauthn judging both (and refusing a tampered
signature). One `ctap serve` (both transports, the touch a button its controller presses) for
the module."""
import json
import shutil
import socket
import tempfile
from collections.abc import Mapping

import pytest
import fido2.hid
from fido2.client import DefaultClientDataCollector, Fido2Client, UserInteraction
from fido2.ctap2 import Ctap2
from fido2.hid import CAPABILITY, CtapHidDevice
from fido2.hid.base import HidDescriptor
from fido2.webauthn import PublicKeyCredentialCreationOptions, PublicKeyCredentialRequestOptions
from webauthn import (generate_authentication_options, generate_registration_options, options_to_json,
                      verify_authentication_response, verify_registration_response)
from webauthn.helpers.exceptions import InvalidAuthenticationResponse
from webauthn.helpers.structs import (AttestationFormat, AuthenticatorSelectionCriteria, PublicKeyCredentialDescriptor,
                                      UserVerificationRequirement)

from authctl_client import ctap
from conftest import b64url, unb64url, wait_until
from ctap_support import CtapServe

RP_ID, ORIGIN = "example.com", "https://example.com"


@pytest.fixture(scope="module")
def key(tmp_path_factory):
    serve = CtapServe(tmp_path_factory.mktemp("ctap-serve"), unix=True, udp=True, touch="button")
    try:
        yield serve
    finally:
        ctap.uninstall()
        serve.stop()


@pytest.fixture
def installed(key):
    """fido2.hid with the connector installed for this key's two entries; put back after."""
    ctap.install(key.keys)
    yield
    ctap.uninstall()


def listed() -> set:
    return {d.path for d in fido2.hid.list_descriptors()}


def test_keys_named_in_authctl_ctap_are_found_by_fido2_hid(key, monkeypatch):
    monkeypatch.setenv("AUTHCTL_CTAP", ",".join(key.keys) + ",")   # an empty entry is passed over
    ctap.install()
    devices = []

    def both_found():
        # A UDP key that answers its INIT probe later than PROBE_TIMEOUT on a loaded machine is
        # left out of that listing: the next one finds it, as fido2.hid's users poll.
        for device in devices:
            device.close()
        devices[:] = CtapHidDevice.list_devices()
        return {d.descriptor.path for d in devices} == {f"authctl:{entry}" for entry in key.keys}
    try:
        wait_until(both_found, "CtapHidDevice.list_devices() finds both transports of the key", poll=0.1)
        try:
            for device in devices:
                assert device.descriptor.report_size_in == device.descriptor.report_size_out == 64
                assert device.capabilities & CAPABILITY.CBOR
                info = Ctap2(device).get_info()
                assert "FIDO_2_0" in info.versions and info.aaguid
        finally:
            for device in devices:
                device.close()
        # The variable is read at each listing.
        monkeypatch.setenv("AUTHCTL_CTAP", key.udp_key)
        wait_until(lambda: listed() == {f"authctl:{key.udp_key}"}, "the UDP key alone is listed", poll=0.1)
    finally:
        ctap.uninstall()
    assert fido2.hid.list_descriptors is fido2.hid.backend.list_descriptors


@pytest.mark.parametrize("transport", ["unix", "udp"])
def test_the_largest_message_the_key_takes_crosses_the_framing(key, installed, transport):
    # Echoed by CTAPHID_PING: an empty message, one of an initialization packet, and one of the
    # key's maxMsgSize (1200 bytes: an initialization packet's 57 and 20 continuation packets of 59,
    # CTAP 2.1 §11.2.4), in sequence.
    device = fido2.hid.open_device(f"authctl:{getattr(key, transport + '_key')}")
    try:
        largest = Ctap2(device).get_info().max_msg_size
        assert largest > 57 + 59
        for message in (b"", b"hello world!", bytes(i % 251 for i in range(largest))):
            assert device.ping(message) == message
    finally:
        device.close()


def test_a_key_powered_off_leaves_the_listing_and_comes_back_at_its_path(key, installed):
    paths = {f"authctl:{entry}" for entry in key.keys}
    wait_until(lambda: listed() == paths, "both transports of the key are listed")
    unix = fido2.hid.open_device(f"authctl:{key.unix_key}")
    info = Ctap2(unix).get_info()
    key.power(False)
    try:
        wait_until(lambda: not listed(), "a key powered off is not listed", poll=0.1)
        # As a hidraw path that is gone: no descriptor, and the open handle fails.
        for entry in key.keys:
            with pytest.raises(FileNotFoundError, match="no security key is powered on"):
                fido2.hid.open_device(f"authctl:{entry}")
        with pytest.raises(ConnectionError):
            unix.ping(b"anyone?")
    finally:
        unix.close()
        key.power(True)
    wait_until(lambda: listed() == paths, "a key powered on is listed again, at the same paths", poll=0.1)
    for entry in key.keys:
        device = fido2.hid.open_device(f"authctl:{entry}")
        try:
            assert Ctap2(device).get_info() == info
        finally:
            device.close()


def test_the_os_devices_stay_listed_beside_the_keys(key):
    """No hidraw FIDO device exists here, so the OS's listing is played by a function that names
    one: the connector's listing keeps what fido2.hid's own gives, and hands that path's
    descriptor and connection back to fido2.hid's own functions."""
    hidraw = HidDescriptor("/dev/hidraw7", 0x1050, 0x0407, 64, 64, "YubiKey", None)
    asked = []
    own = {name: getattr(fido2.hid, name) for name in ("list_descriptors", "get_descriptor", "open_connection")}
    fido2.hid.list_descriptors = lambda: [hidraw]
    fido2.hid.get_descriptor = lambda path: asked.append(("get_descriptor", path)) or hidraw
    fido2.hid.open_connection = lambda descriptor: asked.append(("open_connection", descriptor.path)) or "connection"
    try:
        ctap.install([key.udp_key])
        wait_until(lambda: [d.path for d in fido2.hid.list_descriptors()] == ["/dev/hidraw7", f"authctl:{key.udp_key}"],
                   "the OS's device and the key are listed, in that order", poll=0.1)
        assert fido2.hid.get_descriptor("/dev/hidraw7") is hidraw
        assert fido2.hid.open_connection(hidraw) == "connection"
        assert asked == [("get_descriptor", "/dev/hidraw7"), ("open_connection", "/dev/hidraw7")]
        assert fido2.hid.get_descriptor(f"authctl:{key.udp_key}").product_name == ctap.PRODUCT_NAME
    finally:
        ctap.uninstall()
        for name, function in own.items():
            setattr(fido2.hid, name, function)


@pytest.mark.parametrize("entry,error", [
    ("unix:relative/key.sock", "must be absolute"),
    ("udp:127.0.0.1", "udp:HOST:PORT"),
    ("udp:127.0.0.1:0", "udp:HOST:PORT"),
    ("udp:127.0.0.1:65536", "udp:HOST:PORT"),
    ("udp::8111", "udp:HOST:PORT"),
    ("tcp:127.0.0.1:8111", "unix:/path or udp:HOST:PORT"),
    ("/tmp/key.sock", "unix:/path or udp:HOST:PORT"),
])
def test_a_malformed_entry_is_refused_by_name(entry, error):
    with pytest.raises(ValueError, match=error) as raised:
        ctap.keys(f"unix:/tmp/fine.sock,{entry}")
    assert repr(entry) in str(raised.value)


def test_entries_round_trip_as_device_paths():
    for entry in ("unix:/run/user/1000/key.sock", "udp:127.0.0.1:8111", "udp:[::1]:8111", "udp:localhost:7"):
        key = ctap.Key.parse(entry)
        assert key.entry == entry and ctap.Key.parse(key.path) == key and key.path == "authctl:" + entry


def test_a_key_nothing_listens_for_is_not_listed(tmp_path):
    absent = [f"unix:{tmp_path}/none.sock", "udp:127.0.0.1:9"]   # 9: discard, nothing answers
    assert ctap.list_descriptors(absent) == []
    with pytest.raises(FileNotFoundError):
        ctap.open_device(absent[0])


def test_a_key_that_stops_answering_is_a_timeout_not_a_hang():
    """Peers that take reports and never answer (a hung key): a read gives up after the
    connection's timeout, and such a UDP port is not a key."""
    directory = tempfile.mkdtemp(prefix="authctl-silent-", dir="/tmp")   # a socket's path fits in 107 bytes
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as unix, socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp:
        unix.bind(f"{directory}/key.sock")
        unix.listen()
        udp.bind(("127.0.0.1", 0))
        entries = [f"unix:{directory}/key.sock", f"udp:127.0.0.1:{udp.getsockname()[1]}"]
        try:
            for entry in entries:
                connection = ctap.connect(entry, timeout=0.5)
                try:
                    connection.write_packet(bytes(64))
                    with pytest.raises(TimeoutError):
                        connection.read_packet()
                    with pytest.raises(ValueError, match="a CTAPHID report is 64 bytes, not 65"):
                        connection.write_packet(bytes(65))
                finally:
                    connection.close()
            assert not ctap.is_present(entries[1])
        finally:
            shutil.rmtree(directory)


def test_a_udp_datagram_that_is_not_one_report_is_passed_over():
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as peer:
        peer.bind(("127.0.0.1", 0))
        connection = ctap.connect(f"udp:127.0.0.1:{peer.getsockname()[1]}", timeout=30)
        try:
            connection.write_packet(b"\x01" * 64)
            _, client = peer.recvfrom(2048)
            for datagram in (b"\x02" * 63, b"\x03" * 65, b"", b"\x04" * 64):
                peer.sendto(datagram, client)
            assert connection.read_packet() == b"\x04" * 64
        finally:
            connection.close()


class PressingTheButton(UserInteraction):
    """The person: presses the key's button (its controller) when the key asks for a touch."""

    def __init__(self, key):
        self.key = key
        self.prompts = 0

    def prompt_up(self):
        self.prompts += 1
        self.key.touch(True)

    def request_pin(self, permissions, rp_id):
        return None


def plain(value):
    """python-fido2's JSON mapping as plain dicts (what a browser would POST)."""
    if isinstance(value, Mapping):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


@pytest.mark.parametrize("transport", ["unix", "udp"])
def test_fido2_client_registers_and_signs_in_and_py_webauthn_verifies(key, installed, transport):
    device = fido2.hid.open_device(f"authctl:{getattr(key, transport + '_key')}")
    person = PressingTheButton(key)
    client = Fido2Client(device, DefaultClientDataCollector(ORIGIN), user_interaction=person)
    try:
        # A second factor's settings: no user verification (a key without a PIN set cannot give it,
        # and python-fido2 refuses to ask when it is preferred: CONFIGURATION_UNSUPPORTED).
        options = generate_registration_options(rp_id=RP_ID, rp_name="Example", user_name="alice", user_id=b"alice",
                                                authenticator_selection=AuthenticatorSelectionCriteria(
                                                    user_verification=UserVerificationRequirement.DISCOURAGED))
        try:
            created = client.make_credential(PublicKeyCredentialCreationOptions.from_dict(json.loads(options_to_json(options))))
        finally:
            key.touch(False)
        assert person.prompts >= 1   # the key waited for the touch and said so (KEEPALIVE UPNEEDED)
        registered = verify_registration_response(credential=plain(created), expected_challenge=options.challenge,
                                                  expected_rp_id=RP_ID, expected_origin=ORIGIN)
        assert registered.fmt == AttestationFormat.PACKED and registered.user_verified is False

        request = generate_authentication_options(rp_id=RP_ID, allow_credentials=[PublicKeyCredentialDescriptor(id=registered.credential_id)],
                                                  user_verification=UserVerificationRequirement.DISCOURAGED)
        try:
            selection = client.get_assertion(PublicKeyCredentialRequestOptions.from_dict(json.loads(options_to_json(request))))
        finally:
            key.touch(False)
        assertion = plain(selection.get_response(0))
        verified = verify_authentication_response(credential=assertion, expected_challenge=request.challenge,
                                                  expected_rp_id=RP_ID, expected_origin=ORIGIN,
                                                  credential_public_key=registered.credential_public_key,
                                                  credential_current_sign_count=registered.sign_count)
        assert verified.credential_id == registered.credential_id

        # One bit of the signature flipped: refused.
        tampered = json.loads(json.dumps(assertion))
        signature = bytearray(unb64url(tampered["response"]["signature"]))
        signature[-1] ^= 0x01
        tampered["response"]["signature"] = b64url(bytes(signature))
        with pytest.raises(InvalidAuthenticationResponse, match="Could not verify authentication signature"):
            verify_authentication_response(credential=tampered, expected_challenge=request.challenge,
                                           expected_rp_id=RP_ID, expected_origin=ORIGIN,
                                           credential_public_key=registered.credential_public_key,
                                           credential_current_sign_count=registered.sign_count)
    finally:
        device.close()
