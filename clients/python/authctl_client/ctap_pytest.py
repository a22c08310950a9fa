"""A pytest plugin that lets a test suite written for USB security keys drive authctl's keys
unchanged: loaded with ``pytest -p authctl_client.ctap_pytest``, it calls
``authctl_client.ctap.install()`` before any conftest or test module is imported, so
``fido2.hid``'s discovery (``list_descriptors``, ``open_device``, ``CtapHidDevice.list_devices()``)
finds the keys ``$AUTHCTL_CTAP`` names beside the OS's hidraw devices.

It is not registered as an entry point: a run names it on purpose, as python-fido2's device tests
are run against ``authctl ctap serve``::

    AUTHCTL_CTAP=unix:/tmp/key.sock pytest tests/device --controller http://127.0.0.1:PORT \\
        -p authctl_client.ctap_pytest
"""
from __future__ import annotations

import os

from . import ctap

ctap.install()


def pytest_report_header(config) -> str:
    named = os.environ.get(ctap.ENVIRONMENT_VARIABLE)
    return f"authctl security keys ({ctap.ENVIRONMENT_VARIABLE}): {named or 'none named'}"
