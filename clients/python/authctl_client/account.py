"""An account the server hosts: its devices, its clock, its sync settings, its events."""
from __future__ import annotations

import datetime
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Union

from . import _convert
from ._http import path
from .device import Device
from .errors import NotFound
from .events import Event, EventStream

if TYPE_CHECKING:
    from .server import Server

Duration = Union[str, int, datetime.timedelta]
Instant = Union[str, int, datetime.datetime]


class Clock:
    """An account's clock (``account.clock``). A virtual clock moves only when told to:
    :meth:`advance` and :meth:`set`; a real one is the time now (both then raise ``BadRequest``).

    Durations are ``"2s"``, ``"1m30s"``, ``"500ms"``, whole milliseconds, or a
    ``datetime.timedelta``; times are RFC 3339 text, milliseconds since 1970, or a
    ``datetime.datetime`` (naive: UTC).
    """

    def __init__(self, account: "Account"):
        self.account = account

    def _path(self) -> str:
        return path("accounts", self.account.id, "clock")

    def get(self) -> Dict[str, Any]:
        """``{"mode": "real" | "virtual", "now": ms, "time": RFC 3339}``."""
        return self.account.server.transport.request("GET", self._path())

    @property
    def now(self) -> int:
        """The account's time, in milliseconds since the Unix epoch."""
        return int(self.get()["now"])

    @property
    def datetime(self) -> datetime.datetime:
        """The account's time as an aware ``datetime`` (UTC)."""
        return datetime.datetime.fromtimestamp(self.now / 1000, tz=datetime.timezone.utc)

    @property
    def mode(self) -> str:
        """``"real"`` or ``"virtual"``."""
        return str(self.get()["mode"])

    def advance(self, by: Duration) -> int:
        """Moves the virtual clock forward by `by`; answers the new time (ms). What sync
        delivered meanwhile is on the devices once this returns."""
        return int(self.account.server.transport.request("POST", self._path(), {"advance": _convert.value(by)})["now"])

    def set(self, to: Instant) -> int:
        """Sets the virtual clock to `to`; answers the new time (ms)."""
        return int(self.account.server.transport.request("POST", self._path(), {"set": _convert.value(to)})["now"])

    def __repr__(self) -> str:
        return f"<Clock of account {self.account.id!r}>"


class Account:
    """An account on the server: an isolated keychain with its devices, its clock and its sync.

    Made by :meth:`Server.create_account`. As a context manager it is deleted on exit.
    """

    def __init__(self, server: "Server", id: str, report: Optional[Dict[str, Any]] = None):  # noqa: A002
        self.server = server
        self.id = id
        #: The server's report of the account when it was made (``POST /accounts``), else ``None``.
        self.report = report
        self.clock = Clock(self)

    def _path(self, *more: str) -> str:
        return path("accounts", self.id, *more)

    def info(self) -> Dict[str, Any]:
        """The account as the server reports it now: ``id``, ``storage``, ``devices``, ``clock``."""
        return self.server.transport.request("GET", self._path())

    def attestation_ca(self) -> Dict[str, str]:
        """``{"root", "intermediate"}`` as PEM: what an attestation with ``x5c`` chains to. The root
        is the RP's trust anchor (py_webauthn's ``pem_root_certs_bytes_by_fmt``); every account one
        server makes has the same."""
        return self.server.transport.request("GET", self._path("attestation-ca"))

    # Devices

    @property
    def devices(self) -> List[Device]:
        """The account's devices now (one request)."""
        listed = self.server.transport.request("GET", self._path("devices"))["devices"]
        return [Device(self, d["name"]) for d in listed]

    def device(self, name: str) -> Device:
        """The device named `name` (a handle: nothing is sent)."""
        return Device(self, name)

    def add_device(self, name: str, pin: Optional[str] = None, *, max_pin_attempts: Optional[int] = None,
                   profile: Optional[str] = None, aaguid: Optional[str] = None, approved_by: Optional[str] = None,
                   approver_pin: Optional[str] = None) -> Device:
        """Adds a device. One with a `pin` is enrolled in biometry, approved by an enrolled device
        (`approved_by`, else the first whose PIN the server knows), as a new phone joins a
        keychain; one without has no biometric."""
        self.server.transport.request("POST", self._path("devices"), _convert.body(
            name=name, pin=pin, max_pin_attempts=max_pin_attempts, profile=profile, aaguid=aaguid,
            approved_by=approved_by, approver_pin=approver_pin))
        return Device(self, name)

    # Sync

    def sync_status(self) -> Dict[str, Any]:
        """What is in flight per device, and the sync settings (delays, seed, backup state)."""
        return self.server.transport.request("GET", self._path("sync"))

    def set_sync(self, *, upload: Optional[Duration] = None, download: Optional[Duration] = None,
                 device: Optional[str] = None, seed: Optional[int] = None,
                 backup_state_immediate: Optional[bool] = None) -> Dict[str, Any]:
        """Sets the sync delays (the account's, or `device`'s own), the delays' seed, and whether
        a passkey's backup state is 1 before its upload lands. A delay is a duration or a range
        ``"1s..5s"``. Answers the sync status."""
        return self.server.transport.request("PUT", self._path("sync"), _convert.body(
            upload=upload, download=download, device=device, seed=seed, backup_state_immediate=backup_state_immediate))

    # Events

    def events(self, after: Optional[int] = None, follow: bool = True) -> EventStream:
        """Opens the account's event stream: the kept events (those after id `after`), then each
        as it happens, or, with ``follow=False``, the kept ones only, the stream then ending.
        Open it before acting: the server records events from the first stream on."""
        return EventStream(self.server.transport, self._path(), after=after, follow=follow)

    def recorded_events(self, after: Optional[int] = None, timeout: float = 60.0) -> List[Event]:
        """The events the server has kept (the last 1,000; those after id `after`). The first
        call also starts the recording, when no stream has opened before."""
        with self.events(after=after, follow=False) as stream:
            return stream.wait_closed(timeout)

    # Ending

    def delete(self, missing_ok: bool = False) -> None:
        """Ends the account: its devices, passkeys and event streams are gone."""
        try:
            self.server.transport.request("DELETE", self._path())
        except NotFound:
            if not missing_ok:
                raise

    def __enter__(self) -> "Account":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.delete(missing_ok=True)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Account) and other.id == self.id and other.server is self.server

    def __hash__(self) -> int:
        return hash(self.id)

    def __repr__(self) -> str:
        return f"<Account {self.id!r}>"
