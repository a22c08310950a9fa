"""The JavaScript client (clients/js): its own suite, `node --test clients/js/test/`, run against the
binary under test. It judges the server's answers with node:crypto, runs 32 accounts in parallel,
drives sync on the virtual clock through the event stream, and runs the worked example against the
example bank (docs/examples/rp_server.py, with this interpreter's py_webauthn).

Node 18 or later is required: without it this test fails, it does not skip."""
import os
import re
import shutil
import subprocess
import sys

from conftest import BIN, ROOT, own_environment

NODE = os.environ.get("NODE", "node")


def test_the_javascript_client_suite_passes(tmp_path):
    node = shutil.which(NODE)
    assert node, f"{NODE} is not on the PATH: the JavaScript client's suite needs Node 18 or later (Debian: apt-get install nodejs)"
    version = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=60).stdout.strip()
    major = re.match(r"v(\d+)\.", version)
    assert major and int(major.group(1)) >= 18, f"{node} is {version!r}; the JavaScript client needs Node 18 or later"

    env = own_environment(tmp_path)  # its HOME and TMPDIR under tmp_path; no AUTHCTL_* of the caller's
    env.update(AUTHCTL_BIN=BIN, PYTHON=sys.executable)
    proc = subprocess.run([node, "--test", "--test-reporter=tap", "clients/js/test/"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=900)
    output = f"node {version}, exit {proc.returncode}\n--- stdout ---\n{proc.stdout}\n--- stderr ---\n{proc.stderr}"
    assert proc.returncode == 0, output
    passed = re.search(r"^# pass (\d+)$", proc.stdout, re.M)
    failed = re.search(r"^# fail (\d+)$", proc.stdout, re.M)
    assert passed and failed, output
    assert int(failed.group(1)) == 0, output
    assert int(passed.group(1)) >= 25, f"only {passed.group(1)} tests ran\n{output}"
