#!/usr/bin/env python3
"""Scenario workloads of the synced keychain, generated as scenario text and run with
`authctl scenario run` as a process (docs/benchmarks.md, "Scenario workloads").

    python3 scripts/bench_workloads.py registrations [--sizes 100,1000,5000]
    python3 scripts/bench_workloads.py churn [--sizes 500,2000,4000]
    python3 scripts/bench_workloads.py day [--users 1000] [--devices 5] [--runs 2]
    python3 scripts/bench_workloads.py dense [--users 1000] [--devices 5] [--runs 2]

`registrations`: N registrations for one RP on two devices (`phone register user uI => ok` N
times, then `laptop holds`, which must list all N), for each N: CPU seconds (user + system, from
wait4), CPU per ceremony, wall time and peak RSS; then the growth exponent (the slope of log CPU
against log N, least squares, and between successive sizes) and CPU per ceremony at the largest N
over the smallest.

`churn`: the same for N users who sign up and are removed again, as an RP's test suite makes and
deletes its users: `phone register user uI as pI => ok` then `phone delete pI`, N times, on two
devices; `laptop holds` must list none. Each deletion syncs, and is collected once both devices
have it.

`day`: USERS users, each registering on one of DEVICES devices at a random time of a simulated
day and signing in later on another device, with random sync delays (upload 1s..30s, download
1s..2m; the sign-in comes at least 3 minutes later, so the passkey has arrived and every ceremony
must be `ok`). Run RUNS times: wall and CPU time of each run, and whether every run printed the
same timeline, byte for byte (a difference fails the command).

`dense`: a denser day, as people who use their passkeys have it, played beside `day` (the same
--users, --devices and --seed) in one invocation — the two alternate, day first, RUNS times each —
with the ratio of their median wall and CPU times. The USERS passkeys are on one RP and every device
has a PIN, so each passkey is made and used with the RP default (user verification preferred: the
PIN checked at every sign-in); sync delays up to 2 h (upload 1s..10m, download 1s..2h); each user
registers on one device and signs in twice later on others (the first at least 2h15m after the
registration, past the slowest transfer); one user in ten then deletes the passkey on a third
device, and 2h15m later another device checks that it no longer holds it; every hour each device
lists what it holds. At the end of the day every device must hold exactly the passkeys not
deleted (checked by the script from the timeline).

Standard library only. --authctl names the binary (default .build/release/authctl); --tmpdir is
where the scenario's throw-away vault goes (TMPDIR; default the caller's); --write DIR keeps the
generated scenario files; --json prints one JSON object. Exit 0 when every scenario passed (and,
for `day`, every run's output was identical), 1 otherwise.
"""
import argparse
import json
import math
import os
import random
import subprocess
import sys
import tempfile
import time


def registrations_scenario(n, churn=False):
    what = "registrations and deletions" if churn else "registrations"
    lines = [f"# {n} {what} for one RP on two devices (scripts/bench_workloads.py {'churn' if churn else 'registrations'})",
             "seed 1", "device add phone", "device add laptop"]
    for i in range(1, n + 1):
        if churn:
            lines += [f"phone register user u{i} as p{i} => ok", f"phone delete p{i}"]
        else:
            lines.append(f"phone register user u{i} => ok")
    lines.append("laptop holds")
    return "\n".join(lines) + "\n"


UPLOAD, DOWNLOAD = "1s..30s", "1s..2m"
DAY_MS = 24 * 3600 * 1000


def day_scenario(users, devices, seed):
    """A simulated day: each user registers on a random device at a random time and signs in on
    another device between 3 minutes and 4 hours later (after the slowest sync: 30 s + 2 min)."""
    rng = random.Random(seed)
    names = [f"d{i}" for i in range(1, devices + 1)]
    events = []
    for u in range(1, users + 1):
        at = rng.randrange(0, DAY_MS - 4 * 3600 * 1000)
        home = rng.choice(names)
        other = rng.choice([n for n in names if n != home] or names)
        later = at + rng.randrange(3 * 60 * 1000, 4 * 3600 * 1000)
        events.append((at, len(events), f"{home} register user u{u} => ok"))
        events.append((later, len(events), f"{other} sign user u{u} => ok"))
    events.sort()
    lines = [f"# {users} users on {devices} devices over a simulated day (scripts/bench_workloads.py day --seed {seed})",
             f"seed {seed}"] + [f"device add {n}" for n in names] + [f"sync upload {UPLOAD} download {DOWNLOAD}"]
    lines += [f"at {at}ms {step}" for at, _, step in events]
    lines += [f"at {DAY_MS}ms {n} holds" for n in names]
    return "\n".join(lines) + "\n"


DENSE_UPLOAD, DENSE_DOWNLOAD = "1s..10m", "1s..2h"
HOUR_MS = 3600 * 1000
MINUTE_MS = 60 * 1000
# Past the slowest transfer (10 min up, 2 h down): the change has reached every device.
SETTLED_MS = 2 * HOUR_MS + 15 * MINUTE_MS


def dense_scenario(users, devices, seed):
    """A dense day on one RP: PIN sign-ins, long sync delays, deletions and hourly checks.
    Returns the scenario text and the labels every device must hold at the end."""
    rng = random.Random(seed)
    names = [f"d{i}" for i in range(1, devices + 1)]
    events, kept = [], []

    def add(at, step):
        events.append((at, len(events), step))
    for u in range(1, users + 1):
        at = rng.randrange(0, 14 * HOUR_MS)
        home = rng.choice(names)
        others = [n for n in names if n != home] or names
        first = at + rng.randrange(SETTLED_MS, 4 * HOUR_MS)
        second = first + rng.randrange(MINUTE_MS, 3 * HOUR_MS)
        add(at, f"{home} register user u{u} => ok uv=1")
        add(first, f"{rng.choice(others)} sign user u{u} => ok credential=u{u} uv=1")
        add(second, f"{rng.choice(others)} sign user u{u} => ok credential=u{u} uv=1")
        if rng.randrange(10) == 0:
            deleted = second + rng.randrange(MINUTE_MS, 30 * MINUTE_MS)
            where = rng.choice(names)
            add(deleted, f"{where} delete u{u}")
            add(deleted + SETTLED_MS, f"{rng.choice([n for n in names if n != where] or names)} holds => passkeys!=u{u}")
        else:
            kept.append(f"u{u}")
    for hour in range(1, 24):
        for n in names:
            add(hour * HOUR_MS, f"{n} holds")
    events.sort()
    lines = [f"# {users} users on {devices} devices over a dense day on one RP (scripts/bench_workloads.py dense --seed {seed})",
             f"seed {seed}"] + [f"device add {n} pin {1000 + i}" for i, n in enumerate(names, 1)]
    lines += [f"sync upload {DENSE_UPLOAD} download {DENSE_DOWNLOAD}"]
    lines += [f"at {at}ms {step}" for at, _, step in events]
    lines += [f"at {DAY_MS}ms {n} holds" for n in names]
    return "\n".join(lines) + "\n", kept


def run_scenario(authctl, path, tmpdir):
    """Runs `authctl scenario run PATH` once: (exit code, stdout, stderr, wall s, CPU s, max RSS MiB)."""
    env = dict(os.environ)
    if tmpdir:
        env["TMPDIR"] = tmpdir
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        child = subprocess.Popen([authctl, "scenario", "run", path], stdin=subprocess.DEVNULL, stdout=out, stderr=err, env=env)
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - start
        child.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return (child.returncode, out.read().decode(), err.read().decode(), wall,
                usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024)


def slope(xs, ys):
    lx, ly = [math.log(x) for x in xs], [math.log(y) for y in ys]
    mx, my = sum(lx) / len(lx), sum(ly) / len(ly)
    den = sum((a - mx) ** 2 for a in lx)
    return sum((a - mx) * (b - my) for a, b in zip(lx, ly)) / den if den else float("nan")


def write_scenario(text, name, keep, work):
    path = os.path.join(keep or work, name)
    with open(path, "w") as f:
        f.write(text)
    return path


def registrations(args, work):
    sizes = [int(s) for s in args.sizes.split(",")]
    if not sizes or min(sizes) < 1:
        sys.exit("bench_workloads: --sizes takes whole numbers from 1, like 100,1000,5000")
    rows, ok = [], True
    for n in sizes:
        churn = args.workload == "churn"
        path = write_scenario(registrations_scenario(n, churn), f"{args.workload}-{n}.scn", args.write, work)
        code, out, err, wall, cpu, rss = run_scenario(args.authctl, path, args.tmpdir)
        holds = next((l for l in out.splitlines() if " laptop holds => " in l), "").split(" => ", 1)[-1]
        held = [] if holds == "none" else holds.split(",")
        passed = code == 0 and len(held) == (0 if churn else n)
        ok = ok and passed
        if not passed:
            print(f"bench_workloads: {n} registrations: exit {code}, laptop holds {len(held)}: {err.strip()}", file=sys.stderr)
        rows.append({"registrations": n, "passed": passed, "cpuSeconds": cpu, "cpuMsPerCeremony": cpu / n * 1000,
                     "wallSeconds": wall, "maxRssMiB": rss})
    report = {"workload": args.workload, "rows": rows,
              "exponent": slope(sizes, [max(r["cpuSeconds"], 1e-6) for r in rows]) if len(sizes) > 1 else None,
              "perCeremonyRatio": rows[-1]["cpuMsPerCeremony"] / rows[0]["cpuMsPerCeremony"] if len(rows) > 1 else None,
              "stepExponents": [slope([a["registrations"], b["registrations"]], [max(a["cpuSeconds"], 1e-6), max(b["cpuSeconds"], 1e-6)])
                                for a, b in zip(rows, rows[1:])]}
    if args.json:
        print(json.dumps(report))
    else:
        print(f"{args.workload:>13s} {'CPU (s)':>9s} {'CPU/ceremony (ms)':>18s} {'wall (s)':>9s} {'max RSS (MiB)':>14s}")
        for r in rows:
            print(f"{r['registrations']:13d} {r['cpuSeconds']:9.2f} {r['cpuMsPerCeremony']:18.3f} {r['wallSeconds']:9.2f} {r['maxRssMiB']:14.1f}")
        if report["exponent"] is not None:
            steps = ", ".join(f"{a}→{b} {e:.2f}" for a, b, e in zip(sizes, sizes[1:], report["stepExponents"]))
            print(f"growth exponent {report['exponent']:.2f} (between sizes: {steps}); "
                  f"CPU per ceremony at {sizes[-1]} / at {sizes[0]}: {report['perCeremonyRatio']:.2f}x")
    return ok


def day(args, work):
    if args.users < 1 or args.devices < 2 or args.runs < 1:
        sys.exit("bench_workloads: day needs --users 1 or more, --devices 2 or more, --runs 1 or more")
    path = write_scenario(day_scenario(args.users, args.devices, args.seed), f"day-{args.users}-users-{args.devices}-devices.scn",
                          args.write, work)
    runs, outputs, ok = [], [], True
    for _ in range(args.runs):
        code, out, err, wall, cpu, rss = run_scenario(args.authctl, path, args.tmpdir)
        if code != 0:
            ok = False
            print(f"bench_workloads: the day: exit {code}: {err.strip()}", file=sys.stderr)
        outputs.append(out)
        runs.append({"passed": code == 0, "wallSeconds": wall, "cpuSeconds": cpu, "maxRssMiB": rss})
    identical = all(o == outputs[0] for o in outputs)
    ok = ok and identical
    steps = outputs[0].splitlines()[-1] if outputs[0] else ""
    report = {"workload": "day", "users": args.users, "devices": args.devices, "seed": args.seed,
              "steps": steps, "runs": runs, "identical": identical}
    if args.json:
        print(json.dumps(report))
    else:
        for i, r in enumerate(runs, 1):
            print(f"run {i}: {r['wallSeconds']:.2f} s wall, {r['cpuSeconds']:.2f} s CPU, max RSS {r['maxRssMiB']:.1f} MiB"
                  f"{'' if r['passed'] else ', FAILED'}")
        print(f"{args.users} users on {args.devices} devices, {steps}; output of the {args.runs} runs "
              f"{'identical' if identical else 'DIFFERS'}")
    return ok


def dense(args, work):
    """The dense day and the day, alternating: each one's runs, and the ratio of their medians."""
    if args.users < 1 or args.devices < 2 or args.runs < 1:
        sys.exit("bench_workloads: dense needs --users 1 or more, --devices 2 or more, --runs 1 or more")
    text, kept = dense_scenario(args.users, args.devices, args.seed)
    paths = {"dense": write_scenario(text, f"dense-{args.users}-users-{args.devices}-devices.scn", args.write, work),
             "day": write_scenario(day_scenario(args.users, args.devices, args.seed),
                                   f"day-{args.users}-users-{args.devices}-devices.scn", args.write, work)}
    runs, outputs, ok = {"day": [], "dense": []}, {"day": [], "dense": []}, True
    for _ in range(args.runs):
        for name in ("day", "dense"):
            code, out, err, wall, cpu, rss = run_scenario(args.authctl, paths[name], args.tmpdir)
            passed = code == 0
            if name == "dense" and passed:
                # What each device holds at the end: its last `holds` line, every passkey not deleted.
                final = {}
                for line in out.splitlines():
                    words = line.split()
                    if len(words) >= 5 and words[3] == "holds" and words[4] == "=>":
                        final[words[2]] = sorted(words[5].split(",")) if len(words) > 5 and words[5] != "none" else []
                passed = len(final) == args.devices and all(held == sorted(kept) for held in final.values())
                if not passed:
                    print(f"bench_workloads: the dense day: a device does not end holding the {len(kept)} passkeys not deleted",
                          file=sys.stderr)
            if code != 0:
                print(f"bench_workloads: the {name}: exit {code}: {err.strip()}", file=sys.stderr)
            ok = ok and passed
            outputs[name].append(out)
            runs[name].append({"passed": passed, "wallSeconds": wall, "cpuSeconds": cpu, "maxRssMiB": rss})
    identical = all(o == outputs[n][0] for n in outputs for o in outputs[n])
    ok = ok and identical

    def median(values):
        values = sorted(values)
        middle = len(values) // 2
        return values[middle] if len(values) % 2 else (values[middle - 1] + values[middle]) / 2
    medians = {n: {k: median([r[k] for r in runs[n]]) for k in ("wallSeconds", "cpuSeconds", "maxRssMiB")} for n in runs}
    report = {"workload": "dense", "users": args.users, "devices": args.devices, "seed": args.seed,
              "steps": {n: (outputs[n][0].splitlines() or [""])[-1] for n in outputs}, "kept": len(kept),
              "runs": runs, "medians": medians, "identical": identical,
              "ratioWall": medians["dense"]["wallSeconds"] / max(medians["day"]["wallSeconds"], 1e-9),
              "ratioCpu": medians["dense"]["cpuSeconds"] / max(medians["day"]["cpuSeconds"], 1e-9)}
    if args.json:
        print(json.dumps(report))
    else:
        for name in ("day", "dense"):
            for i, r in enumerate(runs[name], 1):
                print(f"{name:5s} run {i}: {r['wallSeconds']:.2f} s wall, {r['cpuSeconds']:.2f} s CPU, max RSS {r['maxRssMiB']:.1f} MiB"
                      f"{'' if r['passed'] else ', FAILED'}")
        print(f"{args.users} users on {args.devices} devices; day {report['steps']['day']}, dense {report['steps']['dense']} "
              f"({len(kept)} passkeys kept); output of each one's runs {'identical' if identical else 'DIFFERS'}")
        print(f"dense / day, medians: wall {report['ratioWall']:.2f}x, CPU {report['ratioCpu']:.2f}x")
    return ok


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("workload", choices=["registrations", "churn", "day", "dense"])
    parser.add_argument("--authctl", default=".build/release/authctl")
    parser.add_argument("--sizes", default="100,1000,5000")
    parser.add_argument("--users", type=int, default=1000)
    parser.add_argument("--devices", type=int, default=5)
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--seed", type=int, default=18)
    parser.add_argument("--tmpdir")
    parser.add_argument("--write", metavar="DIR")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    args.authctl = os.path.abspath(args.authctl)
    if args.write:
        os.makedirs(args.write, exist_ok=True)
    with tempfile.TemporaryDirectory() as work:
        ok = {"day": day, "dense": dense}.get(args.workload, registrations)(args, work)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
