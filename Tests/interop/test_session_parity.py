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
        ("sync upload 1h download 2s", lambda: cli.outcome("sync", "set", "--upload-delay", "1h", "--download-delay", "2s")),
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
