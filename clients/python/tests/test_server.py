"""The server process and the HTTP layer: starting and stopping, the token, a Unix socket,
keep-alive connections, and errors as AuthctlError."""
import os
import signal
import socket
import stat
import threading

import pytest

from authctl_client import (AuthctlError, MethodNotAllowed, NotFound, PayloadTooLarge, Server, ServerProcessError,
                            Unauthorized, camel, find_binary)
from authctl_client._convert import body
from relying_party import ORIGIN, authentication_options, registration_options, verify_authentication, verify_registration


@pytest.fixture
def binary(authctl_server):
    """The binary the run's server runs (from --authctl-bin, $AUTHCTL_BIN or PATH)."""
    return authctl_server.binary


@pytest.fixture
def scratch(tmp_path):
    """A TMPDIR of the test's own for the servers it starts: what they leave is seen."""
    path = tmp_path / "tmp"
    path.mkdir()
    return path


def test_a_server_on_a_unix_socket_with_a_token_file(binary, tmp_path, scratch):
    place, token_file = tmp_path / "authctl.sock", tmp_path / "token"
    with Server(binary, socket=str(place), token_file=str(token_file), env={"TMPDIR": str(scratch)}) as server:
        assert server.url == f"unix:{place}"
        assert server.token == token_file.read_text().strip() and len(server.token) >= 32
        assert stat.S_IMODE(os.stat(token_file).st_mode) == 0o600
        assert server.health() == {"status": "ok"}
        with server.create_account() as account:
            phone = account.device("phone")
            options = registration_options()
            registered = verify_registration(phone.register(options, ORIGIN), options)
            request = authentication_options()
            verify_authentication(phone.sign(request, ORIGIN), request, registered)
            assert os.listdir(scratch), "the account's vault directory is under the server's TMPDIR"
    assert server.process.returncode == 0
    assert not place.exists() and os.listdir(scratch) == []
    # The token file is kept and used again; the vaults go where --scratch says.
    elsewhere = tmp_path / "scratch"
    elsewhere.mkdir()
    with Server(binary, listen="127.0.0.1:0", token_file=str(token_file), scratch=str(elsewhere)) as again:
        assert again.url.startswith("http://127.0.0.1:") and again.token == server.token
        with again.create_account():
            assert len(os.listdir(elsewhere)) == 1
    assert os.listdir(elsewhere) == []


def test_a_server_started_elsewhere(authctl_server):
    other = Server.connect(authctl_server.url, authctl_server.token)
    with other.create_account(devices=[("phone", "1234")]) as account:
        assert authctl_server.account(account.id).info()["devices"][0]["name"] == "phone"
    other.stop()  # closes its connections only
    assert authctl_server.health() == {"status": "ok"} and authctl_server.running

    with pytest.raises(Unauthorized) as refused:
        Server.connect(authctl_server.url, "not the token").create_account()
    assert (refused.value.status, refused.value.name) == (401, "unauthorized")
    assert Server.connect(authctl_server.url, None).health() == {"status": "ok"}  # no token needed


def test_errors_carry_the_problem(authctl_server):
    with pytest.raises(MethodNotAllowed) as refused:
        authctl_server.request("PUT", "/accounts")
    assert refused.value.status == 405 and refused.value.problem["status"] == 405
    with pytest.raises(NotFound) as missing:
        authctl_server.account("no-such-account").clock.now
    assert missing.value.name == "usage" and "no-such-account" in str(missing.value)
    with pytest.raises(PayloadTooLarge):
        authctl_server.request("POST", "/accounts", {"padding": "x" * (2 << 20)})
    # The connection the server closed after that is replaced.
    assert authctl_server.health() == {"status": "ok"}
    with pytest.raises(AuthctlError) as bad:
        authctl_server.create_account(devices=[{"name": "phone", "colour": "red"}])
    assert bad.value.status == 400 and "colour" in bad.value.detail


def test_a_thread_keeps_its_connection(authctl_server):
    transport = authctl_server.transport
    authctl_server.health()
    first = transport._local.slot.connection.sock
    for _ in range(5):
        authctl_server.health()
    assert transport._local.slot.connection.sock is first
    other = []
    worker = threading.Thread(target=lambda: (authctl_server.health(), other.append(transport._local.slot.connection.sock),
                                              authctl_server.release_connection()))
    worker.start()
    worker.join(60)
    assert other and other[0] is not first
    # A connection that went away under it is replaced, and the request sent again.
    first.shutdown(socket.SHUT_RDWR)
    assert authctl_server.health() == {"status": "ok"}
    assert transport._local.slot.connection.sock is not first


def test_stop_says_when_the_server_did_not_exit_0(binary, scratch):
    server = Server(binary, env={"TMPDIR": str(scratch)})
    server.process.send_signal(signal.SIGKILL)
    with pytest.raises(ServerProcessError) as failed:
        server.stop()
    assert failed.value.returncode == -signal.SIGKILL
    server.stop()  # once is enough


def test_a_server_that_cannot_start_says_why(binary, scratch):
    with pytest.raises(ServerProcessError) as failed:
        Server(binary, args=["--threads", "0"], env={"TMPDIR": str(scratch)})
    assert failed.value.returncode == 64 and "--threads" in failed.value.stderr


def test_the_binary_is_found(monkeypatch):
    monkeypatch.setenv("AUTHCTL_BIN", "/opt/authctl/bin/authctl")
    assert find_binary() == "/opt/authctl/bin/authctl"
    assert find_binary("/elsewhere/authctl") == "/elsewhere/authctl"
    monkeypatch.delenv("AUTHCTL_BIN")
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(FileNotFoundError):
        find_binary()


def test_names_and_values_as_the_api_takes_them():
    assert [camel(n) for n in ("user_action", "top_origin", "credential_id", "max_pin_attempts", "rp_id",
                               "backup_state_immediate", "recent_password_sign_in", "userAction", "pin")] == [
        "userAction", "topOrigin", "credentialId", "maxPINAttempts", "rpId", "backupStateImmediate",
        "recentPasswordSignIn", "userAction", "pin"]
    import datetime
    assert body(user_handle=b"\xff\x00", wait=datetime.timedelta(seconds=1.5), start=datetime.datetime(2026, 1, 1),
                pin=None) == {"userHandle": "_wA", "wait": 1500, "start": "2026-01-01T00:00:00.000Z"}
