#!/usr/bin/env python3
"""How long `authctl sign` takes as a command, next to the start of a bare Swift hello-world
binary built with the same compiler (docs/benchmarks.md).

    scripts/build-release.sh        # swift build -c release --static-swift-stdlib
    python3 scripts/bench_startup.py [--authctl .build/release/authctl] [--runs 60] [--json]

It builds the hello-world (`swiftc -O`) in .build/bench-startup, keeps a 10-passkey vault there
(`authctl bench vault --sizes 10 --measure library --keep`, kdf min, no PIN), and times each command `--runs`
times, alternating them so a busy moment falls on both; it prints the medians and their ratio.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import time


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--authctl", default=".build/release/authctl")
    parser.add_argument("--runs", type=int, default=60)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    authctl = os.path.abspath(args.authctl)
    work = os.path.abspath(".build/bench-startup")
    os.makedirs(work, exist_ok=True)
    hello = os.path.join(work, "hello")
    source = os.path.join(work, "main.swift")
    with open(source, "w") as f:
        f.write('print("hello")\n')
    subprocess.run(["swiftc", "-O", source, "-o", hello], check=True)
    vault = os.path.join(work, "vault")
    shutil.rmtree(vault, ignore_errors=True)
    subprocess.run([authctl, "bench", "vault", "--sizes", "10", "--runs", "1", "--measure", "library", "--dir", work, "--keep", vault],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    env = dict(os.environ, AUTHCTL_PASSPHRASE="bench")
    sign = [authctl, "--vault", vault, "sign", "--origin", "https://target.example"]
    commands = {"hello": [hello], "sign": sign, "version": [authctl, "--version"]}
    times = {name: [] for name in commands}
    for _ in range(args.runs):
        for name, command in commands.items():
            start = time.perf_counter()
            subprocess.run(command, env=env, check=True, stdout=subprocess.DEVNULL)
            times[name].append((time.perf_counter() - start) * 1000)
    medians = {name: statistics.median(values) for name, values in times.items()}
    if args.json:
        print(json.dumps({"runs": args.runs, "milliseconds": medians, "signOverHello": medians["sign"] / medians["hello"]}))
    else:
        print(f"hello-world {medians['hello']:.2f} ms; authctl --version {medians['version']:.2f} ms; "
              f"authctl sign (10 passkeys) {medians['sign']:.2f} ms = {medians['sign'] / medians['hello']:.2f}x the hello-world")


if __name__ == "__main__":
    main()
