"""The virtual clock, sync between an account's devices, and the account's event stream."""
import datetime

import pytest

from authctl_client import BadRequest, EventStreamClosed
from relying_party import ORIGIN, RP_ID, authentication_options, registration_options, verify_authentication, verify_registration

START = datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc)
START_MS = int(START.timestamp() * 1000)


@pytest.fixture
def keychain(authctl_server):
    """A phone and a laptop on a virtual clock; uploads take 2 s, downloads 3 s."""
    with authctl_server.create_account(devices=[("phone", "1234"), ("laptop", "9753")],
                                       clock={"mode": "virtual", "start": START},
                                       sync={"upload": "2s", "download": "3s"}) as account:
        yield account


def test_the_laptop_holds_the_passkey_once_the_clock_passes_the_delays(keychain):
    phone, laptop = keychain.device("phone"), keychain.device("laptop")
    assert keychain.clock.now == START_MS and keychain.clock.mode == "virtual"
    with keychain.events() as events:
        options = registration_options()
        response = phone.register(options, ORIGIN)
        registered = verify_registration(response, options)
        added = events.wait_for("credentialAdded")
        assert (added["authenticatorId"], added["credential"]["credentialId"]) == ("phone", response["id"])

        # Nothing has moved the clock: the laptop does not hold it, nor can it sign with it.
        assert laptop.passkeys(rp_id=RP_ID) == []
        status = keychain.sync_status()
        [on_laptop] = [d for d in status["devices"] if d["name"] == "laptop"]
        assert [t["credentialId"] for t in on_laptop["pendingDownloads"]] == [response["id"]]
        assert on_laptop["pendingDownloads"][0]["at"] == START_MS + 5000

        assert keychain.clock.advance("2s") == START_MS + 2000
        landed = events.wait_for("syncLanded", lambda e: e["credentialId"] == response["id"])
        assert (landed["device"], landed["time"]) == ("phone", START_MS + 2000)
        assert keychain.clock.advance(datetime.timedelta(milliseconds=2999)) == START_MS + 4999
        assert not laptop.has_passkey(response["id"])

        keychain.clock.advance(1)
        arrived = events.wait_for("syncArrived", lambda e: e["device"] == "laptop")
        assert (arrived["credentialId"], arrived["removal"], arrived["time"]) == (response["id"], False, START_MS + 5000)
        assert arrived.id > landed.id > added.id
        assert laptop.has_passkey(response["id"])

        request = authentication_options()
        assertion = laptop.sign(request, ORIGIN)
        assert assertion["id"] == response["id"]
        verify_authentication(assertion, request, registered)
        asserted = events.wait_for("credentialAsserted")
        assert asserted["authenticatorId"] == "laptop"


def test_an_offline_device_waits_for_what_the_others_made(keychain):
    phone, laptop = keychain.device("phone"), keychain.device("laptop")
    assert laptop.offline()["online"] is False
    response = phone.register(registration_options(), ORIGIN)
    keychain.clock.advance("1m")
    assert not laptop.has_passkey(response["id"])
    with keychain.events() as events:
        assert laptop.online()["online"] is True
        keychain.clock.advance("2999ms")
        assert not laptop.has_passkey(response["id"])
        keychain.clock.advance("1ms")
        events.wait_for("syncArrived", lambda e: e["device"] == "laptop" and e["credentialId"] == response["id"])
    assert laptop.has_passkey(response["id"])


def test_a_deletion_syncs_too(keychain):
    phone, laptop = keychain.device("phone"), keychain.device("laptop")
    response = phone.register(registration_options(), ORIGIN)
    keychain.clock.advance("5s")
    assert laptop.has_passkey(response["id"])
    with keychain.events() as events:
        phone.delete_passkey(response["id"])
        deleted = events.wait_for("credentialDeleted")
        assert deleted["credential"]["credentialId"] == response["id"]
        assert laptop.has_passkey(response["id"])  # until the deletion arrives
        keychain.clock.advance("5s")
        gone = events.wait_for("syncArrived", lambda e: e["device"] == "laptop")
        assert gone["removal"] is True
    assert not laptop.has_passkey(response["id"])


def test_sync_settings(keychain):
    status = keychain.set_sync(download="30s", device="laptop")
    delays = {d["name"]: d["downloadDelay"] for d in status["devices"]}
    assert delays == {"phone": "3s", "laptop": "30s"}
    status = keychain.set_sync(upload="1s..5s", seed=7)
    assert (status["uploadDelay"], status["seed"]) == ("1s..5s", 7)
    with pytest.raises(BadRequest):
        keychain.set_sync(upload="soon")


def test_the_clock_is_set_and_a_real_one_refuses(keychain, authctl_account):
    assert keychain.clock.set("2030-06-01T12:00:00Z") == int(datetime.datetime(2030, 6, 1, 12, tzinfo=datetime.timezone.utc)
                                                              .timestamp() * 1000)
    assert keychain.clock.datetime == datetime.datetime(2030, 6, 1, 12, tzinfo=datetime.timezone.utc)
    later = datetime.datetime(2031, 1, 2, 3, 4, 5, 678000, tzinfo=datetime.timezone.utc)
    assert keychain.clock.set(later) == int(later.timestamp() * 1000)
    assert keychain.clock.get()["time"] == "2031-01-02T03:04:05.678Z"
    with pytest.raises(BadRequest):
        keychain.clock.set(START)  # a virtual clock does not go back
    assert authctl_account.clock.mode == "real"
    with pytest.raises(BadRequest) as refused:
        authctl_account.clock.advance("1s")
    assert refused.value.name == "usage"


def test_events_are_replayed_and_waits_end(authctl_server):
    account = authctl_server.create_account()
    phone = account.device("phone")
    with account.events() as first:
        made = [phone.register(registration_options(user=u), ORIGIN)["id"] for u in ("alice", "bob")]
        one = first.wait_for("credentialAdded")
        two = first.wait_for("credentialAdded")
        assert [one["credential"]["credentialId"], two["credential"]["credentialId"]] == made
        with pytest.raises(TimeoutError):
            first.wait_for("credentialAdded", timeout=0.5)  # each event is returned once
    # A later stream gets the kept events again; after=ID skips those up to ID.
    with account.events() as again:
        assert again.wait_for("credentialAdded").id == one.id
    with account.events(after=one.id) as later:
        assert later.wait_for("credentialAdded").id == two.id
        account.delete()
        with pytest.raises(EventStreamClosed):
            later.wait_for("credentialDeleted", timeout=60)
        assert later.closed


def test_the_recorded_events_are_read_at_once(authctl_account):
    assert authctl_account.recorded_events() == []  # the recording starts here
    phone = authctl_account.device("phone")
    response = phone.register(registration_options(), ORIGIN)
    phone.sign(authentication_options(), ORIGIN)
    phone.set_backup_flags(response["id"], backup_state=False)
    recorded = authctl_account.recorded_events()
    assert [e.name for e in recorded] == ["credentialAdded", "credentialAsserted", "credentialUpdated"]
    assert {e["credential"]["credentialId"] for e in recorded} == {response["id"]}
    assert recorded[2]["credential"]["backupState"] is False
    assert authctl_account.recorded_events(after=recorded[0].id) == recorded[1:]
