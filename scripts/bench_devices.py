#!/usr/bin/env python3
"""Steady state of an account on PostgreSQL: N devices, each a vault of its own (as on N
machines), each registering a passkey once a second for a while, as `authctl` processes against a
private cluster (initdb in a temporary directory, as Tests/interop does). Reports, from one run,
the register command's latency with one device and with N (and their ratio), and how long a
passkey takes to be listed by another device (d0 lists four times a second).

    python3 scripts/bench_devices.py --devices 10 --seconds 30 [--binary .build/release/authctl]

Needs `postgresql` installed (scripts/test.sh installs it) and, as root, runs the server as nobody.
"""
import argparse
import base64
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "Tests" / "interop"))
from postgres_support import Cluster  # noqa: E402

RP, ORIGIN = "steady.example", "https://steady.example"


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def run(binary, vault, *args, stdin="", env=None):
    environment = {k: v for k, v in os.environ.items() if not k.startswith("AUTHCTL_")}
    environment.update(AUTHCTL_PASSPHRASE="bench", AUTHCTL_VAULT=str(vault), **(env or {}))
    start = time.monotonic()
    proc = subprocess.run([binary, *args], input=stdin, env=environment, capture_output=True, text=True, timeout=120)
    return proc, (time.monotonic() - start) * 1000


def registration(user: str) -> str:
    return json.dumps({"rp": {"id": RP, "name": "Steady"}, "user": {"id": b64url(user.encode()), "name": user, "displayName": user},
                       "challenge": b64url(os.urandom(16)), "pubKeyCredParams": [{"type": "public-key", "alg": -7}],
                       "authenticatorSelection": {"residentKey": "required", "userVerification": "discouraged"}})


def steady(binary, root, cluster, devices, seconds, account):
    address = cluster.address(account)
    vaults = [root / f"{account}-d{i}" for i in range(devices)]
    proc, _ = run(binary, vaults[0], "init", "--store", address, "--device", "d0", "--kdf", "min", "--no-biometry")
    assert proc.returncode == 0, proc.stderr
    secret = proc.stdout.strip()
    for i in range(1, devices):
        proc, _ = run(binary, vaults[i], "init", "--join", address, "--recovery", "--device", f"d{i}", "--kdf", "min",
                      "--no-biometry", env={"AUTHCTL_RECOVERY_SECRET": secret})
        assert proc.returncode == 0, proc.stderr
    latencies, made, seen = [], {}, {}
    lock = threading.Lock()
    start = time.monotonic()

    def device(i):
        for k in range(int(seconds)):
            delay = start + k + i / devices - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            user = f"d{i}-{k}"
            proc, ms = run(binary, vaults[i], "register", "--origin", ORIGIN, "--options", "-", stdin=registration(user))
            assert proc.returncode == 0, proc.stderr
            with lock:
                latencies.append(ms)
                made[json.loads(proc.stdout)["id"]] = (i, time.monotonic())

    def watcher():
        j = 0  # d0 lists four times a second: how soon the others' passkeys reach it
        while time.monotonic() < start + seconds + 3:
            time.sleep(0.25)
            proc, _ = run(binary, vaults[j], "--json", "list", "--rp-id", RP)
            now = time.monotonic()
            with lock:
                for c in json.loads(proc.stdout)["credentials"]:
                    origin = made.get(c["id"])
                    if origin and origin[0] != j and c["id"] not in seen:
                        seen[c["id"]] = now - origin[1]

    threads = [threading.Thread(target=device, args=(i,)) for i in range(devices)] + [threading.Thread(target=watcher)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return latencies, list(seen.values())


def pct(values, p):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * p))]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--devices", type=int, default=10)
    parser.add_argument("--seconds", type=float, default=30)
    parser.add_argument("--binary", default=".build/release/authctl")
    a = parser.parse_args()
    binary = os.path.abspath(a.binary)
    cluster = Cluster()
    try:
        with tempfile.TemporaryDirectory(prefix="bench-devices-") as root:
            one, _ = steady(binary, pathlib.Path(root), cluster, 1, a.seconds, "one")
            many, lags = steady(binary, pathlib.Path(root), cluster, a.devices, a.seconds, "many")
    finally:
        cluster.destroy()
    print(f"register, 1 device:   p50 {statistics.median(one):.0f} ms, p90 {pct(one, 0.9):.0f} ms ({len(one)} registrations)")
    print(f"register, {a.devices} devices: p50 {statistics.median(many):.0f} ms, p90 {pct(many, 0.9):.0f} ms, max {max(many):.0f} ms"
          f" ({len(many)} registrations)")
    print(f"ratio of p50s: {statistics.median(many) / statistics.median(one):.2f}")
    if lags:
        print(f"listed by another device after: p50 {statistics.median(lags):.2f} s, p90 {pct(lags, 0.9):.2f} s"
              f" ({len(lags)} passkeys of d1… listed by d0, which lists every 0.25 s: the figure includes up to that wait)")


if __name__ == "__main__":
    main()
