"""`authctl ctap serve` for the interop tests, and python-fido2's own device tests run against it.

`CtapServe` starts the command (a throw-away account with one security key), reads the places it
listens on from its stdout, drives its controller (the Pico controller python-fido2's device tests
drive: `/usbN/touch/on|off`, `/usbN/power/on|off`), and stops it with SIGTERM, holding it to exit
status 0. `device_suite()` runs python-fido2's `tests/device` from the sdist of the installed
version (downloaded once, kept under .build/interop/) against a running key through the
connector's pytest plugin, and `outcomes()` reads the run's JUnit XML.
"""
from __future__ import annotations

import importlib.metadata
import os
import pathlib
import re
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import threading
import urllib.request
import xml.etree.ElementTree as ElementTree

from conftest import BIN, ROOT, own_environment, wait_until

CACHE = ROOT / ".build" / "interop"
CLIENT = ROOT / "clients" / "python"


class CtapServe:
    """One `authctl ctap serve`. `keys` are its `$AUTHCTL_CTAP` entries (`unix:/path`,
    `udp:HOST:PORT`), `controller_url` its controller."""

    def __init__(self, scratch: pathlib.Path, *, unix: bool = True, udp: bool = False, touch: str = "button",
                 args: tuple = (), timeout: float = 60.0):
        # A short directory of its own: a Unix socket's path must fit in 107 bytes, which pytest's
        # temporary directories do not leave room for.
        self.directory = pathlib.Path(tempfile.mkdtemp(prefix="authctl-ctap-", dir="/tmp"))
        self.socket_path = str(self.directory / "key.sock") if unix else None
        command = [BIN, *args, "ctap", "serve"]
        if unix:
            command += ["--socket", self.socket_path]
        if udp:
            command += ["--udp", "127.0.0.1:0"]
        command += ["--controller", "127.0.0.1:0", "--touch", touch]
        self.command = command
        self.stderr_path = scratch / "ctap-serve.stderr"
        self._stderr = open(self.stderr_path, "w")
        self.process = subprocess.Popen(command, env=own_environment(scratch), stdin=subprocess.DEVNULL,
                                        stdout=subprocess.PIPE, stderr=self._stderr, text=True)
        self.lines: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()
        wanted = int(unix) + int(udp) + 1

        def listening():
            assert self.process.poll() is None, f"ctap serve exited {self.process.returncode}: {self.stderr}"
            return len(self.lines) >= wanted
        try:
            wait_until(listening, f"ctap serve prints where it listens ({command})", timeout)
        except BaseException:
            self.kill()
            raise
        self.keys: list[str] = []
        self.controller_url = None
        for line in self.lines[:wanted]:
            words = line.split()
            if words[:2] == ["ctap", "unix"]:
                self.keys.append(f"unix:{words[2]}")
            elif words[:2] == ["ctap", "udp"]:
                self.keys.append(f"udp:{words[2]}")
            elif words[:1] == ["controller"]:
                self.controller_url = words[1]
        assert self.controller_url and len(self.keys) == wanted - 1, self.lines

    def _read(self):
        for line in self.process.stdout:
            self.lines.append(line.rstrip("\n"))

    @property
    def stderr(self) -> str:
        return self.stderr_path.read_text()

    @property
    def unix_key(self) -> str:
        return next(key for key in self.keys if key.startswith("unix:"))

    @property
    def udp_key(self) -> str:
        return next(key for key in self.keys if key.startswith("udp:"))

    def environment(self, keys=None, **extra) -> dict:
        """This process's environment with `AUTHCTL_CTAP` naming `keys` (default all of this
        key's) and the tree's client first on the module path."""
        env = dict(os.environ)
        env["AUTHCTL_CTAP"] = ",".join(self.keys if keys is None else keys)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(CLIENT), env.get("PYTHONPATH")]))
        env.update(extra)
        return env

    def control(self, path: str) -> str:
        """`GET path` on the controller (`/usb0/power/off`): its body."""
        with urllib.request.urlopen(self.controller_url.rstrip("/") + path, timeout=30) as answer:
            assert answer.status == 200, (path, answer.status)
            return answer.read().decode()

    def power(self, on: bool):
        self.control(f"/usb0/power/{'on' if on else 'off'}")

    def touch(self, on: bool):
        self.control(f"/usb0/touch/{'on' if on else 'off'}")

    def stop(self, timeout: float = 60.0):
        """SIGTERM; the command must exit 0 (every place it listened on released)."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            code = self.process.wait(timeout=timeout)
        finally:
            self.kill()
        assert code == 0, f"ctap serve exited {code}: {self.stderr}"
        assert self.socket_path is None or not os.path.exists(self.socket_path), "the socket outlived ctap serve"

    def kill(self):
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self._stderr.close()
        shutil.rmtree(self.directory, ignore_errors=True)


def fido2_version() -> str:
    return importlib.metadata.version("fido2")


def fido2_sdist() -> pathlib.Path:
    """python-fido2's sdist for the installed version, from PyPI once, then from .build/interop/."""
    version = fido2_version()
    archive = CACHE / f"fido2-{version}.tar.gz"
    if archive.exists():
        return archive
    CACHE.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=CACHE) as download:
        result = subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--disable-pip-version-check", "--no-deps",
                                 "--no-binary", ":all:", "-d", download, f"fido2=={version}"],
                                capture_output=True, text=True, timeout=600)
        assert result.returncode == 0, f"could not download python-fido2 {version}'s sdist: {result.stderr}"
        fetched = pathlib.Path(download) / archive.name
        assert fetched.exists(), os.listdir(download)
        os.replace(fetched, archive)   # whole or not at all
    return archive


def device_tests(destination: pathlib.Path) -> pathlib.Path:
    """The sdist's tests/ (and its pyproject.toml: the rootdir) under `destination`; the sdist's
    fido2/ package is left out, so the tests import the installed python-fido2, the one
    the connector patches."""
    with tarfile.open(fido2_sdist()) as sdist:
        top = sdist.getnames()[0].split("/")[0]
        members = [m for m in sdist.getmembers()
                   if m.name == f"{top}/pyproject.toml" or m.name.startswith(f"{top}/tests/")]
        sdist.extractall(destination, members=members, filter="data")
    return destination / top


def device_suite(key: CtapServe, scratch: pathlib.Path, *, entry: str | None = None, extra: tuple = (),
                 timeout: float = 1800.0) -> tuple[subprocess.CompletedProcess, pathlib.Path]:
    """python-fido2's `pytest tests/device` against `key` (its key `entry`, default the Unix one),
    with the connector's plugin: the completed run and its JUnit XML."""
    root = device_tests(scratch / "sdist")
    junit = scratch / "device-suite.xml"
    entry = entry or key.unix_key
    command = [sys.executable, "-m", "pytest", "tests/device", "--controller", key.controller_url, "--pico-port", "0",
               "-p", "authctl_client.ctap_pytest", "-p", "no:cacheprovider", "--junitxml", str(junit), "-rA", *extra]
    # A session of its own: a run that overruns is killed whole.
    process = subprocess.Popen(command, cwd=root, env=key.environment([entry]), stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        output, _ = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        output, _ = process.communicate()
        raise AssertionError(f"python-fido2's device tests did not finish within {timeout:.0f} s:\n{output[-6000:]}")
    return subprocess.CompletedProcess(command, process.returncode, output, None), junit


def outcomes(junit: pathlib.Path) -> dict:
    """`{test: (outcome, message)}` from a JUnit XML: a test is `test_file.py::name[params]`; the
    outcome `passed`, `skipped` or `failing` (a failure or an error, in the test or its fixtures);
    the message the first line pytest gave (a skip's reason, a failure's exception)."""
    found = {}
    for case in ElementTree.parse(junit).getroot().iter("testcase"):
        module = case.get("classname", "").rsplit(".", 1)[-1]
        name = f"{module}.py::{case.get('name')}"
        outcome, message = "passed", ""
        for child in case:
            if child.tag in ("failure", "error"):
                outcome, message = "failing", child.get("message") or (child.text or "")
                break
            if child.tag == "skipped" and outcome == "passed":
                outcome, message = "skipped", child.get("message") or ""
        message = message.strip().splitlines()[0] if message.strip() else ""
        if outcome == "skipped" and message.startswith("Skipped: "):
            message = message[len("Skipped: "):]
        # A test that failed in its call and again in its teardown is reported twice: once failing.
        if found.get(name, ("passed",))[0] != "failing":
            found[name] = (outcome, message)
    return found


# docs/ctap.md's conformance section: a count line and a table of every test that does not pass,
# between these two comments (scripts/ctap_conformance.py --write regenerates what lies between).
DOC = ROOT / "docs" / "ctap.md"
BEGIN = "<!-- conformance: scripts/ctap_conformance.py --write regenerates this from a run -->"
END = "<!-- end of conformance -->"
COUNT = re.compile(r"(\d+) of python-fido2 ([0-9][0-9.]*)'s (\d+) device tests pass")


def documented(text: str | None = None) -> tuple[int, list]:
    """docs/ctap.md's count of passing tests and its rows, `(pattern, outcome, reason)`. A
    pattern is a test (`test_file.py::name[params]`) or, with one `*`, the tests it stands for
    (`test_file.py::*`, `test_file.py::name[*]`)."""
    text = DOC.read_text() if text is None else text
    assert BEGIN in text and END in text, f"{DOC} has no conformance section"
    section = text.split(BEGIN, 1)[1].split(END, 1)[0]
    count = COUNT.search(section)
    assert count, f"{DOC}'s conformance section has no count line"
    rows = []
    for line in section.splitlines():
        cells = [cell.strip() for cell in re.split(r"(?<!\\)\|", line.strip())[1:-1]]
        if len(cells) == 3 and cells[0].startswith("`"):
            rows.append((cells[0].strip("`"), cells[1], cells[2].replace("\\|", "|")))
    return int(count.group(1)), rows


def matches(pattern: str, test: str) -> bool:
    if "*" not in pattern:
        return pattern == test
    prefix, suffix = pattern.split("*", 1)
    return len(test) >= len(prefix) + len(suffix) and test.startswith(prefix) and test.endswith(suffix)


def row_for(rows: list, test: str):
    return next((row for row in rows if matches(row[0], test)), None)


def section(found: dict, version: str, rows: list = ()) -> str:
    """The conformance section for a run's outcomes `found`. The whole run, a file or a
    parametrized test whose tests all end alike (outcome and message) is one row (`*`,
    `test_file.py::*`, `test_file.py::name[*]`). A skipped row gives pytest's reason; a failing
    one the reason `rows` (the page's) give a failing row of the same pattern, else the
    exception's first line: a reason written for a row is kept while the row stands as it was."""
    passed = sum(1 for outcome, _ in found.values() if outcome == "passed")
    entries = {test: end for test, end in found.items() if end[0] != "passed"}
    written = {row[0]: row[2] for row in rows if row[1] == "failing"}

    def same(tests):
        ends = {entries.get(test) for test in tests}
        return len(ends) == 1 and None not in ends

    table, done = [], set()
    for test in sorted(entries):
        if test in done:
            continue
        module, name = test.split("::", 1)
        in_module = [t for t in found if t.startswith(module + "::")]
        base = name.split("[", 1)[0]
        of_test = [t for t in found if t.startswith(f"{module}::{base}[")]
        if len(found) > 1 and same(found):
            pattern, covered = "*", list(found)
        elif len(in_module) > 1 and same(in_module):
            pattern, covered = f"{module}::*", in_module
        elif len(of_test) > 1 and same(of_test):
            pattern, covered = f"{module}::{base}[*]", of_test
        else:
            pattern, covered = test, [test]
        done.update(covered)
        outcome, reason = entries[test]
        if outcome == "failing":
            reason = written.get(pattern, reason)
        table.append(f"| `{pattern}` | {outcome} | {reason.replace('|', chr(92) + '|')} |")
    lines = [BEGIN, "",
             f"{passed} of python-fido2 {version}'s {len(found)} device tests pass against `authctl ctap serve`; "
             f"the others:", "", "| test | outcome | reason |", "| --- | --- | --- |", *table, "", END]
    return "\n".join(lines)
