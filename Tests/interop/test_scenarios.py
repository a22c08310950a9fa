"""Scenarios from the command line: every shipped scenario passes (the RP-in-the-loop ones against
a py_webauthn bank on loopback, started and stopped here), runs repeat byte for byte, and mistakes
and unmet expectations are reported where they are, with their exit codes."""
import importlib.util
import json
import os
import pathlib
import subprocess
import threading

import pytest

from conftest import BIN, ROOT, wait_until

SCENARIOS = sorted((ROOT / "docs" / "scenarios").glob("*.scn"))


def load_rp_server():
    spec = importlib.util.spec_from_file_location("rp_server", ROOT / "docs" / "examples" / "rp_server.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def rp():
    """The example bank (docs/examples/rp_server.py) on a free loopback port."""
    server = load_rp_server().serve(0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def scenario(path, *extra, env=None):
    environment = {k: v for k, v in os.environ.items() if not k.startswith("AUTHCTL_") and k != "RP"}
    environment.update(env or {})
    return subprocess.run([BIN, "scenario", "run", str(path), *extra], env=environment, capture_output=True,
                          text=True, timeout=120)


def write(tmp_path, text, name="t.scn"):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_every_edge_case_of_the_guide_has_a_scenario():
    names = {p.stem for p in SCENARIOS}
    assert {"factory-reset", "password-upgrade", "sync-lag", "excluded-after-sync", "banking", "upgrade-flow"} <= names


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.stem)
def test_shipped_scenario_passes(rp, path):
    result = scenario(path, env={"RP": rp})
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == f"scenario {path} (seed {lines[0].rsplit('seed ', 1)[1]}"
    assert lines[-1].startswith("passed: ")
    assert result.stderr == ""


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.stem)
def test_same_file_same_bytes(rp, path):
    for extra in ((), ("--json",)):
        first, second = scenario(path, *extra, env={"RP": rp}), scenario(path, *extra, env={"RP": rp})
        assert first.returncode == second.returncode == 0, first.stderr
        assert first.stdout == second.stdout


def test_json_report(rp):
    path = ROOT / "docs" / "scenarios" / "upgrade-flow.scn"
    report = json.loads(scenario(path, "--json", env={"RP": rp}).stdout)
    assert report["passed"] is True and report["failures"] == [] and report["file"] == str(path)
    register = next(s for s in report["steps"] if s["step"].startswith("phone register"))
    assert register["outcome"] == "ok" and register["result"]["flags"] == "UP,UV,BE"
    assert len(register["result"]["id"]) == 22 and register["result"]["attachment"] == "platform"
    refused = next(s for s in report["steps"] if s["outcome"] == "notHandled")
    assert refused["step"].startswith("laptop sign") and refused["error"]
    signed = [s for s in report["steps"] if s["step"].startswith("laptop sign") and s["outcome"] == "ok"]
    assert signed[0]["result"]["id"] == register["result"]["id"]
    assert signed[0]["time"] - register["time"] == 13_000


def test_credential_ids_follow_the_seed(tmp_path):
    text = "seed {}\ndevice add phone\nphone register user alice\n"
    ids = []
    for seed in (1, 1, 2):
        report = json.loads(scenario(write(tmp_path, text.format(seed)), "--json").stdout)
        ids.append(report["steps"][-1]["result"]["id"])
    assert ids[0] == ids[1] != ids[2]


def test_unmet_expectation_exits_26_naming_the_step(tmp_path):
    path = write(tmp_path, "device add phone\nphone register user alice\nphone holds => bob\nphone sign => ok count=3\n")
    stopped = scenario(path)
    assert stopped.returncode == 26
    assert stopped.stdout.splitlines()[-1] == "failed: 1 unmet expectation(s) in 3 steps"
    assert stopped.stderr == f"authctl: error: scenarioFailed: {path}:3:1: phone holds: expected bob, got alice\n"
    every = scenario(path, "--keep-going")
    assert every.returncode == 26
    assert every.stderr.splitlines() == [
        f"authctl: {path}:3:1: phone holds: expected bob, got alice",
        f"authctl: error: scenarioFailed: {path}:4:18: phone sign: expected count=3, got count=0",
    ]
    as_json = scenario(path, "--json", "--keep-going")
    assert as_json.returncode == 26
    report = json.loads(as_json.stdout)
    assert [f["line"] for f in report["failures"]] == [3, 4] and report["passed"] is False
    error = json.loads(as_json.stderr)
    assert error["error"] == "scenarioFailed" and error["exitCode"] == 26


@pytest.mark.parametrize("text,where,says", [
    ("device add phone\nphone register colour blue\n", "2:16", "does not take 'colour'"),
    ("wait forever\n", "1:6", "not a duration"),
    ("device add phone\nat 1m phone holds\nat 30s phone holds\n", "3:1", "earlier than now"),
    ("http GET ${AUTHCTL_TEST_UNSET}/x\n", "1:1", "is not set"),
    ("device add phone\nphone sign options missing.json\n", "2:1", "cannot read options file"),
    ("http GET http://127.0.0.1:9/nothing\n", "1:1", "http://127.0.0.1:9/nothing"),
])
def test_scenario_mistakes_are_bad_input_with_file_line_column(tmp_path, text, where, says):
    path = write(tmp_path, text)
    result = scenario(path)
    assert result.returncode == 65, result.stderr
    assert result.stderr.startswith(f"authctl: error: badInput: {path}:{where}: "), result.stderr
    assert says in result.stderr


def test_unreadable_scenario(tmp_path):
    missing = scenario(tmp_path / "nothing.scn")
    assert missing.returncode == 65 and "nothing.scn" in missing.stderr
    binary = tmp_path / "binary.scn"
    binary.write_bytes(b"\xff\xfe\x00device add phone\n")
    assert scenario(binary).returncode == 65


def test_scenario_leaves_no_vault_behind(tmp_path):
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    result = scenario(write(tmp_path, "device add phone\nphone register user a\n"), env={"TMPDIR": str(tmpdir)})
    assert result.returncode == 0, result.stderr
    assert list(tmpdir.iterdir()) == []


def test_inline_options_and_options_from_the_reply(rp, tmp_path):
    text = """origin https://yourbank.example
http POST ${RP}/reset => ok
device add phone pin 1234
phone register user budi options {"rp": {"id": "yourbank.example", "name": "Bank"}, "user": {"id": "Y3VzdG9tZXItMDA0Mg", "name": "budi", "displayName": "Budi"}, "challenge": "AAAAAAAAAAAAAAAAAAAAAA", "pubKeyCredParams": [{"type": "public-key", "alg": -7}], "authenticatorSelection": {"residentKey": "required", "userVerification": "required"}} => ok flags=UP,UV,BE,BS user=budi
http POST ${RP}/login/begin => ok status=200
phone sign options reply.publicKey => ok user=budi
http POST ${RP}/login/finish body {"credential": $response} => ok status=400 json.error="unknown passkey"
"""
    result = scenario(write(tmp_path, text), env={"RP": rp})
    assert result.returncode == 0, result.stdout + result.stderr


def test_response_posted_raw_or_wrapped(rp, tmp_path):
    text = """origin https://yourbank.example
http POST ${RP}/reset
device add phone pin 1234
http POST ${RP}/password/login body {"username": "budi", "password": "rahasia"} => ok status=200
http POST ${RP}/register/begin
phone register as budi options reply.publicKey
http POST ${RP}/register/finish body $response => ok status=200 json.verified=true
http POST ${RP}/login/begin
phone sign options reply.publicKey fault wrong-challenge
http POST ${RP}/login/finish body $response => ok status=400
http POST ${RP}/login/begin
phone sign options reply.publicKey
http POST ${RP}/login/finish body {"credential": $response} => ok status=200 json.user=budi
"""
    result = scenario(write(tmp_path, text), env={"RP": rp})
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("signal_number", [2, 15, 1])
def test_interrupted_run_removes_its_vault_and_exits_canceled(tmp_path, signal_number):
    lines = ["device add phone pin 1111", "device add laptop pin 2222"] + ["device laptop offline", "device laptop online"] * 3000
    path = write(tmp_path, "\n".join(lines) + "\n")
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    environment = {k: v for k, v in os.environ.items() if not k.startswith("AUTHCTL_")}
    environment["TMPDIR"] = str(tmpdir)
    proc = subprocess.Popen([BIN, "scenario", "run", str(path)], env=environment, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    def catching():  # the run catches the signal once it has made its vault (/proc's SigCgt mask)
        assert proc.poll() is None, "the run ended before it was interrupted"
        status = pathlib.Path(f"/proc/{proc.pid}/status").read_text()
        caught = int(next(line.split()[1] for line in status.splitlines() if line.startswith("SigCgt:")), 16)
        return bool(caught >> (signal_number - 1) & 1)
    wait_until(catching, "the run catches the signal")
    assert any(tmpdir.iterdir())
    proc.send_signal(signal_number)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 10, err
    assert err.startswith("authctl: error: canceled: interrupted by signal"), err
    assert list(tmpdir.iterdir()) == []


def test_rp_supplied_text_is_escaped_in_the_timeline(tmp_path):
    path = write(tmp_path, 'device add phone pin 1234\nphone register user "eve\\u001b[2J\\npassed: 9 steps" => ok\n')
    result = scenario(path)
    assert result.returncode == 0, result.stderr
    assert "\x1b" not in result.stdout and result.stdout.count("\n") == 4
    assert "eve\\x1b[2J\\x0apassed: 9 steps" in result.stdout
    report = json.loads(scenario(path, "--json").stdout)
    assert report["steps"][1]["result"]["user"] == "eve\x1b[2J\npassed: 9 steps"  # JSON stays exact


def test_scenario_size_limits(tmp_path):
    big = tmp_path / "big.scn"
    big.write_text("# padding\n" * 500_000)  # 5 MB of comments
    result = scenario(big)
    assert result.returncode == 65 and "larger than 4 MiB" in result.stderr
    assert f"{big}: " in result.stderr and f"{big}:0" not in result.stderr
    huge = "x" * (1 << 20)
    options = write(tmp_path, 'device add phone\nphone register options {"pad": "' + huge + '"}\n', "options.scn")
    result = scenario(options)
    assert result.returncode == 65 and "at most 1 MiB" in result.stderr
    fifo = tmp_path / "fifo.scn"
    os.mkfifo(fifo)
    result = scenario(fifo)
    assert result.returncode == 65 and "not a regular file" in result.stderr
