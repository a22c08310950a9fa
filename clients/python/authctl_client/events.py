"""An account's event stream (``GET /accounts/{id}/events``, Server-Sent Events).

The server records an account's events from the moment its first stream opens, and replays the
last 1,000 to every later stream, so a test opens the stream *before* it acts, then waits for what
it expects::

    with account.events() as events:
        phone.register(options, origin)
        account.clock.advance("10s")
        arrived = events.wait_for("syncArrived", lambda e: e.data["device"] == "laptop")

The events: ``credentialAdded``, ``credentialAsserted``, ``credentialUpdated``,
``credentialDeleted`` (``data``: ``authenticatorId``, ``credential``, ``time``), ``syncLanded`` and
``syncArrived`` (``data``: ``device``, ``credentialId``, ``removal``, ``time``).
"""
from __future__ import annotations

import json
import socket
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Iterator, List, Optional

from .errors import EventStreamClosed

DEFAULT_WAIT = 60.0


@dataclass(frozen=True)
class Event:
    """One event: its ``id`` (a whole number, increasing), its ``name`` and its ``data`` (the
    parsed JSON, or the text when it is not JSON)."""

    id: int
    name: str
    data: Any

    def __getitem__(self, key: str) -> Any:
        """``event["device"]`` is ``event.data["device"]``."""
        return self.data[key]


class EventStream:
    """An open event stream of an account: the events arrive on a thread of their own and are
    kept, in order, in :attr:`events`.

    Opening it (``Account.events()``) returns once the server has answered, so every event of a
    request made after that is in the stream. Close it with :meth:`close`, or use it as a
    context manager.
    """

    def __init__(self, transport, account_path: str, after: Optional[int] = None, follow: bool = True,
                 timeout: Optional[float] = None):
        self._after = after
        self._condition = threading.Condition()
        self._events: List[Event] = []
        self._taken: set = set()
        self._ended: Optional[BaseException] = None
        self._done = False
        self._closing = False
        query = ([f"after={int(after)}"] if after is not None else []) + ([] if follow else ["follow=false"])
        target = account_path + "/events" + ("?" + "&".join(query) if query else "")
        self._connection = transport.connect(timeout=timeout)
        headers = transport.headers()
        headers["Accept"] = "text/event-stream"
        self._connection.request("GET", target, headers=headers)
        response = self._connection.getresponse()
        if response.status != 200:
            raw = response.read()
            self._connection.close()
            transport.answer("GET", target, response.status, response.headers, raw)  # raises
            raise RuntimeError(f"GET {target}: HTTP {response.status}")
        # The server pings every 5 s; only a close ends a read from now on.
        if self._connection.sock is not None:
            self._connection.sock.settimeout(None)
        self._response = response
        self._thread = threading.Thread(target=self._read, name="authctl-events", daemon=True)
        self._thread.start()

    # Reading

    def _read(self) -> None:
        name, data, ident = None, [], None
        try:
            while True:
                line = self._response.readline()
                if not line:
                    break
                text = line.decode("utf-8").rstrip("\r\n")
                if text == "":
                    if data or name:
                        self._add(ident, name or "message", "\n".join(data))
                    name, data, ident = None, [], None
                elif text.startswith(":"):
                    continue  # a comment: the greeting, or a ping
                else:
                    field, _, rest = text.partition(":")
                    if rest.startswith(" "):
                        rest = rest[1:]
                    if field == "event":
                        name = rest
                    elif field == "data":
                        data.append(rest)
                    elif field == "id":
                        ident = rest
        except BaseException as error:  # noqa: BLE001 - the stream ends either way
            if not self._closing:
                with self._condition:
                    self._ended = error
        finally:
            with self._condition:
                self._done = True
                self._condition.notify_all()

    def _add(self, ident: Optional[str], name: str, text: str) -> None:
        try:
            data: Any = json.loads(text)
        except ValueError:
            data = text
        try:
            number = int(ident) if ident is not None else 0
        except ValueError:
            number = 0
        if self._after is not None and 0 < number <= self._after:
            return  # skipped here as well, should the server replay it
        with self._condition:
            self._events.append(Event(number, name, data))
            self._condition.notify_all()

    # Looking

    @property
    def events(self) -> List[Event]:
        """Every event received so far, in order."""
        with self._condition:
            return list(self._events)

    @property
    def closed(self) -> bool:
        """Whether the stream has ended (no more events will come)."""
        with self._condition:
            return self._done

    @property
    def last_id(self) -> Optional[int]:
        """The id of the last event received (for ``Account.events(after=...)``)."""
        with self._condition:
            return self._events[-1].id if self._events else None

    def wait_for(self, name: Optional[str] = None, predicate: Optional[Callable[[Event], bool]] = None,
                 timeout: float = DEFAULT_WAIT) -> Event:
        """The first event named `name` (any name when ``None``) for which `predicate` holds, and
        which no earlier ``wait_for`` returned: one received already, else the first to come.

        Raises ``TimeoutError`` when none comes within `timeout` seconds, and
        :class:`~authctl_client.EventStreamClosed` when the stream ends first.
        """
        deadline = time.monotonic() + timeout
        seen = 0
        with self._condition:
            while True:
                for index in range(seen, len(self._events)):
                    event = self._events[index]
                    if index in self._taken or (name is not None and event.name != name):
                        continue
                    if predicate is not None and not predicate(event):
                        continue
                    self._taken.add(index)
                    return event
                seen = len(self._events)
                if self._done:
                    raise EventStreamClosed(self._describe(name, "the stream ended before it came"))
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise TimeoutError(self._describe(name, f"none came within {timeout:g} s"))
                self._condition.wait(remaining)

    def wait_closed(self, timeout: float = DEFAULT_WAIT) -> List[Event]:
        """Waits for the stream to end (one opened with ``follow=False`` ends after the kept
        events); every event it brought. ``TimeoutError`` when it has not ended in time."""
        deadline = time.monotonic() + timeout
        with self._condition:
            while not self._done:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise TimeoutError(f"the event stream did not end within {timeout:g} s")
                self._condition.wait(remaining)
            return list(self._events)

    def _describe(self, name: Optional[str], why: str) -> str:
        names = ", ".join(f"{e.id}:{e.name}" for e in self._events[-20:]) or "none"
        reason = f" ({self._ended!r})" if self._ended is not None else ""
        return f"no {name or 'event'} that matches: {why}{reason}; received: {names}"

    def __iter__(self) -> Iterator[Event]:
        """Every event, those received already first, waiting for each next one until the stream
        ends."""
        index = 0
        while True:
            with self._condition:
                while index >= len(self._events) and not self._done:
                    self._condition.wait()
                if index >= len(self._events):
                    return
                event = self._events[index]
            index += 1
            yield event

    # Ending

    def close(self) -> None:
        """Closes the connection and waits for the reading thread to end."""
        self._closing = True
        sock = self._connection.sock
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        self._thread.join(timeout=30)
        try:
            self._response.close()
        except OSError:
            pass
        self._connection.close()

    def __enter__(self) -> "EventStream":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<EventStream {len(self.events)} events{' closed' if self.closed else ''}>"
