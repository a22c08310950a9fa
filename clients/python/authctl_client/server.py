"""``authctl serve``: starting and stopping the process, and the requests that are not an
account's."""
from __future__ import annotations

import os
import queue
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import weakref
from collections.abc import Mapping
from typing import Any, Dict, Iterable, List, Optional, Sequence, Union

from . import _convert
from . import audit as _audit
from ._http import DEFAULT_TIMEOUT, Transport
from .account import Account
from .audit import Audit, AuditReport
from .errors import ServerProcessError

ENVIRONMENT_VARIABLE = "AUTHCTL_BIN"


def find_binary(binary: Optional[str] = None) -> str:
    """The authctl binary: `binary`, else ``$AUTHCTL_BIN``, else ``authctl`` on ``PATH``."""
    chosen = binary or os.environ.get(ENVIRONMENT_VARIABLE)
    if chosen:
        return chosen
    found = shutil.which("authctl")
    if found is None:
        raise FileNotFoundError(f"no authctl binary: set {ENVIRONMENT_VARIABLE}, or put authctl on PATH")
    return found


def _terminate(process: subprocess.Popen) -> None:
    """At interpreter exit, or when a started server is forgotten: end the process."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _device_spec(device: Union[str, Sequence[Any], Mapping]) -> Dict[str, Any]:
    if isinstance(device, str):
        return {"name": device}
    if isinstance(device, Mapping):
        return _convert.body(device)
    name, pin = device
    return _convert.body(name=name, pin=pin)


class Server:
    """An ``authctl serve`` process, started by the constructor, or one started elsewhere
    (:meth:`connect`).

    `binary`: the authctl binary (default :func:`find_binary`). `args`: more arguments after
    ``serve`` (``["--threads", "8"]``, the global ``--vault DIR``, ...). `listen` (``HOST:PORT``)
    or `socket` (an absolute path: a Unix socket) say where it listens (default: a free port on
    127.0.0.1). `token_file`: the bearer token's file (made when missing); without it the server
    makes one for the run and prints it. `threads`: how many threads serve requests. `scratch`:
    the directory for the accounts' throw-away vaults (default: the process's ``TMPDIR``, else
    /tmp). `env`: variables set for the process over this process's environment (``None`` as a
    value removes one). `timeout`: seconds a request may take; `startup_timeout`: seconds to
    wait for ``listening on``.

    As a context manager it is stopped on exit. :meth:`stop` sends SIGTERM and raises
    :class:`~authctl_client.ServerProcessError` unless the process exits with status 0.
    """

    def __init__(self, binary: Optional[str] = None, args: Iterable[str] = (), *, listen: Optional[str] = None,
                 socket: Optional[str] = None, token_file: Optional[Union[str, os.PathLike]] = None,
                 threads: Optional[int] = None, scratch: Optional[Union[str, os.PathLike]] = None,
                 env: Optional[Mapping[str, Optional[str]]] = None, timeout: float = DEFAULT_TIMEOUT,
                 startup_timeout: float = 60.0, cwd: Optional[str] = None):
        self.binary = find_binary(binary)
        command: List[str] = [self.binary, "serve"]
        if listen is not None:
            command += ["--listen", listen]
        if socket is not None:
            command += ["--socket", os.fspath(socket)]
        if token_file is not None:
            command += ["--token-file", os.fspath(token_file)]
        if threads is not None:
            command += ["--threads", str(threads)]
        if scratch is not None:
            command += ["--scratch", os.fspath(scratch)]
        command += list(args)
        self.command = command
        environment = dict(os.environ)
        for name, setting in (env or {}).items():
            if setting is None:
                environment.pop(name, None)
            else:
                environment[name] = setting
        self._stderr = tempfile.TemporaryFile()
        self._lines: "queue.Queue[Optional[str]]" = queue.Queue()
        self.process: Optional[subprocess.Popen] = subprocess.Popen(
            command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=self._stderr, env=environment, cwd=cwd)
        self._finalizer = weakref.finalize(self, _terminate, self.process)
        self._stopped = False
        self._reader = threading.Thread(target=self._read_stdout, args=(self.process.stdout, self._lines),
                                        name="authctl-serve-stdout", daemon=True)
        self._reader.start()
        try:
            url = self._line("listening on ", startup_timeout)
            if token_file is None:
                token: Optional[str] = self._line("token ", startup_timeout)
            else:
                with open(token_file, encoding="utf-8") as f:
                    token = f.readline().strip()
        except BaseException:
            self._finalizer()
            raise
        self._setup(url, token, timeout)

    @staticmethod
    def _read_stdout(stream, lines: "queue.Queue[Optional[str]]") -> None:
        for raw in iter(stream.readline, b""):
            lines.put(raw.decode("utf-8", "replace").rstrip("\r\n"))
        lines.put(None)

    def _line(self, prefix: str, wait: float) -> str:
        deadline = time.monotonic() + wait
        while True:
            try:
                line = self._lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise ServerProcessError(f"{' '.join(self.command)}: no '{prefix.strip()}' line within {wait:g} s",
                                         stderr=self.stderr) from None
            if line is None:
                code = self.process.wait() if self.process else None
                raise ServerProcessError(f"{' '.join(self.command)} exited ({code}) before printing '{prefix.strip()}'",
                                         returncode=code, stderr=self.stderr)
            if line.startswith(prefix):
                return line[len(prefix):].strip()

    def _setup(self, url: str, token: Optional[str], timeout: float) -> None:
        self.url = url
        self.token = token
        self.transport = Transport(url, token, timeout=timeout)

    @classmethod
    def connect(cls, url: str, token: Optional[str], *, timeout: float = DEFAULT_TIMEOUT) -> "Server":
        """A server started elsewhere, at `url` (``http://HOST:PORT`` or ``unix:PATH``), with
        bearer `token`. Its :meth:`stop` only closes the client's connections."""
        server = cls.__new__(cls)
        server.binary = None
        server.command = []
        server.process = None
        server._stderr = None
        server._stopped = False
        server._setup(url, token, timeout)
        return server

    # The process

    @property
    def stderr(self) -> str:
        """What the process wrote on stderr so far."""
        if self._stderr is None:
            return ""
        try:
            self._stderr.seek(0)
            return self._stderr.read().decode("utf-8", "replace")
        except (OSError, ValueError):
            return ""

    @property
    def running(self) -> bool:
        """Whether the process is running (``True`` for a server started elsewhere until stopped)."""
        if self.process is None:
            return not self._stopped
        return self.process.poll() is None

    def stop(self, timeout: float = 60.0) -> None:
        """Stops the server: SIGTERM, then waits up to `timeout` seconds for it to exit; raises
        :class:`~authctl_client.ServerProcessError` when it does not exit, or exits with another
        status than 0. A second call does nothing."""
        if self._stopped:
            return
        self._stopped = True
        self.transport.close()
        if self.process is None:
            return
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            code = self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            raise ServerProcessError(f"authctl serve did not exit within {timeout:g} s of SIGTERM (killed)",
                                     returncode=self.process.returncode, stderr=self.stderr) from None
        finally:
            self._finalizer.detach()
            self._reader.join(timeout=10)  # it ends at the pipe's end
            if not self._reader.is_alive() and self.process.stdout is not None:
                self.process.stdout.close()
        text = self.stderr
        self._stderr.close()
        if code != 0:
            raise ServerProcessError(f"authctl serve exited with status {code}", returncode=code, stderr=text)

    def __enter__(self) -> "Server":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    # Requests

    def request(self, method: str, target: str, body: Any = None, *, timeout: Optional[float] = None) -> Any:
        """Any request: `target` is the path (and query), `body` is sent as JSON; answers the
        JSON. For the routes this client has no method for (the WebDriver verbs, ...)."""
        return self.transport.request(method, target, body, timeout=timeout)

    def release_connection(self) -> None:
        """Closes the calling thread's keep-alive connection (for a worker thread that ends)."""
        self.transport.release()

    def health(self) -> Dict[str, Any]:
        """``GET /health`` (no token needed): ``{"status": "ok"}``."""
        return self.transport.request("GET", "/health")

    def openapi(self) -> Dict[str, Any]:
        """The server's OpenAPI document."""
        return self.transport.request("GET", "/openapi.json")

    def create_account(self, devices: Optional[Iterable[Union[str, Sequence[Any], Mapping]]] = None, *,
                       clock: Union[None, str, Mapping] = None, sync: Optional[Mapping[str, Any]] = None,
                       profile: Optional[str] = None, storage: Optional[str] = None) -> Account:
        """Makes an account.

        `devices`: each a name, a ``(name, pin)`` pair, or a dict (``name``, ``pin``,
        ``max_pin_attempts``, ``profile``, ``aaguid``); default one device ``phone`` with PIN
        ``1234``. Devices after the first with a PIN are approved by an earlier one with a PIN.
        `clock`: ``"real"`` (default), ``"virtual"`` (starting now), or ``{"mode": "virtual",
        "start": time}``. `sync`: ``upload``, ``download`` (delays: ``"2s"``, ``"1s..5s"``,
        milliseconds), ``seed``, ``backup_state_immediate``. `profile`: the authenticator profile
        of the first device's passkeys. `storage`: ``"memory"`` (default) or ``"vault"``.
        """
        body: Dict[str, Any] = {}
        if devices is not None:
            body["devices"] = [_device_spec(d) for d in devices]
        if clock is not None:
            body["clock"] = {"mode": clock} if isinstance(clock, str) else _convert.body(clock)
        if sync is not None:
            body["sync"] = _convert.body(sync)
        body.update(_convert.body(profile=profile, storage=storage))
        report = self.transport.request("POST", "/accounts", body)
        return Account(self, report["id"], report)

    def start_audit(self, url: str, *, preset: Optional[str] = None, profile: Optional[Mapping[str, Any]] = None,
                    origin: Optional[str] = None, only: Optional[Iterable[str]] = None, skip: Optional[Iterable[str]] = None,
                    rate: Optional[int] = None) -> Audit:
        """Starts an audit of the RP at `url` (``POST /audits``; docs/audit.md) and answers at once:
        an :class:`~authctl_client.Audit` to follow, wait for or cancel. One of `preset` (e.g.
        ``"rp-server"``) and `profile` (the profile as a dict); `origin` in place of the profile's;
        `only`/`skip`: case or family names; `rate`: requests a second at most (default 50). At most
        four run at once on a server (a fifth is refused: HTTP 429)."""
        return _audit.start(self, url, preset=preset, profile=profile, origin=origin, only=only, skip=skip, rate=rate)

    def audit(self, url: str, *, preset: Optional[str] = None, profile: Optional[Mapping[str, Any]] = None,
              origin: Optional[str] = None, only: Optional[Iterable[str]] = None, skip: Optional[Iterable[str]] = None,
              rate: Optional[int] = None, timeout: float = 600.0) -> AuditReport:
        """Runs an audit (as :meth:`start_audit`) and waits for its report; raises
        :class:`~authctl_client.AuditFailed` when the RP could not be audited (``rpUnusable``) and
        ``TimeoutError`` after `timeout` seconds (the audit is then stopped). Findings are in the
        report: ``report.assert_no_findings()`` fails a test on them."""
        running = self.start_audit(url, preset=preset, profile=profile, origin=origin, only=only, skip=skip, rate=rate)
        try:
            return running.wait(timeout=timeout)
        except TimeoutError:
            running.cancel()
            raise

    def account(self, account_id: str) -> Account:
        """A handle on an account that exists already (e.g. ``"vault"``, served with ``--vault``)."""
        return Account(self, account_id)

    def __repr__(self) -> str:
        return f"<Server {getattr(self, 'url', '?')}>"
