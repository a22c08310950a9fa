"""python-fido2 over authctl's security key: ``authctl ctap serve`` answers as a USB security key
over CTAPHID reports carried by a Unix socket or UDP datagrams, and this module gives python-fido2
(2.x) a ``CtapHidConnection`` over them, so ``CtapHidDevice``, ``Ctap2``, ``Fido2Client`` and
python-fido2's own device tests drive the key unchanged.

::

    from authctl_client import ctap
    from fido2.ctap2 import Ctap2

    device = ctap.open_device("authctl:unix:/run/user/1000/key.sock")
    print(Ctap2(device).info.versions)

    ctap.install()    # fido2.hid's discovery finds the keys named in $AUTHCTL_CTAP too
    from fido2.hid import CtapHidDevice
    devices = list(CtapHidDevice.list_devices())

Keys are named as in ``$AUTHCTL_CTAP``, a comma-separated list of ``unix:/abs/path`` and
``udp:HOST:PORT``; a key's device path is that entry behind ``authctl:``
(``authctl:udp:127.0.0.1:8111``), as libfido2 names it. A key is listed only while it is
powered on: a Unix key accepts a connection, a UDP key answers a CTAPHID_INIT in a short time.

Standard library only besides python-fido2 itself; see the README's "Security keys" section.
"""
from __future__ import annotations

import os
import socket
import struct
from dataclasses import dataclass
from typing import Iterable, Optional, Union

from fido2.hid.base import CtapHidConnection, HidDescriptor

ENVIRONMENT_VARIABLE = "AUTHCTL_CTAP"
# What a key's device path starts with (libfido2's paths for the same keys are spelled alike).
PATH_PREFIX = "authctl:"
# Every CTAPHID report of a full-speed USB FIDO key is 64 bytes, both ways (CTAP 2.1 §11.2.4).
REPORT_SIZE = 64
PRODUCT_NAME = "authctl security key"
# No USB descriptor stands behind the key: it has no vendor or product id.
VENDOR_ID = 0
PRODUCT_ID = 0
# How long a UDP key has to answer the CTAPHID_INIT that tells whether it is powered on.
PROBE_TIMEOUT = 0.5
# How long a read waits for a report. A key that works on a request sends a KEEPALIVE every
# 100 ms (CTAP 2.1 §11.2.9.2.1), so this much silence means the key is gone.
READ_TIMEOUT = 30.0

_BROADCAST_CID = 0xFFFFFFFF
_TYPE_INIT = 0x80
_CTAPHID_INIT = 0x06
_CTAPHID_ERROR = 0x3F


@dataclass(frozen=True)
class Key:
    """One key of ``$AUTHCTL_CTAP``: ``transport`` is ``"unix"`` (``address`` a path) or ``"udp"``
    (``address`` a ``(host, port)`` pair)."""

    transport: str
    address: Union[str, tuple]

    @property
    def entry(self) -> str:
        """The key as ``$AUTHCTL_CTAP`` names it."""
        if self.transport == "unix":
            return f"unix:{self.address}"
        host, port = self.address
        return f"udp:[{host}]:{port}" if ":" in host else f"udp:{host}:{port}"

    @property
    def path(self) -> str:
        """The key's device path: ``authctl:`` and its entry."""
        return PATH_PREFIX + self.entry

    @classmethod
    def parse(cls, text: str) -> "Key":
        """A key from an ``$AUTHCTL_CTAP`` entry or a device path (``ValueError`` naming what is
        wrong with it)."""
        entry = text[len(PATH_PREFIX):] if text.startswith(PATH_PREFIX) else text
        transport, _, rest = entry.partition(":")
        if transport == "unix":
            if not rest.startswith("/"):
                raise ValueError(f"{text!r}: a Unix key's path must be absolute (unix:/path)")
            return cls("unix", rest)
        if transport == "udp":
            host, _, port = rest.rpartition(":")
            if host.startswith("[") and host.endswith("]"):
                host = host[1:-1]
            if not host or not port.isdigit() or not 0 < int(port) < 65536:
                raise ValueError(f"{text!r}: a UDP key is udp:HOST:PORT, with a port from 1 to 65535")
            return cls("udp", (host, int(port)))
        raise ValueError(f"{text!r}: a key is unix:/path or udp:HOST:PORT")


def keys(spec: Union[str, Iterable[str], None] = None) -> list:
    """The keys ``spec`` names (a comma-separated text or a list of entries); by default those of
    ``$AUTHCTL_CTAP`` (none when it is unset). Empty entries are passed over."""
    if spec is None:
        spec = os.environ.get(ENVIRONMENT_VARIABLE, "")
    entries = spec.split(",") if isinstance(spec, str) else list(spec)
    return [entry if isinstance(entry, Key) else Key.parse(entry.strip()) for entry in entries
            if isinstance(entry, Key) or entry.strip()]


def _udp_address(key: Key) -> tuple:
    host, port = key.address
    family, _, _, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_DGRAM)[0]
    return family, address


class UnixConnection(CtapHidConnection):
    """A key's Unix socket: like one open hidraw handle, 64-byte reports back to back both ways.
    The key closes the connection when it is powered off; a read then raises ``ConnectionError``."""

    def __init__(self, path: str, timeout: Optional[float] = READ_TIMEOUT):
        self._socket = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            self._socket.settimeout(timeout)
            self._socket.connect(path)
        except BaseException:
            self._socket.close()
            raise

    def write_packet(self, data: bytes) -> None:
        _check_report(data)
        self._socket.sendall(data)

    def read_packet(self) -> bytes:
        report = bytearray()
        while len(report) < REPORT_SIZE:
            chunk = self._socket.recv(REPORT_SIZE - len(report))
            if not chunk:
                raise ConnectionError("the security key closed the connection (powered off)")
            report += chunk
        return bytes(report)

    def close(self) -> None:
        self._socket.close()


class UdpConnection(CtapHidConnection):
    """A key's UDP port: one 64-byte report a datagram, no report id. The socket is connected to
    the key, so only the key's datagrams are read; one of another size is passed over."""

    def __init__(self, host: str, port: int, timeout: Optional[float] = READ_TIMEOUT):
        family, address = _udp_address(Key("udp", (host, port)))
        self._socket = socket.socket(family, socket.SOCK_DGRAM)
        try:
            self._socket.settimeout(timeout)
            self._socket.connect(address)
        except BaseException:
            self._socket.close()
            raise

    def write_packet(self, data: bytes) -> None:
        _check_report(data)
        self._socket.send(data)

    def read_packet(self) -> bytes:
        while True:
            datagram = self._socket.recv(2048)
            if len(datagram) == REPORT_SIZE:
                return datagram

    def close(self) -> None:
        self._socket.close()


def _check_report(data: bytes) -> None:
    if len(data) != REPORT_SIZE:
        raise ValueError(f"a CTAPHID report is {REPORT_SIZE} bytes, not {len(data)}")


def connect(key: Union[Key, str], timeout: Optional[float] = READ_TIMEOUT) -> CtapHidConnection:
    """A connection to ``key`` (a ``Key``, an entry or a device path). A Unix key that is powered
    off raises ``ConnectionRefusedError`` or ``FileNotFoundError``; a UDP one is not asked."""
    key = key if isinstance(key, Key) else Key.parse(key)
    if key.transport == "unix":
        return UnixConnection(key.address, timeout)
    return UdpConnection(*key.address, timeout)


def is_present(key: Union[Key, str], timeout: float = PROBE_TIMEOUT) -> bool:
    """Whether ``key`` is powered on: a Unix key accepts a connection; a UDP key answers a
    CTAPHID_INIT on the broadcast channel within ``timeout`` seconds (its INIT response, or an
    ERROR while another channel's transaction holds it: it answered either way)."""
    key = key if isinstance(key, Key) else Key.parse(key)
    try:
        if key.transport == "unix":
            connect(key, timeout).close()
            return True
        connection = connect(key, timeout)
    except OSError:
        return False
    try:
        nonce = os.urandom(8)
        request = struct.pack(">IBH", _BROADCAST_CID, _TYPE_INIT | _CTAPHID_INIT, len(nonce)) + nonce
        connection.write_packet(request.ljust(REPORT_SIZE, b"\0"))
        while True:
            report = connection.read_packet()
            cid, command = struct.unpack_from(">IB", report)
            if cid != _BROADCAST_CID:
                continue
            if command == _TYPE_INIT | _CTAPHID_ERROR:
                return True
            if command == _TYPE_INIT | _CTAPHID_INIT and report[7:15] == nonce:
                return True
    except OSError:   # the timeout, or the port refused (ICMP): nothing answers there
        return False
    finally:
        connection.close()


def descriptor(key: Union[Key, str]) -> HidDescriptor:
    """``key``'s ``HidDescriptor``, whether or not it is powered on."""
    key = key if isinstance(key, Key) else Key.parse(key)
    return HidDescriptor(key.path, VENDOR_ID, PRODUCT_ID, REPORT_SIZE, REPORT_SIZE, PRODUCT_NAME, None)


def list_descriptors(spec: Union[str, Iterable[str], None] = None) -> list:
    """The descriptors of the keys of ``spec`` (default ``$AUTHCTL_CTAP``) that are powered on."""
    return [descriptor(key) for key in keys(spec) if is_present(key)]


def get_descriptor(path: str) -> HidDescriptor:
    """The descriptor of the key at ``path`` (``authctl:…``); ``FileNotFoundError`` when it is
    powered off, as for a hidraw path that is gone."""
    key = Key.parse(path)
    if not is_present(key):
        raise FileNotFoundError(f"no security key is powered on at {key.path}")
    return descriptor(key)


def open_connection(descriptor: HidDescriptor) -> CtapHidConnection:
    """A connection to the key ``descriptor`` names (``authctl:…``)."""
    return connect(Key.parse(_text(descriptor.path)))


def open_device(path: str):
    """A ``fido2.hid.CtapHidDevice`` on the key at ``path`` (``authctl:…``, or an entry of
    ``$AUTHCTL_CTAP``): its CTAPHID_INIT is done."""
    from fido2.hid import CtapHidDevice

    found = get_descriptor(path)
    return CtapHidDevice(found, open_connection(found))


def _text(path: Union[str, bytes]) -> str:
    return path.decode() if isinstance(path, bytes) else path


def is_authctl_path(path: Union[str, bytes]) -> bool:
    """Whether ``path`` names an authctl key rather than a device of the OS."""
    return _text(path).startswith(PATH_PREFIX)


# fido2.hid's own functions, kept while install() has them replaced.
_installed: dict = {}


def install(spec: Union[str, Iterable[str], None] = None) -> None:
    """Makes ``fido2.hid`` find authctl's keys beside the OS's hidraw devices: its
    ``list_descriptors``, ``get_descriptor``, ``open_connection`` and ``open_device`` (and so
    ``CtapHidDevice.list_devices()``) know ``authctl:`` paths. The keys are ``spec``'s, else those
    ``$AUTHCTL_CTAP`` names when each listing is made. Call it before importing modules that take
    those functions by name (``from fido2.hid import list_descriptors``). A second call changes
    only the keys."""
    import fido2.hid as hid

    if not _installed:
        _installed.update(list_descriptors=hid.list_descriptors, get_descriptor=hid.get_descriptor,
                          open_connection=hid.open_connection, open_device=hid.open_device)
    original = _installed
    fixed = None if spec is None else keys(spec)

    def combined_list_descriptors() -> list:
        return list(original["list_descriptors"]()) + list_descriptors(fixed)

    def combined_get_descriptor(path):
        return get_descriptor(_text(path)) if is_authctl_path(path) else original["get_descriptor"](path)

    def combined_open_connection(found: HidDescriptor) -> CtapHidConnection:
        return open_connection(found) if is_authctl_path(found.path) else original["open_connection"](found)

    def combined_open_device(path):
        found = combined_get_descriptor(path)
        return hid.CtapHidDevice(found, combined_open_connection(found))

    for name, function in (("list_descriptors", combined_list_descriptors), ("get_descriptor", combined_get_descriptor),
                           ("open_connection", combined_open_connection), ("open_device", combined_open_device)):
        function.__name__ = function.__qualname__ = name
        function.__doc__ = f"fido2.hid.{name}, with authctl's keys (authctl_client.ctap.install)"
        setattr(hid, name, function)


def uninstall() -> None:
    """Gives ``fido2.hid`` its own functions back."""
    import fido2.hid as hid

    for name, function in _installed.items():
        setattr(hid, name, function)
    _installed.clear()


__all__ = [
    "ENVIRONMENT_VARIABLE", "Key", "PATH_PREFIX", "PROBE_TIMEOUT", "PRODUCT_NAME", "READ_TIMEOUT", "REPORT_SIZE",
    "UdpConnection", "UnixConnection", "connect", "descriptor", "get_descriptor", "install", "is_authctl_path",
    "is_present", "keys", "list_descriptors", "open_connection", "open_device", "uninstall",
]
