#!/usr/bin/env python3
"""Rates of soft-webauthn's create and get (PyPI `soft-webauthn`), the Python software
authenticator, for a side-by-side run with `authctl bench ceremonies` (docs/benchmarks.md).

soft-webauthn takes option dictionaries with bytes and returns dictionaries with bytes: no JSON
is parsed or written, no origin or RP ID is checked. Its figures are what that much costs.

    python3 -m venv .venv-bench && .venv-bench/bin/pip install soft-webauthn
    .venv-bench/bin/python scripts/bench_softwebauthn.py --seconds 3 [--json]

(A separate environment: soft-webauthn pins an older `cryptography` than the test suite's
verifiers need.)
"""
import argparse
import json
import os
import time

from soft_webauthn import SoftWebauthnDevice


def rate(seconds, body):
    count, start = 0, time.perf_counter()
    while True:
        for _ in range(16):
            body()
        count += 16
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            return count / elapsed


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    origin = "https://bench.example"
    creation = {"publicKey": {
        "rp": {"id": "bench.example", "name": "Bench"},
        "user": {"id": b"b", "name": "b", "displayName": "B"},
        "challenge": b"challenge-challenge",
        "pubKeyCredParams": [{"type": "public-key", "alg": -7}],
        "attestation": "none",
    }}
    request = {"publicKey": {"rpId": "bench.example", "challenge": os.urandom(19)}}
    device = SoftWebauthnDevice()
    create = rate(args.seconds, lambda: device.create(creation, origin))
    get = rate(args.seconds, lambda: device.get(request, origin))
    if args.json:
        print(json.dumps({"seconds": args.seconds, "createPerSecond": create, "getPerSecond": get}))
    else:
        print(f"soft-webauthn create (none): {create:.0f}/s; get: {get:.0f}/s")


if __name__ == "__main__":
    main()
