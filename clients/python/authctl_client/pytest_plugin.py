"""pytest fixtures for ``authctl serve`` (loaded by the ``pytest11`` entry point once the package
is installed).

- ``authctl_server`` (session): one server for the whole run, stopped at its end (a test run
  fails if the server does not exit with status 0). Its accounts' vaults live under the run's
  temporary directory.
- ``authctl_account``: a fresh account with one device, ``phone``, PIN ``1234``; deleted after
  the test.
- ``passkey_device``: that account's ``phone``.
- ``authctl_audit``: runs ``authctl audit`` against an RP through the server and fails the test
  on a finding: ``authctl_audit("http://127.0.0.1:8000", profile=PROFILE)`` returns the report
  (``fail_on=None`` to only return it; ``"accepted"``, ``"server-error"`` or ``"any"``, the
  default, to fail on those).

The binary is ``--authctl-bin PATH``, else ``$AUTHCTL_BIN``, else ``authctl`` on ``PATH``.
"""
from __future__ import annotations

import os
import shutil
from typing import Any, Callable, Iterator, Optional

import pytest

from .account import Account
from .audit import AuditReport
from .device import Device
from .server import ENVIRONMENT_VARIABLE, Server


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("authctl", "authctl serve")
    group.addoption("--authctl-bin", action="store", default=None, metavar="PATH",
                    help=f"the authctl binary the authctl_server fixture runs (default ${ENVIRONMENT_VARIABLE}, "
                         "else authctl on PATH)")


def _binary(config: pytest.Config) -> str:
    chosen = config.getoption("--authctl-bin") or os.environ.get(ENVIRONMENT_VARIABLE) or shutil.which("authctl")
    if not chosen:
        pytest.fail(f"no authctl binary: give --authctl-bin PATH, set {ENVIRONMENT_VARIABLE}, or put authctl on PATH",
                    pytrace=False)
    return chosen


@pytest.fixture(scope="session")
def authctl_server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """One ``authctl serve`` for the test run, on a free loopback port; stopped (SIGTERM, exit
    status 0 expected) when the run ends."""
    scratch = tmp_path_factory.mktemp("authctl-serve")
    server = Server(_binary(request.config), env={"TMPDIR": str(scratch)})
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def authctl_account(authctl_server: Server) -> Iterator[Account]:
    """A fresh account with one device, ``phone``, PIN ``1234``; deleted after the test."""
    account = authctl_server.create_account(devices=[{"name": "phone", "pin": "1234"}])
    try:
        yield account
    finally:
        account.delete(missing_ok=True)


@pytest.fixture
def passkey_device(authctl_account: Account) -> Device:
    """The ``phone`` of ``authctl_account``."""
    return authctl_account.device("phone")


@pytest.fixture
def authctl_audit(authctl_server: Server) -> Callable[..., AuditReport]:
    """A function that audits the RP at a URL (the arguments of
    :meth:`~authctl_client.Server.audit`) and fails the test on its findings (``fail_on``:
    ``"any"`` by default, ``"accepted"``, ``"server-error"``, or ``None``); the report either way."""

    def run(url: str, *, fail_on: Optional[str] = "any", **options: Any) -> AuditReport:
        report = authctl_server.audit(url, **options)
        if fail_on is not None:
            __tracebackhide__ = True
            report.assert_no_findings(fail_on)
        return report

    return run
