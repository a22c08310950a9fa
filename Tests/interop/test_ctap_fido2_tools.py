"""libfido2's tools (Debian's fido2-tools 1.12) and OpenSSH's ssh-keygen, unmodified, drive
`authctl ctap serve` through libauthctl-fido2.so (LD_PRELOAD, the keys named in AUTHCTL_CTAP): the
key listed and described, credentials made and verified, sign-ins verified, a PIN set, changed and
counted down to its lock, the key reset, and OpenSSH -sk keys made and used to sign. The judges are
libfido2's own verifiers (fido2-cred -V, fido2-assert -V) and ssh-keygen -Y verify, each shown to
refuse a tampered signature.

The library is conftest's fido2_library ($AUTHCTL_FIDO2_LIBRARY, else built). A step the key does
not answer yet (CTAP1_ERR_INVALID_COMMAND, as libfido2's trace shows it) is skipped, saying which
command."""
from __future__ import annotations

import base64
import hashlib
import json
import os
import pathlib
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import urllib.request

import pytest

from conftest import BIN, own_environment, wait_until

pytestmark = pytest.mark.skipif(shutil.which("fido2-token") is None, reason="fido2-tools is not installed")

PIN = "4321"
ALGORITHMS = {-7: "es256", -8: "eddsa", -257: "rs256"}


@pytest.fixture(scope="session")
def profile() -> dict:
    """The security-key profile, as `authctl profiles` describes it (the key's model)."""
    listed = subprocess.run([BIN, "--json", "profiles"], capture_output=True, text=True, timeout=60)
    assert listed.returncode == 0, listed.stderr
    profiles = json.loads(listed.stdout)
    return next(p for p in (profiles if isinstance(profiles, list) else profiles["profiles"]) if p["name"] == "security-key")


class Key:
    """One `authctl ctap serve` (a throw-away account whose device "key" has the security-key
    profile) on a Unix socket and a UDP port, with its controller; `keys` are its AUTHCTL_CTAP
    entries. Stopped with SIGTERM, it must exit 0."""

    def __init__(self, scratch: pathlib.Path, touch: str = "always"):
        # A Unix socket's path must fit in 107 bytes: a short directory of its own.
        self.directory = pathlib.Path(tempfile.mkdtemp(prefix="authctl-fido2-", dir="/tmp"))
        self.socket = str(self.directory / "key.sock")
        command = [BIN, "ctap", "serve", "--socket", self.socket, "--udp", "127.0.0.1:0",
                   "--controller", "127.0.0.1:0", "--touch", touch]
        self.stderr_path = scratch / "ctap-serve.stderr"
        self.lines: list[str] = []
        self.process = None

        def listening():
            assert self.process.poll() is None, f"ctap serve exited {self.process.returncode}: {self.stderr}"
            return len(self.lines) >= 3
        try:
            with open(self.stderr_path, "w") as stderr:
                self.process = subprocess.Popen(command, env=own_environment(scratch), stdin=subprocess.DEVNULL,
                                                stdout=subprocess.PIPE, stderr=stderr, text=True)
            threading.Thread(target=self._read, daemon=True).start()
            wait_until(listening, f"ctap serve prints where it listens ({command})")
        except BaseException:
            if self.process is not None:
                self.process.kill()
                self.process.wait()
            shutil.rmtree(self.directory, ignore_errors=True)
            raise
        words = [line.split() for line in self.lines[:3]]
        self.unix = next(f"unix:{w[2]}" for w in words if w[:2] == ["ctap", "unix"])
        self.udp = next(f"udp:{w[2]}" for w in words if w[:2] == ["ctap", "udp"])
        self.controller = next(w[1] for w in words if w[:1] == ["controller"])
        self.keys = [self.unix, self.udp]
        self.path = f"authctl:{self.unix}"

    def _read(self):
        for line in self.process.stdout:
            self.lines.append(line.rstrip("\n"))

    @property
    def stderr(self) -> str:
        return self.stderr_path.read_text()

    def power(self, on: bool):
        url = f"{self.controller.rstrip('/')}/usb0/power/{'on' if on else 'off'}"
        with urllib.request.urlopen(url, timeout=30) as answer:
            assert answer.status == 200, url

    def power_cycle(self):
        self.power(False)
        self.power(True)

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            code = self.process.wait(timeout=60)
        finally:
            if self.process.poll() is None:
                self.process.kill()
            shutil.rmtree(self.directory, ignore_errors=True)
        assert code == 0, f"ctap serve exited {code}: {self.stderr}"


@pytest.fixture
def key(tmp_path):
    running = Key(tmp_path)
    yield running
    running.stop()


class Tools:
    """The tools run with the library preloaded and AUTHCTL_CTAP naming `key`'s places, each in a
    session of its own (no controlling terminal: the tools read a PIN from standard input)."""

    def __init__(self, key: Key, library: str, scratch: pathlib.Path):
        self.key = key
        self.scratch = scratch
        self.env = own_environment(scratch)
        self.env.pop("SSH_AUTH_SOCK", None)  # ssh-keygen signs with the key itself, not an agent's copy
        self.env.update(LD_PRELOAD=library, AUTHCTL_CTAP=",".join(key.keys))

    def run(self, *command, stdin: str = "", env: dict | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
        self.last = (command, stdin, env)
        environment = dict(self.env)
        for name, value in (env or {}).items():
            if value is None:
                environment.pop(name, None)
            else:
                environment[name] = value
        return subprocess.run([str(c) for c in command], input=stdin, env=environment, capture_output=True, text=True,
                              timeout=timeout, cwd=self.scratch, start_new_session=True)


@pytest.fixture
def tools(key, fido2_library, tmp_path):
    return Tools(key, fido2_library, tmp_path)


def answered(tools: Tools, result: subprocess.CompletedProcess, command: str) -> subprocess.CompletedProcess:
    """`result`, unless it failed because the key answered CTAP1_ERR_INVALID_COMMAND (0x01): then
    the test is skipped. libfido2 does not always say so (a PIN command's key agreement answered
    0x01 is FIDO_ERR_INTERNAL), so a failed command is run again with FIDO_DEBUG, whose trace
    shows each CTAP status byte the key answered."""
    if result.returncode == 0:
        return result
    command_line, stdin, env = tools.last
    traced = tools.run(*command_line, stdin=stdin, env={**(env or {}), "FIDO_DEBUG": "1"})
    statuses = re.findall(r"cbor_parse_reply: blob\[0\]=(0x[0-9a-f]{2})$", traced.stderr, re.M)
    if "FIDO_ERR_INVALID_COMMAND" in result.stderr or statuses[-1:] == ["0x01"]:  # the last answer, the one that failed
        pytest.skip(f"the key does not answer {command} yet (CTAP1_ERR_INVALID_COMMAND): {result.stderr.strip()}")
    return result


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def flipped(line: str, index: int = -1) -> str:
    """A base64 line whose decoded bytes have one bit of byte `index` flipped."""
    raw = bytearray(base64.b64decode(line))
    raw[index] ^= 0x01
    return b64(bytes(raw))


def info(tools: Tools, path: str | None = None) -> dict:
    """fido2-token -I, as `name: value` pairs (the first of each name)."""
    result = tools.run("fido2-token", "-I", path or tools.key.path)
    assert result.returncode == 0, result.stderr
    pairs = {}
    for line in result.stdout.splitlines():
        name, _, value = line.partition(": ")
        pairs.setdefault(name, value)
    return pairs


def make_params(tmp_path: pathlib.Path, rp_id: str, user: str = "alice", user_id: bytes = b"alice-id") -> pathlib.Path:
    params = tmp_path / f"cred-{rp_id}-{user}"
    params.write_text("\n".join([b64(hashlib.sha256(b"registration challenge").digest()), rp_id, user, b64(user_id)]) + "\n")
    return params


def make_credential(tools: Tools, tmp_path, rp_id: str, kind: str = "es256", *flags, stdin: str = "",
                    path: str | None = None) -> list[str]:
    """fido2-cred -M: its seven output lines (client data hash, RP ID, format, authData, id,
    signature, certificate)."""
    made = answered(tools, tools.run("fido2-cred", "-M", *flags, "-i", make_params(tmp_path, rp_id), path or tools.key.path,
                                     kind, stdin=stdin), "authenticatorMakeCredential")
    assert made.returncode == 0, made.stderr
    return made.stdout.splitlines()


def verify_credential(tools: Tools, lines: list[str], kind: str = "es256", *flags) -> subprocess.CompletedProcess:
    return tools.run("fido2-cred", "-V", *flags, "-o", "verified", kind, stdin="\n".join(lines) + "\n")


# --- the key found and described ---------------------------------------------------------------


def test_fido2_token_lists_the_keys_authctl_ctap_names(tools, key):
    listed = tools.run("fido2-token", "-L")
    assert listed.returncode == 0 and listed.stderr == "", listed.stderr
    assert listed.stdout.splitlines() == [f"authctl:{place}: vendor=0x0000, product=0x0000 (authctl security key)"
                                          for place in key.keys], listed.stdout
    # Without the library, libfido2 lists the OS's devices alone (none here).
    bare = tools.run("fido2-token", "-L", env={"LD_PRELOAD": None})
    assert bare.returncode == 0 and "authctl" not in bare.stdout
    # A key powered off is not listed; powered on, it is back at its path.
    key.power(False)
    off = tools.run("fido2-token", "-L")
    assert off.returncode == 0 and off.stdout == "", off.stdout
    key.power(True)
    assert tools.run("fido2-token", "-L").stdout.splitlines()[0].startswith(f"authctl:{key.unix}: ")


def test_a_malformed_authctl_ctap_entry_is_named_and_left_out(tools, key):
    setting = f" {key.unix} ,bogus,unix:relative/key.sock,udp:127.0.0.1,udp:127.0.0.1:99999,{key.unix}"
    listed = tools.run("fido2-token", "-L", env={"AUTHCTL_CTAP": setting})
    assert listed.returncode == 0
    assert listed.stdout.splitlines() == [f"authctl:{key.unix}: vendor=0x0000, product=0x0000 (authctl security key)"]
    assert listed.stderr.splitlines() == [
        "libauthctl-fido2: AUTHCTL_CTAP: the entry 'bogus' is left out: not unix:/ABSOLUTE/PATH or udp:HOST:PORT",
        "libauthctl-fido2: AUTHCTL_CTAP: the entry 'unix:relative/key.sock' is left out: 'relative/key.sock' is not an absolute path",
        "libauthctl-fido2: AUTHCTL_CTAP: the entry 'udp:127.0.0.1' is left out: '127.0.0.1' is not HOST:PORT",
        "libauthctl-fido2: AUTHCTL_CTAP: the entry 'udp:127.0.0.1:99999' is left out: '99999' is not a port (1 to 65535)",
    ], listed.stderr


@pytest.mark.parametrize("transport", ["unix", "udp"])
def test_fido2_token_shows_the_keys_info(tools, key, profile, transport):
    path = f"authctl:{key.unix if transport == 'unix' else key.udp}"
    shown = info(tools, path)
    assert shown["version strings"] == "U2F_V2, FIDO_2_0, FIDO_2_1", shown
    assert shown["aaguid"] == profile["aaguid"].replace("-", "")
    assert shown["maxmsgsiz"] == "1200" and shown["pin protocols"] == "2, 1"
    options = shown["options"].split(", ")
    assert "rk" in options and "up" in options and "noclientPin" in options, options
    algorithms = re.findall(r"([a-z0-9]+) \(", shown["algorithms"]) if "algorithms" in shown else []
    assert algorithms == [ALGORITHMS[a] for a in profile["algorithms"]] or not algorithms, shown
    # The path works without AUTHCTL_CTAP: it names the key itself.
    alone = tools.run("fido2-token", "-I", path, env={"AUTHCTL_CTAP": None})
    assert alone.returncode == 0 and f"aaguid: {shown['aaguid']}" in alone.stdout


@pytest.mark.parametrize("path,reason", [
    ("authctl:unix:/nonexistent/key.sock", "the key cannot be reached: No such file or directory"),
    ("authctl:unix:key.sock", "'key.sock' is not an absolute path"),
    ("authctl:udp:127.0.0.1", "'127.0.0.1' is not HOST:PORT"),
    ("authctl:udp:[::1]", "'[::1]' is not HOST:PORT"),
    ("authctl:udp:[::1]:0", "'0' is not a port (1 to 65535)"),
    ("authctl:tcp:127.0.0.1:1", "not unix:/ABSOLUTE/PATH or udp:HOST:PORT"),
])
def test_a_path_that_names_no_key_fails_with_its_reason(tools, path, reason):
    result = tools.run("fido2-token", "-I", path)
    assert result.returncode == 1
    assert f"libauthctl-fido2: {path}: {reason}\n" in result.stderr, result.stderr
    assert f"fido_dev_open {path}: FIDO_ERR_" in result.stderr, result.stderr


def test_a_udp_port_nobody_answers_is_not_listed_and_fails_to_open(tools, key):
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as silent:
        silent.bind(("127.0.0.1", 0))  # bound, never answering: the probe waits out its time
        place = f"udp:127.0.0.1:{silent.getsockname()[1]}"
        listed = tools.run("fido2-token", "-L", env={"AUTHCTL_CTAP": f"{place},{key.unix}"})
        assert listed.returncode == 0 and listed.stdout.splitlines() == [
            f"authctl:{key.unix}: vendor=0x0000, product=0x0000 (authctl security key)"], listed.stdout + listed.stderr
    # Nobody on the port at all: the OS refuses at once.
    refused = tools.run("fido2-token", "-I", f"authctl:{place}")
    assert refused.returncode == 1 and "fido_dev_open" in refused.stderr


class Relay:
    """A Unix socket between the tools and the key: each connection relayed to the key's socket,
    the key's bytes handed on `chunk` at a time (a report split across reads), and, with
    `cut_after`, the connection closed once the tool has sent that many reports."""

    def __init__(self, target: str, chunk: int = 64, cut_after: int | None = None):
        self.target, self.chunk, self.cut_after = target, chunk, cut_after
        self.directory = tempfile.mkdtemp(prefix="authctl-relay-", dir="/tmp")
        self.path = f"{self.directory}/relay.sock"
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(self.path)
        self.listener.listen()
        self.connections = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            self.connections += 1
            key = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            key.connect(self.target)
            threading.Thread(target=self._to_key, args=(client, key), daemon=True).start()
            threading.Thread(target=self._to_tool, args=(key, client), daemon=True).start()

    def _to_key(self, client, key):
        sent = 0
        try:
            while True:
                report = client.recv(64, socket.MSG_WAITALL)
                if len(report) < 64:
                    break
                if self.cut_after is not None and sent == self.cut_after:
                    break
                key.sendall(report)
                sent += 1
        except OSError:
            pass
        for end in (client, key):
            try:
                end.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            end.close()

    def _to_tool(self, key, client):
        try:
            while data := key.recv(4096):
                for i in range(0, len(data), self.chunk):
                    client.sendall(data[i:i + self.chunk])
        except OSError:
            pass

    def close(self):
        self.listener.close()
        shutil.rmtree(self.directory, ignore_errors=True)


def test_reports_split_across_reads_reach_libfido2_whole(tools, key, tmp_path):
    """A stream socket may hand a report over in pieces: the library reads each one whole, so a
    key behind a relay that passes its bytes on 7 at a time still makes a credential that verifies."""
    relay = Relay(key.socket, chunk=7)
    try:
        path = f"authctl:unix:{relay.path}"
        made = make_credential(tools, tmp_path, "relay.example", path=path)
        assert verify_credential(tools, made[:7]).returncode == 0
        assert info(tools, path)["version strings"] == "U2F_V2, FIDO_2_0, FIDO_2_1"
        assert relay.connections == 2
    finally:
        relay.close()


@pytest.mark.parametrize("cut_after,error", [(1, "FIDO_ERR_TX"), (2, "FIDO_ERR_(TX|RX)")])
def test_a_key_gone_in_the_middle_fails_the_tool_at_once(tools, key, tmp_path, cut_after, error):
    """The key's connection closed when the tool sends its GetInfo (after 1 report, its
    CTAPHID_INIT) or its MakeCredential (after 2): the tool fails with libfido2's error, exit 1 —
    no wait, and no SIGPIPE. (Without GetInfo's answer libfido2 takes the key for a U2F one and
    writes its register message to the closed connection: FIDO_ERR_TX. A MakeCredential cut after
    its first report fails as the tool writes the rest, or reads the answer: TX or RX.)"""
    relay = Relay(key.socket, cut_after=cut_after)
    try:
        path = f"authctl:unix:{relay.path}"
        result = tools.run("fido2-cred", "-M", "-i", make_params(tmp_path, "gone.example"), path, "es256", timeout=60)
        assert result.returncode == 1, (result.returncode, result.stderr)
        assert re.fullmatch(f"fido2-cred: fido_dev_make_cred: {error}\n", result.stderr), result.stderr
    finally:
        relay.close()


MODULE = r"""
#include <stddef.h>
#include <stdio.h>
typedef struct fido_dev_info fido_dev_info_t;
fido_dev_info_t *fido_dev_info_new(size_t);
int fido_dev_info_manifest(fido_dev_info_t *, size_t, size_t *);
const fido_dev_info_t *fido_dev_info_ptr(const fido_dev_info_t *, size_t);
const char *fido_dev_info_path(const fido_dev_info_t *);
int list(void) {
    fido_dev_info_t *devices = fido_dev_info_new(8);
    size_t found = 0;
    int status = fido_dev_info_manifest(devices, 8, &found);
    for (size_t i = 0; i < found; i++)
        printf("%s\n", fido_dev_info_path(fido_dev_info_ptr(devices, i)));
    return status;
}
"""

PROGRAM = r"""
#include <dlfcn.h>
#include <stdio.h>
int main(int argc, char **argv) {
    void *module = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (module == NULL) { fprintf(stderr, "%s\n", dlerror()); return 2; }
    int (*list)(void) = (int (*)(void))dlsym(module, "list");
    return list() == 0 ? 0 : 1;
}
"""


@pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler")
def test_a_module_that_links_libfido2_reaches_the_key(tools, key, tmp_path):
    """A program that does not link libfido2 but opens a module that does, as a PAM module
    (pam_u2f) is opened: the module's libfido2 is not in the program's search order, and the
    library finds it among what is loaded."""
    (tmp_path / "module.c").write_text(MODULE)
    (tmp_path / "program.c").write_text(PROGRAM)
    subprocess.run(["cc", "-shared", "-fPIC", "-o", tmp_path / "module.so", tmp_path / "module.c", "-l:libfido2.so.1"], check=True)
    subprocess.run(["cc", "-o", tmp_path / "program", tmp_path / "program.c"], check=True)
    listed = tools.run(tmp_path / "program", tmp_path / "module.so")
    assert listed.returncode == 0 and listed.stderr == "", listed.stderr
    assert listed.stdout.splitlines() == [f"authctl:{place}" for place in key.keys], listed.stdout


# --- credentials and sign-ins, judged by libfido2 -----------------------------------------------


def algorithm_names(profile) -> list:
    return [ALGORITHMS[a] for a in profile["algorithms"] if a in ALGORITHMS]


@pytest.mark.parametrize("kind", ["es256", "eddsa", "rs256"])
def test_a_credential_fido2_cred_makes_verifies_and_signs_in(tools, key, profile, tmp_path, kind):
    if kind not in algorithm_names(profile):
        pytest.skip(f"the security-key profile offers no {kind}")
    made = make_credential(tools, tmp_path, "example.com", kind)
    assert made[1] == "example.com" and made[2] == "packed" and len(made) >= 7, made  # packed, with x5c
    verified = verify_credential(tools, made[:7], kind)
    assert verified.returncode == 0, verified.stderr
    credential_id, *pem = (tmp_path / "verified").read_text().splitlines()
    assert credential_id == made[4]
    (tmp_path / "public.pem").write_text("\n".join(pem) + "\n")
    # The judge can say no: a flipped signature byte, or the credential claimed for another RP.
    assert verify_credential(tools, made[:5] + [flipped(made[5], len(base64.b64decode(made[5])) // 2)] + made[6:7], kind).returncode == 1
    assert verify_credential(tools, [made[0], "example.org"] + made[2:7], kind).returncode == 1

    request = tmp_path / "assert-params"
    request.write_text("\n".join([b64(hashlib.sha256(b"sign-in challenge").digest()), "example.com", credential_id]) + "\n")
    got = answered(tools, tools.run("fido2-assert", "-G", "-p", "-i", request, key.path), "authenticatorGetAssertion")
    assert got.returncode == 0, got.stderr
    assertion = got.stdout.splitlines()
    assert assertion[1] == "example.com" and len(assertion) == 4, assertion
    checked = tools.run("fido2-assert", "-V", "-p", "public.pem", kind, stdin="\n".join(assertion) + "\n")
    assert checked.returncode == 0, checked.stderr
    tampered = assertion[:3] + [flipped(assertion[3], len(base64.b64decode(assertion[3])) // 2)]
    refused = tools.run("fido2-assert", "-V", "-p", "public.pem", kind, stdin="\n".join(tampered) + "\n")
    assert refused.returncode == 1, refused.stdout
    # UV was not given (no PIN): a verifier that requires it refuses.
    assert tools.run("fido2-assert", "-V", "-v", "public.pem", kind, stdin="\n".join(assertion) + "\n").returncode == 1


def test_a_credential_made_over_udp_verifies_and_signs_in(tools, key, tmp_path):
    """The same over UDP, one report a datagram: a credential, a sign-in, both verified."""
    path = f"authctl:{key.udp}"
    made = make_credential(tools, tmp_path, "udp.example", path=path)
    assert verify_credential(tools, made[:7]).returncode == 0
    credential_id, *pem = (tmp_path / "verified").read_text().splitlines()
    (tmp_path / "public.pem").write_text("\n".join(pem) + "\n")
    request = tmp_path / "assert-params"
    request.write_text("\n".join([b64(hashlib.sha256(b"over udp").digest()), "udp.example", credential_id]) + "\n")
    got = tools.run("fido2-assert", "-G", "-p", "-i", request, path)
    assert got.returncode == 0, got.stderr
    checked = tools.run("fido2-assert", "-V", "-p", "public.pem", "es256", stdin=got.stdout)
    assert checked.returncode == 0, checked.stderr


def test_a_discoverable_credential_signs_in_without_an_allow_list(tools, key, tmp_path):
    made = make_credential(tools, tmp_path, "resident.example", "es256", "-r")
    assert verify_credential(tools, made[:7]).returncode == 0
    credential_id, *pem = (tmp_path / "verified").read_text().splitlines()
    (tmp_path / "public.pem").write_text("\n".join(pem) + "\n")
    request = tmp_path / "assert-params"
    request.write_text("\n".join([b64(hashlib.sha256(b"discoverable").digest()), "resident.example"]) + "\n")
    got = answered(tools, tools.run("fido2-assert", "-G", "-r", "-p", "-i", request, key.path), "authenticatorGetAssertion")
    assert got.returncode == 0, got.stderr
    assertion = got.stdout.splitlines()
    assert base64.b64decode(assertion[4]) == b"alice-id", assertion  # the user ID, discoverable
    checked = tools.run("fido2-assert", "-V", "-p", "public.pem", "es256", stdin="\n".join(assertion[:4]) + "\n")
    assert checked.returncode == 0, checked.stderr


def test_a_credential_of_another_key_is_not_found(tools, key, tmp_path):
    request = tmp_path / "assert-params"
    request.write_text("\n".join([b64(hashlib.sha256(b"x").digest()), "example.com", b64(os.urandom(48))]) + "\n")
    got = answered(tools, tools.run("fido2-assert", "-G", "-i", request, key.path), "authenticatorGetAssertion")
    assert got.returncode == 1 and "FIDO_ERR_NO_CREDENTIALS" in got.stderr, got.stderr


# --- the PIN --------------------------------------------------------------------------------------


def set_pin(tools: Tools, pin: str = PIN):
    result = answered(tools, tools.run("fido2-token", "-S", tools.key.path, stdin=f"{pin}\n{pin}\n"), "authenticatorClientPIN")
    assert result.returncode == 0, result.stderr


def change_pin(tools: Tools, current: str, new: str) -> subprocess.CompletedProcess:
    return tools.run("fido2-token", "-C", tools.key.path, stdin=f"{current}\n{new}\n{new}\n")


def test_a_pin_set_with_fido2_token_verifies_the_user(tools, key, tmp_path):
    set_pin(tools)
    shown = info(tools)
    assert "clientPin" in shown["options"].split(", "), shown
    # A credential made with the PIN carries UV, as fido2-cred -V -v checks.
    made = make_credential(tools, tmp_path, "pin.example", "es256", "-v", stdin=f"{PIN}\n")
    assert verify_credential(tools, made[:7], "es256", "-v").returncode == 0
    credential_id, *pem = (tmp_path / "verified").read_text().splitlines()
    (tmp_path / "public.pem").write_text("\n".join(pem) + "\n")
    request = tmp_path / "assert-params"
    request.write_text("\n".join([b64(hashlib.sha256(b"uv").digest()), "pin.example", credential_id]) + "\n")
    got = tools.run("fido2-assert", "-G", "-p", "-v", "-i", request, key.path, stdin=f"{PIN}\n")
    assert got.returncode == 0, got.stderr
    checked = tools.run("fido2-assert", "-V", "-p", "-v", "public.pem", "es256", stdin=got.stdout)
    assert checked.returncode == 0, checked.stderr
    # A wrong PIN gets no assertion.
    wrong = tools.run("fido2-assert", "-G", "-p", "-v", "-i", request, key.path, stdin="9999\n")
    assert wrong.returncode == 1 and "FIDO_ERR_PIN_INVALID" in wrong.stderr, wrong.stderr
    # fido2-token -C changes it: the old PIN no longer works, the new one does.
    changed = change_pin(tools, PIN, "24680")
    assert changed.returncode == 0, changed.stderr
    assert "FIDO_ERR_PIN_INVALID" in tools.run("fido2-assert", "-G", "-v", "-i", request, key.path, stdin=f"{PIN}\n").stderr
    assert tools.run("fido2-assert", "-G", "-v", "-i", request, key.path, stdin="24680\n").returncode == 0
    # CTAP 2.1's pinRetries starts at its maximum, 8, as docs/ctap.md says the throw-away key's does.
    assert shown["pin retries"] == "8", shown["pin retries"]


def test_wrong_pins_count_down_to_the_lock(tools, key):
    """CTAP 2.1 §6.5.5.5 and §6.5.5.7: each wrong PIN costs a retry, as fido2-token -I shows
    ("pin retries: N"); the third in a row blocks PIN checks (FIDO_ERR_PIN_AUTH_BLOCKED) until
    the key is powered again; the last one blocks the PIN (FIDO_ERR_PIN_BLOCKED), the right one
    too, until a reset."""
    set_pin(tools)
    retries = int(info(tools)["pin retries"])
    assert retries >= 4, retries  # enough for a block by three in a row before the lock
    in_a_row = 0
    while retries > 0:
        result = change_pin(tools, "0000", "13579")
        retries -= 1
        in_a_row += 1
        expected = "PIN_BLOCKED" if retries == 0 else "PIN_AUTH_BLOCKED" if in_a_row == 3 else "PIN_INVALID"
        assert result.returncode == 1 and f"fido_dev_set_pin: FIDO_ERR_{expected}\n" in result.stderr, (retries, result.stderr)
        assert info(tools)["pin retries"] == str(retries)
        if expected == "PIN_AUTH_BLOCKED":
            # Until power-up even the right PIN is not checked, and costs nothing.
            blocked = change_pin(tools, PIN, "13579")
            assert "fido_dev_set_pin: FIDO_ERR_PIN_AUTH_BLOCKED" in blocked.stderr and info(tools)["pin retries"] == str(retries)
            key.power_cycle()
            in_a_row = 0
    locked = change_pin(tools, PIN, "13579")
    assert "fido_dev_set_pin: FIDO_ERR_PIN_BLOCKED" in locked.stderr and info(tools)["pin retries"] == "0", locked.stderr
    # A reset (within 10 s of power-up) is the way out: no PIN, no credentials.
    key.power_cycle()
    reset = answered(tools, tools.run("fido2-token", "-R", key.path), "authenticatorReset")
    assert reset.returncode == 0, reset.stderr
    assert "noclientPin" in info(tools)["options"].split(", ")


def test_fido2_token_resets_the_key(tools, key, tmp_path):
    made = make_credential(tools, tmp_path, "reset.example", "es256", "-r")
    request = tmp_path / "assert-params"
    request.write_text("\n".join([b64(hashlib.sha256(b"r").digest()), "reset.example", made[4]]) + "\n")
    assert tools.run("fido2-assert", "-G", "-i", request, key.path).returncode == 0
    key.power_cycle()  # a reset is allowed within 10 s of power-up
    reset = answered(tools, tools.run("fido2-token", "-R", key.path), "authenticatorReset")
    assert reset.returncode == 0, reset.stderr
    gone = tools.run("fido2-assert", "-G", "-i", request, key.path)
    assert gone.returncode == 1 and "FIDO_ERR_NO_CREDENTIALS" in gone.stderr, gone.stderr


def test_fido2_token_manages_discoverable_credentials(tools, key, tmp_path):
    """authenticatorCredentialManagement through fido2-token: the metadata, the RPs, an RP's
    credentials, and one deleted."""
    if "credMgmt" not in info(tools)["options"].split(", "):
        pytest.skip("the key does not offer authenticatorCredentialManagement yet (no credMgmt in its getInfo)")
    set_pin(tools)
    first = make_credential(tools, tmp_path, "one.example", "es256", "-r", stdin=f"{PIN}\n")
    second = make_credential(tools, tmp_path, "two.example", "es256", "-r", stdin=f"{PIN}\n")
    metadata = answered(tools, tools.run("fido2-token", "-I", "-c", key.path, stdin=f"{PIN}\n"), "authenticatorCredentialManagement")
    assert metadata.returncode == 0, metadata.stderr
    assert "existing rk(s): 2" in metadata.stdout, metadata.stdout
    rps = tools.run("fido2-token", "-L", "-r", key.path, stdin=f"{PIN}\n")
    assert rps.returncode == 0, rps.stderr
    assert re.search(r"^00: [0-9a-f]{64} one\.example$", rps.stdout, re.M) or "one.example" in rps.stdout, rps.stdout
    assert "two.example" in rps.stdout
    credentials = tools.run("fido2-token", "-L", "-k", "one.example", key.path, stdin=f"{PIN}\n")
    assert credentials.returncode == 0 and first[4] in credentials.stdout, credentials.stdout + credentials.stderr
    deleted = tools.run("fido2-token", "-D", "-i", first[4], key.path, stdin=f"{PIN}\n")
    assert deleted.returncode == 0, deleted.stderr
    after = tools.run("fido2-token", "-L", "-r", key.path, stdin=f"{PIN}\n")
    assert "one.example" not in after.stdout and "two.example" in after.stdout, after.stdout
    assert second[4] in tools.run("fido2-token", "-L", "-k", "two.example", key.path, stdin=f"{PIN}\n").stdout


# --- OpenSSH -sk keys ----------------------------------------------------------------------------


def sshsig_flipped(armored: str) -> str:
    """An SSH signature (ssh-keygen -Y sign) with one byte of its signature proper flipped: the
    byte before the security key's flags (1 byte) and counter (4 bytes), the last of the ECDSA s
    or of the Ed25519 signature."""
    lines = armored.strip().splitlines()
    blob = bytearray(base64.b64decode("".join(lines[1:-1])))
    blob[-6] ^= 0x01
    body = base64.b64encode(bytes(blob)).decode()
    return "\n".join([lines[0], *[body[i:i + 70] for i in range(0, len(body), 70)], lines[-1]]) + "\n"


@pytest.mark.skipif(shutil.which("ssh-keygen") is None, reason="openssh-client is not installed")
@pytest.mark.parametrize("kind,algorithm", [("ecdsa-sk", -7), ("ed25519-sk", -8)])
def test_an_openssh_security_key_signs_and_verifies(tools, key, profile, tmp_path, kind, algorithm):
    if algorithm not in profile["algorithms"]:
        pytest.skip(f"the security-key profile offers no {ALGORITHMS[algorithm]}")
    # Without the library, OpenSSH's helper finds no key.
    bare = tools.run("ssh-keygen", "-t", kind, "-f", tmp_path / "none", "-N", "", env={"LD_PRELOAD": None})
    assert bare.returncode != 0 and "device not found" in bare.stderr, bare.stderr
    made = answered(tools, tools.run("ssh-keygen", "-t", kind, "-f", tmp_path / "id", "-N", "", "-C", "alice@example.com"),
                    "authenticatorMakeCredential")
    assert made.returncode == 0, made.stderr
    public = (tmp_path / "id.pub").read_text().split()
    assert public[0] == {"ecdsa-sk": "sk-ecdsa-sha2-nistp256@openssh.com", "ed25519-sk": "sk-ssh-ed25519@openssh.com"}[kind]
    (tmp_path / "allowed_signers").write_text(f"alice@example.com {public[0]} {public[1]}\n")
    message = tmp_path / "message.txt"
    message.write_text("a commit to sign\n")
    signed = answered(tools, tools.run("ssh-keygen", "-Y", "sign", "-f", tmp_path / "id", "-n", "file", message),
                      "authenticatorGetAssertion")
    assert signed.returncode == 0, signed.stderr
    signature = tmp_path / "message.txt.sig"

    def verify(sig_file) -> subprocess.CompletedProcess:
        return tools.run("ssh-keygen", "-Y", "verify", "-f", tmp_path / "allowed_signers", "-I", "alice@example.com",
                         "-n", "file", "-s", sig_file, stdin=message.read_text(), env={"LD_PRELOAD": None})
    good = verify(signature)
    assert good.returncode == 0 and 'Good "file" signature for alice@example.com' in good.stdout, good.stdout + good.stderr
    # The judge can say no: a flipped signature byte, or another message.
    tampered = tmp_path / "tampered.sig"
    tampered.write_text(sshsig_flipped(signature.read_text()))
    refused = verify(tampered)
    assert refused.returncode != 0 and "Signature verification failed" in refused.stderr, refused.stdout + refused.stderr
    message.write_text("another commit\n")
    assert verify(signature).returncode != 0


@pytest.mark.skipif(shutil.which("ssh-keygen") is None, reason="openssh-client is not installed")
def test_openssh_takes_the_key_the_person_touches_and_signs_with_the_key_that_holds_it(fido2_library, tmp_path):
    """Two keys listed: OpenSSH asks both for a touch (libfido2's touch requests, canceled on the
    other) and makes the SSH key on the one touched; to sign, it asks each, without a touch,
    whether it holds the credential, and signs with that one."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    untouched = Key(tmp_path / "a", touch="never")
    try:
        touched = Key(tmp_path / "b", touch="300")
        try:
            tools = Tools(touched, fido2_library, tmp_path)
            both = {"AUTHCTL_CTAP": f"{untouched.unix},{touched.unix}"}
            listed = tools.run("fido2-token", "-L", env=both)
            assert [line.split(": ")[0] for line in listed.stdout.splitlines()] == [untouched.path, touched.path]
            made = tools.run("ssh-keygen", "-vvv", "-t", "ecdsa-sk", "-f", tmp_path / "id", "-N", "", env=both)
            assert made.returncode == 0, made.stderr
            assert f"using device {touched.path}" in made.stderr, made.stderr
            public = (tmp_path / "id.pub").read_text().split()
            (tmp_path / "allowed_signers").write_text(f"alice@example.com {public[0]} {public[1]}\n")
            (tmp_path / "message.txt").write_text("signed by the key that holds it\n")
            signed = tools.run("ssh-keygen", "-vvv", "-Y", "sign", "-f", tmp_path / "id", "-n", "file", tmp_path / "message.txt",
                               env=both)
            assert signed.returncode == 0, signed.stderr
            assert f"found key in {touched.path}" in signed.stderr, signed.stderr
            verified = tools.run("ssh-keygen", "-Y", "verify", "-f", tmp_path / "allowed_signers", "-I", "alice@example.com",
                                 "-n", "file", "-s", tmp_path / "message.txt.sig", stdin=(tmp_path / "message.txt").read_text())
            assert verified.returncode == 0, verified.stdout + verified.stderr
        finally:
            touched.stop()
    finally:
        untouched.stop()
