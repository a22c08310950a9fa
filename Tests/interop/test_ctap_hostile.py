"""A hostile client against `authctl ctap serve` on a key of a vault: malformed CBOR, members of
the wrong type, oversized and empty ids, state machines entered out of order, PIN subcommands with
off-curve keys and wrong lengths, a hundred wrong PINs, a reset long after power-up, a garbled
reset, a client killed mid-request, SIGTERM during a touch wait. Each answer is the status CTAP 2.1
gives for the case (python-fido2's raw CtapHidDevice sends the bytes), the key goes on answering,
and afterwards the vault passes `vault check` and `list --device key` still lists what was made."""
import hashlib
import os
import signal
import socket
import threading
import time

import fido2.hid
import pytest
from fido2 import cbor
from fido2.ctap import CtapError
from fido2.ctap2 import Ctap2
from fido2.ctap2.pin import ClientPin, PinProtocolV2
from fido2.hid import CTAPHID

from authctl_client import ctap
from conftest import unb64url, wait_until
from ctap_support import CtapServe
from test_ctap_credman import VaultKey

E = cbor.encode
HASH = b"\x11" * 32
PARAMS = [{"type": "public-key", "alg": -7}]


def make_credential(user=b"ann", rk=True, members=None):
    request = {1: HASH, 2: {"id": "example.com", "name": "Example"}, 3: {"id": user, "name": user.decode("latin-1")}, 4: PARAMS,
               7: {"rk": rk}}
    request.update(members or {})
    return E(request)


def status(device, command, body=b""):
    return device.call(CTAPHID.CBOR, bytes([command]) + body)[0]


@pytest.fixture
def key(tmp_path):
    made = VaultKey(tmp_path)
    made.start()
    try:
        yield made
    finally:
        made.stop()


def still_whole(key, made):
    """The key stopped: the vault checks and lists every credential in `made`."""
    key.stop()
    check = key.tool.run("vault", "check")
    assert check.code == 0, check.stderr
    listed = key.tool.run("--json", "list", "--device", "key")
    assert listed.code == 0, listed.stderr
    assert {unb64url(c["id"]) for c in listed.json["credentials"]} == made


def credential_id(answer):
    auth_data = cbor.decode(answer[1:])[2]
    length = int.from_bytes(auth_data[53:55], "big")
    return auth_data[55:55 + length]


def test_malformed_requests_get_the_specs_statuses_and_lose_nothing(key):
    device = key.device
    made = {credential_id(key.device.call(CTAPHID.CBOR, b"\x01" + make_credential())),
            credential_id(key.device.call(CTAPHID.CBOR, b"\x01" + make_credential(b"bob", rk=False)))}
    cases = [
        # CBOR that is not well-formed or not a map of integer keys.
        (0x01, b"\x81" * 1190 + b"\x00", 0x12),              # nested past the depth limit
        (0x01, b"\xa1\x01\x5b\x00\xff\x00\xff\x00\xff\x00\xff", 0x12),  # a byte string longer than the message
        (0x01, b"\xbb\x7f\xff\xff\xff\xff\xff\xff\xff", 0x12),  # a map of 2^63 pairs declared
        (0x01, b"\xbf\x01\x00\xff", 0x12),                  # indefinite length
        (0x01, b"\xa2\x01\x40\x01\x40", 0x12),              # a duplicate key
        (0x02, E({"1": "example.com", 2: HASH}), 0x11),     # a text key
        (0x02, E({1: "example.com", 2: HASH}) + b"\x00", 0x12),  # bytes after the map
        (0x02, E({1: "example.com", 2: HASH})[:-5] + b"\x03\x99\x03\xe8" + b"\xa0" * 50, 0x12),  # 1000 ids declared
        # Members of the wrong type, and lengths the spec bounds.
        (0x01, make_credential(members={2: "example.com"}), 0x11),
        (0x01, make_credential(members={4: {"alg": -7}}), 0x11),
        (0x01, make_credential(members={7: {"rk": 1}}), 0x11),
        (0x01, make_credential(members={1: b"x"}), 0x03),
        (0x01, make_credential(user=b"u" * 65), 0x03),
        (0x02, E({1: 5, 2: HASH}), 0x11),
        (0x02, E({1: "example.com", 2: HASH, 3: [{"type": "public-key", "id": b""}]}), 0x2E),
        (0x02, E({1: "example.com", 2: HASH, 3: [{"type": "public-key", "id": b"\x01" * 1023}]}), 0x2E),
        # State machines entered out of order.
        (0x08, b"", 0x30),
        (0x0A, E({1: 3}), 0x30),
        (0x0A, E({1: 5}), 0x30),
        (0x0A, E({1: 2 ** 64 - 1}), 0x3E),
        (0x0C, E({2: b"a", 3: 5}), 0x04),
        (0x0C, E({2: b"", 3: 0, 4: 0}), 0x02),
        (0x0C, E({1: 10, 3: 2 ** 63}), 0x02),
        (0x0C, E({1: 2 ** 64 - 1, 3: 0}), 0x03),
        (0x0C, E({2: b"a" * 10, 3: 0, 4: 2 ** 64 - 1}), 0x18),
        # Commands without parameters, with some: nothing done (a garbled reset wipes nothing).
        (0x07, os.urandom(100), 0x03),
        (0x0B, b"\xa0", 0x03),
    ]
    for command, body, expected in cases:
        assert status(device, command, body) == expected, (hex(command), body[:40])
    # Garbage of the largest message, under every command.
    for command in (0x01, 0x02, 0x06, 0x0A, 0x0C, 0x0D, 0x41):
        assert status(device, command, b"\xff" + os.urandom(1198)) in (0x11, 0x12)
    # A large-blob write: a fragment at the wrong offset, then too much.
    assert status(device, 0x0C, E({2: b"a" * 10, 3: 0, 4: 30})) == 0x00
    assert status(device, 0x0C, E({2: b"a" * 10, 3: 11})) == 0x04
    assert status(device, 0x0C, E({2: b"a" * 10, 3: 0, 4: 17})) == 0x00
    assert status(device, 0x0C, E({2: b"a" * 10, 3: 10})) == 0x02
    still_whole(key, made)


def test_pin_attacks_block_the_pin_and_lose_nothing(key):
    made = {credential_id(key.device.call(CTAPHID.CBOR, b"\x01" + make_credential(rk=False)))}
    device = key.device
    off_curve = {1: 2, 3: -25, -1: 1, -2: b"\x01" * 32, -3: b"\x02" * 32}
    assert status(device, 0x06, E({1: 3, 2: 2})) == 0x02                  # an unknown protocol
    assert status(device, 0x06, E({2: 2})) == 0x14
    for subcommand in (3, 4, 5, 9):
        assert status(device, 0x06, E({1: 2, 2: subcommand, 3: off_curve, 4: b"\x00" * 32, 5: b"\x00" * 64,
                                       6: b"\x00" * 16, 9: 4})) in (0x02, 0x35)  # PIN_NOT_SET before the key for 4, 5, 9
    ClientPin(Ctap2(device)).set_pin("12345678")
    for subcommand in (4, 5, 9):
        assert status(device, 0x06, E({1: 2, 2: subcommand, 3: off_curve, 4: b"\x00" * 32, 5: b"\x00" * 64,
                                       6: b"\x00" * 16, 9: 4})) == 0x02
    # changePIN with the right PIN, under a real key agreement: a newPinEnc that does not decrypt is
    # CTAP2_ERR_PIN_AUTH_INVALID, one that decrypts to no 64-byte block CTAP1_ERR_INVALID_PARAMETER.
    protocol = PinProtocolV2()
    for new_pin, expected in ((os.urandom(17), 0x33), (None, 0x02)):
        peer = cbor.decode(device.call(CTAPHID.CBOR, b"\x06" + E({1: 2, 2: 2}))[1:])[1]
        key_agreement, secret = protocol.encapsulate(peer)
        new_pin = new_pin or protocol.encrypt(secret, b"87654321".ljust(48, b"\x00"))
        pin_hash = protocol.encrypt(secret, hashlib.sha256(b"12345678").digest()[:16])
        assert status(device, 0x06, E({1: 2, 2: 4, 3: key_agreement, 4: protocol.authenticate(secret, new_pin + pin_hash),
                                       5: new_pin, 6: pin_hash})) == expected
    # A hundred wrong PINs: three a power-up (the third CTAP2_ERR_PIN_AUTH_BLOCKED), eight in all (the
    # eighth CTAP2_ERR_PIN_BLOCKED), then blocked for good.
    statuses = []
    for _ in range(100):
        try:
            ClientPin(Ctap2(key.device)).get_pin_token("00000000")
            raise AssertionError("a wrong PIN gave a token")
        except CtapError as error:
            statuses.append(error.code)
        if statuses[-1] == CtapError.ERR.PIN_AUTH_BLOCKED:
            key.serve.power(False)
            key.serve.power(True)
            key.device.close()
            key.device = fido2.hid.open_device(f"authctl:{key.serve.unix_key}")
    invalid, auth_blocked, blocked = CtapError.ERR.PIN_INVALID, CtapError.ERR.PIN_AUTH_BLOCKED, CtapError.ERR.PIN_BLOCKED
    assert statuses[:8] == [invalid, invalid, auth_blocked, invalid, invalid, auth_blocked, invalid, blocked], statuses[:8]
    assert statuses[8:] == [blocked] * 92
    assert ClientPin(Ctap2(key.device)).get_pin_retries()[0] == 0
    still_whole(key, made)


def test_a_reset_long_after_power_up_is_not_allowed(key):
    powered = time.monotonic()  # the key got power before this
    made = {credential_id(key.device.call(CTAPHID.CBOR, b"\x01" + make_credential()))}
    # More than ten seconds after power-up, a reset is refused, nothing deleted.
    wait_until(lambda: time.monotonic() - powered > 10.5, "ten seconds pass", timeout=60, poll=0.25)
    assert status(key.device, 0x07) == 0x30
    still_whole(key, made)


def test_a_client_gone_mid_request_and_sigterm_during_a_touch_wait(tmp_path):
    key = VaultKey(tmp_path)
    key.serve = CtapServe(tmp_path, unix=True, touch="button",
                          args=("--vault", str(key.tool.vault), "--passphrase-file", str(key.passphrase_file), "--device", "key"))
    ctap.install([key.serve.unix_key])
    try:
        # A raw client allocates a channel, sends a makeCredential, sees the keepalive, and goes.
        raw = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        raw.settimeout(30)
        raw.connect(key.serve.socket_path)
        raw.sendall(b"\xff\xff\xff\xff\x86\x00\x08" + b"\x01" * 8 + b"\x00" * 49)
        channel = raw.recv(64)[15:19]
        message = b"\x01" + make_credential()
        packets = [channel + bytes([0x90, len(message) >> 8, len(message) & 0xFF]) + message[:57]]
        packets += [channel + bytes([n]) + message[57 + 59 * n:57 + 59 * (n + 1)] for n in range((len(message) - 57 + 58) // 59)]
        raw.sendall(b"".join(p.ljust(64, b"\x00") for p in packets))
        assert raw.recv(64)[4] == 0xBB  # KEEPALIVE: the key waits for the button
        raw.close()
        # Another client is answered at once: the request of the client gone was canceled.
        device = fido2.hid.open_device(f"authctl:{key.serve.unix_key}")
        assert status(device, 0x04) == 0x00
        # A request waits for a touch; SIGTERM ends the key at once, exit status 0.
        outcome = {}

        def ask():
            try:
                outcome["answer"] = device.call(CTAPHID.CBOR, b"\x01" + make_credential())
            except Exception as error:  # noqa: BLE001 - the connection closing is the outcome
                outcome["error"] = error
        waiting = threading.Thread(target=ask)
        waiting.start()
        wait_until(lambda: "error" in outcome or key.serve.process.poll() is None, "the request is sent")
        key.serve.process.send_signal(signal.SIGTERM)
        assert key.serve.process.wait(timeout=30) == 0
        waiting.join(30)
        assert "error" in outcome
    finally:
        ctap.uninstall()
        key.serve.kill()
        key.serve = None
    still_whole(key, set())
