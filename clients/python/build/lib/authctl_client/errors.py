"""The errors the client raises.

A request the server answers with a status outside 2xx raises an :class:`AuthctlError` (a
subclass per status) carrying the members of its ``application/problem+json`` body: ``name`` (the
row of docs/errors.md, e.g. ``notHandled``), ``dom_exception`` (what a browser would throw, e.g.
``NotAllowedError``), ``ctap_status``, ``detail``, ``title``, ``type``, and the body itself as
``problem``.
"""
from __future__ import annotations

from typing import Any, Dict, Optional, Type


class AuthctlError(Exception):
    """An answer of the server outside 2xx, with its problem details (RFC 9457)."""

    def __init__(self, status: int, problem: Optional[Dict[str, Any]] = None, *, method: str = "", path: str = "",
                 text: str = ""):
        self.status = status
        self.problem: Dict[str, Any] = dict(problem or {})
        self.method = method
        self.path = path
        self.name: Optional[str] = self.problem.get("name")
        self.dom_exception: Optional[str] = self.problem.get("domException")
        self.ctap_status: Optional[int] = self.problem.get("ctapStatus")
        self.detail: Optional[str] = self.problem.get("detail") or (text or None)
        self.title: Optional[str] = self.problem.get("title")
        self.type: Optional[str] = self.problem.get("type")
        super().__init__(self._message())

    def _message(self) -> str:
        where = f"{self.method} {self.path}: " if self.method else ""
        parts = [f"HTTP {self.status}"]
        if self.name:
            parts.append(self.name)
        if self.dom_exception:
            parts.append(f"({self.dom_exception})")
        text = " ".join(parts)
        return f"{where}{text}: {self.detail}" if self.detail else f"{where}{text}"

    # The members under the API's own names, for code that reads them as the JSON spells them.
    @property
    def domException(self) -> Optional[str]:  # noqa: N802
        return self.dom_exception

    @property
    def ctapStatus(self) -> Optional[int]:  # noqa: N802
        return self.ctap_status


class BadRequest(AuthctlError):
    """400: the request's own mistake (``badInput``, ``syntaxError``, ``encodingError``, ``usage``)."""


class Unauthorized(AuthctlError):
    """401: no bearer token, or another one."""


class NotFound(AuthctlError):
    """404: no such account, device, passkey or route."""


class MethodNotAllowed(AuthctlError):
    """405: the path exists, the method is not one of its (``Allow`` lists them)."""


class Conflict(AuthctlError):
    """409: busy or in conflict (a vault in use, no conditional sign-in pending, one pending already)."""


class PayloadTooLarge(AuthctlError):
    """413: a body over 1 MiB."""


class CeremonyFailed(AuthctlError):
    """422: a ceremony's outcome: ``canceled``, ``notHandled``, ``timedOut``, ``matchedExcludedCredential`` ..."""


class ServerFailure(AuthctlError):
    """5xx: the server's own failure, or a vault's."""


_BY_STATUS: Dict[int, Type[AuthctlError]] = {
    400: BadRequest, 401: Unauthorized, 404: NotFound, 405: MethodNotAllowed, 409: Conflict,
    413: PayloadTooLarge, 422: CeremonyFailed,
}


def error_for(status: int, problem: Optional[Dict[str, Any]], *, method: str = "", path: str = "",
              text: str = "") -> AuthctlError:
    """The error for an answer with `status` and problem body `problem`."""
    cls = _BY_STATUS.get(status) or (ServerFailure if status >= 500 else AuthctlError)
    return cls(status, problem, method=method, path=path, text=text)


class ServerProcessError(RuntimeError):
    """The ``authctl serve`` process did not start, or did not stop with exit status 0."""

    def __init__(self, message: str, *, returncode: Optional[int] = None, stderr: str = ""):
        self.returncode = returncode
        self.stderr = stderr
        if stderr.strip():
            message = f"{message}\n--- stderr ---\n{stderr.rstrip()}"
        super().__init__(message)


class EventStreamClosed(Exception):
    """The account's event stream ended (the account ended, the server stopped, or it was closed)."""
