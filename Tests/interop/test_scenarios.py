"""Scenarios from the command line: every shipped scenario passes (the RP-in-the-loop ones against
a py_webauthn bank on loopback, started and stopped here), runs repeat byte for byte, and mistakes
and unmet expectations are reported where they are, with their exit codes."""
import importlib.util
import json
import re
import os
import pathlib
import resource
import subprocess
import threading

import pytest

from conftest import BIN, ROOT, unb64url, wait_until

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


def scenario(path, *extra, env=None, cwd=None, memory=None):
    """Runs `authctl scenario run PATH`; `memory`: an address-space limit in bytes (`ulimit -v`)."""
    environment = {k: v for k, v in os.environ.items() if not k.startswith("AUTHCTL_") and k != "RP"}
    environment.update(env or {})
    limit = (lambda: resource.setrlimit(resource.RLIMIT_AS, (memory, memory))) if memory else None
    return subprocess.run([BIN, "scenario", "run", str(path), *extra], env=environment, capture_output=True,
                          text=True, timeout=120, cwd=cwd, preexec_fn=limit)


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
    # The phone answers as the default profile, so the id is as long as that profile's (iCloud Keychain's 20 bytes).
    default = next(p for p in json.loads(subprocess.run([BIN, "--json", "profiles"], capture_output=True, text=True).stdout) if p["isDefault"])
    assert len(unb64url(register["result"]["id"])) == default["credentialIdLength"] == 20
    assert register["result"]["attachment"] == "platform"
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
    ('device add phone\nphone register uv discouraged options {"challenge": "AAAA"}\n', "2:16",
     "'uv' shapes the options the scenario builds; beside 'options' it would be dropped"),
    ("device add phone\nphone sign options reply allow a\n", "2:26", "allowCredentials"),
    ("device add phone\nphone sign device-bound\n", "2:12", "it is a word of register"),
    ("device add phone pin 1111 pin 2222\n", "1:27", "'pin' is given twice"),
    ("device add phone pin 1111\ndevice add laptop approve-with phone\n", "2:19", "without 'pin' it would be dropped"),
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
phone register as budi options {"rp": {"id": "yourbank.example", "name": "Bank"}, "user": {"id": "Y3VzdG9tZXItMDA0Mg", "name": "budi", "displayName": "Budi"}, "challenge": "AAAAAAAAAAAAAAAAAAAAAA", "pubKeyCredParams": [{"type": "public-key", "alg": -7}], "authenticatorSelection": {"residentKey": "required", "userVerification": "required"}} => ok flags=UP,UV,BE,BS user=budi
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


REQUEST = '{"challenge": "AAAAAAAAAAAAAAAAAAAAAA", "rpId": "example.com", "userVerification": "discouraged"}'


@pytest.mark.parametrize("given", ["rel.scn", "./rel.scn", "sub/rel.scn", "ABSOLUTE"])
def test_options_file_is_relative_to_the_scenario_file(tmp_path, given):
    folder = tmp_path / "sub" if given.startswith("sub/") else tmp_path
    folder.mkdir(exist_ok=True)
    (folder / "small.json").write_text(REQUEST)
    path = write(folder, "device add phone\nphone register user alice\nphone sign options small.json => ok user=alice\n", "rel.scn")
    result = scenario(path if given == "ABSOLUTE" else given, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""


def tmpdir_env(tmp_path):
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    return tmpdir, {"TMPDIR": str(tmpdir)}


MEMORY = 512 << 20  # far more than a run needs; far less than what an unbounded read would take


@pytest.mark.parametrize("source", ["large", "sparse", "/dev/zero"])
def test_options_file_is_read_through_the_command_lines_1_mib_bound(tmp_path, source):
    if source == "large":
        options = tmp_path / "large.json"
        options.write_text(REQUEST[:-1] + ', "pad": "' + "x" * (1 << 20) + '"}')
    elif source == "sparse":
        options = tmp_path / "sparse.json"
        with open(options, "wb") as f:
            f.truncate(3 << 30)  # 3 GiB of zeros that take no disk
    else:
        options = pathlib.Path(source)
    path = write(tmp_path, f"device add phone\nphone register user alice\nphone sign options {options}\n")
    tmpdir, env = tmpdir_env(tmp_path)
    result = scenario(path, env=env, memory=MEMORY)
    assert result.returncode == 65, (result.returncode, result.stderr[-500:])
    assert result.stderr.startswith(f"authctl: error: badInput: {path}:3:1: options file {options} holds more than 1048576 bytes")
    assert list(tmpdir.iterdir()) == []


def test_options_file_of_exactly_1_mib_is_read(tmp_path):
    options = tmp_path / "full.json"
    padding = (1 << 20) - len(REQUEST) - len(', "pad": ""')
    options.write_text(REQUEST[:-1] + ', "pad": "' + "x" * padding + '"}')
    assert options.stat().st_size == 1 << 20
    path = write(tmp_path, f"device add phone\nphone register user alice\nphone sign options {options.name} => ok user=alice\n")
    result = scenario(path)
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("copies,where", [(60, "comment"), (6000, "comment"), (60, "step")])
def test_substitution_cannot_grow_a_scenario_past_4_mib(tmp_path, copies, where):
    """Each ${PAD} is 100 KB (near the most one variable can hold): 60 of them make 6 MB, 6000
    would make 600 MB. The limit applies to
    the text as replaced, and while replacing, so it never grows in memory past it."""
    pads = "${PAD}" * copies
    line = f"# {pads}" if where == "comment" else f"phone register user {pads}"
    path = write(tmp_path, f"device add phone\n{line}\n")
    tmpdir, env = tmpdir_env(tmp_path)
    env["PAD"] = "p" * 100_000
    result = scenario(path, env=env, memory=MEMORY)
    assert result.returncode == 65, (result.returncode, result.stderr[-500:])
    head = line[:line.index("$")]
    fitting = ((4 << 20) - len("device add phone\n") - len(head)) // 100_000  # the first ${PAD} past the limit
    assert result.stderr.startswith(f"authctl: error: badInput: {path}:2:{len(head) + 1 + fitting * 100_000}: "), result.stderr[:300]
    assert "with ${NAME} replaced, the scenario would be larger than 4 MiB" in result.stderr
    assert list(tmpdir.iterdir()) == []


def test_substituted_word_is_at_most_1_mib(tmp_path):
    path = write(tmp_path, "device add phone\nphone register user " + "${NAME}" * 11 + "\n")
    result = scenario(path, env={"NAME": "n" * 100_000})
    assert result.returncode == 65, result.stderr[-300:]
    assert result.stderr.startswith(f"authctl: error: badInput: {path}:2:21: a word is at most 1 MiB")
    fits = scenario(path, env={"NAME": "n" * 5})  # a user.id of 55 bytes
    assert fits.returncode == 0, fits.stderr


def test_json_report_says_error_null_for_a_step_that_succeeded(tmp_path):
    report = json.loads(scenario(write(tmp_path, "device add phone\nphone sign => notHandled\n"), "--json").stdout)
    added, refused = report["steps"]
    assert "error" in added and added["error"] is None
    assert refused["outcome"] == "notHandled" and isinstance(refused["error"], str) and refused["error"]


def test_compound_durations_in_a_scenario(tmp_path):
    text = """device add phone pin 1111
device add laptop pin 2222
sync upload 1m30s download 2s500ms..1h0.5m
phone register user alice
at 1h30m laptop holds => alice
wait 48h5m
laptop sign timeout 1m30s action timeout => timedOut
"""
    report = json.loads(scenario(write(tmp_path, text), "--json").stdout)
    assert report["passed"], report["failures"]
    times = {s["line"]: s["time"] for s in report["steps"]}
    assert times[5] == 90 * 60_000 and times[7] == times[5] + (48 * 60 + 5) * 60_000


def test_compound_durations_at_the_command_line(authctl):
    assert authctl.run("sync", "set", "--upload-delay", "1m30s", "--download-delay", "1h..48h5m").code == 0
    status = authctl.run("--json", "sync", "status").json
    assert status["uploadDelay"] == "90s" and status["downloadDelay"] == "1h..2885m"
    for bad in ("5s1m", "1h1h", "1hm", "1m30", "m5s", "1h-5m", "1h 5m"):
        result = authctl.run("sync", "set", "--upload-delay", bad)
        assert result.code == 64, (bad, result.stderr)


def test_sync_status_step_shows_each_transfer_and_when(tmp_path):
    text = """seed 3
device add phone pin 1111
device add laptop pin 2222
sync upload 2s download 5s
phone register user alice
sync status => ok phone.uploads=alice@2s laptop.downloads=alice@7s laptop.uploads=none store=ok
sync status device laptop => ok downloads=alice uploads=none
at 7s sync status device laptop => ok downloads=none
laptop holds => alice
device laptop offline
laptop delete alice
sync status device laptop => ok uploads=-alice@offline
sync status device phone => ok downloads!=alice downloads=-alice@offline
"""
    result = scenario(write(tmp_path, text))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "at 0s     sync status device laptop => ok uploads=none downloads=alice@7s store=ok\n" in result.stdout
    wrong = scenario(write(tmp_path, "device add phone\ndevice add laptop\nsync download 5s\nphone register user a\n"
                                     "sync status device laptop => ok downloads=a@6s\n", "wrong.scn"))
    assert wrong.returncode == 26
    assert wrong.stderr.endswith("expected downloads=a@6s, got downloads=a@5s\n"), wrong.stderr


def test_absence_checks(tmp_path):
    text = """device add phone pin 1111
device add laptop pin 2222
sync download 10s
phone register user alice
phone register user bob
phone holds => passkeys!=carol
laptop holds => passkeys!=alice,bob
phone delete alice
phone holds => bob passkeys!=alice
at 10s laptop holds => passkeys!=alice
laptop sign user bob => ok user!=alice credential=bob
"""
    result = scenario(write(tmp_path, text))
    assert result.returncode == 0, result.stdout + result.stderr
    present = scenario(write(tmp_path, "device add phone\nphone register user alice\nphone holds => passkeys!=bob,alice\n", "p.scn"))
    assert present.returncode == 26
    assert present.stderr.endswith(":3:16: phone holds: expected passkeys!=bob,alice, got passkeys=alice\n"), present.stderr


def test_scenarios_guide_examples_run_as_printed(tmp_path):
    """Each ```scn block of docs/scenarios.md passes; a ```timeline block after it is what it prints."""
    text = (ROOT / "docs" / "scenarios.md").read_text()
    blocks = re.findall(r"```(scn|timeline)\n(.*?)```", text, re.S)
    assert [kind for kind, _ in blocks].count("scn") >= 3
    last = None
    for i, (kind, body) in enumerate(blocks):
        if kind == "scn":
            last = scenario(write(tmp_path, body, f"example{i}.scn"))
            assert last.returncode == 0, body + last.stdout + last.stderr
        else:
            for line in body.splitlines():
                assert line in last.stdout.splitlines(), (line, last.stdout)


SYNC_EVENTS = """seed 3
device add phone pin 1111
device add laptop pin 2222
sync events on
sync upload 2s download 5s..10s
phone register user alice
device laptop offline
at 1m laptop holds => none
device laptop online
wait 1m
phone delete alice
wait 1m
laptop holds => none
"""


def test_sync_events_in_the_timeline_and_the_report(tmp_path):
    path = write(tmp_path, SYNC_EVENTS)
    result = scenario(path)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    events = [line for line in lines if line.startswith("# sync at ")]
    assert events == ["# sync at 2s: phone uploaded alice", "# sync at 66.666s: laptop downloaded alice",
                      "# sync at 122s: phone uploaded -alice", "# sync at 130.165s: laptop downloaded -alice"]
    # Each at its place: the upload while the laptop is offline, before the clock moves to 1m.
    assert lines.index(events[0]) == lines.index("at 1m     laptop holds => none") - 1
    report = json.loads(scenario(path, "--json").stdout)
    assert report["events"][1] == {"time": 66_666, "device": "laptop", "direction": "download", "passkey": "alice", "removal": False}
    assert [e["removal"] for e in report["events"]] == [False, False, True, True]
    # Without `sync events on`, no event; and the timeline reads back as a scenario.
    quiet = json.loads(scenario(write(tmp_path, SYNC_EVENTS.replace("sync events on\n", ""), "quiet.scn"), "--json").stdout)
    assert quiet["events"] == [] and quiet["passed"]
    back = scenario(write(tmp_path, "\n".join(lines[1:-1]) + "\n", "back.scn"))
    assert back.returncode == 0, back.stderr
    assert back.stdout.splitlines()[1:] == lines[1:]


def test_windows_line_ends_read_line_for_line(tmp_path):
    """A file saved with CRLF line ends is the same scenario: a String holds "\\r\\n" as one
    Character, so splitting at "\\n" alone read the whole file as one line."""
    text = "device add phone pin 1111\nphone register user alice\nphone holds => alice\nphone holds => bob\n"
    path = tmp_path / "crlf.scn"
    path.write_bytes(text.replace("\n", "\r\n").encode())
    result = scenario(path)
    assert result.returncode == 26, result.stderr
    assert result.stderr == f"authctl: error: scenarioFailed: {path}:4:1: phone holds: expected bob, got alice\n"
    assert result.stdout.splitlines()[1:4] == ["at 0s     device add phone pin 1111",
                                               "at 0s     phone register user alice => ok credential=alice user=alice flags=UP,UV,BE,BS count=0 attachment=platform fmt=none",
                                               "at 0s     phone holds => alice"]
    mistake = tmp_path / "mistake.scn"
    mistake.write_bytes(b"device add phone\r\nphone register colour blue\r\n")
    refused = scenario(mistake)
    assert refused.returncode == 65
    assert refused.stderr.startswith(f"authctl: error: badInput: {mistake}:2:16: register does not take 'colour'"), refused.stderr


@pytest.mark.parametrize("name", ["a", "é", "sub/b"])
def test_one_character_scenario_name_reads_its_options_file(tmp_path, name):
    """Foundation's deletingLastPathComponent traps on a one-character path: `scenario run a` died
    by SIGILL (exit 132) at its first `options FILE`, its vault left in $TMPDIR."""
    folder = tmp_path / "sub" if name.startswith("sub/") else tmp_path
    folder.mkdir(exist_ok=True)
    (folder / "small.json").write_text(REQUEST)
    write(folder, "device add phone\nphone register user alice\nphone sign options small.json => ok user=alice\n", name.split("/")[-1])
    tmpdir, env = tmpdir_env(tmp_path)
    result = scenario(name, env=env, cwd=tmp_path)
    assert result.returncode == 0, (result.returncode, result.stderr[-300:])
    assert list(tmpdir.iterdir()) == []


def test_scenario_through_a_symlink_or_from_stdin(tmp_path):
    """A symbolic link to a scenario is followed, as every program follows one (it was refused as
    'not a regular file'); `-` reads the scenario from standard input, as `--options -` does, with
    a relative options FILE relative to the current directory."""
    (tmp_path / "small.json").write_text(REQUEST)
    real = write(tmp_path, "device add phone\nphone register user alice\nphone sign options small.json => ok user=alice\n", "real.scn")
    link = tmp_path / "link.scn"
    link.symlink_to("real.scn")
    via_link = scenario(link)
    assert via_link.returncode == 0, via_link.stderr
    assert via_link.stdout.splitlines()[0] == f"scenario {link} (seed 0)"
    environment = {k: v for k, v in os.environ.items() if not k.startswith("AUTHCTL_")}
    piped = subprocess.run([BIN, "scenario", "run", "-"], input=real.read_text(), env=environment, capture_output=True,
                           text=True, timeout=120, cwd=tmp_path)
    assert piped.returncode == 0, piped.stderr
    assert piped.stdout.splitlines()[1:] == via_link.stdout.splitlines()[1:]
    big = subprocess.run([BIN, "scenario", "run", "-"], input="# padding\n" * 500_000, env=environment, capture_output=True,
                         text=True, timeout=120)
    assert big.returncode == 65 and big.stderr == "authctl: error: badInput: -: the scenario is larger than 4 MiB\n"


def test_response_copies_cannot_grow_a_body(tmp_path):
    """`$response` in a body is replaced by the last ceremony's response: 100,000 of them in a 1 MB
    body made a gigabyte (and a SIGSEGV under a memory limit, the vault left in $TMPDIR). The body
    as replaced is at most what a reply may be, 4 MiB, measured before it is copied."""
    body = "[" + ",".join(["$response"] * 100_000) + "]"
    path = write(tmp_path, f"device add phone\nphone register user alice\nhttp POST http://127.0.0.1:9/x body {body}\n")
    tmpdir, env = tmpdir_env(tmp_path)
    result = scenario(path, env=env, memory=MEMORY)
    assert result.returncode == 65, (result.returncode, result.stderr[-500:])
    assert result.stderr == f"authctl: error: badInput: {path}:3:1: with $response replaced, the body would be larger than 4 MiB\n"
    assert list(tmpdir.iterdir()) == []
    # A few copies still go out (and meet a closed port).
    few = scenario(write(tmp_path, "device add phone\nphone register user alice\nhttp POST http://127.0.0.1:9/x body [$response,$response]\n", "few.scn"))
    assert few.returncode == 65 and "Couldn't connect" in few.stderr, few.stderr


@pytest.mark.parametrize("check,column", [("passkeys!=", 16), ('passkeys!=""', 16), ("passkeys!=alice,,bob", 16),
                                          ("passkeys!=alice,", 16), ("ok passkeys!=,", 19)])
def test_absence_check_of_nothing_is_refused(tmp_path, check, column):
    """`KEY!=` with no value, or with an empty item, names nothing: it would always hold."""
    path = write(tmp_path, f"device add phone\nphone holds => {check}\n")
    result = scenario(path)
    assert result.returncode == 65, result.stderr
    assert result.stderr.startswith(f"authctl: error: badInput: {path}:2:{column}: "), result.stderr
    assert "an absence check names what must not be there" in result.stderr


@pytest.mark.parametrize("step", ["phone register user alice via phone", "phone sign via phone"])
def test_via_names_another_device(tmp_path, step):
    """Hybrid is another device's authenticator: `phone … via phone` made a cross-platform passkey
    from the phone's own store."""
    path = write(tmp_path, f"device add phone pin 1111\n{step}\n")
    result = scenario(path)
    assert result.returncode == 65, result.stderr
    column = step.index("via phone") + 5
    assert result.stderr == f"authctl: error: badInput: {path}:2:{column}: via names another device: phone cannot reach itself over hybrid\n"


@pytest.mark.parametrize("step,check,says", [
    ("sync status", "laptpo.uploads!=alice", "no device named 'laptpo': laptpo.uploads names a device of the account"),
    ("phone sign", "x.downloads!=alice", "no device named 'x': x.downloads names a device of the account"),
    ("phone sign", ".uploads!=alice", "no step reports '.uploads'"),
    ("phone sign", "json.!=1", "no step reports 'json.'"),
])
def test_check_of_a_device_that_is_not_there_is_refused(tmp_path, step, check, says):
    """`NAME.uploads` with a misspelt NAME is never reported: `!=` of it always held."""
    path = write(tmp_path, f"device add phone pin 1111\ndevice add laptop pin 2222\nphone register user alice\n{step} => ok {check}\n")
    result = scenario(path)
    assert result.returncode == 65, result.stderr
    assert result.stderr.startswith(f"authctl: error: badInput: {path}:4:{len(step) + 8}: {says}"), result.stderr
    # A device that left the account is not there either; one that is passes.
    gone = scenario(write(tmp_path, "device add phone\ndevice add laptop\ndevice laptop remove\nsync status => ok laptop.uploads!=a\n", "gone.scn"))
    assert gone.returncode == 65 and "no device named 'laptop'" in gone.stderr
    there = scenario(write(tmp_path, "device add phone\ndevice add laptop\nsync status => ok laptop.uploads!=a phone.downloads=none\n", "there.scn"))
    assert there.returncode == 0, there.stderr


def test_options_fifo_no_program_writes_to_does_not_hang_the_run(tmp_path):
    """`options FILE` naming a FIFO that no program opens for writing waited forever (open()
    blocks for a writer); a SIGKILL then left the vault in $TMPDIR. It is opened without waiting
    and reads as empty, which the ceremony refuses as malformed options."""
    os.mkfifo(tmp_path / "fifo.json")
    path = write(tmp_path, "device add phone\nphone register user alice\nphone sign options fifo.json => badInput\n")
    tmpdir, env = tmpdir_env(tmp_path)
    result = scenario(path, env=env)  # within the helper's 120 s deadline, not a hang
    assert result.returncode == 0, result.stderr
    assert "at 0s     phone sign options fifo.json => badInput" in result.stdout
    assert list(tmpdir.iterdir()) == []
    # A pipe whose writer is there, and writes late, is still read whole.
    late = write(tmp_path, "device add phone\nphone register user alice\nphone sign options /dev/stdin => ok user=alice\n", "late.scn")
    environment = {k: v for k, v in os.environ.items() if not k.startswith("AUTHCTL_")}
    run = subprocess.Popen([BIN, "scenario", "run", str(late)], stdin=subprocess.PIPE, env=environment,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # The request is written once the run has opened the pipe as its options file (another
    # descriptor of it than stdin), not after a guessed delay.
    def reading_options():
        fds = pathlib.Path(f"/proc/{run.pid}/fd")
        try:
            pipe = os.readlink(fds / "0")
            return any(fd.name != "0" and os.readlink(fd) == pipe for fd in fds.iterdir())
        except FileNotFoundError:
            return run.poll() is not None

    wait_until(reading_options, "the run to open its options on stdin")
    _, err = run.communicate(REQUEST, timeout=120)
    assert run.returncode == 0, err


def test_former_pin_survives_a_second_reset(tmp_path):
    """The device keeps its retired enrollment through a second factory reset (a reset retires
    only a current PIN); the runner forgot it, so `former` was refused as having no use."""
    head = "device add phone pin 1111\ndevice add laptop pin 2222 attempts 3\nphone register user alice\ndevice laptop reset\ndevice laptop reset\n"
    path = write(tmp_path, head + "device laptop pin 3333 former 9999 => failed\ndevice laptop pin 3333 former 2222\nlaptop sign uv required => ok uv=1\n")
    result = scenario(path)
    assert result.returncode == 0, result.stderr
    assert "at 0s     device laptop pin 3333 former 9999 => failed" in result.stdout


def test_scenario_from_a_closed_stdin_is_bad_input(tmp_path):
    """A closed stdin is reopened on /dev/null (so that no vault file takes descriptor 0): read as
    the scenario it was an empty one that passed."""
    tmpdir, env = tmpdir_env(tmp_path)
    environment = {k: v for k, v in os.environ.items() if not k.startswith("AUTHCTL_")} | env
    result = subprocess.run([BIN, "scenario", "run", "-"], env=environment, capture_output=True, text=True, timeout=120,
                            stdin=subprocess.DEVNULL, preexec_fn=lambda: os.close(0))
    assert result.returncode == 65, result.stdout + result.stderr
    assert result.stderr == "authctl: error: badInput: -: stdin is closed\n" and result.stdout == ""
    assert list(tmpdir.iterdir()) == []


def test_json_report_error_is_null_for_a_holds_list(tmp_path):
    """`holds` comes to the labels it lists, not to `ok`: its `error` is null as well."""
    report = json.loads(scenario(write(tmp_path, "device add phone\nphone register user a\nphone holds => a\n"), "--json").stdout)
    held = report["steps"][-1]
    assert held["outcome"] == "a" and "error" in held and held["error"] is None


def test_huge_scenario_words_are_echoed_cut(tmp_path):
    """Every message that quotes a word of the scenario — the parser's, the run's, and the
    "expected X" of an unmet expectation — echoes it as every value is: its first 63 characters,
    an ellipsis and its whole length, so a 100 KB word makes a short error line."""
    x = "x" * 100_000
    cut = x[:63] + "… (100000 characters)"
    cases = [
        (x + "\n", 65, f"unknown step '{cut}'"),
        ("phone " + x + "\n", 65, f"unknown step 'phone {cut}'"),
        ("phone register " + x + " 1\n", 65, f"register does not take '{cut}'"),
        ("wait " + x + "\n", 65, f"'{cut}' is not a duration"),
        ("sync upload " + x + "\n", 65, f"'{cut}' is not a delay"),
        ("${" + x + "}\n", 65, "${" + cut + "} is not set in the environment"),
        ("phone holds => ok " + x + "=1\n", 65, f"no step reports '{cut}'"),
        ("seed 1 " + x + "\n", 65, f"unexpected '{cut}'"),
        ("phone register user a exclude a,," + x + "\n", 65, "'a,," + x[:60] + "… (100003 characters)' has an empty label"),
        ("phone holds => ok passkeys!=a,," + x + "\n", 65, "'passkeys!=a,," + x[:60] + "… (100003 characters)' has an empty item"),
        ("device add d profile " + x + "\n", 65, f"no profile named '{cut}'"),
        ("phone delete " + x + "\n", 65, f"no passkey labelled '{cut}' was registered"),
        ("phone register fault " + x + "\n", 65, f"unknown fault '{cut}'"),
        ("http GET http://127.0.0.1:1/" + x + "\n", 65, "GET http://127.0.0.1:1/" + x[:44] + "… (100019 characters): "),
        ("phone holds => " + x + "\n", 26, f"phone holds: expected {cut}, got none"),
        ("phone register user a uv discouraged => ok credential=" + x + "\n", 26,
         "expected credential=" + x[:52] + "… (100011 characters), got credential=a"),
    ]
    for n, (line, code, says) in enumerate(cases):
        path = write(tmp_path, "seed 1\norigin https://example.com\ndevice add phone\n" + line, name=f"s{n}.scn")
        result = scenario(path)
        assert result.returncode == code, (line[:40], result.stderr[:300])
        assert len(result.stderr) < 1_000 and says in result.stderr, (line[:40], result.stderr[:300])
        assert result.stderr.startswith(f"authctl: error: {'badInput' if code == 65 else 'scenarioFailed'}: {path}:4:")


def test_a_huge_scenario_path_or_options_file_is_echoed_cut(tmp_path):
    """The scenario's own path, and an options file it names, are echoed as paths are: whole while
    they could name a file, cut past PATH_MAX."""
    huge = str(tmp_path / ("p" * 100_000))
    result = scenario(huge)
    assert result.returncode == 65 and len(result.stderr) < 4_400, result.stderr[:300]
    assert f"{huge[:4095]}… ({len(huge)} characters): cannot read the scenario" in result.stderr
    name = "o" * 100_000
    path = write(tmp_path, f"device add phone\nphone sign options {name}\n")
    result = scenario(path)
    assert result.returncode == 65 and len(result.stderr) < 4_400, result.stderr[:300]
    assert result.stderr.startswith(f"authctl: error: badInput: {path}:2:1: cannot read options file {name[:4095]}… (100000 characters): ")


def test_a_runs_vault_is_refused_to_other_processes_while_it_runs(tmp_path):
    """The run holds its throw-away vault for its whole life (vault-format.md, "Held vaults"): a
    `list` or a `register` of another process on it, while an HTTP step of the run waits on this
    test's server, is `vaultBusy` at once and changes no file; the run then carries on."""
    import http.server
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    probes = []

    def contents(vault):
        return {p.name: p.read_bytes() for p in sorted(vault.iterdir())}

    class Probe(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            (workspace,) = list(tmpdir.iterdir())
            vault = workspace / "vault"
            env = {k: v for k, v in os.environ.items() if not k.startswith("AUTHCTL_")}
            env.update(AUTHCTL_VAULT=str(vault), AUTHCTL_PASSPHRASE="scenario", AUTHCTL_PIN="1111", TMPDIR=str(tmp_path))
            before = contents(vault)
            for args in (["list"], ["register", "--origin", "https://example.com", "--user-name", "bob"]):
                result = subprocess.run([BIN, "--wait", "0", *args], env=env, capture_output=True, text=True, timeout=60)
                probes.append((args[0], result.returncode, result.stderr, contents(vault) == before))
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args):
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Probe)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        text = f"""device add phone pin 1111
phone register user alice => ok
http POST http://127.0.0.1:{server.server_address[1]}/probe => ok status=200
phone sign => ok
phone holds => alice
"""
        result = scenario(write(tmp_path, text), env={"TMPDIR": str(tmpdir)})
    finally:
        server.shutdown()
        server.server_close()
    assert result.returncode == 0, result.stdout + result.stderr
    assert [p[0] for p in probes] == ["list", "register"]
    for command, code, stderr, unchanged in probes:
        assert code == 24 and "vaultBusy" in stderr, (command, code, stderr)
        assert unchanged, command
    assert list(tmpdir.iterdir()) == []


def test_an_unusable_temporary_directory_is_named_with_the_reason(tmp_path):
    """A run's vault goes into $TMPDIR: when that cannot be used, the error names the directory
    and the system's reason, rather than a bare "cannot make a temporary directory"."""
    path = tmp_path / "one.scn"
    path.write_text("device add phone\n")
    missing = tmp_path / "no-such-dir"
    result = scenario(path, env={"TMPDIR": str(missing)})
    assert result.returncode == 65, result.stderr
    assert f"cannot make a temporary directory in {missing}" in result.stderr and "No such file or directory" in result.stderr, result.stderr
