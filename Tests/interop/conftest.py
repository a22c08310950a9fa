"""Interop suite: drives the built authctl binary and lets independent RP libraries judge it.

AUTHCTL_BIN names the binary (default: .build/debug/authctl under the package root).
"""
import base64
import http.server
import importlib.util
import json
import os
import pathlib
import subprocess
import threading
import time
import urllib.error
import urllib.request

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
BIN = str(pathlib.Path(os.environ.get("AUTHCTL_BIN", ROOT / ".build" / "debug" / "authctl")).resolve())
PASSPHRASE = "correct horse battery staple"
PIN = "4242"


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unb64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def own_environment(scratch: pathlib.Path) -> dict:
    """The test process's environment without AUTHCTL_* settings and with a home, XDG data
    directory and TMPDIR of the test's own under `scratch`: nothing the machine's real home or
    /tmp holds plays a part, and nothing is left there."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("AUTHCTL_") and not k.startswith("XDG_")}
    home, tmp = scratch / "home", scratch / "tmp"
    home.mkdir(parents=True, exist_ok=True)
    tmp.mkdir(parents=True, exist_ok=True)
    env.update(HOME=str(home), TMPDIR=str(tmp))
    return env


class Result:
    def __init__(self, proc):
        self.code = proc.returncode
        self.stdout = proc.stdout
        self.stderr = proc.stderr

    @property
    def json(self):
        assert self.code == 0, f"authctl failed ({self.code}): {self.stderr}"
        return json.loads(self.stdout)


class Authctl:
    """One throw-away vault and the environment to use it."""

    def __init__(self, vault: pathlib.Path, prefix: tuple = ()):
        self.vault = vault
        self.prefix = list(prefix)  # what the command runs under (`ip netns exec NS`)
        self.env = own_environment(vault.parent)
        self.env.update(AUTHCTL_PASSPHRASE=PASSPHRASE, AUTHCTL_PIN=PIN, AUTHCTL_VAULT=str(vault))

    def run(self, *args, stdin: str | None = None, env: dict | None = None) -> Result:
        environment = dict(self.env)
        for key, value in (env or {}).items():
            if value is None:
                environment.pop(key, None)
            else:
                environment[key] = value
        proc = subprocess.run([*self.prefix, BIN, *args], input=stdin if stdin is not None else "", env=environment,
                              capture_output=True, text=True, timeout=120 if self.prefix else 60)
        return Result(proc)

    def register(self, options: dict, origin: str, *extra, **kw) -> Result:
        return self.run("register", "--origin", origin, "--options", "-", *extra, stdin=json.dumps(options), **kw)

    def sign(self, options: dict, origin: str, *extra, **kw) -> Result:
        return self.run("sign", "--origin", origin, "--options", "-", *extra, stdin=json.dumps(options), **kw)

    def snapshot(self) -> dict:
        """Every file of the vault, byte for byte (the lock file aside)."""
        return {p.name: p.read_bytes() for p in sorted(self.vault.iterdir()) if p.name != "lock"}

    def listing(self) -> list:
        return self.run("list", "--json").json["credentials"]

    def state(self) -> tuple:
        """What a failed ceremony must leave as it was: every passkey with its counter, and the
        biometric state. (Its bytes may differ: a PIN check writes its failure count.)"""
        return self.listing(), self.run("--json", "biometry", "status").json


@pytest.fixture
def authctl(tmp_path) -> Authctl:
    tool = Authctl(tmp_path / "vault")
    result = tool.run("init", "--kdf", "min")
    assert result.code == 0, result.stderr
    return tool


@pytest.fixture(scope="session")
def fido2_library() -> str:
    """libauthctl-fido2.so, the LD_PRELOAD library for libfido2's tools and OpenSSH:
    $AUTHCTL_FIDO2_LIBRARY, else built with scripts/build-fido2-library.sh (the debug build's)."""
    path = os.environ.get("AUTHCTL_FIDO2_LIBRARY")
    if not path:
        built = subprocess.run([str(ROOT / "scripts" / "build-fido2-library.sh")], capture_output=True, text=True,
                               timeout=1800)
        assert built.returncode == 0, built.stderr
        path = built.stdout.splitlines()[-1]
    assert os.path.isfile(path), path
    return path


def log_file(vault: pathlib.Path) -> pathlib.Path:
    """The vault's current log (`log.N`; compaction moves to the next generation)."""
    logs = sorted(vault.glob("log.*"))
    assert len(logs) == 1, logs
    return logs[0]


def tamper(response: dict, field: str, index: int = -1) -> dict:
    """A copy of a response with one byte of response[field] flipped."""
    copy = json.loads(json.dumps(response))
    raw = bytearray(unb64url(copy["response"][field]))
    raw[index] ^= 0x01
    copy["response"][field] = b64url(bytes(raw))
    return copy


def wait_until(condition, what: str, timeout: float = 60.0, poll: float = 0.02):
    """Waits for condition() to be true, checking every `poll` seconds, up to a generous deadline
    (a loaded machine is slow, not wrong); fails naming `what` when the deadline passes."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"not within {timeout:.0f} s: {what}"
        time.sleep(poll)


def holds_writer_lock(vault: pathlib.Path, pid: int) -> bool:
    """Whether process `pid` holds the vault's writer lock (an exclusive flock on `writer`, taken for
    a writer's whole life: a ceremony holds it while its prompt is up), as /proc/locks shows."""
    try:
        inode = (vault / "writer").stat().st_ino
    except FileNotFoundError:
        return False
    for line in pathlib.Path("/proc/locks").read_text().splitlines():
        fields = line.split()
        # "1: FLOCK  ADVISORY  WRITE 1234 00:2e:5678 0 EOF"
        if len(fields) >= 6 and fields[1] == "FLOCK" and fields[3] == "WRITE" and fields[4] == str(pid) \
                and fields[5].rsplit(":", 1)[-1] == str(inode):
            return True
    return False


def wait_until_prompting(vault: pathlib.Path, proc: subprocess.Popen, timeout: float = 60.0):
    """Waits until `proc` (a ceremony whose user never answers) holds the vault at its prompt."""
    def holding():
        assert proc.poll() is None, f"the ceremony ended ({proc.returncode}) before it held the vault"
        return holds_writer_lock(vault, proc.pid)
    wait_until(holding, "the ceremony holds the vault", timeout)


class Running:
    """An http.server on a thread of its own (an example RP started in-process), at `url`
    until `close()`."""

    def __init__(self, server):
        self.server = server
        threading.Thread(target=server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{server.server_address[1]}"

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def load_example(name: str):
    """A Python file of docs/examples/ as a module (an example RP: `serve()` starts it)."""
    spec = importlib.util.spec_from_file_location(f"example_{name}", ROOT / "docs" / "examples" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Forwarding(http.server.BaseHTTPRequestHandler):
    """A proxy before an RP at `upstream` (an example RP on a Running): each request passed on with
    its body, Content-Type and Cookie; each answer passed back with its status, Content-Type and
    Set-Cookie, its body through `edit`. Subclasses see each request in `seen` and change answers
    in `edit`."""
    upstream = ""

    def log_message(self, *args):
        pass

    def seen(self):
        pass

    def edit(self, body: bytes) -> bytes:
        return body

    def forward(self):
        self.seen()
        length = int(self.headers.get("Content-Length") or 0)
        request = urllib.request.Request(self.upstream + self.path, data=self.rfile.read(length) if length else None, method=self.command)
        for name in ("Content-Type", "Cookie"):
            if self.headers.get(name):
                request.add_header(name, self.headers[name])
        try:
            answer = urllib.request.urlopen(request, timeout=30)
        except urllib.error.HTTPError as error:
            answer = error
        body = self.edit(answer.read())
        self.send_response(answer.status if hasattr(answer, "status") else answer.code)
        self.send_header("Content-Type", answer.headers.get("Content-Type") or "application/json")
        for cookie in answer.headers.get_all("Set-Cookie") or []:
            self.send_header("Set-Cookie", cookie)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = forward
