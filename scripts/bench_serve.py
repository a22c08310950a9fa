#!/usr/bin/env python3
"""`authctl serve` under load (docs/benchmarks.md, "The server"): sign-ins over loopback HTTP
with keep-alive, driven by wrk, against the in-process rate measured in the same run.

    python3 scripts/bench_serve.py [--seconds 10] [--threads N] [--authctl .build/release/authctl]

1. In process: `authctl bench ceremonies --json`, the sign-in rate in memory (one core).
2. One account: 32 wrk connections signing in on one account's one device (its requests run one
   at a time, as one person's do): rate, p50 and p99 latency.
3. 32 accounts: 32 connections, each request on one of 32 accounts in turn (32 test workers, each
   with its own account): rate, p50 and p99; every answer must be 200.
4. 32 accounts, user verification: the same, on 32 other accounts whose passkeys were made and are
   used with the RP default, `userVerification: "preferred"` (WebAuthn's default when an RP names
   none): each passkey is sealed under the device's biometric key, so each sign-in checks the
   device's PIN and answers UV=1. Its rate against the in-process rate and against step 3's.
5. Fresh users: over one keep-alive connection, POST /accounts (one device, PIN 1234), a
   registration and a sign-in, then DELETE — the median and p90 of the first three together.

Standard library only, and wrk (Debian's `wrk`). The server's accounts are made in --scratch
(default /dev/shm when it exists: a tmpfs, as a test machine's would be). Exit 0 when every
request succeeded, 1 otherwise; --json prints one JSON object.
"""
import argparse
import base64
import http.client
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse

ORIGIN = "https://example.com"
# Without user verification, as the in-process rate is measured (a passkey made with it is sealed
# under the biometric, and each use opens it with the PIN).
REGISTRATION = {"rp": {"id": "example.com", "name": "Example"}, "user": {"id": "dXNlcjE", "name": "alice", "displayName": "Alice"},
                "challenge": "Y2hhbGxlbmdlLWNoYWxsZW5nZQ", "pubKeyCredParams": [{"type": "public-key", "alg": -7}],
                "authenticatorSelection": {"userVerification": "discouraged"}}
SIGN_IN = {"challenge": "c2lnbi1pbi1jaGFsbGVuZ2U", "rpId": "example.com", "userVerification": "discouraged"}
# With the RP default, as most RPs ask: the passkey is made with user verification and each sign-in
# verifies the user (the device's PIN, which the server types for the person).
REGISTRATION_UV = {**REGISTRATION, "authenticatorSelection": {"userVerification": "preferred"}}
SIGN_IN_UV = {**SIGN_IN, "userVerification": "preferred"}
UV_FLAG = 0x04


class Client:
    """One keep-alive connection to the server."""

    def __init__(self, url, token):
        parts = urllib.parse.urlparse(url)
        self.connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)
        self.headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}

    def call(self, method, path, body=None):
        self.connection.request(method, path, body=json.dumps(body) if body is not None else None, headers=self.headers)
        response = self.connection.getresponse()
        data = response.read()
        if response.status >= 300:
            raise RuntimeError(f"{method} {path}: {response.status} {data[:300]!r}")
        return json.loads(data) if data else None


def verified(response):
    """Whether a registration's or sign-in's response says UV=1 (its authenticatorData flags)."""
    data = response["response"]["authenticatorData"]
    return bool(base64.urlsafe_b64decode(data + "=" * (-len(data) % 4))[32] & UV_FLAG)


def account_with_passkey(client, registration=REGISTRATION):
    """A new account whose passkey was made with `registration`: with user verification exactly
    when the options ask for it (a sign-in on a device with a PIN verifies the user whenever the
    passkey was made so, whatever it asks, so the registration is where the shapes differ)."""
    account = client.call("POST", "/accounts", {})["id"]
    response = client.call("POST", f"/accounts/{account}/devices/phone/register", {"options": registration, "origin": ORIGIN})
    if verified(response) != (registration["authenticatorSelection"]["userVerification"] != "discouraged"):
        raise RuntimeError("a registration's UV flag is not what its options ask for")
    return account


def user_verified(client, account, sign_in):
    """Whether a sign-in with these options on the account answers UV=1."""
    return verified(client.call("POST", f"/accounts/{account}/devices/phone/sign", {"options": sign_in, "origin": ORIGIN}))


def wrk(url, token, paths, seconds, directory, wrk_threads, sign_in=SIGN_IN):
    """wrk with 32 connections on `wrk_threads` threads, each request a sign-in with `sign_in` on
    the next of `paths`: rate, p50, p99 (ms)."""
    body = json.dumps({"options": sign_in, "origin": ORIGIN})
    script = os.path.join(directory, "sign.lua")
    with open(script, "w") as f:
        f.write("paths = {" + ",".join(json.dumps(p) for p in paths) + "}\n"
                "counter = 0\n"
                "request = function()\n"
                "  counter = counter + 1\n"
                f"  return wrk.format('POST', paths[(counter % #paths) + 1], {{['Authorization'] = 'Bearer {token}', "
                f"['Content-Type'] = 'application/json'}}, {json.dumps(body)})\n"
                "end\n")
    out = subprocess.run(["wrk", f"-t{wrk_threads}", "-c32", f"-d{seconds}s", "--latency", "-s", script, url], capture_output=True, text=True, check=True).stdout
    if "Non-2xx" in out or "Socket errors" in out:
        raise RuntimeError("wrk saw failed requests:\n" + out)
    rate = float(re.search(r"Requests/sec:\s+([0-9.]+)", out).group(1))

    def percentile(p):
        value, unit = re.search(rf"\s{p}%\s+([0-9.]+)(us|ms|s)", out).groups()
        return float(value) * {"us": 0.001, "ms": 1, "s": 1000}[unit]
    return {"perSecond": round(rate), "p50ms": round(percentile(50), 3), "p99ms": round(percentile(99), 3)}


def fresh_users(client, count):
    totals, parts = [], {"create": [], "register": [], "sign": []}
    for _ in range(count):
        t0 = time.perf_counter()
        account = client.call("POST", "/accounts", {})["id"]
        t1 = time.perf_counter()
        client.call("POST", f"/accounts/{account}/devices/phone/register", {"options": REGISTRATION, "origin": ORIGIN})
        t2 = time.perf_counter()
        client.call("POST", f"/accounts/{account}/devices/phone/sign", {"options": SIGN_IN, "origin": ORIGIN})
        t3 = time.perf_counter()
        client.call("DELETE", f"/accounts/{account}")
        totals.append((t3 - t0) * 1000)
        for key, value in zip(parts, (t1 - t0, t2 - t1, t3 - t2)):
            parts[key].append(value * 1000)
    totals.sort()
    report = {"medianMs": round(statistics.median(totals), 3), "p90Ms": round(totals[int(len(totals) * 0.9)], 3)}
    report.update({f"{key}MedianMs": round(statistics.median(values), 3) for key, values in parts.items()})
    return report


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--authctl", default=".build/release/authctl")
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--users", type=int, default=500, help="fresh users timed")
    parser.add_argument("--wrk-threads", type=int, default=2, help="wrk's threads (it shares the machine's cores with the server)")
    parser.add_argument("--scratch", default="/dev/shm" if os.path.isdir("/dev/shm") else tempfile.gettempdir())
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    in_process = json.loads(subprocess.run([args.authctl, "--json", "bench", "ceremonies", "--seconds", str(min(args.seconds, 5))],
                                           capture_output=True, text=True, check=True).stdout)
    sign_rate = round(next(row["perSecond"] for row in in_process["rows"] if row["ceremony"] == "sign" and row["store"] == "memory"))
    with tempfile.TemporaryDirectory() as directory:
        server = subprocess.Popen([args.authctl, "serve", "--threads", str(args.threads), "--scratch", args.scratch],
                                  stdout=subprocess.PIPE, text=True)
        try:
            url = server.stdout.readline().split()[-1]
            token = server.stdout.readline().split()[-1]
            client = Client(url, token)
            one = account_with_passkey(client)
            single = wrk(url, token, [f"/accounts/{one}/devices/phone/sign"], args.seconds, directory, args.wrk_threads)
            many = [account_with_passkey(client) for _ in range(32)]
            spread = wrk(url, token, [f"/accounts/{a}/devices/phone/sign" for a in many], args.seconds, directory, args.wrk_threads)
            verified = [account_with_passkey(client, REGISTRATION_UV) for _ in range(32)]
            # The shape is what it says: UV=1 with the RP default, UV=0 without it.
            if not user_verified(client, verified[0], SIGN_IN_UV) or user_verified(client, many[0], SIGN_IN):
                raise RuntimeError("the sign-ins' UV flag is not what their options ask for")
            spread_uv = wrk(url, token, [f"/accounts/{a}/devices/phone/sign" for a in verified], args.seconds, directory,
                            args.wrk_threads, SIGN_IN_UV)
            fresh = fresh_users(client, args.users)
        finally:
            server.send_signal(signal.SIGTERM)
            stopped = server.wait(timeout=60)
    report = {"inProcessSignPerSecond": sign_rate, "oneAccount": single, "thirtyTwoAccounts": spread,
              "thirtyTwoAccountsUserVerified": spread_uv, "freshUsers": fresh,
              "ratioOneAccount": round(single["perSecond"] / sign_rate, 2), "ratioThirtyTwoAccounts": round(spread["perSecond"] / sign_rate, 2),
              "ratioThirtyTwoAccountsUserVerified": round(spread_uv["perSecond"] / sign_rate, 3),
              "ratioUserVerifiedToNot": round(spread_uv["perSecond"] / spread["perSecond"], 3),
              "threads": args.threads, "cores": os.cpu_count(), "serverExit": stopped}
    if args.json:
        print(json.dumps(report))
    else:
        print(f"in process: {sign_rate} sign-ins/s (one core)")
        for name, row, ratio in (("one account", single, report["ratioOneAccount"]), ("32 accounts", spread, report["ratioThirtyTwoAccounts"]),
                                 ("32, UV", spread_uv, report["ratioThirtyTwoAccountsUserVerified"])):
            print(f"{name:12} {row['perSecond']:>7} sign-ins/s over HTTP ({ratio}x in process), p50 {row['p50ms']} ms, p99 {row['p99ms']} ms")
        print(f"32 accounts with the RP default (userVerification preferred: UV=1, the PIN checked) / without UV: "
              f"{report['ratioUserVerifiedToNot']}x")
        print(f"fresh user (account + registration + sign-in): median {fresh['medianMs']} ms, p90 {fresh['p90Ms']} ms "
              f"(create {fresh['createMedianMs']}, register {fresh['registerMedianMs']}, sign {fresh['signMedianMs']})")
    return 0 if stopped == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
