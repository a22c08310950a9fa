"""A checker that would catch a lost update (docs/sync.md, "The partition checker").

N devices of one account, each a vault of its own driven by `authctl` processes inside a network
namespace of its own (veth to the host, where a private PostgreSQL listens), run random
operations — registrations, sign-ins with a counting passkey, deletions, renames (the RP's
current-user-details signal), syncs — while a nemesis partitions devices from the server (their
link down, or their packets to it dropped), SIGKILLs devices mid-command and restarts the server.
Every operation is recorded with its outcome: `ok` (acknowledged), `fail` (refused, or the
server out of reach), or `info` (killed: it may or may not have happened). After the network heals,
every device syncs twice (one round uploads what each queued, the next downloads it) and, after
the download delay, the final states are checked:

- no acknowledged passkey is lost: every passkey a registration acknowledged and no deletion
  (acknowledged or not) touched is on every device;
- no deleted passkey comes back: a passkey whose deletion was acknowledged is on no device;
- every device converges to the same passkeys, names and signature counts;
- signature counts never go backwards: each device's acknowledged sign-ins of a passkey return
  increasing counts, and the final count is at least the highest acknowledged one;
- no device ever saw a state that was never written: every passkey any read showed belongs to a
  registration that was attempted, under the user name it was registered with or one a rename
  attempted, and a device never shows a passkey it deleted itself.

The model is authctl's (last writer wins, a deletion is final, counts are the highest seen), so
the checker is written for it rather than being a general linearizability checker: it is in the
spirit of Jepsen's Knossos and Elle, checking the history against what the model allows.

Run on demand, longer: `python Tests/interop/partition_checker.py --seconds 600 --devices 5`
(as root, with `postgresql` and `iproute2` installed; AUTHCTL_BIN names the binary).
"""
import base64
import dataclasses
import json
import os
import random
import signal
import subprocess
import threading
import time

from postgres_support import Cluster

PASSPHRASE, PIN = "checker passphrase", "4242"
RP_ID, ORIGIN = "checker.example", "https://checker.example"


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


@dataclasses.dataclass
class Op:
    device: int
    kind: str  # register, sign, delete, rename, read, sync
    args: dict
    start: float
    end: float = 0.0
    outcome: str = ""  # ok, fail, info
    result: object = None
    detail: str = ""


class Network:
    """One namespace per device: device i is 10.213.i.2 in `<prefix>i`, the host 10.213.i.1."""

    def __init__(self, devices: int):
        self.prefix = f"ac{os.getpid() % 100000}n"
        self.devices = devices
        self.made = []
        for i in range(devices):
            ns, host, peer = self.ns(i), f"{self.prefix}{i}h", f"{self.prefix}{i}d"
            run("ip", "netns", "add", ns)
            self.made.append(ns)
            run("ip", "link", "add", host, "type", "veth", "peer", "name", peer)
            run("ip", "link", "set", peer, "netns", ns)
            run("ip", "addr", "add", f"{self.host_ip(i)}/24", "dev", host)
            run("ip", "link", "set", host, "up")
            run("ip", "netns", "exec", ns, "ip", "addr", "add", f"10.213.{i}.2/24", "dev", peer)
            run("ip", "netns", "exec", ns, "ip", "link", "set", peer, "up")
            run("ip", "netns", "exec", ns, "ip", "link", "set", "lo", "up")

    def ns(self, i: int) -> str:
        return f"{self.prefix}{i}"

    @staticmethod
    def host_ip(i: int) -> str:
        return f"10.213.{i}.1"

    def partition(self, i: int, how: str = "link"):
        """Cuts device i off the server: its link down (connections fail at once), or its packets
        to the server dropped (connections time out)."""
        if how == "link":
            run("ip", "netns", "exec", self.ns(i), "ip", "link", "set", f"{self.prefix}{i}d", "down")
        else:
            run("ip", "netns", "exec", self.ns(i), "iptables", "-A", "OUTPUT", "-d", self.host_ip(i), "-j", "DROP")

    def heal(self, i: int):
        run("ip", "netns", "exec", self.ns(i), "ip", "link", "set", f"{self.prefix}{i}d", "up")
        subprocess.run(["ip", "netns", "exec", self.ns(i), "iptables", "-F", "OUTPUT"], capture_output=True)

    def destroy(self):
        for ns in self.made:
            subprocess.run(["ip", "netns", "delete", ns], capture_output=True)
        for i in range(self.devices):
            subprocess.run(["ip", "link", "delete", f"{self.prefix}{i}h"], capture_output=True)


def run(*argv):
    subprocess.run(argv, check=True, capture_output=True, timeout=60)


class Device:
    """One device: a vault of its own, its commands run inside its namespace."""

    def __init__(self, index: int, network: Network, binary: str, root):
        self.index, self.network, self.binary = index, network, binary
        self.name = f"d{index}"
        self.vault = root / f"vault-{index}"
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("AUTHCTL_")}
        self.env.update(AUTHCTL_PASSPHRASE=PASSPHRASE, AUTHCTL_PIN=PIN, AUTHCTL_VAULT=str(self.vault))
        self.kill_next = threading.Event()

    def command(self, *args) -> list:
        return ["ip", "netns", "exec", self.network.ns(self.index), self.binary, *args]

    def run(self, *args, stdin: str = "", env: dict | None = None, killable: bool = False):
        """(exit code or None when killed, stdout, stderr)."""
        proc = subprocess.Popen(self.command(*args), env=dict(self.env, **(env or {})), stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
        if killable and self.kill_next.is_set():
            self.kill_next.clear()
            time.sleep(random.uniform(0.0, 0.08))
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.communicate()
            return None, "", "killed"
        out, err = proc.communicate(stdin, timeout=120)
        return proc.returncode, out, err


class Checker:
    def __init__(self, binary: str, root, devices: int = 3, seed: int = 1, download_delay: str = "0ms..300ms",
                 partition_kinds=("link", "drop"), faults=("partition", "kill", "restart")):
        self.binary, self.root, self.n = binary, root, devices
        self.rng = random.Random(seed)
        self.download_delay = download_delay
        self.partition_kinds = partition_kinds
        self.faults = faults
        self.history: list[Op] = []
        self.lock = threading.Lock()
        self.network = Network(devices)
        hosts = tuple(Network.host_ip(i) for i in range(devices))
        self.cluster = Cluster(listen=("127.0.0.1",) + hosts, trust=("10.213.0.0/16",))
        self.devices = [Device(i, self.network, binary, root) for i in range(devices)]
        self.users = 0
        self.partitioned: set[int] = set()

    def address(self, i: int) -> str:
        return f"postgresql://authctl@{Network.host_ip(i)}:{self.cluster.port}/postgres#checker"

    def setup(self):
        first = self.devices[0]
        code, out, err = first.run("init", "--store", self.address(0), "--device", first.name, "--kdf", "min")
        assert code == 0, err
        secret = out.strip()
        code, _, err = first.run("sync", "set", "--download-delay", self.download_delay, "--seed", "7")
        assert code == 0, err
        for d in self.devices[1:]:
            code, _, err = d.run("init", "--join", self.address(d.index), "--recovery", "--device", d.name, "--kdf", "min",
                                 env={"AUTHCTL_RECOVERY_SECRET": secret})
            assert code == 0, err

    def destroy(self):
        try:
            self.cluster.destroy()
        finally:
            self.network.destroy()

    # -- operations

    def record(self, op: Op):
        with self.lock:
            self.history.append(op)

    def known(self, device: int) -> list:
        """Passkeys this device made or saw: what its next operations pick from."""
        with self.lock:
            ids = {o.result["id"] for o in self.history if o.kind == "register" and o.outcome == "ok"}
            for o in self.history:
                if o.kind == "read" and o.outcome == "ok" and o.device == device:
                    ids |= {c["id"] for c in o.result}
        return sorted(ids)

    def operate(self, device: Device, deadline: float):
        rng = random.Random(self.rng.random())
        while time.monotonic() < deadline:
            kind = rng.choices(["register", "sign", "delete", "rename", "read", "sync"], [3, 4, 1, 1, 3, 1])[0]
            known = self.known(device.index)
            if kind in ("sign", "delete", "rename") and not known:
                kind = "register"
            op = Op(device.index, kind, {}, time.monotonic())
            if kind == "register":
                with self.lock:
                    self.users += 1
                    user = f"u{self.users}"
                op.args = {"user": b64url(user.encode()), "name": user}
                options = {"rp": {"id": RP_ID, "name": "Checker"}, "user": {"id": op.args["user"], "name": user, "displayName": user},
                           "challenge": b64url(os.urandom(16)), "pubKeyCredParams": [{"type": "public-key", "alg": -7}],
                           "authenticatorSelection": {"residentKey": "required", "userVerification": "discouraged"}}
                code, out, err = device.run("register", "--origin", ORIGIN, "--options", "-", "--counter", "per-credential",
                                            stdin=json.dumps(options), killable=True)
                result = json.loads(out)["id"] if code == 0 else None
                op.result = {"id": result} if result else None
            elif kind == "sign":
                cid = rng.choice(known)
                op.args = {"id": cid}
                options = {"challenge": b64url(os.urandom(16)), "rpId": RP_ID, "userVerification": "discouraged",
                           "allowCredentials": [{"type": "public-key", "id": cid}]}
                code, out, err = device.run("sign", "--origin", ORIGIN, "--options", "-", stdin=json.dumps(options), killable=True)
                if code == 0:
                    data = base64.urlsafe_b64decode(json.loads(out)["response"]["authenticatorData"] + "==")
                    op.result = int.from_bytes(data[33:37], "big")
            elif kind == "delete":
                cid = rng.choice(known)
                op.args = {"id": cid}
                code, out, err = device.run("delete", "--", cid, killable=True)
            elif kind == "rename":
                cid = rng.choice(known)
                handle = next((c["userHandle"] for o in reversed(self.history) if o.kind == "read" and o.outcome == "ok"
                               for c in o.result if c["id"] == cid), None)
                if handle is None:
                    continue
                name = f"n{rng.randrange(10**6)}"
                op.args = {"id": cid, "user": handle, "name": name}
                details = {"rpId": RP_ID, "userId": handle, "name": name, "displayName": name}
                code, out, err = device.run("signal", "current-user-details", "--origin", ORIGIN, "--options", "-",
                                            stdin=json.dumps(details), killable=True)
            elif kind == "read":
                code, out, err = device.run("--json", "list", "--rp-id", RP_ID)
                op.result = json.loads(out)["credentials"] if code == 0 else None
            else:
                code, out, err = device.run("sync", "now")
            op.end = time.monotonic()
            op.outcome = "info" if code is None else "ok" if code == 0 else "fail"
            op.detail = err.strip()[-300:]
            self.record(op)

    def nemesis(self, deadline: float):
        rng = random.Random(self.rng.random())
        while time.monotonic() < deadline:
            time.sleep(rng.uniform(0.5, 1.5))
            fault = rng.choice([f for f in ("partition", "partition", "kill", "restart") if f in self.faults])
            if fault == "partition":
                i = rng.randrange(self.n)
                how = rng.choice(self.partition_kinds)
                self.network.partition(i, how)
                self.record(Op(i, "nemesis", {"fault": f"partition ({how})"}, time.monotonic(), time.monotonic(), "ok"))
                time.sleep(rng.uniform(0.5, 2.5))
                self.network.heal(i)
                self.record(Op(i, "nemesis", {"fault": "heal"}, time.monotonic(), time.monotonic(), "ok"))
            elif fault == "kill":
                i = rng.randrange(self.n)
                self.devices[i].kill_next.set()
                self.record(Op(i, "nemesis", {"fault": "kill next command"}, time.monotonic(), time.monotonic(), "ok"))
            else:
                self.cluster.stop(rng.choice(["fast", "immediate"]))
                self.record(Op(-1, "nemesis", {"fault": "server stopped"}, time.monotonic(), time.monotonic(), "ok"))
                time.sleep(rng.uniform(0.2, 1.0))
                self.cluster.start()
                self.record(Op(-1, "nemesis", {"fault": "server started"}, time.monotonic(), time.monotonic(), "ok"))

    def run(self, seconds: float, sabotage=None) -> list[str]:
        """Runs the workload and the nemesis for `seconds`, heals, lets every device catch up,
        and returns the anomalies found (none: the history is one the model allows). `sabotage`:
        called with the cluster once the account exists (a store broken on purpose)."""
        self.setup()
        if sabotage:
            sabotage(self.cluster)
        deadline = time.monotonic() + seconds
        threads = [threading.Thread(target=self.operate, args=(d, deadline)) for d in self.devices]
        if self.faults:
            threads.append(threading.Thread(target=self.nemesis, args=(deadline,)))
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for i in range(self.n):
            self.network.heal(i)
            self.devices[i].kill_next.clear()
        # Two rounds of one poll per device: the first uploads what each queued; after the longest
        # download delay, the second reads it.
        # A poll counts once it reaches the server (`sync now` fails while it cannot); a store
        # that cannot be used once reached is an anomaly in itself.
        unusable = []
        for round in range(2):
            for d in self.devices:
                give_up = time.monotonic() + 60
                while True:
                    code, _, err = d.run("sync", "now")
                    if code == 0:
                        break
                    if "cannot connect" not in err or time.monotonic() > give_up:
                        unusable.append(f"unusable: after the heal d{d.index}'s sync fails: {err.strip().splitlines()[-1]}")
                        break
                    time.sleep(0.2)
            time.sleep(max_delay_seconds(self.download_delay) + 0.1)
        final = {}
        for d in self.devices:
            code, out, err = d.run("--json", "list", "--rp-id", RP_ID)
            assert code == 0, err
            final[d.index] = {c["id"]: c for c in json.loads(out)["credentials"]}
        self.final = final
        return unusable + check(self.history, final)


def drop_an_upload(cluster):
    """Breaks the server's store on purpose: about one upload in five is acknowledged — given its
    sequence, the head moved past it — but what is kept under that sequence is empty, as a store
    that lost the object's bytes would keep it. Made from the schema's own `authctl_append`."""
    definition = cluster.sql("SELECT pg_get_functiondef('authctl_append'::regproc)")
    kept = "INSERT INTO authctl_changes VALUES (acc, s, ids[i], objs[i]);"
    assert kept in definition, definition
    cluster.sql(definition.replace(kept, "INSERT INTO authctl_changes VALUES (acc, s, ids[i], "
                                         "CASE WHEN random() < 0.2 THEN ''::bytea ELSE objs[i] END);", 1))


def max_delay_seconds(text: str) -> float:
    upper = text.split("..")[-1]
    if upper.endswith("ms"):
        return float(upper[:-2]) / 1000
    return float(upper.rstrip("s"))


def check(history: list[Op], final: dict) -> list[str]:
    """The anomalies of `history` and the final states (per device: id → listed passkey)."""
    anomalies = []
    registered = {o.result["id"]: o for o in history if o.kind == "register" and o.outcome == "ok"}
    attempted_users = {o.args["user"]: o for o in history if o.kind == "register"}
    touched = {o.args["id"] for o in history if o.kind == "delete" and o.outcome in ("ok", "info")}
    deleted = {o.args["id"]: o for o in history if o.kind == "delete" and o.outcome == "ok"}
    names = {}
    for o in history:
        if o.kind == "register":
            names.setdefault(o.args["user"], set()).add(o.args["name"])
        if o.kind == "rename":
            names.setdefault(o.args["user"], set()).add(o.args["name"])
    # Lost: acknowledged, never deleted, missing somewhere.
    for cid, op in registered.items():
        if cid in touched:
            continue
        missing = [d for d, held in final.items() if cid not in held]
        if missing:
            anomalies.append(f"lost: passkey {cid} (registered on d{op.device}, acknowledged) is missing on "
                             + ", ".join(f"d{d}" for d in missing))
    # Back from deletion.
    for cid, op in deleted.items():
        back = [d for d, held in final.items() if cid in held]
        if back:
            anomalies.append(f"resurrected: passkey {cid} (deleted on d{op.device}, acknowledged) is on "
                             + ", ".join(f"d{d}" for d in back))
    # Convergence.
    views = {d: sorted((c["id"], c["userName"], c["signCount"]) for c in held.values()) for d, held in final.items()}
    reference = views[min(views)]
    for d, view in views.items():
        if view != reference:
            only, theirs = sorted(set(view) - set(reference)), sorted(set(reference) - set(view))
            anomalies.append(f"diverged: d{d} holds {only} where d{min(views)} holds {theirs} (id, name, count)")
    # Counts.
    highest = {}
    for d in {o.device for o in history}:
        last = {}
        for o in history:
            if o.device == d and o.kind == "sign" and o.outcome == "ok":
                cid = o.args["id"]
                if cid in last and o.result <= last[cid]:
                    anomalies.append(f"count went back: d{d} signed {cid} with count {o.result} after {last[cid]}")
                last[cid] = o.result
                highest[cid] = max(highest.get(cid, 0), o.result)
    for d, held in final.items():
        for cid, count in highest.items():
            if cid in held and held[cid]["signCount"] < count:
                anomalies.append(f"count went back: d{d} ends with {cid} at {held[cid]['signCount']}, below the acknowledged {count}")
    # Never-written states.
    def seen(where, credential):
        op = attempted_users.get(credential["userHandle"])
        if op is None:
            anomalies.append(f"phantom: {where} showed passkey {credential['id']} of user {credential['userHandle']}, never registered")
        elif credential["userName"] not in names.get(credential["userHandle"], set()):
            anomalies.append(f"phantom: {where} showed {credential['id']} named '{credential['userName']}', a name never written")
    for o in history:
        if o.kind == "read" and o.outcome == "ok":
            for c in o.result:
                seen(f"a read on d{o.device}", c)
                own = [x for x in history if x.kind == "delete" and x.outcome == "ok" and x.device == o.device
                       and x.args["id"] == c["id"] and x.end < o.start]
                if own:
                    anomalies.append(f"resurrected: d{o.device} showed {c['id']} after deleting it itself")
    for d, held in final.items():
        for c in held.values():
            seen(f"d{d} at the end", c)
    return anomalies


def summary(history: list[Op]) -> str:
    counts = {}
    for o in history:
        key = o.args["fault"] if o.kind == "nemesis" else f"{o.kind} {o.outcome}"
        counts[key] = counts.get(key, 0) + 1
    return ", ".join(f"{k}: {v}" for k, v in sorted(counts.items()))


if __name__ == "__main__":
    import argparse
    import pathlib
    import tempfile

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=120)
    parser.add_argument("--devices", type=int, default=3)
    parser.add_argument("--seed", type=int, default=int(time.time()))
    parser.add_argument("--faults", default="partition,kill,restart", help="the nemesis's faults (comma-separated; empty: none)")
    parser.add_argument("--broken", action="store_true", help="run against a store that drops about one upload in five")
    arguments = parser.parse_args()
    binary = os.environ.get("AUTHCTL_BIN", ".build/release/authctl")
    with tempfile.TemporaryDirectory(prefix="checker-", dir="/tmp") as root:
        checker = Checker(os.path.abspath(binary), pathlib.Path(root), arguments.devices, arguments.seed,
                          faults=tuple(f for f in arguments.faults.split(",") if f))
        try:
            found = checker.run(arguments.seconds, drop_an_upload if arguments.broken else None)
        finally:
            checker.destroy()
        print(f"seed {arguments.seed}, {len(checker.history)} operations: {summary(checker.history)}")
        print("\n".join(found) if found else "no anomaly")
        if found:
            ids = {w for line in found for w in line.replace("'", " ").replace(",", " ").split() if len(w) == 22}
            for o in checker.history:
                if o.args.get("id") in ids or (o.kind == "register" and o.result and o.result["id"] in ids) or o.kind == "nemesis":
                    print(f"  {o.start:.3f}-{o.end:.3f} d{o.device} {o.kind} {o.args} {o.outcome} {o.result} {o.detail[-160:]!r}")
    raise SystemExit(1 if found else 0)
