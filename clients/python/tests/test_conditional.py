"""Conditional sign-in: the page's autofill request is pending until the person picks a passkey
from the list, or dismisses it."""
import threading

import pytest

from authctl_client import AuthctlError, CeremonyFailed
from relying_party import ORIGIN, authentication_options, client_data, registration_options, verify_authentication, verify_registration


def test_a_pick_from_the_autofill_list_signs_in(passkey_device):
    made = {}
    for user in ("alice", "bob"):
        options = registration_options(user=user)
        response = passkey_device.register(options, ORIGIN)
        made[user] = (response["id"], verify_registration(response, options))

    request = authentication_options()
    pending = passkey_device.begin_conditional_sign(request, ORIGIN)
    assert passkey_device.autofill_pending() and not pending.done
    pending.pick(credential_id=made["bob"][0])
    assertion = pending.result(timeout=120)
    assert assertion["id"] == made["bob"][0]
    verify_authentication(assertion, request, made["bob"][1])
    assert client_data(assertion)["type"] == "webauthn.get"
    assert not passkey_device.autofill_pending()

    request = authentication_options()
    pending = passkey_device.begin_conditional_sign(request, ORIGIN)
    pending.pick(user="alice")
    assertion = pending.result(timeout=120)
    verify_authentication(assertion, request, made["alice"][1])

    request = authentication_options()
    assertion = passkey_device.conditional_sign(request, ORIGIN, credential_id=made["alice"][0])
    assert assertion["id"] == made["alice"][0]
    verify_authentication(assertion, request, made["alice"][1])


def test_a_pick_that_names_a_request_is_taken_by_that_request_only(passkey_device, registered):
    request = authentication_options()
    page = {"id": "request-1", "page": "page-1", "url": ORIGIN + "/login"}
    pending = passkey_device.begin_conditional_sign(request, ORIGIN, request=page)
    with pytest.raises(AuthctlError) as other:
        passkey_device.autofill(user="alice", request="request-2", wait=0)
    assert other.value.status == 409 and not pending.done
    assert passkey_device.autofill(user="alice", request="request-1")["picked"]
    assertion = pending.result(timeout=120)
    verify_authentication(assertion, request, registered[1])


def test_a_dismissed_list_ends_when_its_timeout_passes(passkey_device, registered):
    # As in a browser, passing the autofill list by rejects nothing: the request stays pending
    # until its timeout, which passes at once on the server.
    pending = passkey_device.begin_conditional_sign(authentication_options(), ORIGIN)
    pending.cancel()
    with pytest.raises(CeremonyFailed) as dismissed:
        pending.result(timeout=120)
    assert (dismissed.value.name, dismissed.value.dom_exception) == ("timedOut", "NotAllowedError")
    assert not passkey_device.autofill_pending()


def test_other_connections_are_served_while_a_sign_in_is_pending(authctl_server, passkey_device, registered):
    """While a conditional sign-in is pending, requests from other threads, on keep-alive
    connections opened before it, are answered."""
    workers = 8
    connected = threading.Barrier(workers + 1, timeout=120)
    go = threading.Event()
    answers, failures = [], []

    def worker() -> None:
        try:
            authctl_server.health()  # this thread's keep-alive connection, opened before the sign-in
            connected.wait()
            assert go.wait(120)
            answers.append(authctl_server.transport.request("GET", "/health", timeout=30))
        except BaseException as error:  # noqa: BLE001 - reported by the test's thread
            failures.append(repr(error))
        finally:
            authctl_server.release_connection()

    threads = [threading.Thread(target=worker) for _ in range(workers)]
    for t in threads:
        t.start()
    connected.wait()
    request = authentication_options()
    pending = passkey_device.begin_conditional_sign(request, ORIGIN)
    go.set()
    for t in threads:
        t.join(120)
    assert not failures, failures
    assert answers == [{"status": "ok"}] * workers
    assert not pending.done
    pending.pick(credential_id=registered[0]["id"])
    verify_authentication(pending.result(timeout=120), request, registered[1])


def test_on_a_virtual_clock_the_sign_in_times_out_when_the_clock_passes_its_timeout(authctl_server):
    with authctl_server.create_account(clock="virtual") as account:
        phone = account.device("phone")
        phone.register(registration_options(), ORIGIN)
        request = authentication_options()
        request.timeout = 60000
        pending = phone.begin_conditional_sign(request, ORIGIN)
        account.clock.advance("59s")
        assert phone.autofill_pending() and not pending.done
        account.clock.advance("1s")
        with pytest.raises(CeremonyFailed) as timed_out:
            pending.result(timeout=120)
        assert timed_out.value.name == "timedOut"
        assert not phone.autofill_pending()


def test_the_sign_in_ends_when_its_account_does(authctl_server):
    account = authctl_server.create_account()
    phone = account.device("phone")
    phone.register(registration_options(), ORIGIN)
    pending = phone.begin_conditional_sign(authentication_options(), ORIGIN)
    account.delete()
    with pytest.raises(AuthctlError) as ended:
        pending.result(timeout=120)
    # The account's end cancels the request.
    assert (ended.value.status, ended.value.name, ended.value.dom_exception) == (422, "canceled", "NotAllowedError"), ended.value
    assert pending.done
