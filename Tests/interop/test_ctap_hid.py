"""`authctl ctap serve`: the security key's CTAPHID wire (UDP datagrams and a Unix socket, one
64-byte report each) driven by python-fido2's own CtapHidDevice through a small connection of
the test's; the controller's touch and power over HTTP; hostile framing answered with CTAP 2.1
§11.2's errors while the key goes on answering others."""
import os
import signal
import socket
import struct
import subprocess
import threading
import time
import urllib.request

import pytest
from fido2.ctap import CtapError
from fido2.ctap2 import Ctap2
from fido2.hid import CAPABILITY, CTAPHID, CtapHidDevice
from fido2.hid.base import CtapHidConnection, HidDescriptor

from conftest import BIN, own_environment

BROADCAST = 0xFFFFFFFF


class UdpConnection(CtapHidConnection):
    """A report a datagram, to and from the key's address (the SoloKeys simulator's convention)."""

    def __init__(self, address):
        self.socket = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.socket.settimeout(60)
        self.socket.connect(address)

    def write_packet(self, data):
        self.socket.send(data)

    def read_packet(self):
        return self.socket.recv(64)

    def close(self):
        self.socket.close()


class UnixConnection(UdpConnection):
    """Reports back to back on a stream, as read from a hidraw handle."""

    def __init__(self, path):
        self.socket = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.socket.settimeout(60)
        self.socket.connect(path)

    def write_packet(self, data):
        self.socket.sendall(data)

    def read_packet(self):
        report = b""
        while len(report) < 64:
            chunk = self.socket.recv(64 - len(report))
            if not chunk:
                raise ConnectionError("the key closed the connection")
            report += chunk
        return report


def device(connection) -> CtapHidDevice:
    return CtapHidDevice(HidDescriptor("authctl", 0, 0, 64, 64, "authctl", None), connection)


class Key:
    """A running `authctl ctap serve` on UDP, a Unix socket and a controller."""

    def __init__(self, tmp_path, *extra):
        self.path = str(tmp_path / "key.sock")
        self.proc = subprocess.Popen([BIN, "ctap", "serve", "--udp", "127.0.0.1:0", "--socket", self.path, "--controller", "127.0.0.1:0", *extra],
                                     env=own_environment(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        lines = [self.proc.stdout.readline().split() for _ in range(3)]
        assert [line[:2] for line in lines] == [["ctap", "udp"], ["ctap", "unix"], ["controller", lines[2][1]]], (lines, self.proc.stderr.read())
        host, port = lines[0][2].rsplit(":", 1)
        self.udp = (host, int(port))
        assert lines[1][2] == self.path
        self.controller = lines[2][1]

    def control(self, route):
        with urllib.request.urlopen(self.controller + route, timeout=60) as answer:
            return answer.status, answer.read().decode()

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        assert self.proc.wait(timeout=60) == 0, self.proc.stderr.read()
        assert not os.path.exists(self.path)


@pytest.fixture
def key(tmp_path):
    running = Key(tmp_path, "--touch", "button")
    yield running
    running.stop()


# Raw reports, for what python-fido2 would never send.

def initialization(channel, command, length, data=b""):
    return (struct.pack(">IBH", channel, 0x80 | command, length) + data[:57]).ljust(64, b"\0")


def continuation(channel, sequence, data=b""):
    return (struct.pack(">IB", channel, sequence) + data[:59]).ljust(64, b"\0")


def allocate(connection) -> int:
    nonce = os.urandom(8)
    connection.write_packet(initialization(BROADCAST, CTAPHID.INIT, 8, nonce))
    answer = connection.read_packet()
    assert answer[:5] == struct.pack(">IB", BROADCAST, 0x86) and answer[7:15] == nonce
    return struct.unpack(">I", answer[15:19])[0]


def error_of(report, channel):
    assert report[:7] == struct.pack(">IBH", channel, 0x80 | CTAPHID.ERROR, 1), report.hex()
    return report[7]


def test_init_and_ping_over_udp_and_the_unix_socket(key):
    for connection in (UdpConnection(key.udp), UnixConnection(key.path)):
        dev = device(connection)
        assert dev.version == 2 and dev.device_version == (1, 0, 0)
        assert CAPABILITY.CBOR.supported(dev.capabilities) and CAPABILITY.WINK.supported(dev.capabilities)
        for size in (0, 57, 1000):
            message = os.urandom(size)
            assert dev.ping(message) == message
        dev.wink()
        dev.close()


def test_get_info_through_ctap2(key):
    info = Ctap2(device(UdpConnection(key.udp))).get_info()
    assert "FIDO_2_1" in info.versions and info.max_msg_size == 1200 and info.transports == ["usb"]
    # One device behind both transports: the same key.
    assert Ctap2(device(UnixConnection(key.path))).get_info().aaguid == info.aaguid


def test_a_cancel_during_a_touch_wait_gives_keepalive_cancel(key):
    dev = device(UnixConnection(key.path))
    event, statuses = threading.Event(), []

    def on_keepalive(status):
        statuses.append(status)
        event.set()  # python-fido2 then sends CTAPHID_CANCEL on the channel

    with pytest.raises(CtapError) as raised:
        Ctap2(dev).selection(event=event, on_keepalive=on_keepalive)
    assert raised.value.code == CtapError.ERR.KEEPALIVE_CANCEL
    assert statuses[0] == 2  # STATUS_UPNEEDED
    # The key answers the next request at once.
    assert dev.ping(b"after") == b"after"


def test_the_controllers_touch_is_the_buttons(key):
    assert key.control("/")[0] == 200
    dev = device(UdpConnection(key.udp))
    asked = threading.Event()
    threading.Thread(target=lambda: (asked.wait(60), key.control("/usb0/touch/on")), daemon=True).start()
    Ctap2(dev).selection(on_keepalive=lambda status: status == 2 and asked.set())  # returns once touched
    assert asked.is_set()
    assert key.control("/usb0/touch/off") == (200, "touch off\n")


def test_power_off_and_on_through_the_controller(key):
    udp = device(UdpConnection(key.udp))
    unix = device(UnixConnection(key.path))
    waiting = threading.Event()
    outcome = []

    def select():
        try:
            Ctap2(unix).selection(on_keepalive=lambda status: waiting.set())
            outcome.append("answered")
        except Exception as error:  # the connection closed under it
            outcome.append(error)
    thread = threading.Thread(target=select)
    thread.start()
    assert waiting.wait(60)
    assert key.control("/usb1/power/off") == (200, "power off\n")
    thread.join(60)
    assert outcome and outcome[0] != "answered" and isinstance(outcome[0], (ConnectionError, OSError)), outcome
    # No socket: connect() fails as opening an unplugged key does. UDP is read and dropped.
    assert not os.path.exists(key.path)
    with pytest.raises(OSError):
        UnixConnection(key.path)
    silent = UdpConnection(key.udp)
    silent.write_packet(initialization(BROADCAST, CTAPHID.INIT, 8, b"unplugd!"))
    assert key.control("/usb1/power/on") == (200, "power on\n")
    # Nothing was answered while off: the first report the key sends this client answers the INIT
    # sent after power came back.
    assert allocate(silent) != 0
    # The channels were forgotten.
    with pytest.raises(CtapError) as raised:
        udp.ping(b"x")
    assert raised.value.code == CtapError.ERR.INVALID_CHANNEL
    assert device(UnixConnection(key.path)).ping(b"back") == b"back"


def test_hostile_framing_gets_the_specs_errors_and_the_key_answers_others(key):
    client, other = UdpConnection(key.udp), UdpConnection(key.udp)
    mine, theirs = allocate(client), allocate(other)
    # A continuation out of sequence.
    client.write_packet(initialization(mine, CTAPHID.PING, 100, b"a" * 57))
    client.write_packet(continuation(mine, 1, b"b" * 43))
    assert error_of(client.read_packet(), mine) == 0x04  # ERR_INVALID_SEQ
    # Past maxMsgSize (1200), at the first packet.
    client.write_packet(initialization(mine, CTAPHID.CBOR, 1201, b"\x04"))
    assert error_of(client.read_packet(), mine) == 0x03  # ERR_INVALID_LEN
    # CBOR without its command byte.
    client.write_packet(initialization(mine, CTAPHID.CBOR, 0))
    assert error_of(client.read_packet(), mine) == 0x03
    # Channel 0, a channel never allocated, broadcast for anything but INIT.
    for channel in (0, 0x0BADCAFE, BROADCAST):
        client.write_packet(initialization(channel, CTAPHID.PING, 1, b"?"))
        assert error_of(client.read_packet(), channel) == 0x0B  # ERR_INVALID_CHANNEL
    client.write_packet(initialization(mine, 0x3F, 0))
    assert error_of(client.read_packet(), mine) == 0x01  # ERR_INVALID_CMD
    # CTAPHID_MSG (U2F VERSION) from a key that says NMSG is a command it does not have.
    if CAPABILITY.NMSG.supported(device(UdpConnection(key.udp)).capabilities):
        client.write_packet(initialization(mine, CTAPHID.MSG, 7, bytes([0, 3, 0, 0, 0, 0, 0])))
        assert error_of(client.read_packet(), mine) == 0x01
    # Interleaved channels: while one message arrives, another channel is busy.
    client.write_packet(initialization(mine, CTAPHID.PING, 100, b"c" * 57))
    other.write_packet(initialization(theirs, CTAPHID.PING, 1, b"!"))
    assert error_of(other.read_packet(), theirs) == 0x06  # ERR_CHANNEL_BUSY
    client.write_packet(continuation(mine, 0, b"d" * 43))
    answer = client.read_packet() + client.read_packet()
    assert answer[:7] == struct.pack(">IBH", mine, 0x81, 100) and answer[7:64] == b"c" * 57 and answer[69:69 + 43] == b"d" * 43
    # Datagrams that are not one report are ignored: the next answer is the INIT's.
    other.socket.send(b"\xff" * 63)
    other.socket.send(initialization(BROADCAST, CTAPHID.INIT, 8, b"12345678") + b"\0")
    assert allocate(other) not in (0, BROADCAST)


def test_a_client_that_vanishes_mid_message_does_not_wedge_the_key(key):
    # Over the Unix socket: half a message, then the connection closed.
    gone = UnixConnection(key.path)
    channel = allocate(gone)
    gone.write_packet(initialization(channel, CTAPHID.CBOR, 300, b"\x04" * 57))
    gone.close()
    # Others are busy for 750 ms at most; python-fido2 retries a busy channel, so a ping gets
    # through once the half message times out.
    dev = device(UdpConnection(key.udp))
    assert dev.ping(b"still here") == b"still here"
    # Gone while the key waits for its touch (--touch button, never pressed): its request is
    # canceled as its connection closes, not left to the touch's 30 s timeout.
    waiting = UnixConnection(key.path)
    channel = allocate(waiting)
    waiting.write_packet(initialization(channel, CTAPHID.CBOR, 1, b"\x0b"))  # authenticatorSelection
    assert waiting.read_packet()[4] == 0x80 | CTAPHID.KEEPALIVE
    waiting.close()
    started = time.monotonic()
    assert "FIDO_2_1" in Ctap2(dev).get_info().versions
    assert time.monotonic() - started < 20
    # Over UDP the client is told: ERR_MSG_TIMEOUT on its channel.
    stalled = UdpConnection(key.udp)
    mine = allocate(stalled)
    started = time.monotonic()
    stalled.write_packet(initialization(mine, CTAPHID.PING, 200, b"x" * 57))
    assert error_of(stalled.read_packet(), mine) == 0x05  # ERR_MSG_TIMEOUT
    assert 0.7 <= time.monotonic() - started < 20  # 750 ms after the last packet, however loaded the machine
    assert dev.ping(b"and here") == b"and here"


def run(tmp_path, *args):
    return subprocess.run([BIN, "ctap", "serve", *args], env=own_environment(tmp_path), capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("args, words", [
    ((), "--udp HOST:PORT, --socket PATH, or both"),
    (("--udp", "0.0.0.0:8111"), "not a loopback address"),
    (("--udp", "192.168.1.2:0"), "not a loopback address"),
    (("--udp", "localhost:8111"), "takes an IPv4 address"),
    (("--udp", "127.0.0.1"), "takes HOST:PORT"),
    (("--udp", "127.0.0.1:65536"), "takes HOST:PORT"),
    (("--socket", "key.sock"), "takes an absolute path"),
    (("--udp", "127.0.0.1:0", "--controller", "10.0.0.1:80"), "not a loopback address"),
    (("--udp", "127.0.0.1:0", "--touch", "sometimes"), "--touch takes always, never, button"),
    (("--udp", "127.0.0.1:0", "--touch", "0"), "--touch takes always, never, button"),
    (("--udp", "127.0.0.1:0", "--device", "phone"), "without --vault the key is a throw-away device named 'key'"),
])
def test_usage_errors_exit_64_and_name_the_problem(tmp_path, args, words):
    result = run(tmp_path, *args)
    assert result.returncode == 64 and words in result.stderr and result.stdout == "", result.stderr


@pytest.mark.parametrize("listed", ["udp:127.0.0.1:0,udp:127.0.0.1:1", "unix:key.sock", "tcp:127.0.0.1:1", "udp:10.1.1.1:8111", ""])
def test_a_key_listens_where_authctl_ctap_says_when_given_no_place(tmp_path, listed):
    env = dict(own_environment(tmp_path), AUTHCTL_CTAP=listed)
    result = subprocess.run([BIN, "ctap", "serve"], env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 64 and "AUTHCTL_CTAP" in result.stderr, result.stderr


def test_authctl_ctap_names_the_keys_places(tmp_path):
    path = tmp_path / "env.sock"
    env = dict(own_environment(tmp_path), AUTHCTL_CTAP=f"unix:{path},udp:127.0.0.1:0")
    proc = subprocess.Popen([BIN, "ctap", "serve"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        lines = [proc.stdout.readline().split() for _ in range(2)]
        assert lines[0][:2] == ["ctap", "udp"] and lines[1] == ["ctap", "unix", str(path)], (lines, proc.stderr.read())
        assert device(UnixConnection(str(path))).ping(b"env") == b"env"
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 0
    assert not path.exists()


def test_a_socket_path_holding_a_file_is_refused_and_left(tmp_path):
    planted = tmp_path / "key.sock"
    planted.write_text("keep")
    result = run(tmp_path, "--socket", str(planted))
    assert result.returncode == 74 and "it exists and is not a socket" in result.stderr
    assert planted.read_text() == "keep"


def test_a_killed_keys_stale_socket_is_replaced_and_sigint_removes_it(tmp_path):
    first = Key(tmp_path)
    first.proc.kill()
    first.proc.wait(timeout=60)
    assert os.path.exists(first.path)  # left by SIGKILL
    second = Key(tmp_path)
    assert device(UnixConnection(second.path)).ping(b"new") == b"new"
    second.proc.send_signal(signal.SIGINT)
    assert second.proc.wait(timeout=60) == 0
    assert not os.path.exists(second.path)


def test_a_vaults_device_answers_and_an_unknown_device_is_refused(authctl, tmp_path):
    result = authctl.run("device", "add", "usbkey", env={"AUTHCTL_NEW_PIN": "5678"})
    assert result.code == 0, result.stderr
    unknown = authctl.run("--vault", str(authctl.vault), "--device", "nothing", "ctap", "serve", "--udp", "127.0.0.1:0")
    assert unknown.code == 64 and "nothing" in unknown.stderr, unknown.stderr
    proc = subprocess.Popen([BIN, "--vault", str(authctl.vault), "--device", "usbkey", "ctap", "serve", "--udp", "127.0.0.1:0"], env=authctl.env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline().split()
        assert line[:2] == ["ctap", "udp"], proc.stderr.read()
        host, port = line[2].rsplit(":", 1)
        info = Ctap2(device(UdpConnection((host, int(port))))).get_info()
        assert "FIDO_2_1" in info.versions
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 0
