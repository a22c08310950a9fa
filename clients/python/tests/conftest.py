"""Shared fixtures. ``authctl_server``, ``authctl_account`` and ``passkey_device`` come from the
package's pytest plugin (installed with the package)."""
import pytest

from relying_party import ORIGIN, registration_options, verify_registration


@pytest.fixture
def registered(passkey_device):
    """A passkey for alice on the phone: (response, py_webauthn's verified registration)."""
    options = registration_options()
    response = passkey_device.register(options, ORIGIN)
    return response, verify_registration(response, options)
