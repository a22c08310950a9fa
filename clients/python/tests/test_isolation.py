"""32 workers on threads, each with an account of its own on one server, at once: none ever sees
another's passkeys, and each thread's keep-alive connection carries its requests."""
import threading

import pytest

from authctl_client import CeremonyFailed, NotFound
from relying_party import ORIGIN, RP_ID, authentication_options, registration_options, verify_authentication, verify_registration

WORKERS = 32
DEADLINE = 240.0


def test_parallel_accounts_never_see_each_others_passkeys(authctl_server):
    start = threading.Barrier(WORKERS, timeout=DEADLINE)
    registered_all = threading.Barrier(WORKERS, timeout=DEADLINE)
    ids = [None] * WORKERS
    failures = []

    def worker(n: int) -> None:
        try:
            user = f"user-{n}"
            with authctl_server.create_account(devices=[("phone", "1234")]) as account:
                phone = account.device("phone")
                start.wait()
                for round_ in range(3):
                    options = registration_options(user=f"{user}-{round_}")
                    response = phone.register(options, ORIGIN)
                    registered = verify_registration(response, options)
                    request = authentication_options()
                    assertion = phone.sign(request, ORIGIN, credential_id=response["id"])
                    verify_authentication(assertion, request, registered)
                ids[n] = response["id"]
                held = phone.passkeys()
                assert sorted(p["userName"] for p in held) == [f"{user}-{r}" for r in range(3)], held
                assert all(p["rpId"] == RP_ID for p in held)
                registered_all.wait()
                # Every other worker's passkey exists now: none of them is on this account.
                others = [i for k, i in enumerate(ids) if k != n]
                assert not {p["id"] for p in phone.passkeys()} & set(others)
                try:
                    phone.sign(authentication_options(allow=others[:8]), ORIGIN)
                except CeremonyFailed as refused:
                    assert refused.name == "notHandled", refused
                else:
                    raise AssertionError("signed with another account's passkey")
        except BaseException as error:  # noqa: BLE001 - reported by the test's thread
            failures.append((n, repr(error)))
            start.abort()
            registered_all.abort()
        finally:
            authctl_server.release_connection()

    threads = [threading.Thread(target=worker, args=(n,), name=f"worker-{n}") for n in range(WORKERS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(DEADLINE)
    assert not [t.name for t in threads if t.is_alive()], "workers still running after the deadline"
    assert not failures, failures
    assert len(set(ids)) == WORKERS and all(isinstance(i, str) and len(i) >= 16 for i in ids)


def test_an_ended_account_is_gone(authctl_server):
    account = authctl_server.create_account()
    phone = account.device("phone")
    response = phone.register(registration_options(), ORIGIN)
    assert phone.has_passkey(response["id"])
    account.delete()
    with pytest.raises(NotFound):
        phone.passkeys()
    with pytest.raises(NotFound):
        account.delete()
    account.delete(missing_ok=True)
    with authctl_server.create_account() as other:
        assert other.device("phone").passkeys() == []
        with pytest.raises(CeremonyFailed) as refused:
            other.device("phone").sign(authentication_options(allow=[response["id"]]), ORIGIN)
        assert refused.value.name == "notHandled"
