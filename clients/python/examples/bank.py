"""A bank's passkey journey, end to end, against a real relying party.

The bank is docs/examples/rp_server.py (py_webauthn behind HTTP); the customer's devices are an
authctl account with a phone and a laptop, on a virtual clock, whose passkeys sync with delays:

1. budi signs in with his password; the bank offers a passkey.
2. He makes one on his phone; the bank verifies it.
3. The passkey syncs to his laptop: not there until the clock passes the upload and download
   delays, then there (the account's event stream says so: ``syncArrived``).
4. He signs in on the laptop with it; the bank verifies the assertion.
5. A response with a broken signature (``fault: "bad-signature"``) is refused by the bank (HTTP 400).

    python clients/python/examples/bank.py [--rp-server PATH] [--authctl-bin PATH]

It prints each step and exits 1 if anything is not as expected. The authctl binary is
``--authctl-bin``, else ``$AUTHCTL_BIN``, else ``authctl`` on ``PATH``.
"""
import argparse
import http.cookiejar
import json
import pathlib
import subprocess
import sys
import urllib.error
import urllib.request

from authctl_client import Server

ORIGIN = "https://yourbank.example"
RP_SERVER = pathlib.Path(__file__).resolve().parents[3] / "docs" / "examples" / "rp_server.py"


class Failed(Exception):
    """A step did not go as expected."""


def expect(condition: bool, message: str) -> None:
    if not condition:
        raise Failed(message)


class Browser:
    """One browser talking to the bank: its own cookies (so its own session)."""

    def __init__(self, url: str):
        self.url = url
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))

    def post(self, path: str, body=None):
        """POST JSON; answers (status, JSON), whatever the status."""
        request = urllib.request.Request(self.url + path, data=json.dumps(body or {}).encode(), method="POST",
                                         headers={"Content-Type": "application/json"})
        try:
            with self.opener.open(request, timeout=60) as response:
                return response.status, json.loads(response.read())
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read() or b"{}")


def start_bank(rp_server: pathlib.Path):
    """The bank on a free port, run by this interpreter; (process, url)."""
    process = subprocess.Popen([sys.executable, str(rp_server), "--port", "0"], stdout=subprocess.PIPE, text=True)
    line = process.stdout.readline()
    if not line.startswith("listening on "):
        process.kill()
        process.wait()
        raise Failed(f"the bank did not start (it printed {line!r})")
    return process, line.split()[-1]


def step(number: int, text: str) -> None:
    print(f"[{number}] {text}", flush=True)


def journey(bank_url: str, server: Server) -> None:
    with server.create_account(devices=[("phone", "1234"), ("laptop", "9753")],
                               clock={"mode": "virtual", "start": "2026-03-02T09:00:00Z"},
                               sync={"upload": "2s", "download": "5s"}) as account, account.events() as events:
        phone, laptop = account.device("phone"), account.device("laptop")

        step(1, "budi signs in with his password")
        on_phone = Browser(bank_url)
        status, answer = on_phone.post("/password/login", {"username": "budi", "password": "rahasia"})
        expect(status == 200 and answer == {"user": "budi", "offerPasskey": True}, f"password sign-in: {status} {answer}")
        print(f"    the bank signs him in and offers a passkey: {answer}")

        step(2, "he makes a passkey on his phone")
        status, options = on_phone.post("/register/begin")
        expect(status == 200, f"register/begin: {status} {options}")
        response = phone.register(options, ORIGIN)
        credential_id = response["id"]
        status, answer = on_phone.post("/register/finish", {"credential": response})
        expect(status == 200 and answer.get("verified") is True, f"register/finish: {status} {answer}")
        print(f"    the bank verified passkey {credential_id[:12]}... and holds {answer['passkeys']} passkey(s)")

        step(3, "the passkey syncs to his laptop on the account's clock (upload 2 s, download 5 s)")
        expect(not laptop.has_passkey(credential_id), "the laptop held the passkey before any time passed")
        account.clock.advance("2s")
        landed = events.wait_for("syncLanded", lambda e: e["credentialId"] == credential_id)
        expect(not laptop.has_passkey(credential_id), "the laptop held the passkey before its download")
        print(f"    at +2 s it reached the account's store (event {landed.id}); the laptop does not hold it yet")
        account.clock.advance("4999ms")
        expect(not laptop.has_passkey(credential_id), "the laptop held the passkey 1 ms early")
        account.clock.advance("1ms")
        arrived = events.wait_for("syncArrived", lambda e: e["device"] == "laptop" and e["credentialId"] == credential_id)
        expect(laptop.has_passkey(credential_id), "the laptop does not hold the passkey after it arrived")
        print(f"    at +7 s it arrived on the laptop (event {arrived.id}, syncArrived)")

        step(4, "he signs in on the laptop with the passkey")
        on_laptop = Browser(bank_url)
        status, options = on_laptop.post("/login/begin")
        expect(status == 200, f"login/begin: {status} {options}")
        assertion = laptop.sign(options, ORIGIN)
        expect(assertion["id"] == credential_id, "the laptop signed with another passkey")
        status, answer = on_laptop.post("/login/finish", {"credential": assertion})
        expect(status == 200 and answer == {"verified": True, "user": "budi"}, f"login/finish: {status} {answer}")
        print(f"    the bank verified the assertion and signed him in: {answer}")

        step(5, "a response with a broken signature is refused")
        status, options = on_laptop.post("/login/begin")
        expect(status == 200, f"login/begin: {status} {options}")
        forged = laptop.sign(options, ORIGIN, fault="bad-signature")
        status, answer = on_laptop.post("/login/finish", {"credential": forged})
        expect(status == 400, f"the bank accepted a broken signature: {status} {answer}")
        print(f"    the bank refused it with HTTP {status}: {answer.get('error')}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rp-server", type=pathlib.Path, default=RP_SERVER, help="the bank (docs/examples/rp_server.py)")
    parser.add_argument("--authctl-bin", help="the authctl binary (default $AUTHCTL_BIN, else authctl on PATH)")
    arguments = parser.parse_args()
    bank = None
    try:
        bank, bank_url = start_bank(arguments.rp_server)
        print(f"the bank listens on {bank_url}")
        with Server(arguments.authctl_bin) as server:
            print(f"authctl serve listens on {server.url}")
            journey(bank_url, server)
    except Failed as failure:
        print(f"FAILED: {failure}", file=sys.stderr)
        return 1
    finally:
        if bank is not None:
            bank.terminate()
            bank.wait(timeout=60)
    print("every step went as expected")
    return 0


if __name__ == "__main__":
    sys.exit(main())
