"""A client for ``authctl serve``: a software passkey platform authenticator over HTTP, for
test suites that need a user with a phone and a laptop.

::

    from authctl_client import Server

    with Server() as server, server.create_account() as account:
        phone = account.device("phone")
        response = phone.register(creation_options, "https://example.com")   # RegistrationResponseJSON

See the README for the whole API and the pytest fixtures (``authctl_server``, ``authctl_account``,
``passkey_device``, ``authctl_audit``).
"""
from ._convert import b64url, camel, unb64url
from .account import Account, Clock
from .audit import Audit, AuditFailed, AuditFindings, AuditReport
from .device import NO_COUNTER, Device, PendingSignIn
from .errors import (AuthctlError, BadRequest, CeremonyFailed, Conflict, EventStreamClosed, MethodNotAllowed, NotFound,
                     PayloadTooLarge, ServerFailure, ServerProcessError, Unauthorized)
from .events import Event, EventStream
from .server import Server, find_binary

__version__ = "0.1.0"

__all__ = [
    "Account", "Audit", "AuditFailed", "AuditFindings", "AuditReport", "AuthctlError", "BadRequest", "CeremonyFailed", "Clock", "Conflict", "Device", "Event", "EventStream",
    "EventStreamClosed", "MethodNotAllowed", "NO_COUNTER", "NotFound", "PayloadTooLarge", "PendingSignIn", "Server", "ServerFailure",
    "ServerProcessError", "Unauthorized", "b64url", "camel", "find_binary", "unb64url",
]
