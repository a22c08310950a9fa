"""What an adversarial probe found, each as a test on the built binary: no signal exits, no lost
passkeys, no files planted by others followed, no secret left behind. Numbers are the findings'."""
import hashlib
import json
import os
import pathlib
import pty
import pwd
import select
import shutil
import signal
import stat
import subprocess
import tempfile
import termios
import time

import pytest

from conftest import BIN, PASSPHRASE, PIN, log_file, wait_until, wait_until_prompting

ORIGIN = "https://example.com"
GOOD = {"rp": {"id": "example.com", "name": "Example"}, "user": {"id": "dXNlcg", "name": "u", "displayName": "U"},
        "challenge": "Y2hhbGxlbmdlLWNoYWxsZW5nZQ", "pubKeyCredParams": [{"type": "public-key", "alg": -7}],
        "authenticatorSelection": {"userVerification": "discouraged"}}
ROOT_ONLY = pytest.mark.skipif(os.geteuid() != 0, reason="needs root to act as another user")


def expect(result, name, code):
    assert (result.code, result.stdout) == (code, ""), (result.code, result.stderr)
    assert f"{name}: " in result.stderr, result.stderr


def shell(authctl, script, **kw):
    """Runs a bash script with `$A` the binary and the vault's environment."""
    env = dict(authctl.env, A=BIN)
    return subprocess.run(["bash", "-c", script], env=env, capture_output=True, text=True, timeout=60, **kw)


# 1. Options input: no crash, a named error, a documented limit.

@pytest.mark.parametrize("redirect", ["< /tmp", "<&-", "< /proc/self/mem"])
def test_unreadable_stdin_is_bad_input_not_a_crash(authctl, redirect):
    result = shell(authctl, f'$A register --origin {ORIGIN} --options - {redirect}; echo "exit $?"')
    assert result.stdout.strip().endswith("exit 65"), result.stdout + result.stderr
    assert "authctl: error: badInput: " in result.stderr and "Fatal error" not in result.stderr
    assert authctl.listing() == []


def test_options_larger_than_the_limit_are_refused(authctl, tmp_path):
    big = tmp_path / "big.json"
    big.write_bytes(b'{"x":"' + b"a" * (2 << 20) + b'"}')
    for args, stdin in ((["--options", str(big)], None), (["--options", "-"], big.read_text())):
        result = authctl.run("register", "--origin", ORIGIN, *args, stdin=stdin or "")
        expect(result, "badInput", 65)
        assert "1048576 bytes" in result.stderr
    expect(authctl.run("register", "--origin", ORIGIN, "--options", str(tmp_path)), "badInput", 65)


# 2. A response that cannot be written is an ioError, never a signal; the docs say what the vault holds.

def test_a_full_disk_for_the_response_is_an_io_error_and_the_passkey_is_kept(authctl):
    result = shell(authctl, f'$A register --origin {ORIGIN} > /dev/full; echo "exit $?"')
    assert result.stdout.strip() == "exit 74", result.stderr
    assert "ioError" in result.stderr and "passkey is stored" in result.stderr
    assert len(authctl.listing()) == 1


def run_with_broken_pipe(args, env, stream):
    """Runs authctl with stdout or stderr a pipe whose reading end is already closed."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        where = {"stdout": write_end} if stream == "stdout" else {"stderr": write_end, "stdout": subprocess.DEVNULL}
        proc = subprocess.run([BIN, *args], env=env, stdin=subprocess.DEVNULL, timeout=60, **where)
    finally:
        os.close(write_end)
    return proc.returncode


def test_a_closed_pipe_is_an_io_error_not_sigpipe(authctl):
    authctl.run("register", "--origin", ORIGIN, "--sign-counter").json
    code = run_with_broken_pipe(["sign", "--origin", ORIGIN], authctl.env, "stdout")
    assert code == 74, code
    assert authctl.listing()[0]["signCount"] == 1  # the counter advanced, as the docs say
    assert run_with_broken_pipe(["list"], authctl.env, "stdout") == 74
    # A failing command whose stderr is a closed pipe: its exit code, not SIGPIPE.
    assert run_with_broken_pipe(["frobnicate"], authctl.env, "stderr") == 64


def test_a_file_size_limit_is_an_io_error_not_sigxfsz(authctl):
    result = shell(authctl, f'ulimit -f 0; $A register --origin {ORIGIN} > /dev/null; echo "exit $?"')
    assert result.stdout.strip() == "exit 74", result.stdout + result.stderr  # the vault's own append hits the limit
    assert authctl.listing() == []


def test_a_closed_stdout_fails_before_anything_is_done(authctl):
    before = authctl.snapshot()
    result = shell(authctl, f'$A register --origin {ORIGIN} >&-; echo "exit $?" >&2')
    assert result.stderr.strip().endswith("exit 74"), result.stderr
    assert "stdout is closed" in result.stderr
    assert authctl.snapshot() == before


# 3. Ctrl-C or SIGTERM at a hidden prompt leaves the terminal as it was.

def spawn_on_terminal(args, env):
    pid, fd = pty.fork()
    if pid == 0:
        os.execve(BIN, [BIN, *args], env)
    return pid, fd


def read_until(fd, marker, timeout=60.0):
    seen = b""
    deadline = time.monotonic() + timeout
    while marker not in seen and time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                break
            if not chunk:
                break
            seen += chunk
    return seen


def wait_exit(pid, fd):
    read_until(fd, b"\x00")  # drain until it closes the terminal
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


@pytest.mark.parametrize("how", ["ctrl-c", "sigterm", "sighup"])
def test_an_interrupted_prompt_restores_echo(authctl, how):
    env = {k: v for k, v in authctl.env.items() if k != "AUTHCTL_PASSPHRASE"}
    pid, fd = spawn_on_terminal(["list"], env)
    assert b"Vault passphrase for" in read_until(fd, b": ")
    assert not termios.tcgetattr(fd)[3] & termios.ECHO  # echo is off while it waits
    if how == "ctrl-c":
        os.write(fd, b"\x03")
    else:
        os.kill(pid, signal.SIGTERM if how == "sigterm" else signal.SIGHUP)
    code = wait_exit(pid, fd)
    assert code == 10, code  # canceled: a named error, not a signal exit
    assert termios.tcgetattr(fd)[3] & termios.ECHO
    os.close(fd)


def catches(pid: int, number: int) -> bool:
    """Whether process `pid` has a handler for signal `number` (its SigCgt mask)."""
    for line in pathlib.Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("SigCgt:"):
            return bool(int(line.split()[1], 16) >> (number - 1) & 1)
    return False


@pytest.mark.parametrize("command, number", [("sign", signal.SIGTERM), ("sign", signal.SIGINT), ("sign", signal.SIGHUP),
                                             ("register", signal.SIGTERM)])
def test_a_signal_while_a_timeout_passes_in_real_time_is_canceled_and_the_vault_intact(authctl, command, number):
    # --user-action timeout without --instant-timeout waits the options' timeout out in real time
    # (10 minutes here): a signal meanwhile ends it as canceled, with nothing written.
    registered = authctl.register(GOOD, ORIGIN)
    assert registered.code == 0, registered.stderr
    before = authctl.snapshot(), authctl.state()
    options = dict(GOOD, timeout=600_000) if command == "register" else {"challenge": "Y2hhbGxlbmdlLWNoYWxsZW5nZQ", "timeout": 600_000}
    proc = subprocess.Popen([BIN, command, "--origin", ORIGIN, "--options", "-", "--user-action", "timeout"], env=authctl.env,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        proc.stdin.write(json.dumps(options))
        proc.stdin.close()
        wait_until_prompting(authctl.vault, proc)

        def waiting():
            assert proc.poll() is None, f"it ended ({proc.returncode}) before its timeout: {proc.stderr.read()}"
            return catches(proc.pid, number)
        wait_until(waiting, "the ceremony waits its timeout out, catching the signal")
        os.kill(proc.pid, number)
        code = proc.wait(timeout=60)
        stdout, stderr = proc.stdout.read(), proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert (code, stdout) == (10, ""), (code, stderr)  # canceled: a named error, not a signal exit
    assert stderr.startswith("authctl: error: canceled: interrupted by signal") and stderr.count("\n") == 1, stderr
    assert (authctl.snapshot(), authctl.state()) == before
    assert authctl.run("vault", "check").code == 0


def test_a_typed_passphrase_works(authctl):
    env = {k: v for k, v in authctl.env.items() if k != "AUTHCTL_PASSPHRASE"}
    pid, fd = spawn_on_terminal(["list", "--json"], env)
    read_until(fd, b": ")
    os.write(fd, PASSPHRASE.encode() + b"\n")
    out = read_until(fd, b"}")
    assert wait_exit(pid, fd) == 0 and b'"credentials"' in out
    os.close(fd)


# 4. A faulted ceremony leaves the vault as it was.

def test_a_faulted_registration_keeps_the_working_passkey(authctl):
    first = authctl.register(GOOD, ORIGIN).json["id"]
    before = authctl.listing()
    for fault in ("bad-cbor", "wrong-challenge", "up-cleared"):
        result = authctl.register(GOOD, ORIGIN, "--fault", fault)
        assert result.code == 0 and "fault injected" in result.stderr
        assert authctl.listing() == before, fault
    assert authctl.sign({"challenge": "c2lnbg", "rpId": "example.com"}, ORIGIN).json["id"] == first


def test_a_faulted_sign_in_leaves_the_counter(authctl):
    authctl.run("register", "--origin", ORIGIN, "--sign-counter").json
    authctl.run("sign", "--origin", ORIGIN).json
    for fault in ("bad-signature", "counter-regress", "wrong-origin"):
        assert authctl.run("sign", "--origin", ORIGIN, "--fault", fault).code == 0
        assert authctl.listing()[0]["signCount"] == 1, fault


# 5. Only files the vault made are ever removed.

def test_files_that_merely_look_like_logs_survive_every_writer(authctl):
    authctl.run("register", "--origin", ORIGIN).json
    strangers = {"log.0.bak": b"backup", "log.txt": b"notes", "log.7": b"not ours"}
    for name, data in strangers.items():
        (authctl.vault / name).write_bytes(data)
        os.chmod(authctl.vault / name, 0o600)
    authctl.run("register", "--origin", ORIGIN, "--user-id", "Yg").json
    assert authctl.run("vault", "compact").code == 0
    assert authctl.run("vault", "passwd", env={"AUTHCTL_NEW_PASSPHRASE": "another"}).code == 0
    for name, data in strangers.items():
        assert (authctl.vault / name).read_bytes() == data, name


# 6. An unfinished init can be run again; losers of a race get vaultExists.

def test_init_runs_again_over_what_a_killed_init_left(tmp_path, authctl):
    target = tmp_path / "half"
    target.mkdir(mode=0o700)
    for name in ("log.0.tmp", "commit.tmp", "header.tmp", "lock", "writer"):
        (target / name).write_bytes(b"partial")
        os.chmod(target / name, 0o600)
    result = authctl.run("init", "--kdf", "min", env={"AUTHCTL_VAULT": str(target)})
    assert result.code == 0, result.stderr


def test_parallel_inits_one_wins_the_rest_get_vault_exists(tmp_path, authctl):
    env = dict(authctl.env, AUTHCTL_VAULT=str(tmp_path / "raced"))
    procs = [subprocess.Popen([BIN, "init", "--kdf", "min"], env=env, stdin=subprocess.DEVNULL,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in range(8)]
    codes = sorted(p.wait(timeout=60) for p in procs)
    assert codes == [0] + [23] * 7, codes


# 7. Secrets: typed twice when new, never cut short, never empty; a vault never lands in the cwd.

def test_init_asks_twice_and_refuses_a_mismatch(tmp_path, authctl):
    env = {k: v for k, v in authctl.env.items() if k not in ("AUTHCTL_PASSPHRASE", "AUTHCTL_PIN")}
    env["AUTHCTL_VAULT"] = str(tmp_path / "typed")
    pid, fd = spawn_on_terminal(["init", "--kdf", "min", "--no-biometry"], env)
    read_until(fd, b": ")
    os.write(fd, b"first passphrase\n")
    read_until(fd, b"confirm: ")
    os.write(fd, b"frist passphrase\n")
    assert wait_exit(pid, fd) == 65
    os.close(fd)
    assert not (tmp_path / "typed" / "header").exists()


def test_a_long_typed_passphrase_is_kept_whole(tmp_path, authctl):
    long = "p" * 3000
    env = {k: v for k, v in authctl.env.items() if k not in ("AUTHCTL_PASSPHRASE", "AUTHCTL_PIN")}
    env["AUTHCTL_VAULT"] = str(tmp_path / "long")
    pid, fd = spawn_on_terminal(["init", "--kdf", "min", "--no-biometry"], env)
    for prompt in (b": ", b"confirm: "):
        read_until(fd, prompt)
        os.write(fd, long.encode() + b"\n")
    assert wait_exit(pid, fd) == 0
    os.close(fd)
    # The same passphrase from the environment opens it: nothing was cut at 1,024 bytes.
    assert authctl.run("list", env={"AUTHCTL_VAULT": str(tmp_path / "long"), "AUTHCTL_PASSPHRASE": long}).code == 0
    too_long = authctl.run("list", env={"AUTHCTL_VAULT": str(tmp_path / "long"), "AUTHCTL_PASSPHRASE": "p" * 5000})
    expect(too_long, "badInput", 65)


def test_an_empty_passphrase_is_refused_by_init_as_by_passwd(tmp_path, authctl):
    env = {"AUTHCTL_VAULT": str(tmp_path / "empty"), "AUTHCTL_PASSPHRASE": ""}
    expect(authctl.run("init", "--kdf", "min", env=env), "badInput", 65)
    assert not (tmp_path / "empty" / "header").exists()


def test_without_home_the_vault_is_not_in_the_current_directory(tmp_path, authctl):
    """Relative HOME and XDG_DATA_HOME are ignored (they would name the current directory); the
    home comes from the user database then. The test's own HOME and user stand in for the real
    ones, so what the machine's real home holds changes nothing."""
    env = {k: v for k, v in authctl.env.items() if k not in ("AUTHCTL_VAULT", "HOME", "XDG_DATA_HOME")}
    home = tmp_path / "given-home"
    home.mkdir()
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    for given in ({"HOME": str(home)}, {"HOME": str(home), "XDG_DATA_HOME": "data"}):
        result = subprocess.run([BIN, "list"], env=dict(env, **given), cwd=cwd, capture_output=True, text=True, timeout=30)
        assert result.returncode == 22, result.stderr
        assert f"no vault at {home}/.local/share/authctl" in result.stderr, result.stderr
    xdg = tmp_path / "xdg"
    result = subprocess.run([BIN, "list"], env=dict(env, HOME="home", XDG_DATA_HOME=str(xdg)), cwd=cwd,
                            capture_output=True, text=True, timeout=30)
    assert result.returncode == 22 and f"no vault at {xdg}/authctl" in result.stderr, result.stderr
    assert list(cwd.iterdir()) == [] and list(home.iterdir()) == []


@ROOT_ONLY
def test_without_any_home_in_the_environment_the_user_database_names_it(tmp_path, authctl):
    """No usable HOME (absent or relative): `nobody`'s home from the user database, not the
    current directory (a user of the test's choosing, so the real user's home plays no part)."""
    env = {k: v for k, v in authctl.env.items() if k not in ("AUTHCTL_VAULT", "HOME", "XDG_DATA_HOME")}
    cwd = tmp_path / "cwd"
    cwd.mkdir(mode=0o777)
    os.chmod(cwd, 0o777)
    as_nobody = ["setpriv", f"--reuid={nobody().pw_uid}", f"--regid={nobody().pw_gid}", "--clear-groups", BIN]
    expected = nobody().pw_dir + "/.local/share/authctl"
    assert not os.path.exists(expected)
    for given in ({}, {"HOME": "home", "XDG_DATA_HOME": "data"}):
        result = subprocess.run(as_nobody + ["list"], env=dict(env, **given), cwd=cwd, capture_output=True, text=True,
                                timeout=30)
        assert result.returncode == 22, result.stderr
        assert f"no vault at {expected}" in result.stderr, result.stderr
    assert list(cwd.iterdir()) == []


# 8. Another user's directory, a world-writable one, and a planted symlink.

def nobody():
    return pwd.getpwnam("nobody")


@ROOT_ONLY
def test_init_refuses_a_directory_another_user_owns(tmp_path, authctl):
    planted = tmp_path / "theirs"
    planted.mkdir()
    os.chmod(planted, 0o777)
    os.chown(planted, nobody().pw_uid, nobody().pw_gid)
    result = authctl.run("init", "--kdf", "min", env={"AUTHCTL_VAULT": str(planted)})
    expect(result, "vaultInsecure", 25)
    st = planted.stat()
    assert (st.st_uid, stat.S_IMODE(st.st_mode), list(planted.iterdir())) == (nobody().pw_uid, 0o777, [])



@ROOT_ONLY
def test_another_users_vault_is_insecure_not_missing_and_so_is_a_file_of_theirs_in_yours(authctl):
    """A vault is found by whoever cannot read it: another user's vault directory is
    vaultInsecure (its owner named), never vaultNotFound, which would invite an init; a directory
    that cannot even be reached is ioError. In one's own vault, a file another user owns and keeps
    unreadable is vaultInsecure too, as it is when readable, never an ioError."""
    as_nobody = ["setpriv", f"--reuid={nobody().pw_uid}", f"--regid={nobody().pw_gid}", "--clear-groups", BIN]
    env = {k: v for k, v in authctl.env.items() if k != "AUTHCTL_VAULT"}
    open_dir = pathlib.Path(tempfile.mkdtemp(prefix="authctl-others-"))
    try:
        os.chmod(open_dir, 0o711)
        theirs = open_dir / "root-vault"
        made = authctl.run("init", "--kdf", "min", env={"AUTHCTL_VAULT": str(theirs)})
        assert made.code == 0, made.stderr
        before = {p.name: p.read_bytes() for p in theirs.iterdir()}
        for args in (["list"], ["credential", "show", "AAAAAAAAAAAAAAAAAAAAAA"], ["delete", "AAAAAAAAAAAAAAAAAAAAAA"], ["vault", "check"]):
            result = subprocess.run(as_nobody + ["--vault", str(theirs), *args], env=env, capture_output=True, text=True, timeout=60)
            assert (result.returncode, result.stdout) == (25, ""), (args, result.stderr)
            assert "vaultInsecure: " in result.stderr and "another user" in result.stderr, result.stderr
        assert {p.name: p.read_bytes() for p in theirs.iterdir()} == before
        hidden = authctl.vault  # under the test's own private directory, which nobody cannot reach
        result = subprocess.run(as_nobody + ["--vault", str(hidden), "list"], env=env, capture_output=True, text=True, timeout=60)
        assert result.returncode == 74 and "ioError: " in result.stderr, result.stderr
        # Nobody's own vault, with a commit file root took and keeps to itself.
        mine = open_dir / "nobody-vault"
        mine.mkdir(mode=0o700)
        os.chown(mine, nobody().pw_uid, nobody().pw_gid)
        made = subprocess.run(as_nobody + ["--vault", str(mine), "init", "--kdf", "min"], env=env, capture_output=True, text=True,
                              timeout=60)
        assert made.returncode == 0, made.stderr
        os.chown(mine / "commit", 0, 0)
        os.chmod(mine / "commit", 0o600)
        for args in (["list"], ["register", "--origin", ORIGIN]):
            result = subprocess.run(as_nobody + ["--vault", str(mine), *args], env=env, capture_output=True, text=True, timeout=60)
            assert (result.returncode, result.stdout) == (25, ""), (args, result.stderr)
            assert "vaultInsecure: " in result.stderr and "commit belongs to another user (uid 0)" in result.stderr, result.stderr
    finally:
        shutil.rmtree(open_dir)


def test_a_planted_symlink_is_never_followed(tmp_path, authctl):
    target = tmp_path / "precious"
    target.write_bytes(b"do not overwrite")
    vault = tmp_path / "fresh"
    vault.mkdir(mode=0o700)
    os.symlink(target, vault / "header.tmp")
    os.symlink(target, vault / "commit.tmp")
    assert authctl.run("init", "--kdf", "min", env={"AUTHCTL_VAULT": str(vault)}).code == 0
    assert target.read_bytes() == b"do not overwrite"
    # A symlink in place of a vault file is refused, not read through.
    os.rename(vault / "commit", tmp_path / "commit.real")
    os.symlink(tmp_path / "commit.real", vault / "commit")
    expect(authctl.run("list", env={"AUTHCTL_VAULT": str(vault)}), "vaultCorrupted", 21)


def test_a_vault_directory_others_can_write_is_refused(authctl):
    os.chmod(authctl.vault, 0o777)
    result = authctl.run("list")
    expect(result, "vaultInsecure", 25)
    assert "chmod 700" in result.stderr
    os.chmod(authctl.vault, 0o700)
    assert authctl.run("list").code == 0


# 9. Only regular files are read, with size bounds.

@pytest.mark.parametrize("name", ["header", "commit", "log.0"])
def test_a_fifo_in_place_of_a_vault_file_is_corruption_not_a_hang(authctl, name):
    path = authctl.vault / name
    path.unlink()
    os.mkfifo(path, 0o600)
    expect(authctl.run("list"), "vaultCorrupted", 21)  # a hang would end in run()'s timeout


def test_a_log_linked_to_dev_zero_is_corruption(authctl):
    log = log_file(authctl.vault)
    log.unlink()
    os.symlink("/dev/zero", log)
    expect(authctl.run("list"), "vaultCorrupted", 21)


# 10. KDF limits above `sensitive` are refused before any derivation.

def test_a_header_asking_for_more_than_sensitive_is_refused_at_once(authctl):
    path = authctl.vault / "header"
    original = path.read_bytes()
    sensitive_ops, sensitive_mem = 4, 1 << 30
    for offset, value in ((11, sensitive_ops + 1), (19, sensitive_mem * 4)):
        data = bytearray(original)
        data[offset:offset + 8] = value.to_bytes(8, "big")
        data[131:] = hashlib.blake2b(bytes(data[:131]), digest_size=32).digest()
        path.write_bytes(bytes(data))
        # No derivation ran: Argon2id at these limits would fill at least 1 GiB; the refusal
        # needs a few MiB (measured as the process's peak resident size, whatever the load).
        proc = subprocess.Popen([BIN, "list"], env=authctl.env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE)
        err = proc.stderr.read().decode()
        proc.stdout.read()
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        assert proc.returncode == 21 and "vaultCorrupted: " in err, err
        assert usage.ru_maxrss < 256 * 1024, usage.ru_maxrss  # KiB
    path.write_bytes(original)


# 11. A prompt in one terminal blocks no reader, and a waiting writer says so and gives up.

def test_a_pending_prompt_blocks_no_reader_and_a_writer_waits_with_a_limit(authctl):
    authctl.run("register", "--origin", ORIGIN).json
    slow = subprocess.Popen([BIN, "sign", "--origin", ORIGIN, "--user-action", "timeout", "--options", "-"],
                            env=authctl.env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    slow.stdin.write(json.dumps({"challenge": "c2xvdw", "timeout": 120000}))  # cut short below
    slow.stdin.close()
    wait_until_prompting(authctl.vault, slow)  # it holds the vault, waiting for the user
    # Readers finish while the prompt is still up (the user never answers it: it ends only when
    # the test ends it), so no reader waited for it.
    assert authctl.run("list").code == 0
    assert authctl.run("--json", "biometry", "status").code == 0
    assert slow.poll() is None, "the prompt was still up"
    writer = authctl.run("sign", "--origin", ORIGIN, "--wait", "1")
    expect(writer, "vaultBusy", 24)
    assert "waiting for the vault" in writer.stderr
    assert slow.poll() is None, "the prompt was still up"
    slow.kill()
    assert slow.wait(timeout=60) == -signal.SIGKILL


# 12. A new passphrase brings a new vault key: an old header is useless.

def test_an_old_header_with_the_old_passphrase_opens_nothing_after_passwd(authctl):
    authctl.run("register", "--origin", ORIGIN).json
    old_header = (authctl.vault / "header").read_bytes()
    assert authctl.run("vault", "passwd", env={"AUTHCTL_NEW_PASSPHRASE": "rotated"}).code == 0
    authctl.run("register", "--origin", ORIGIN, "--user-id", "bmV3", env={"AUTHCTL_PASSPHRASE": "rotated"}).json
    (authctl.vault / "header").write_bytes(old_header)
    result = authctl.run("list")  # the old passphrase, with the header it opened
    assert result.code in (20, 21) and result.stdout == ""


# 13. No core dumps; not dumpable.

@ROOT_ONLY
def test_the_process_is_not_dumpable_and_has_no_core_limit(tmp_path, authctl):
    home = tempfile.mkdtemp(prefix="authctl-nobody-")
    try:
        os.chmod(home, 0o755)
        os.chown(home, nobody().pw_uid, nobody().pw_gid)
        env = dict(authctl.env, AUTHCTL_VAULT=home + "/vault")
        as_nobody = ["setpriv", f"--reuid={nobody().pw_uid}", f"--regid={nobody().pw_gid}", "--clear-groups", BIN]
        assert subprocess.run(as_nobody + ["init", "--kdf", "min"], env=env, capture_output=True).returncode == 0
        assert subprocess.run(as_nobody + ["register", "--origin", ORIGIN], env=env, capture_output=True).returncode == 0
        proc = subprocess.Popen(as_nobody + ["sign", "--origin", ORIGIN, "--user-action", "timeout", "--options", "-"],
                                env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        proc.stdin.write(json.dumps({"challenge": "ZHVtcA", "timeout": 120000}))  # cut short below
        proc.stdin.close()
        wait_until_prompting(pathlib.Path(home) / "vault", proc)
        status = open(f"/proc/{proc.pid}/status").read()
        assert f"Uid:\t{nobody().pw_uid}" in status  # it runs as nobody …
        assert os.stat(f"/proc/{proc.pid}/environ").st_uid == 0  # … yet its /proc files are root's: not dumpable
        limits = open(f"/proc/{proc.pid}/limits").read()
        assert [line.split()[4:6] for line in limits.splitlines() if line.startswith("Max core file size")] == [["0", "0"]]
        proc.kill()
        assert proc.wait(timeout=60) == -signal.SIGKILL
    finally:
        shutil.rmtree(home, ignore_errors=True)


# 14. Control characters from an RP are shown escaped to people, exact in JSON.

def test_control_characters_in_a_user_name_cannot_forge_rows(authctl):
    evil = "eve\x1b[31m\nFAKE  example.com  admin\u202e"
    options = dict(GOOD, user={"id": "ZXZl", "name": evil, "displayName": "Eve"})
    authctl.register(options, ORIGIN).json
    table = authctl.run("list").stdout
    assert "\x1b" not in table and "\u202e" not in table
    assert len(table.splitlines()) == 2 and "\\x1b[31m\\x0aFAKE" in table
    assert authctl.listing()[0]["userName"] == evil


def test_the_pin_prompt_shows_an_rp_supplied_name_escaped(authctl):
    options = dict(GOOD, user={"id": "ZXZl", "name": "eve\x1b]0;pwned\x07", "displayName": "Eve"},
                   authenticatorSelection={"userVerification": "required"})
    authctl.register(options, ORIGIN).json
    env = {k: v for k, v in authctl.env.items() if k != "AUTHCTL_PIN"}
    pid, fd = spawn_on_terminal(["sign", "--origin", ORIGIN], env)
    prompt = read_until(fd, b": ")
    assert b"Biometric PIN for example.com as eve\\x1b]0;pwned\\x07" in prompt and b"\x1b]0" not in prompt
    os.write(fd, PIN.encode() + b"\n")
    assert wait_exit(pid, fd) == 0
    os.close(fd)


# 15. Origins parsed as a URL parser parses them.

@pytest.mark.parametrize("origin", ["https://example.com:+8443", "https://example.com:-0", "https://xn--a.example",
                                    "https://example.com:65536", "https://exa mple.com"])
def test_origins_browsers_refuse_are_refused(authctl, origin):
    expect(authctl.run("register", "--origin", origin, "--rp-id", "example.com"), "securityError", 16)


# What a second probe found.

def test_a_refused_init_leaves_the_directory_as_it_was(tmp_path, authctl):
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o1777)
    (shared / "someone-elses-file").write_text("x")
    expect(authctl.run("init", "--kdf", "min", env={"AUTHCTL_VAULT": str(shared)}), "badInput", 65)
    assert stat.S_IMODE(shared.stat().st_mode) == 0o1777
    assert sorted(p.name for p in shared.iterdir()) == ["someone-elses-file"]


def test_bench_touches_nothing_that_was_in_its_directory(tmp_path, authctl):
    scratch = tmp_path / "bench"
    scratch.mkdir()
    existing = scratch / "authctl-bench-1-10"
    authctl.run("init", "--kdf", "min", env={"AUTHCTL_VAULT": str(existing)})
    before = sorted(p.name for p in existing.iterdir())
    result = authctl.run("bench", "vault", "--sizes", "3", "--runs", "1", "--dir", str(scratch))
    assert result.code == 0, result.stderr
    assert sorted(p.name for p in scratch.iterdir()) == ["authctl-bench-1-10"]
    assert sorted(p.name for p in existing.iterdir()) == before
    expect(authctl.run("bench", "vault", "--sizes", "9223372036854775807"), "usage", 64)


def test_a_huge_sparse_log_is_skipped_past_not_read(authctl):
    authctl.run("register", "--origin", ORIGIN).json
    log = log_file(authctl.vault)
    os.truncate(log, 2147483000)
    result = shell(authctl, 'ulimit -v 1500000; $A list; echo "exit $?"')
    assert result.stdout.strip().endswith("exit 21"), result.stdout + result.stderr
    assert "Fatal error" not in result.stderr


def test_a_typed_secret_is_at_most_4095_bytes_and_end_of_input_cancels(authctl):
    env = {k: v for k, v in authctl.env.items() if k != "AUTHCTL_PASSPHRASE"}
    pid, fd = spawn_on_terminal(["list"], env)
    read_until(fd, b": ")
    os.write(fd, b"a" * 4095 + b"\x04" + b"a\n")  # Ctrl-D sends the full line, then one more byte
    assert wait_exit(pid, fd) == 65
    os.close(fd)
    # Ctrl-D at an empty PIN prompt: the user walked away; no attempt is counted.
    authctl.run("register", "--origin", ORIGIN).json
    env = {k: v for k, v in authctl.env.items() if k != "AUTHCTL_PIN"}
    pid, fd = spawn_on_terminal(["sign", "--origin", ORIGIN, "--user-verification", "required"], env)
    read_until(fd, b": ")
    os.write(fd, b"\x04")
    assert wait_exit(pid, fd) == 10
    os.close(fd)
    assert authctl.run("--json", "biometry", "status").json["failures"] == 0


def test_the_table_cuts_no_name_short(authctl):
    names = ["😀😀😀😀alice", "e\u0301e\u0301e\u0301-carol", "👨‍👩‍👧‍👦dave"]
    for i, name in enumerate(names):
        authctl.run("register", "--origin", ORIGIN, "--user-name", name, "--user-id", f"dTA{i}").json
    table = authctl.run("list").stdout
    for name in names:
        assert name in table, name


@pytest.mark.parametrize("char", ["\u061c", "\u2028", "\u2029", "\u200f", "\x85"])
def test_every_line_breaking_or_reordering_character_is_escaped(authctl, char):
    authctl.run("register", "--origin", ORIGIN, "--user-name", f"x{char}y").json
    assert char not in authctl.run("list").stdout
    assert authctl.listing()[0]["userName"] == f"x{char}y"


@pytest.mark.parametrize("name", ["header", "commit", "lock", "writer"])
def test_a_socket_or_directory_at_a_vault_file_is_corruption(authctl, name):
    import socket
    path = authctl.vault / name
    saved = path.read_bytes() if path.exists() else None
    path.unlink(missing_ok=True)
    path.mkdir()
    expect(authctl.run("register", "--origin", ORIGIN), "vaultCorrupted", 21)
    path.rmdir()
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    try:
        expect(authctl.run("register", "--origin", ORIGIN), "vaultCorrupted", 21)
    finally:
        server.close()
        path.unlink()
    if saved is not None:
        path.write_bytes(saved)
        os.chmod(path, 0o600)


def test_a_read_only_stdout_fails_before_anything_is_done(authctl):
    authctl.run("register", "--origin", ORIGIN, "--sign-counter").json
    before = authctl.listing()
    result = shell(authctl, f'$A sign --origin {ORIGIN} 1</dev/null; echo "exit $?" >&2')
    assert result.stderr.strip().endswith("exit 74"), result.stderr
    assert authctl.listing() == before


def test_after_a_rotation_stopped_past_its_switch_the_old_header_opens_nothing(authctl):
    made = authctl.run("register", "--origin", ORIGIN).json["id"]
    old_header, old_commit = (authctl.vault / "header").read_bytes(), (authctl.vault / "commit").read_bytes()
    old_log = log_file(authctl.vault)
    assert authctl.run("vault", "passwd", env={"AUTHCTL_NEW_PASSPHRASE": "rotated"}).code == 0
    new_header, new_commit = (authctl.vault / "header").read_bytes(), (authctl.vault / "commit").read_bytes()
    # The state of a crash after the old log was deleted, before commit.next became commit.
    (authctl.vault / "commit.next").write_bytes(new_commit)
    (authctl.vault / "commit").write_bytes(old_commit)
    os.chmod(authctl.vault / "commit.next", 0o600)
    assert not old_log.exists()
    (authctl.vault / "header").write_bytes(old_header)
    expect(authctl.run("list"), "vaultCorrupted", 21)  # the old commit names a log that is gone
    (authctl.vault / "header").write_bytes(new_header)
    rotated = {"AUTHCTL_PASSPHRASE": "rotated"}
    assert [c["id"] for c in authctl.run("list", "--json", env=rotated).json["credentials"]] == [made]
    # That reader could take the lock at once, so it finished the rotation.
    assert not (authctl.vault / "commit.next").exists()
    assert (authctl.vault / "commit").read_bytes() == new_commit


@pytest.mark.parametrize("command", [["register", "--origin", "https://example.com", "--user-name", "u"],
                                     ["sign", "--origin", "https://example.com"], ["list"], ["init", "--kdf", "min"]])
def test_openssl_without_a_provider_is_a_named_error_not_a_crash(authctl, tmp_path, command):
    # An OPENSSL_CONF that activates only the null provider: no digest, no random bytes, no keys.
    conf = tmp_path / "null.cnf"
    conf.write_text("openssl_conf = init\n[init]\nproviders = p\n[p]\nnull = n\n[n]\nactivate = 1\n")
    before = sorted(p.name for p in authctl.vault.iterdir()) if authctl.vault.exists() else []
    result = authctl.run(*command, env={"OPENSSL_CONF": str(conf)})
    assert result.code == 70, result.stderr
    assert "unknown" in result.stderr and "OPENSSL_CONF" in result.stderr
    assert "Fatal error" not in result.stderr and "crashed" not in result.stderr
    after = sorted(p.name for p in authctl.vault.iterdir()) if authctl.vault.exists() else []
    assert after == before  # nothing was written
    assert authctl.run("list").code == 0  # and with OpenSSL as configured, the vault is as it was
