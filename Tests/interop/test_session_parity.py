"""One request layer behind two front ends: every step kind of a scenario that reaches the account,
run as a scenario line (`authctl --json scenario run`) and as the command the command line offers
for it, on a vault of the same devices and PINs, comes to the same outcome: the same error name
(the command line's exit code is that name's), or the same facts of the response — flags,
counter, attachment, format, user — read from the JSON the command printed. The randomness is
not shared (the command line's is the system's), so ids and challenges differ; the Swift parity
test (Tests/SessionTests) compares those on one seed."""
import base64
import json
import subprocess

from fido2.webauthn import AttestationObject

from conftest import BIN, PIN, b64url, own_environment, unb64url

ORIGIN, RP_ID = "https://example.com", "example.com"
LAPTOP_PIN = "9753"
EXIT = {"ok": 0, "canceled": 10, "failed": 11, "notHandled": 13, "matchedExcludedCredential": 15, "passkeysNotSupported": 28}


def facts(response: dict) -> dict:
    """A ceremony's facts from its response JSON, as a scenario's timeline names them."""
    data = unb64url(response["response"]["authenticatorData"])
    flags = ",".join(name for bit, name in ((1, "UP"), (4, "UV"), (8, "BE"), (16, "BS")) if data[32] & bit)
    out = {"flags": flags, "count": str(int.from_bytes(data[33:37], "big")), "attachment": response["authenticatorAttachment"]}
    if "attestationObject" in response["response"]:
        out["fmt"] = AttestationObject(unb64url(response["response"]["attestationObject"])).fmt
    return out


class Command:
    """The command line's side: a vault whose devices are `phone` (PIN 4242) and `laptop`."""

    def __init__(self, tmp_path):
        self.env = own_environment(tmp_path)
        self.env.update(AUTHCTL_VAULT=str(tmp_path / "vault"), AUTHCTL_PASSPHRASE="p", AUTHCTL_PIN=PIN)
        self.ids = {}

    def label(self, credential_id, user_name):
        """A passkey's scenario label: the one it was registered `as`, else its user name."""
        return next((label for label, known in self.ids.items() if known == credential_id), user_name)

    def run(self, *args, stdin="", env=None):
        environment = dict(self.env, **(env or {}))
        return subprocess.run([BIN, *args], input=stdin, env=environment, capture_output=True, text=True, timeout=60)

    def outcome(self, *args, stdin="", env=None, label=None):
        """The outcome name and, for a ceremony, its facts."""
        proc = self.run(*args, stdin=stdin, env=env)
        if proc.returncode != 0:
            name = proc.stderr.rsplit("authctl: error: ", 1)[-1].split(":", 1)[0]
            assert EXIT.get(name, proc.returncode) == proc.returncode, proc.stderr
            return name, {}
        if args[2:3] in (("register",), ("sign",)):
            response = json.loads(proc.stdout)
            if label:
                self.ids[label] = response["id"]
            return "ok", facts(response)
        return "ok", {}


def held(cli: Command, device: str):
    """What `NAME holds` lists, from `list`: the passkeys' labels, sorted."""
    listing = json.loads(cli.run("--json", "--device", device, "list").stdout)["credentials"]
    return "list", ",".join(sorted(cli.label(c["id"], c["userName"]) for c in listing if not c.get("hidden"))) or "none"


def pending(cli: Command):
    """What `sync status` says of each device's uploads and downloads, by label, from `sync status --json`."""
    status = json.loads(cli.run("--json", "sync", "status").stdout)
    names = {t["credentialId"]: cli.label(t["credentialId"], t["userName"])
             for d in status["devices"] for t in d["pendingUploads"] + d["pendingDownloads"]}
    out = {}
    for d in status["devices"]:
        for key, transfers in (("uploads", d["pendingUploads"]), ("downloads", d["pendingDownloads"])):
            out[f"{d['name']}.{key}"] = ",".join(sorted(("-" if t["removal"] else "") + names[t["credentialId"]] for t in transfers)) or "none"
    return "ok", out


def signal_options(**members):
    return json.dumps({"rpId": RP_ID, **members})


def pairs(cli: Command):
    """(scenario line, the command line's outcome of the same request) in order."""
    user = lambda name: ["--user-name", name, "--user-id", b64url(name.encode()), "--alg", "es256"]
    register = lambda device, *extra, label=None, env=None: cli.outcome(
        "--device", device, "register", "--origin", ORIGIN, *extra, env=env, label=label)
    sign = lambda device, *extra, env=None: cli.outcome("--device", device, "sign", "--origin", ORIGIN, *extra, env=env)
    return [
        ("phone register user alice as alice uv required",
         lambda: register("phone", *user("alice"), "--user-verification", "required", label="alice")),
        ("laptop register user bob as bob via phone sign-counter",
         lambda: register("laptop", *user("bob"), "--via", "phone", "--sign-counter", label="bob")),
        ("phone register user alice exclude alice",
         lambda: register("phone", *user("alice"), "--exclude", cli.ids["alice"])),
        ("phone sign credential bob", lambda: sign("phone", "--credential", cli.ids["bob"])),
        ("laptop sign via phone user alice uv required", lambda: sign("laptop", "--via", "phone", "--user", "alice", "--user-verification", "required")),
        ("laptop sign user alice uv required", lambda: sign("laptop", "--user", "alice", "--user-verification", "required",
                                                            env={"AUTHCTL_PIN": LAPTOP_PIN})),
        ("laptop sign user nobody", lambda: sign("laptop", "--user", "nobody")),
        ("laptop sign via phone action cancel", lambda: sign("laptop", "--via", "phone", "--user-action", "cancel")),
        ("laptop sign action wrong-pin uv required", lambda: sign("laptop", "--user-action", "wrong-pin", "--user-verification", "required")),
        ("phone signal details user bob name robert display Rob",
         lambda: cli.outcome("--device", "phone", "signal", "current-user-details", "--origin", ORIGIN, "--options", "-",
                             stdin=signal_options(userId=b64url(b"bob"), name="robert", displayName="Rob"))),
        ("phone signal unknown alice",
         lambda: cli.outcome("--device", "phone", "signal", "unknown-credential", "--origin", ORIGIN, "--options", "-",
                             stdin=signal_options(credentialId=cli.ids["alice"]))),
        ("laptop delete alice", lambda: cli.outcome("--device", "laptop", "delete", cli.ids["alice"])),
        ("device laptop unsupported", lambda: cli.outcome("device", "unsupported", "laptop", "on")),
        ("laptop sign via phone", lambda: sign("laptop", "--via", "phone")),
        ("phone register user carol via laptop", lambda: register("phone", *user("carol"), "--via", "laptop")),
        ("device laptop supported", lambda: cli.outcome("device", "unsupported", "laptop", "off")),
        ("device laptop offline", lambda: cli.outcome("device", "offline", "laptop")),
        ("phone register user carol as carol", lambda: register("phone", *user("carol"), label="carol")),
        ("device laptop online", lambda: cli.outcome("device", "online", "laptop")),
        ("device laptop reset", lambda: cli.outcome("device", "reset", "laptop")),
        ("device laptop pin 5555 former 9753",
         lambda: cli.outcome("--device", "laptop", "biometry", "enroll", env={"AUTHCTL_PIN": LAPTOP_PIN, "AUTHCTL_NEW_PIN": "5555"})),
        ("laptop sign user carol uv required", lambda: sign("laptop", "--user", "carol", "--user-verification", "required",
                                                            env={"AUTHCTL_PIN": "5555"})),
        ("laptop delete carol", lambda: cli.outcome("--device", "laptop", "delete", cli.ids["carol"])),
        ("device laptop remove", lambda: cli.outcome("device", "remove", "laptop")),
        ("phone holds", lambda: held(cli, "phone")),
        # A download delay no loaded machine outlasts between the steps below: the commands run on
        # the real clock, the scenario on one that does not move.
        ("sync upload 1h download 60s", lambda: cli.outcome("sync", "set", "--upload-delay", "1h", "--download-delay", "60s")),
        ("device add tablet pin 1357", lambda: cli.outcome("device", "add", "tablet", env={"AUTHCTL_NEW_PIN": "1357"})),
        ("phone register user dave as dave", lambda: register("phone", *user("dave"), label="dave")),
        ("sync status", lambda: pending(cli)),
        ("tablet holds", lambda: held(cli, "tablet")),
        ("phone holds", lambda: held(cli, "phone")),
    ]


def test_a_scenario_step_and_its_command_come_to_the_same_outcome(tmp_path):
    cli = Command(tmp_path)
    assert cli.run("--device", "phone", "init", "--kdf", "min").returncode == 0
    assert cli.run("device", "add", "laptop", env={"AUTHCTL_NEW_PIN": LAPTOP_PIN}).returncode == 0
    steps = pairs(cli)
    text = "device add phone pin 4242\ndevice add laptop pin 9753\n" + "\n".join(line for line, _ in steps) + "\n"
    (tmp_path / "parity.scn").write_text(text)
    run = subprocess.run([BIN, "--json", "scenario", "run", "--keep-going", str(tmp_path / "parity.scn")],
                         env=own_environment(tmp_path), capture_output=True, text=True, timeout=120)
    report = json.loads(run.stdout)
    by_step = {s["line"]: s for s in report["steps"]}
    failed = set()
    for number, (line, command) in enumerate(steps, 3):
        step = by_step[number]
        name, got = command()
        if name == "list":  # what a device holds, as a multiset of labels
            assert sorted(step["outcome"].split(",")) == sorted(got.split(",")), (line, step, got)
            continue
        assert step["outcome"] == name, (line, step, name)
        for key, value in got.items():
            actual = step["result"].get(key)
            if key.endswith(("uploads", "downloads")):  # LABEL@TIME in the timeline: the labels
                actual = ",".join(sorted(item.split("@")[0] for item in actual.split(","))) if actual != "none" else "none"
            assert actual == value, (line, key, step["result"], got)
        failed |= {number} if name != "ok" else set()
    # The scenario reported exactly the steps whose commands failed (no expectations were written).
    assert {f["line"] for f in report["failures"]} == failed
    assert len(failed) >= 6 and run.returncode == 26


# --- Three front ends, one answer ------------------------------------------------------------
#
# For each seed a random sequence of requests runs through the command line (one process per
# request, on a vault), a scenario (`authctl --json scenario run`, each step's `answer`) and
# `authctl serve` (one server for every seed, an account per seed). Each answer is the report of
# docs/reports.md, so the three must give the same JSON once what legitimately differs is taken
# out (`normal` says each, and why), and a failed request the same error name.

import random
import signal as signals
import time
import urllib.error
import urllib.request

import pytest
from webauthn import verify_authentication_response, verify_registration_response
from fido2.webauthn import AuthenticatorData

SEEDS = range(20)
PINS = {"phone": "4242", "laptop": "9753"}


class Op:
    """One request, as each front end words it. `label` names a passkey a registration makes
    (only one every front end is sure to make); `refs` are labels it names."""

    def __init__(self, kind, device=None, **args):
        self.kind, self.device, self.args = kind, device, args


def generate(rng: random.Random):
    """A random sequence of requests over the devices phone and laptop (and any added), the
    passkeys labelled as they are made. A model of the account keeps every labelled registration
    one that succeeds everywhere (a device with passkey support and its PIN, no exclusion), so
    later steps can name it; whether anything else succeeds is what the front ends must agree on.
    The model also keeps each device's PIN and whether it was reset, so that a PIN step is one a
    scenario can run at all (`former` only on a device reset while it had a PIN, `approve-with`
    only on one without a PIN: otherwise `badInput`, which stops the scenario)."""
    devices, supported, labels, users, ops = ["phone", "laptop"], {"phone": True, "laptop": True}, [], [], []
    pins, reset = dict(PINS), {"phone": False, "laptop": False}
    challenge = lambda: b64url(rng.randbytes(16))
    for n in range(rng.randint(12, 16)):
        kinds = ["register"] * 4 + ["sign"] * 4 + ["list", "show", "delete", "capabilities", "status", "devices", "offline", "online",
                                                   "unsupported", "signal", "add", "invalid", "sync-now", "reset", "pin", "pin"]
        kind = rng.choice(kinds if labels else ["register"])
        if any(reset.values()) and rng.random() < 0.3:
            kind = "pin"  # a reset device is recovered soon, with ceremonies on it before
        device = rng.choice(devices)
        # Hybrid: another device makes the passkey or signs for this one's page, with its own PIN.
        via = rng.choice([d for d in devices if d != device]) if kind in ("register", "sign") and rng.random() < 0.25 else None
        if kind == "register":
            user = rng.choice(users + ["alice", "bob", "carol", "dave"]) if users else rng.choice(["alice", "bob"])
            exclude = [rng.choice(labels)] if labels and rng.random() < 0.25 else []
            uv = rng.choice(["preferred", "required", "discouraged"])
            able = all(supported[d] and not reset[d] for d in (device, via) if d)
            label = f"p{n}" if able and not exclude else None
            ops.append(Op("register", device, user=user, uv=uv, alg=-7, challenge=challenge(),
                          exclude=exclude, label=label or f"x{n}", sure=bool(label), via=via))
            if label:
                labels.append(label)
                users.append(user)
        elif kind == "sign":
            allow = rng.sample(labels, k=min(len(labels), rng.randint(1, 2))) if rng.random() < 0.5 else []
            ops.append(Op("sign", device, allow=allow, uv=rng.choice(["preferred", "required", "discouraged"]), challenge=challenge(),
                          via=via))
        elif kind == "sync-now":
            # A writer's sync (the command line's `sync now`), then what a reader sees after it.
            ops.append(Op("sync-now"))
            ops.append(Op("status"))
        elif kind == "reset":
            # Not the first device (the default approver of every later one); not one reset and
            # not yet enrolled again, which has no PIN to be its former one.
            target = rng.choice([d for d in devices[1:] if not reset[d]] or [None])
            if target:
                reset[target] = True
                ops.append(Op("reset", target))
            else:
                ops.append(Op("status"))
        elif kind == "pin":
            new = str(2000 + n)
            recovering = [d for d in devices if reset[d]]
            device = rng.choice(recovering) if recovering else device
            if not reset[device]:
                ops.append(Op("pin", device, pin=new, current=pins[device]))
                pins[device] = new
            else:
                # Recovery of a reset device: its former PIN, a wrong one (`failed`, counted), or
                # an enrolled device's approval.
                which = rng.choice(["former", "wrong-former", "approve"])
                approver = "phone"
                ops.append(Op("recover", device, which=which, pin=new, former=pins[device] if which == "former" else "0000",
                              approver=approver, approver_pin=pins[approver]))
                if which != "wrong-former":
                    pins[device], reset[device] = new, False
        elif kind in ("show", "delete"):
            ops.append(Op(kind, device, label=rng.choice(labels)))
        elif kind in ("offline", "online"):
            ops.append(Op(kind, rng.choice(devices[1:])))
        elif kind == "unsupported":
            target = rng.choice(devices[1:])
            supported[target] = not supported[target]
            ops.append(Op("unsupported" if not supported[target] else "supported", target))
        elif kind == "signal":
            which = rng.choice(["unknown", "accepted", "details"])
            user = rng.choice(users)
            ops.append(Op("signal", device, which=which, label=rng.choice(labels), user=user,
                          accepted=rng.sample(labels, k=rng.randint(0, min(2, len(labels)))), name=f"{user}-{n}"))
        elif kind == "add":
            name = f"tablet{n}"
            pin = str(1000 + n)
            ops.append(Op("add", name, pin=pin))
            devices.append(name)
            supported[name], reset[name], pins[name] = True, False, pin
        elif kind == "invalid":
            # Requests that must fail, with the same name everywhere: a wrong PIN, an RP ID that
            # is not the origin's, options without a challenge.
            which = rng.choice(["wrong-pin", "rp-id", "no-challenge"])
            ops.append(Op("invalid", device, which=which, challenge=challenge(), user=rng.choice(users)))
        else:
            ops.append(Op(kind, device))
    return ops


def creation(op, ids):
    options = {"rp": {"id": RP_ID, "name": "Parity RP"}, "challenge": op.args["challenge"],
               "user": {"id": b64url(op.args["user"].encode()), "name": op.args["user"], "displayName": op.args["user"]},
               "pubKeyCredParams": [{"type": "public-key", "alg": op.args["alg"]}],
               "authenticatorSelection": {"residentKey": "required", "userVerification": op.args["uv"]}, "attestation": "none"}
    if op.args["exclude"]:
        options["excludeCredentials"] = [{"type": "public-key", "id": ids[label]} for label in op.args["exclude"]]
    return options


def request(op, ids):
    options = {"rpId": RP_ID, "challenge": op.args["challenge"], "userVerification": op.args["uv"]}
    if op.args.get("allow"):
        options["allowCredentials"] = [{"type": "public-key", "id": ids[label]} for label in op.args["allow"] if label in ids]
    return options


def invalid_options(op):
    if op.args["which"] == "rp-id":
        return {"rpId": "other.example", "challenge": op.args["challenge"]}
    if op.args["which"] == "no-challenge":
        return {"rpId": RP_ID}
    return {"rpId": RP_ID, "challenge": op.args["challenge"], "userVerification": "required"}


def signal_json(op, ids):
    user = b64url(op.args["user"].encode())
    return {"unknown": {"rpId": RP_ID, "credentialId": ids.get(op.args["label"], "")},
            "accepted": {"rpId": RP_ID, "userId": user, "allAcceptedCredentialIds": [ids[l] for l in op.args["accepted"]]},
            "details": {"rpId": RP_ID, "userId": user, "name": op.args["name"], "displayName": op.args["name"]}}[op.args["which"]]


def scenario_text(seed, ops):
    """The sequence as a scenario. Where a step names passkeys (allow, exclude) the scenario
    builds the options from its labels, since the file is written before any id exists: its
    challenge is then the scenario's own (the exclusion in `normal`)."""
    lines = [f"seed {seed}", "device add phone pin 4242", "device add laptop pin 9753"]
    for op in ops:
        d, a = op.device, op.args
        if op.kind == "register":
            via = f" via {a['via']}" if a["via"] else ""
            if a["exclude"]:
                lines.append(f"{d} register user {a['user']} as {a['label']} uv {a['uv']} alg {'es256' if a['alg'] == -7 else 'eddsa'} "
                             f"exclude {','.join(a['exclude'])}{via}")
            else:
                lines.append(f"{d} register as {a['label']} options {json.dumps(creation(op, {}))}{via}")
        elif op.kind == "sign":
            via = f" via {a['via']}" if a["via"] else ""
            lines.append((f"{d} sign uv {a['uv']} allow {','.join(a['allow'])}" if a["allow"] else
                          f"{d} sign options {json.dumps(request(op, {}))}") + via)
        elif op.kind == "list":
            lines.append(f"{d} holds")
        elif op.kind in ("show", "delete"):
            lines.append(f"{d} {op.kind} {a['label']}")
        elif op.kind == "capabilities":
            lines.append(f"{d} capabilities")
        elif op.kind in ("status", "sync-now"):
            lines.append("sync status")  # a scenario's devices sync as its clock moves: its status is a writer's
        elif op.kind == "devices":
            lines.append("device list")
        elif op.kind in ("offline", "online", "unsupported", "supported", "reset"):
            lines.append(f"device {d} {op.kind}")
        elif op.kind == "pin":
            lines.append(f"device {d} pin {a['pin']}")
        elif op.kind == "recover":
            lines.append(f"device {d} pin {a['pin']} " + (f"approve-with {a['approver']}" if a["which"] == "approve" else f"former {a['former']}"))
        elif op.kind == "add":
            lines.append(f"device add {d} pin {a['pin']}")
        elif op.kind == "signal":
            words = {"unknown": f"unknown {a['label']}",
                     "accepted": f"accepted user {a['user']} {','.join(a['accepted']) or 'none'}",
                     "details": f"details user {a['user']} name {a['name']} display {a['name']}"}[a["which"]]
            lines.append(f"{d} signal {words}")
        elif op.kind == "invalid":
            pin = " pin 0000" if a["which"] == "wrong-pin" else ""
            lines.append(f"{d} sign options {json.dumps(invalid_options(op))}{pin}")
    return "\n".join(lines) + "\n"


FIRST_STEP = 4  # the line of the first generated step (after the seed and two devices)


def run_scenario(tmp_path, seed, ops):
    path = tmp_path / f"parity-{seed}.scn"
    path.write_text(scenario_text(seed, ops))
    run = subprocess.run([BIN, "--json", "scenario", "run", "--keep-going", "--answers", str(path)], env=own_environment(tmp_path),
                         capture_output=True, text=True, timeout=120)
    report = json.loads(run.stdout)
    by_line = {s["line"]: s for s in report["steps"]}
    answers = []
    for i, op in enumerate(ops):
        step = by_line[FIRST_STEP + i]
        answers.append(("ok", step["answer"]) if step["outcome"] == "ok" or op.kind in ("list",) else (step["outcome"], None))
    return answers


class CommandLine:
    def __init__(self, tmp_path, seed):
        self.env = own_environment(tmp_path)
        self.env.update(AUTHCTL_VAULT=str(tmp_path / f"vault-{seed}"), AUTHCTL_PASSPHRASE="p")
        self.pins = dict(PINS)
        self.ids = {}
        assert self.run("phone", "init", "--kdf", "min")[0] == "ok"
        assert self.run(None, "device", "add", "laptop", new_pin=PINS["laptop"])[0] == "ok"
        assert self.run(None, "sync", "set", "--seed", str(seed))[0] == "ok"

    def run(self, device, *args, stdin=None, pin=None, new_pin=None):
        env = dict(self.env, AUTHCTL_PIN=pin or self.pins.get(device or "phone", "0000"))
        if new_pin:
            env["AUTHCTL_NEW_PIN"] = new_pin
        proc = subprocess.run([BIN, "--json", *(["--device", device] if device else []), *args], input=stdin, env=env,
                              capture_output=True, text=True, timeout=60)
        if proc.returncode != 0:
            error = json.loads(proc.stderr.strip().splitlines()[-1])
            assert error["exitCode"] == proc.returncode, proc.stderr
            return error["error"], None
        return "ok", json.loads(proc.stdout) if proc.stdout.strip() else None

    def answer(self, op):
        d, a = op.device, op.args
        # Hybrid: the device reached makes or signs with its own PIN.
        via = ["--via", a["via"]] if a.get("via") else []
        pin = self.pins.get(a["via"]) if via else None
        if op.kind == "register":
            out = self.run(d, "register", "--origin", ORIGIN, "--options", "-", *via, stdin=json.dumps(creation(op, self.ids)), pin=pin)
            if out[0] == "ok":
                self.ids[a["label"]] = out[1]["id"]
            return out
        if op.kind == "sign":
            return self.run(d, "sign", "--origin", ORIGIN, "--options", "-", *via, stdin=json.dumps(request(op, self.ids)), pin=pin)
        if op.kind == "sync-now":
            return self.run(None, "sync", "now")
        if op.kind in ("pin", "recover"):
            if op.kind == "pin":
                out = self.run(d, "biometry", "enroll", pin=self.pins[d], new_pin=a["pin"])
            elif a["which"] == "approve":
                out = self.run(d, "biometry", "enroll", "--approve-with", a["approver"], pin=self.pins[a["approver"]], new_pin=a["pin"])
            else:
                out = self.run(d, "biometry", "enroll", pin=a["former"], new_pin=a["pin"])
            if out[0] != "ok":
                return out
            self.pins[d] = a["pin"]
            # `biometry enroll` prints no report: the device's, as `device list` prints it.
            status, listing = self.run(None, "device", "list")
            return status, next(device for device in listing["devices"] if device["name"] == d)
        if op.kind == "invalid":
            return self.run(d, "sign", "--origin", ORIGIN, "--options", "-", stdin=json.dumps(invalid_options(op)),
                            pin="0000" if a["which"] == "wrong-pin" else None)
        if op.kind == "list":
            return self.run(d, "list")
        if op.kind == "show":
            return self.run(d, "credential", "show", "--", self.ids[a["label"]])
        if op.kind == "delete":
            return self.run(d, "delete", "--", self.ids[a["label"]])
        if op.kind == "capabilities":
            return self.run(d, "capabilities")
        if op.kind == "status":
            return self.run(None, "sync", "status")
        if op.kind == "devices":
            return self.run(None, "device", "list")
        if op.kind in ("offline", "online", "reset"):
            return self.run(None, "device", op.kind, d)
        if op.kind in ("unsupported", "supported"):
            return self.run(None, "device", "unsupported", d, "on" if op.kind == "unsupported" else "off")
        if op.kind == "add":
            self.pins[d] = a["pin"]
            return self.run(None, "device", "add", d, new_pin=a["pin"])
        if op.kind == "signal":
            command = {"unknown": "unknown-credential", "accepted": "accepted-credentials", "details": "current-user-details"}[a["which"]]
            return self.run(d, "signal", command, "--origin", ORIGIN, "--options", "-", stdin=json.dumps(signal_json(op, self.ids)))
        raise AssertionError(op.kind)


class Server:
    def __init__(self, url, token, seed):
        self.url, self.token, self.ids = url, token, {}
        status, account = self.call("POST", "/accounts", {"devices": [{"name": n, "pin": p} for n, p in PINS.items()], "sync": {"seed": seed}})
        assert status == 201, account
        self.base = f"/accounts/{account['id']}"

    def call(self, method, path, body=None):
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.url + path, data=data, method=method, headers={"Authorization": f"Bearer {self.token}"})
        try:
            with urllib.request.urlopen(req, timeout=60) as response:
                text = response.read()
                return response.status, json.loads(text) if text else None
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read())

    def answer(self, op):
        status, body = self._answer(op)
        assert status < 500, body
        if status >= 400:
            return body["name"], None
        if isinstance(body, dict):
            body.pop("warnings", None)  # the server's wrapper (docs/server.md, "Warnings"): the CLI says them on stderr
        if op.kind == "register":
            self.ids[op.args["label"]] = body["id"]
        if op.kind in ("pin", "recover"):  # `{"device", "deletedPasskeys"}`: none without `reset`
            assert body["deletedPasskeys"] == 0, body
            body = body["device"]
        return "ok", body

    def _answer(self, op):
        d, a = op.device, op.args
        dev = f"{self.base}/devices/{d}"
        via = {"via": a["via"]} if a.get("via") else {}
        if op.kind == "register":
            return self.call("POST", f"{dev}/register", {"options": creation(op, self.ids), "origin": ORIGIN, **via})
        if op.kind == "sign":
            return self.call("POST", f"{dev}/sign", {"options": request(op, self.ids), "origin": ORIGIN, **via})
        if op.kind == "sync-now":  # the server's devices sync at every request: its status is a writer's
            return self.call("PUT", f"{self.base}/sync", {})
        if op.kind == "pin":
            return self.call("POST", f"{dev}/pin", {"pin": a["pin"], "currentPin": a["current"]})
        if op.kind == "recover":
            if a["which"] == "approve":
                return self.call("POST", f"{dev}/pin", {"pin": a["pin"], "approvedBy": a["approver"], "approverPin": a["approver_pin"]})
            return self.call("POST", f"{dev}/pin", {"pin": a["pin"], "currentPin": a["former"]})
        if op.kind == "invalid":
            body = {"options": invalid_options(op), "origin": ORIGIN}
            if a["which"] == "wrong-pin":
                body["pin"] = "0000"
            return self.call("POST", f"{dev}/sign", body)
        if op.kind == "list":
            return self.call("GET", f"{dev}/passkeys")
        if op.kind == "show":
            return self.call("GET", f"{dev}/passkeys/{self.ids[a['label']]}")
        if op.kind == "delete":
            return self.call("DELETE", f"{dev}/passkeys/{self.ids[a['label']]}")
        if op.kind == "capabilities":
            return self.call("GET", f"{dev}/capabilities")
        if op.kind == "status":
            return self.call("GET", f"{self.base}/sync")
        if op.kind == "devices":
            return self.call("GET", f"{self.base}/devices")
        if op.kind in ("offline", "online", "reset", "unsupported", "supported"):
            return self.call("POST", f"{dev}/{op.kind}", {})
        if op.kind == "add":
            return self.call("POST", f"{self.base}/devices", {"name": d, "pin": a["pin"]})
        if op.kind == "signal":
            route = {"unknown": "unknownCredential", "accepted": "allAcceptedCredentials", "details": "currentUserDetails"}[a["which"]]
            return self.call("POST", f"{dev}/signals/{route}", {"options": signal_json(op, self.ids), "origin": ORIGIN})
        raise AssertionError(op.kind)


def normal(value, labels, built_challenge=False):
    """A report with only what legitimately differs between the front ends taken out:
    - ids (credential ids, rawId): drawn by each front end's own randomness (the command line's
      is the system's) — replaced by the passkey's label, so which passkey it is still counts;
    - public keys and signatures: OpenSSL's own randomness in every front end;
    - times (`createdAt`, `now`, `syncedFrom`, a transfer's `changedAt` and `at`): the command
      line and the server run on the real clock, a scenario on its virtual one;
    - a challenge the scenario built from labels (`built_challenge`): see `scenario_text`;
    A device's `acknowledged` (the store sequence it has read through, as its vault last published
    it) is compared: every front end publishes at the same points, at a change of a device
    included (a PIN enrolled by approval once did not, and the directory showed the device
    unenrolled until the next sync — one later in the command line, which syncs as each process
    opens, than in the server).
    Authenticator data and attestation objects are compared as their parsed parts (flags,
    counter, AAGUID, RP ID hash, format)."""
    drop = {"publicKey", "signature", "createdAt", "now", "syncedFrom", "changedAt", "at"}

    def walk(v, key=None):
        if isinstance(v, dict):
            out = {}
            for k, item in v.items():
                if k in drop:
                    continue
                if k in ("id", "rawId", "credentialId") and isinstance(item, str):
                    out[k] = labels.get(item, "?")
                elif k == "clientDataJSON":
                    client = json.loads(unb64url(item))
                    if built_challenge:
                        client.pop("challenge")
                    out[k] = client
                elif k == "authenticatorData":
                    data = AuthenticatorData(unb64url(item))
                    out[k] = (data.rp_id_hash.hex(), int(data.flags), data.counter,
                              data.credential_data and (str(data.credential_data.aaguid), labels.get(b64url(data.credential_data.credential_id), "?")))
                elif k == "attestationObject":
                    att = AttestationObject(unb64url(item))
                    out[k] = att.fmt
                else:
                    out[k] = walk(item, k)
            return out
        if isinstance(v, list):
            items = [walk(i, key) for i in v]
            return sorted(items, key=json.dumps) if key in ("removed", "hidden", "restored", "updated") else items
        if key in ("removed", "hidden", "restored", "updated") and isinstance(v, str):
            return labels.get(v, "?")
        return v

    return walk(value)


def verified(op, answer, ids_to_keys):
    """py_webauthn's word on a ceremony the command line or the server answered (their challenge
    is the test's own)."""
    if op.kind == "register":
        reg = verify_registration_response(credential=answer, expected_challenge=unb64url(op.args["challenge"]), expected_rp_id=RP_ID,
                                           expected_origin=ORIGIN, require_user_verification=op.args["uv"] == "required")
        ids_to_keys[answer["id"]] = reg.credential_public_key
    elif op.kind == "sign" and answer["id"] in ids_to_keys:
        verify_authentication_response(credential=answer, expected_challenge=unb64url(op.args["challenge"]), expected_rp_id=RP_ID,
                                       expected_origin=ORIGIN, credential_public_key=ids_to_keys[answer["id"]],
                                       credential_current_sign_count=0, require_user_verification=op.args["uv"] == "required")


@pytest.fixture(scope="module")
def shared_server(tmp_path_factory):
    scratch = tmp_path_factory.mktemp("serve")
    proc = subprocess.Popen([BIN, "serve"], env=own_environment(scratch), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    url = proc.stdout.readline().split()[-1]
    token = proc.stdout.readline().split()[-1]
    yield url, token
    proc.send_signal(signals.SIGTERM)
    assert proc.wait(timeout=60) == 0


@pytest.mark.parametrize("seed", SEEDS)
def test_the_command_line_a_scenario_and_the_server_give_one_answer(tmp_path, seed, shared_server):
    rng = random.Random(seed)
    ops = generate(rng)
    scenario = run_scenario(tmp_path, seed, ops)
    cli, server = CommandLine(tmp_path, seed), Server(*shared_server, seed)
    keys = {}
    scenario_ids = {}
    for i, op in enumerate(ops):
        mine, theirs = cli.answer(op), server.answer(op)
        ours = scenario[i]
        if op.kind == "register" and ours[0] == "ok":
            scenario_ids[op.args["label"]] = ours[1]["id"]
        where = f"seed {seed}, step {i + 1} ({scenario_text(seed, ops).splitlines()[FIRST_STEP - 1 + i]})"
        assert mine[0] == theirs[0], f"{where}: command line {mine[0]}, server {theirs[0]}"
        assert mine[0] == ours[0], f"{where}: command line {mine[0]}, scenario {ours[0]}"
        if mine[0] != "ok" or mine[1] is None:
            continue
        for answer in (mine[1], theirs[1]):
            if op.kind in ("register", "sign"):
                verified(op, answer, keys)
        built = op.kind in ("register", "sign") and bool(op.args.get("exclude") or op.args.get("allow"))
        a = normal(mine[1], {v: k for k, v in cli.ids.items()})
        b = normal(theirs[1], {v: k for k, v in server.ids.items()})
        assert a == b, f"{where}: the command line and the server answer differently:\n{a}\n{b}"
        c = normal(ours[1], {v: k for k, v in scenario_ids.items()}, built_challenge=built)
        a = normal(mine[1], {v: k for k, v in cli.ids.items()}, built_challenge=built)
        assert a == c, f"{where}: the command line and the scenario answer differently:\n{a}\n{c}"


def test_what_the_browser_accepts_with_a_warning_every_front_end_says(tmp_path, shared_server):
    """An empty challenge is accepted as Chromium accepts it, with a warning: on the command
    line's stderr, in the server's `warnings` (first, before the store's), in the scenario step's."""
    op = Op("register", "phone", user="alice", uv="preferred", alg=-7, challenge="", exclude=[], label="a")
    cli = CommandLine(tmp_path, 1)
    env = dict(cli.env, AUTHCTL_PIN=PINS["phone"])
    proc = subprocess.run([BIN, "--device", "phone", "register", "--origin", ORIGIN, "--options", "-"], input=json.dumps(creation(op, {})),
                          env=env, capture_output=True, text=True, timeout=60)
    said = [line.removeprefix("authctl: warning: ") for line in proc.stderr.splitlines() if line.startswith("authctl: warning: ")]
    assert proc.returncode == 0 and said and any("challenge" in w for w in said), proc.stderr
    server = Server(*shared_server, 1)
    status, body = server.call("POST", f"{server.base}/devices/phone/register", {"options": creation(op, {}), "origin": ORIGIN})
    assert status == 200 and body.get("warnings") == said, body
    (tmp_path / "w.scn").write_text(f"device add phone pin 4242\nphone register options {json.dumps(creation(op, {}))}\n")
    run = subprocess.run([BIN, "--json", "scenario", "run", str(tmp_path / "w.scn")], env=own_environment(tmp_path),
                         capture_output=True, text=True, timeout=60)
    assert json.loads(run.stdout)["steps"][1]["result"]["warnings"] == "; ".join(said)
