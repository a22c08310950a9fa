"""HTTP/1.1 to ``authctl serve``: one keep-alive connection per thread, JSON in and out.

The server closes a connection idle for 30 s; a connection idle for longer than
:attr:`Transport.idle_limit` is replaced before it is used, and a request on a reused connection
the server has closed is sent once more on a new one.
"""
from __future__ import annotations

import http.client
import json
import socket
import threading
import time
import urllib.parse
import weakref
from typing import Any, Dict, Optional, Tuple

from .errors import error_for

DEFAULT_TIMEOUT = 120.0


class UnixHTTPConnection(http.client.HTTPConnection):
    """An HTTP connection over a Unix socket (``listening on unix:PATH``)."""

    def __init__(self, path: str, timeout: Optional[float] = None):
        super().__init__("localhost", timeout=timeout)
        self.socket_path = path

    def connect(self) -> None:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.settimeout(self.timeout)
            sock.connect(self.socket_path)
        except BaseException:
            sock.close()
            raise
        self.sock = sock


class _Slot:
    """A thread's connection, the generation it belongs to, and when it was last used."""

    def __init__(self, connection: http.client.HTTPConnection, generation: int):
        self.connection = connection
        self.generation = generation
        self.used = False
        self.last = time.monotonic()

    def close(self) -> None:
        try:
            self.connection.close()
        except OSError:
            pass


class Transport:
    """Requests to one server: `url` (``http://HOST:PORT`` or ``unix:PATH``) with bearer `token`."""

    #: Seconds after which an idle connection is replaced rather than reused (the server closes
    #: them after 30 s).
    idle_limit = 20.0

    def __init__(self, url: str, token: Optional[str], timeout: float = DEFAULT_TIMEOUT):
        self.url = url
        self.token = token
        self.timeout = timeout
        if url.startswith("unix:"):
            self._unix: Optional[str] = url[len("unix:"):]
            self._host, self._port = "localhost", 0
        else:
            parts = urllib.parse.urlsplit(url)
            if parts.scheme != "http" or not parts.hostname:
                raise ValueError(f"not a server URL: {url!r} (http://HOST:PORT or unix:PATH)")
            self._unix = None
            self._host, self._port = parts.hostname, parts.port or 80
        self._local = threading.local()
        self._lock = threading.Lock()
        self._generation = 0
        self._slots: "weakref.WeakSet[_Slot]" = weakref.WeakSet()

    # Connections

    def connect(self, timeout: Optional[float] = None) -> http.client.HTTPConnection:
        """A new connection of its own (not the thread's), for a stream or a one-off request."""
        t = self.timeout if timeout is None else timeout
        if self._unix is not None:
            return UnixHTTPConnection(self._unix, timeout=t)
        return http.client.HTTPConnection(self._host, self._port, timeout=t)

    def _slot(self) -> _Slot:
        slot: Optional[_Slot] = getattr(self._local, "slot", None)
        if slot is not None and (slot.generation != self._generation
                                 or (slot.used and time.monotonic() - slot.last > self.idle_limit)):
            self._drop(slot)
            slot = None
        if slot is None:
            slot = _Slot(self.connect(), self._generation)
            self._local.slot = slot
            with self._lock:
                self._slots.add(slot)
        return slot

    def _drop(self, slot: _Slot) -> None:
        slot.close()
        if getattr(self._local, "slot", None) is slot:
            self._local.slot = None

    def release(self) -> None:
        """Closes the calling thread's connection (its next request opens a new one)."""
        slot = getattr(self._local, "slot", None)
        if slot is not None:
            self._drop(slot)

    def close(self) -> None:
        """Closes every thread's connection (a later request opens a new one)."""
        with self._lock:
            slots = list(self._slots)
            self._generation += 1
        for slot in slots:
            slot.close()

    # Requests

    def headers(self, json_body: bool = False) -> Dict[str, str]:
        headers = {"Accept": "application/json, application/problem+json"}
        if self.token is not None:
            headers["Authorization"] = f"Bearer {self.token}"
        if json_body:
            headers["Content-Type"] = "application/json"
        return headers

    def request(self, method: str, path: str, body: Any = None, *, timeout: Optional[float] = None,
                fresh: bool = False) -> Any:
        """Sends `body` (JSON) and returns the answer's JSON (``None`` for 204); raises
        :class:`~authctl_client.AuthctlError` for a status outside 2xx.

        `fresh`: on a connection of its own, closed afterwards, instead of the thread's.
        """
        status, headers, raw = self.exchange(method, path, body, timeout=timeout, fresh=fresh)
        return self.answer(method, path, status, headers, raw)

    def exchange(self, method: str, path: str, body: Any = None, *, timeout: Optional[float] = None,
                 fresh: bool = False) -> Tuple[int, http.client.HTTPMessage, bytes]:
        """Sends one request; the status, headers and body bytes, whatever the status."""
        data = None if body is None else json.dumps(body, separators=(",", ":")).encode("utf-8")
        headers = self.headers(json_body=data is not None)
        wait = self.timeout if timeout is None else timeout
        if fresh:
            connection = self.connect(wait)
            try:
                response, raw = _round_trip(connection, method, path, data, headers)
                return response.status, response.headers, raw
            finally:
                connection.close()
        for attempt in (1, 2):
            slot = self._slot()
            reused = slot.used
            connection = slot.connection
            connection.timeout = wait
            if connection.sock is not None:
                connection.sock.settimeout(wait)
            try:
                response, raw = _round_trip(connection, method, path, data, headers)
            except (ConnectionResetError, BrokenPipeError, ConnectionAbortedError, http.client.RemoteDisconnected):
                self._drop(slot)
                if reused and attempt == 1:
                    continue  # the server had closed the idle connection
                raise
            except BaseException:
                self._drop(slot)  # its state is unknown
                raise
            if response.will_close:
                self._drop(slot)
            else:
                slot.used = True
                slot.last = time.monotonic()
            return response.status, response.headers, raw
        raise AssertionError("unreachable")

    @staticmethod
    def answer(method: str, path: str, status: int, headers: http.client.HTTPMessage, raw: bytes) -> Any:
        kind = (headers.get("Content-Type") or "").split(";")[0].strip()
        parsed: Any = None
        text = raw.decode("utf-8", "replace")
        if raw and kind.endswith("json"):
            try:
                parsed = json.loads(raw)
            except ValueError:
                parsed = None
        if 200 <= status < 300:
            if parsed is not None or not raw:
                return parsed
            return text
        raise error_for(status, parsed if isinstance(parsed, dict) else None, method=method, path=path,
                        text="" if isinstance(parsed, dict) else text.strip())


def _round_trip(connection: http.client.HTTPConnection, method: str, target: str, data: Optional[bytes],
                headers: Dict[str, str]) -> Tuple[http.client.HTTPResponse, bytes]:
    """One request and its answer. The server may answer before it has read the whole body (one
    over its limit: 413) and close the connection; that answer is read and returned."""
    try:
        connection.request(method, target, body=data, headers=headers)
    except (BrokenPipeError, ConnectionResetError) as error:
        try:
            response = connection.getresponse()
            raw = response.read()
        except (OSError, http.client.HTTPException):
            raise error from None
        response.will_close = True
        return response, raw
    response = connection.getresponse()
    return response, response.read()


def path(*segments: str, query: Optional[Dict[str, Any]] = None) -> str:
    """``/a/b/c`` from segments, each percent-encoded, with an optional query."""
    text = "/" + "/".join(urllib.parse.quote(str(s), safe="") for s in segments)
    if query:
        pairs = {k: v for k, v in query.items() if v is not None}
        if pairs:
            text += "?" + urllib.parse.urlencode(pairs)
    return text
