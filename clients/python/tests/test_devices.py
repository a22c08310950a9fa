"""An account's devices: added, listed, their PIN, their state, removed."""
import pytest
from webauthn.helpers.structs import UserVerificationRequirement

from authctl_client import CeremonyFailed, Device, NotFound
from relying_party import ORIGIN, authentication_options, registration_options, verify_authentication


def test_devices_are_added_listed_and_removed(authctl_account):
    assert [d.name for d in authctl_account.devices] == ["phone"]
    laptop = authctl_account.add_device("laptop", "9753")
    kiosk = authctl_account.add_device("kiosk")
    assert isinstance(laptop, Device) and laptop == authctl_account.device("laptop")
    assert [d.name for d in authctl_account.devices] == ["phone", "laptop", "kiosk"]
    assert laptop.info()["biometry"]["enrolled"] is True
    assert kiosk.info()["biometry"]["enrolled"] is False
    kiosk.remove()
    assert [d.name for d in authctl_account.devices] == ["phone", "laptop"]
    with pytest.raises(NotFound):
        kiosk.info()


def test_a_new_pin_is_the_one_the_person_types(passkey_device, registered):
    response, verified = registered
    answer = passkey_device.set_pin("8642", current_pin="1234")
    assert answer["deletedPasskeys"] == 0 and answer["device"]["name"] == "phone"
    request = authentication_options(uv=UserVerificationRequirement.REQUIRED)
    verify_authentication(passkey_device.sign(request, ORIGIN), request, verified, require_uv=True)
    with pytest.raises(CeremonyFailed) as refused:
        passkey_device.sign(authentication_options(uv=UserVerificationRequirement.REQUIRED), ORIGIN, pin="1234")
    assert refused.value.name == "failed"


def test_a_lockout_and_its_unlock(authctl_server):
    with authctl_server.create_account(devices=[{"name": "phone", "pin": "1234", "max_pin_attempts": 2}]) as account:
        phone = account.device("phone")
        phone.register(registration_options(), ORIGIN)
        request = authentication_options(uv=UserVerificationRequirement.REQUIRED)
        for _ in range(2):
            with pytest.raises(CeremonyFailed) as wrong:
                phone.sign(request, ORIGIN, user_action="wrong-pin")
            assert wrong.value.name == "failed"
        assert phone.info()["biometry"]["lockedOut"] is True
        with pytest.raises(CeremonyFailed) as locked:
            phone.sign(request, ORIGIN)
        assert locked.value.name == "biometryLockout"
        assert phone.unlock()["biometry"]["lockedOut"] is False
        phone.sign(authentication_options(uv=UserVerificationRequirement.REQUIRED), ORIGIN)


def test_a_device_without_passkey_support(passkey_device):
    assert passkey_device.set_passkeys_supported(False)["passkeysSupported"] is False
    with pytest.raises(CeremonyFailed) as refused:
        passkey_device.register(registration_options(), ORIGIN)
    assert (refused.value.name, refused.value.dom_exception) == ("passkeysNotSupported", "NotSupportedError")
    assert passkey_device.set_passkeys_supported(True)["passkeysSupported"] is True
    passkey_device.register(registration_options(), ORIGIN)


def test_capabilities(passkey_device):
    answer = passkey_device.capabilities()
    assert answer["isUserVerifyingPlatformAuthenticatorAvailable"] is True
    assert answer["isConditionalMediationAvailable"] is True
    assert answer["capabilities"]["conditionalGet"] is True


def test_a_reset_device_gets_the_passkeys_back_by_sync(authctl_server):
    with authctl_server.create_account(devices=[("phone", "1234"), ("laptop", "9753")], clock="virtual",
                                       sync={"upload": 0, "download": "10s"}) as account:
        phone, laptop = account.device("phone"), account.device("laptop")
        response = phone.register(registration_options(), ORIGIN)
        account.clock.advance("10s")
        assert laptop.has_passkey(response["id"])
        after_reset = laptop.reset()
        assert after_reset["passkeys"] == 0 and after_reset["biometry"]["enrolled"] is False
        assert not laptop.has_passkey(response["id"]) and phone.has_passkey(response["id"])
        account.clock.advance("10s")
        assert laptop.has_passkey(response["id"])
