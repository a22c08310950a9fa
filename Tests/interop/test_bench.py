"""The benchmarks' machine-readable output and the chart drawn from it (figures are not judged:
timing belongs to benchmarks, not tests)."""
import json
import os
import subprocess
import signal
import sys

import pytest

from conftest import BIN, ROOT, wait_until

COMMANDS = {"sign", "signDiscoverable", "register", "show", "delete", "list", "listRP"}


def run(*args, env=None):
    environment = {k: v for k, v in os.environ.items() if not k.startswith("AUTHCTL_")}
    environment.update(env or {})
    return subprocess.run([BIN, *args], capture_output=True, text=True, timeout=300, env=environment)


def test_bench_vault_json_keep_and_chart(tmp_path):
    kept = tmp_path / "kept"
    result = run("--json", "bench", "vault", "--sizes", "5,20", "--runs", "1", "--dir", str(tmp_path), "--keep", str(kept))
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert [r["size"] for r in report["rows"]] == [5, 20] and report["runs"] == 1
    assert [r["devices"] for r in report["rows"]] == [1, 1] and report["bigRP"] is False
    assert all(r[k] > 0 for r in report["rows"] for k in ("openMs", "registerMs", "signMs", "openSignMs", "logMiB"))
    assert all(set(r["commands"]) == COMMANDS for r in report["rows"])
    # The largest vault is left behind, and signs with the passphrase the notice gives.
    assert "passphrase 'bench'" in result.stderr
    signed = run("--vault", str(kept), "sign", "--origin", "https://target.example", env={"AUTHCTL_PASSPHRASE": "bench"})
    assert signed.returncode == 0, signed.stderr
    again = run("bench", "vault", "--sizes", "5", "--runs", "1", "--dir", str(tmp_path), "--keep", str(kept))
    assert again.returncode == 64  # an existing path is never overwritten
    (tmp_path / "vault.json").write_text(result.stdout)
    svg = subprocess.run([sys.executable, str(ROOT / "scripts" / "bench_chart.py"), str(tmp_path / "vault.json")],
                         capture_output=True, text=True, timeout=60)
    assert svg.returncode == 0, svg.stderr
    assert svg.stdout.startswith("<svg") and svg.stdout.count("<polyline") == 4


def listed(vault, *args, device="d1"):
    result = run("--json", "--vault", str(vault), "--device", device, "list", *args, env={"AUTHCTL_PASSPHRASE": "bench"})
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)["credentials"]


def test_bench_vault_devices_big_rp_fresh_users_and_commands(tmp_path):
    kept = tmp_path / "kept"
    result = run("--json", "bench", "vault", "--sizes", "4,12", "--runs", "2", "--devices", "1,2", "--big-rp",
                 "--dir", str(tmp_path), "--keep", str(kept))
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["bigRP"] is True and report["runs"] == 2
    assert [(r["size"], r["devices"]) for r in report["rows"]] == [(4, 1), (4, 2), (12, 1), (12, 2)]
    for row in report["rows"]:
        assert set(row["commands"]) == COMMANDS
        for figures in row["commands"].values():
            assert 0 < figures["medianMs"] <= figures["p90Ms"] and figures["cpuMs"] > 0 and figures["maxRssMiB"] > 1
    # The largest vault of the last device count is kept: two devices, each holding every passkey,
    # all of them on the one RP. Each timed registration (2 in-process, 2 as commands) made a new
    # user rather than replacing one, and each run deleted a different passkey: 12 - 2 + 4.
    assert "2 device(s)" in result.stderr and "--device d1" in result.stderr
    devices = json.loads(run("--json", "--vault", str(kept), "device", "list", env={"AUTHCTL_PASSPHRASE": "bench"}).stdout)
    assert [d["name"] for d in devices["devices"]] == ["d0", "d1"]
    for device in ("d0", "d1"):
        passkeys = listed(kept, device=device)
        assert len(passkeys) == 14 and {p["rpId"] for p in passkeys} == {"target.example"}
        assert len({p["userHandle"] for p in passkeys}) == 14
        assert {p["userName"] for p in passkeys} >= {"library-0", "library-1", "command-0", "command-1"}


def test_bench_vault_spread_commands_only_and_chart(tmp_path):
    result = run("--json", "bench", "vault", "--sizes", "3,9", "--runs", "2", "--devices", "2,3", "--measure", "commands",
                 "--dir", str(tmp_path), "--keep", str(tmp_path / "kept"))
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["bigRP"] is False
    assert all("openMs" not in r and set(r["commands"]) == COMMANDS for r in report["rows"])
    # Spread over RPs: the signed RP holds its one bulk passkey and the two new users.
    assert len(listed(tmp_path / "kept", "--rp-id", "target.example")) == 3
    assert [d["name"] for d in json.loads(run("--json", "--vault", str(tmp_path / "kept"), "device", "list",
                                                  env={"AUTHCTL_PASSPHRASE": "bench"}).stdout)["devices"]] == ["d0", "d1", "d2"]
    (tmp_path / "vault.json").write_text(result.stdout)
    svg = subprocess.run([sys.executable, str(ROOT / "scripts" / "bench_chart.py"), "--commands", str(tmp_path / "vault.json")],
                         capture_output=True, text=True, timeout=60)
    assert svg.returncode == 0, svg.stderr
    # Two panels (time, memory), a line per command and device count.
    assert svg.stdout.startswith("<svg") and svg.stdout.count("<polyline") == 2 * 7 * 2
    # The in-process chart has nothing to draw from a commands-only report, and says so.
    library = subprocess.run([sys.executable, str(ROOT / "scripts" / "bench_chart.py"), str(tmp_path / "vault.json")],
                             capture_output=True, text=True, timeout=60)
    assert library.returncode != 0 and "nothing to chart" in library.stderr
    text = run("bench", "vault", "--sizes", "3", "--runs", "1", "--devices", "2", "--measure", "commands", "--dir", str(tmp_path))
    assert text.returncode == 0, text.stderr
    assert "authctl as a process" in text.stdout and "in-process" not in text.stdout


def test_bench_vault_refuses_bad_options(tmp_path):
    for args in (["--devices", "0"], ["--devices", "21"], ["--devices", "1,,2"], ["--devices", "two"],
                 ["--sizes", "2", "--runs", "2"], ["--measure", "everything"]):
        result = run("bench", "vault", "--dir", str(tmp_path), "--sizes", "8", "--runs", "1", *args)
        assert result.returncode == 64, (args, result.stderr)
        assert result.stdout == ""
    assert list(tmp_path.iterdir()) == []


def test_bench_command_times_a_command_from_outside(tmp_path):
    result = run("--json", "bench", "command", "--runs", "3", "--", "--version")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["runs"] == 3 and len(report["wallMs"]) == 3
    assert 0 < report["medianMs"] <= report["p90Ms"] == max(report["wallMs"]) and report["maxRssMiB"] > 1
    assert sorted(report["wallMs"])[1] == report["medianMs"]
    text = run("bench", "command", "--runs", "1", "--", "--version")
    assert text.returncode == 0 and text.stdout.startswith("authctl --version: 1 run(s): median ")
    # The command runs with the caller's environment (its vault, its passphrase), stdout discarded.
    vault = tmp_path / "vault"
    made = run("--vault", str(vault), "init", "--kdf", "min", "--no-biometry", env={"AUTHCTL_PASSPHRASE": "p"})
    assert made.returncode == 0, made.stderr
    listed = run("bench", "command", "--runs", "2", "--", "--vault", str(vault), "list", env={"AUTHCTL_PASSPHRASE": "p"})
    assert listed.returncode == 0, listed.stderr
    # A run that fails stops it, with the command's own message; no figures are printed.
    failed = run("--json", "bench", "command", "--", "--vault", str(tmp_path / "nothing"), "list")
    assert failed.returncode == 70 and failed.stdout == ""
    assert "vaultNotFound" in json.loads(failed.stderr)["message"]
    assert not json.loads(failed.stderr)["message"].endswith("\n")
    # As text, one line: the command's message without its own line end (not an escaped one).
    said = run("bench", "command", "--", "--vault", str(tmp_path / "nothing"), "list")
    assert said.returncode == 70 and said.stderr.count("\n") == 1
    assert "\\x0a" not in said.stderr, said.stderr
    assert run("bench", "command").returncode == 64
    assert run("bench", "command", "--runs", "0", "--", "--version").returncode == 64



def descendants(pid):
    """The processes below `pid`, children first, from /proc's children lists."""
    found, queue = [], [pid]
    while queue:
        parent = queue.pop(0)
        try:
            tasks = os.listdir(f"/proc/{parent}/task")
        except FileNotFoundError:
            continue
        for task in tasks:
            try:
                children = [int(c) for c in open(f"/proc/{parent}/task/{task}/children").read().split()]
            except FileNotFoundError:
                children = []
            found += children
            queue += children
    return found


def alive(pid):
    """Whether `pid` still runs (a zombie, dead and waiting to be reaped, does not)."""
    try:
        return open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


@pytest.mark.parametrize("number", [signal.SIGTERM, signal.SIGHUP])
def test_bench_command_interrupted_stops_its_commands_and_leaves_nothing(tmp_path, number):
    # bench command under bench command: a long run, interrupted only at the top. The top one is
    # canceled (exit 10, never a signal death), every command below it stops with it, and no
    # scratch directory is left in TMPDIR.
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    environment = {k: v for k, v in os.environ.items() if not k.startswith("AUTHCTL_")}
    environment["TMPDIR"] = str(scratch)
    proc = subprocess.Popen([BIN, "bench", "command", "--runs", "1000", "--", "bench", "command", "--runs", "1000", "--", "--version"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=environment)
    try:
        wait_until(lambda: len(list(scratch.iterdir())) == 2, "both bench commands made their scratch directory")
        below = descendants(proc.pid)
        assert below, "the inner bench command runs"
        proc.send_signal(number)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 10, err
    assert out == "" and "error: canceled: interrupted by signal" in err
    wait_until(lambda: not any(alive(pid) for pid in below), "every command below it stopped")
    assert list(scratch.iterdir()) == []



def test_bench_vault_interrupted_removes_its_vault(tmp_path):
    # Interrupted while it builds or times a vault: canceled (exit 10), never a signal death, and
    # the throw-away vault is gone from --dir.
    work = tmp_path / "work"
    work.mkdir()
    environment = {k: v for k, v in os.environ.items() if not k.startswith("AUTHCTL_")}
    proc = subprocess.Popen([BIN, "bench", "vault", "--sizes", "3000", "--runs", "1", "--measure", "library", "--dir", str(work)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=environment)
    try:
        wait_until(lambda: any(work.iterdir()), "bench vault made its vault's directory")
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 10, err
    assert out == "" and "error: canceled: interrupted by signal" in err
    assert list(work.iterdir()) == []


def workloads(*args):
    return subprocess.run([sys.executable, str(ROOT / "scripts" / "bench_workloads.py"), "--authctl", BIN, "--json", *args],
                          capture_output=True, text=True, timeout=600)


def test_bench_workloads_registrations(tmp_path):
    result = workloads("registrations", "--sizes", "3,8", "--write", str(tmp_path), "--tmpdir", str(tmp_path))
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert [r["registrations"] for r in report["rows"]] == [3, 8] and all(r["passed"] for r in report["rows"])
    assert all(r["cpuSeconds"] > 0 and r["cpuMsPerCeremony"] > 0 and r["wallSeconds"] > 0 for r in report["rows"])
    assert isinstance(report["exponent"], float) and report["perCeremonyRatio"] > 0
    assert len(report["stepExponents"]) == 1 and abs(report["stepExponents"][0] - report["exponent"]) < 1e-9  # two sizes: one slope
    scenario = (tmp_path / "registrations-8.scn").read_text()
    assert scenario.count(" register user ") == 8 and "device add laptop" in scenario
    # The generated file is an ordinary scenario: the laptop ends up holding all eight.
    played = run("scenario", "run", str(tmp_path / "registrations-8.scn"))
    assert played.returncode == 0, played.stderr
    assert "laptop holds => " + ",".join(f"u{i}" for i in range(1, 9)) in played.stdout


def test_bench_workloads_churn_registers_and_deletes_every_user(tmp_path):
    result = workloads("churn", "--sizes", "3,6", "--write", str(tmp_path), "--tmpdir", str(tmp_path))
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["workload"] == "churn" and [r["registrations"] for r in report["rows"]] == [3, 6]
    assert all(r["passed"] and r["cpuSeconds"] > 0 for r in report["rows"])
    scenario = (tmp_path / "churn-6.scn").read_text()
    assert scenario.count(" register user ") == 6 and scenario.count(" delete p") == 6
    played = run("scenario", "run", str(tmp_path / "churn-6.scn"))
    assert played.returncode == 0 and "laptop holds => none" in played.stdout, played.stdout[-300:]


def test_bench_workloads_day_is_reproducible(tmp_path):
    result = workloads("day", "--users", "15", "--devices", "3", "--runs", "2", "--write", str(tmp_path))
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["identical"] is True and len(report["runs"]) == 2 and all(r["passed"] for r in report["runs"])
    # seed, 3 devices, the delays, 15 registrations and 15 sign-ins, and what each device holds.
    assert report["steps"] == f"passed: {1 + 3 + 1 + 30 + 3} steps"
    scenario = (tmp_path / "day-15-users-3-devices.scn").read_text()
    times = [int(line.split()[1][:-2]) for line in scenario.splitlines() if line.startswith("at ")]
    assert times == sorted(times) and max(times) <= 24 * 3600 * 1000
    for user in range(1, 16):
        register = next(line for line in scenario.splitlines() if line.endswith(f" register user u{user} => ok"))
        sign = next(line for line in scenario.splitlines() if line.endswith(f" sign user u{user} => ok"))
        assert register.split()[2] != sign.split()[2]  # signed in on another device than it registered on
    # Another seed is another day; the same seed, the same scenario text.
    other = workloads("day", "--users", "15", "--devices", "3", "--runs", "1", "--seed", "5", "--write", str(tmp_path / "other"))
    assert other.returncode == 0, other.stderr
    assert (tmp_path / "other" / "day-15-users-3-devices.scn").read_text() != scenario
    again = workloads("day", "--users", "15", "--devices", "3", "--runs", "1", "--write", str(tmp_path / "again"))
    assert (tmp_path / "again" / "day-15-users-3-devices.scn").read_text() == scenario


def test_bench_workloads_dense_day_beside_the_day(tmp_path):
    result = workloads("dense", "--users", "40", "--devices", "3", "--runs", "2", "--seed", "3", "--write", str(tmp_path))
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["identical"] is True
    assert [len(report["runs"][n]) for n in ("day", "dense")] == [2, 2]
    assert all(r["passed"] and r["cpuSeconds"] > 0 for n in ("day", "dense") for r in report["runs"][n])
    assert report["ratioWall"] > 0 and report["ratioCpu"] > 0
    scenario = (tmp_path / "dense-40-users-3-devices.scn").read_text()
    lines = scenario.splitlines()
    # One RP, every device with a PIN, delays up to 2 h, each passkey made and used with UV.
    assert [l for l in lines if l.startswith("device add")] == ["device add d1 pin 1001", "device add d2 pin 1002", "device add d3 pin 1003"]
    assert "sync upload 1s..10m download 1s..2h" in lines and not any(" origin " in l or "rp-id" in l for l in lines)
    assert scenario.count(" register user ") == 40 and scenario.count(" sign user ") == 80
    assert all(l.endswith(" uv=1") for l in lines if " register " in l or " sign " in l)
    deleted = [l.split()[-1] for l in lines if " delete u" in l]
    assert deleted and report["kept"] == 40 - len(deleted)
    assert all(f"holds => passkeys!={u}" in scenario for u in deleted)
    # Every hour of the day each device lists what it holds; at the end, all it should.
    hourly = [int(l.split()[1][:-2]) // 3600000 for l in lines if l.endswith(" holds")]
    assert sorted(set(hourly)) == list(range(1, 25)) and len(hourly) == 24 * 3
    played = run("scenario", "run", str(tmp_path / "dense-40-users-3-devices.scn"))
    assert played.returncode == 0, played.stderr
    assert (tmp_path / "day-40-users-3-devices.scn").read_text().count(" sign user ") == 40


def test_bench_workloads_dense_day_checks_what_each_device_ends_with(tmp_path):
    # A scenario run that passes but ends with a device holding none of the passkeys kept fails
    # the workload: the script checks the end of the day itself.
    fake = tmp_path / "authctl"
    fake.write_text("#!/bin/sh\necho 'at 24h     d1 holds => none'\necho 'at 24h     d2 holds => none'\necho 'passed: 2 steps'\n")
    fake.chmod(0o755)
    result = subprocess.run([sys.executable, str(ROOT / "scripts" / "bench_workloads.py"), "--authctl", str(fake), "--json",
                             "dense", "--users", "5", "--devices", "2", "--runs", "1"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 1 and "does not end holding" in result.stderr
    report = json.loads(result.stdout)
    assert report["runs"]["day"][0]["passed"] is True and report["runs"]["dense"][0]["passed"] is False


def test_bench_workloads_report_a_failed_scenario(tmp_path):
    # A binary whose scenarios fail (exit 26, as an unmet expectation does) fails the workload.
    fake = tmp_path / "authctl"
    fake.write_text("#!/bin/sh\necho 'passed: 0 steps'\nexit 26\n")
    fake.chmod(0o755)
    result = subprocess.run([sys.executable, str(ROOT / "scripts" / "bench_workloads.py"), "--authctl", str(fake), "--json",
                             "registrations", "--sizes", "2"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 1 and "exit 26" in result.stderr
    assert json.loads(result.stdout)["rows"][0]["passed"] is False


def test_bench_serve_signs_in_with_the_rp_default_beside_no_user_verification(tmp_path):
    # One short run of the server benchmark: every shape answered 200 (wrk's non-2xx fail the
    # script), the user-verified passkeys answered UV=1 and the others UV=0 (the script checks),
    # and the paired ratios are reported. Figures are not judged.
    result = subprocess.run([sys.executable, str(ROOT / "scripts" / "bench_serve.py"), "--authctl", BIN, "--seconds", "1",
                             "--users", "3", "--scratch", str(tmp_path), "--json"], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["serverExit"] == 0
    for shape in ("oneAccount", "thirtyTwoAccounts", "thirtyTwoAccountsUserVerified"):
        assert report[shape]["perSecond"] > 0 and 0 < report[shape]["p50ms"] <= report[shape]["p99ms"]
    assert report["ratioUserVerifiedToNot"] > 0 and report["ratioThirtyTwoAccountsUserVerified"] > 0


def test_bench_ceremonies_json(tmp_path):
    result = run("--json", "bench", "ceremonies", "--seconds", "0.1")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["opensslSignsPerSecond"] > 0 and report["keyGenerationsPerSecond"] > 0
    cases = {(r["ceremony"], r["store"]) for r in report["rows"]}
    assert {("sign", "memory"), ("sign", "vault"), ("register (none)", "memory"), ("register (none)", "vault")} <= cases
    assert all(r["perSecond"] > 0 and 0 < r["cryptoShare"] for r in report["rows"])
    assert run("bench", "ceremonies", "--seconds", "0").returncode == 64
