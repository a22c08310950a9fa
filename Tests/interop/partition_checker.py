"""A checker that would catch a lost update (docs/sync.md, "The partition checker").

N devices of one account, each a vault of its own driven by `authctl` processes inside a network
namespace of its own (veth to the host, where a private PostgreSQL listens), run random
operations — registrations, sign-ins with a counting passkey, deletions, renames (the RP's
current-user-details signal), syncs — while a nemesis injects faults, drawn from those asked for:

- `partition`: a device's link down, or its packets to the server dropped, for a while;
- `kill`: a device's next command SIGKILLed mid-way;
- `restart`: the server stopped (`fast` or `immediate`) and started;
- `restore`: the database restored from a `pg_dump` taken moments before (the backends using it
  terminated first, as an operator restoring a backup does) — a store gone back in time;
- `failover`: the primary killed and an asynchronous streaming replica that lagged — its
  replication link cut moments before — promoted, the devices' service address moved to it
  (an iptables redirect on the host, standing in for a virtual IP: every device keeps its
  configured address).

The two rollbacks are played so that they lose acknowledged uploads: between the dump (or the cut)
and the rollback a device, the writer, has registrations acknowledged and uploaded, which the
store then no longer holds; the writer returns only once the others have written the store's
numbering back past where it was (Checker.rollback). A run whose faults include them closes with
each, in the shape that leaves what the store lost on the writer alone.
Every operation is recorded with its outcome: `ok` (acknowledged), `fail` (refused, or the
server out of reach), or `info` (killed: it may or may not have happened). After the network
heals, every device polls the store (`sync now`) in rounds until the account is at rest — no
device reports an open store problem or a pending transfer, and the devices agree (or nothing
changed over a round) — and the final states are checked:

- no acknowledged passkey is lost: every passkey a registration acknowledged and no deletion
  (acknowledged or not) touched is on every device, and every read on the device that made it
  shows it;
- no deleted passkey comes back: a passkey whose deletion was acknowledged is on no device;
- every device converges to the same passkeys, names and signature counts;
- signature counts never go backwards: each device's acknowledged sign-ins of a passkey return
  increasing counts, and the final count is at least the highest acknowledged one;
- no device ever saw a state that was never written: every passkey any read showed belongs to a
  registration that was attempted, under the user name it was registered with or one a rename
  attempted, and a device never shows a passkey it deleted itself;
- the account heals: no device still reports an open store problem after `heal_seconds`.

After a restore or a failover an acknowledged passkey may be missing from the store, and from the
devices that did not hold it yet, for a while: the checker asks nothing of the devices meanwhile
but what they made themselves, and everything of the final states — the devices' checks must
find the loss and give it back (a vault uploads again what the store lost of its own, and asks
the others for theirs). With `--checks off` (AUTHCTL_STORE_CHECKS=off on every device) they
read the store as authctl did before it checked it, and the same runs report the losses.

The model is authctl's (last writer wins, a deletion is final, counts are the highest seen), so
the checker is written for it rather than being a general linearizability checker: it is in the
spirit of Jepsen's Knossos and Elle, checking the history against what the model allows.

Run on demand, longer (as root, with `postgresql`, `iproute2` and `iptables` installed;
AUTHCTL_BIN names the binary):

    python Tests/interop/partition_checker.py --seconds 600 --devices 5
    python Tests/interop/partition_checker.py --seconds 300 --faults partition,kill,restart,restore,failover
    python Tests/interop/partition_checker.py --seconds 60 --faults partition,restore --checks off

`--seed` replays a run's choices (not its timing), `--history FILE` writes every operation as JSON
lines, `--keep DIR` keeps the devices' vaults to look into, `--heal-seconds` bounds the heal.
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

from postgres_support import Cluster, free_port

PASSPHRASE, PIN = "checker passphrase", "4242"
RP_ID, ORIGIN = "checker.example", "https://checker.example"


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


@dataclasses.dataclass
class Op:
    device: int
    kind: str  # register, sign, delete, rename, read, sync, status
    args: dict
    start: float
    end: float = 0.0
    outcome: str = ""  # ok, fail, info
    result: object = None
    detail: str = ""
    reached: bool = False  # the command used the store (no "is not used" warning)


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
            run("ip", "netns", "exec", ns, "ip", "addr", "add", f"{self.device_ip(i)}/24", "dev", peer)
            run("ip", "netns", "exec", ns, "ip", "link", "set", peer, "up")
            run("ip", "netns", "exec", ns, "ip", "link", "set", "lo", "up")

    def ns(self, i: int) -> str:
        return f"{self.prefix}{i}"

    @staticmethod
    def host_ip(i: int) -> str:
        return f"10.213.{i}.1"

    @staticmethod
    def device_ip(i: int) -> str:
        return f"10.213.{i}.2"

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


class HostRules:
    """A chain of the host's iptables of this checker's own (named after its network's prefix),
    jumped to from one built-in chain under a match, so nothing else on the machine is touched and
    `destroy` takes it all away."""

    def __init__(self, table: str, builtin: str, name: str, match: tuple):
        self.table, self.builtin, self.name, self.match = table, builtin, name, match
        self.destroy()  # one this process left (its name is this process's)
        run("iptables", "-t", table, "-N", name)
        run("iptables", "-t", table, "-I", builtin, *match, "-j", name)

    def set(self, *rules: tuple):
        """The chain's rules, replacing those it had."""
        run("iptables", "-t", self.table, "-F", self.name)
        for rule in rules:
            run("iptables", "-t", self.table, "-A", self.name, *rule)

    def destroy(self):
        subprocess.run(["iptables", "-t", self.table, "-D", self.builtin, *self.match, "-j", self.name], capture_output=True)
        subprocess.run(["iptables", "-t", self.table, "-F", self.name], capture_output=True)
        subprocess.run(["iptables", "-t", self.table, "-X", self.name], capture_output=True)


class ServiceAddress:
    """The address every device is configured with, as a database service's virtual IP is: port
    `port` of its host-side veth address, redirected (the host's nat table) to the port of the
    server in service. A failover moves it to the promoted replica; connections already open stay
    with the server they reached, as they would with a virtual IP."""

    def __init__(self, network: Network, target: int):
        self.port = free_port()
        self.rules = HostRules("nat", "PREROUTING", f"{network.prefix}svc", ("-i", f"{network.prefix}+"))
        self.move(target)

    def move(self, target: int):
        self.rules.set(("-p", "tcp", "--dport", str(self.port), "-j", "REDIRECT", "--to-ports", str(target)))

    def destroy(self):
        self.rules.destroy()


class ReplicationLink:
    """What a replica streams from its primary through (loopback TCP to the primary's port): cut, it
    receives nothing more, and lags by whatever the primary commits meanwhile."""

    def __init__(self, network: Network):
        self.rules = HostRules("filter", "INPUT", f"{network.prefix}rep", ("-i", "lo"))

    def cut(self, primary_port: int):
        self.rules.set(("-p", "tcp", "--dport", str(primary_port), "-j", "DROP"),
                       ("-p", "tcp", "--sport", str(primary_port), "-j", "DROP"))

    def heal(self):
        self.rules.set()

    def destroy(self):
        self.rules.destroy()


def run(*argv):
    subprocess.run(argv, check=True, capture_output=True, timeout=60)


class Device:
    """One device: a vault of its own, its commands run inside its namespace."""

    def __init__(self, index: int, network: Network, binary: str, root, checks: bool = True):
        self.index, self.network, self.binary = index, network, binary
        self.name = f"d{index}"
        self.vault = root / f"vault-{index}"
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("AUTHCTL_")}
        self.env.update(AUTHCTL_PASSPHRASE=PASSPHRASE, AUTHCTL_PIN=PIN, AUTHCTL_VAULT=str(self.vault))
        if not checks:
            self.env["AUTHCTL_STORE_CHECKS"] = "off"  # reads the store as authctl did before it checked it
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


FAULTS = ("partition", "kill", "restart", "restore", "failover")
# Faults that take the store back in time: each is played whole (see Checker.rollback).
ROLLBACKS = ("restore", "failover")


class Checker:
    def __init__(self, binary: str, root, devices: int = 3, seed: int = 1, download_delay: str = "0ms..300ms",
                 partition_kinds=("link", "drop"), faults=("partition", "kill", "restart"), checks: bool = True,
                 heal_seconds: float = 240):
        assert set(faults) <= set(FAULTS), faults
        self.binary, self.root, self.n = binary, root, devices
        self.rng = random.Random(seed)
        self.download_delay = download_delay
        self.partition_kinds = partition_kinds
        self.faults = faults
        self.heal_seconds = heal_seconds
        self.history: list[Op] = []
        self.lock = threading.Lock()
        # Set while the nemesis runs: the devices work on past the run's end until the fault under
        # way is done (a rollback waits on them).
        self.busy = threading.Event()
        # Every cluster that served, the killed primaries included, to destroy at the end.
        self.clusters: list[Cluster] = []
        self.standby: Cluster | None = None
        self.service = self.replication = None
        self.network = Network(devices)
        try:
            self.listen = ("127.0.0.1",) + tuple(Network.host_ip(i) for i in range(devices))
            self.cluster = Cluster(listen=self.listen, trust=("10.213.0.0/16",))
            self.clusters.append(self.cluster)
            if "failover" in faults:
                self.service = ServiceAddress(self.network, self.cluster.port)
                self.replication = ReplicationLink(self.network)
        except BaseException:
            self.destroy()
            raise
        self.devices = [Device(i, self.network, binary, root, checks) for i in range(devices)]
        self.users = 0
        self.partitioned: set[int] = set()
        # What the devices' `sync status` named, during the run and after the heal: (device, kind, message, open).
        self.problems: set[tuple] = set()

    def address(self, i: int) -> str:
        port = self.service.port if self.service else self.cluster.port
        return f"postgresql://authctl@{Network.host_ip(i)}:{port}/postgres#checker"

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
            for cluster in self.clusters:
                cluster.destroy()
        finally:
            for rules in (self.service, self.replication):
                if rules:
                    rules.destroy()
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
        while time.monotonic() < deadline or self.busy.is_set():
            kind = rng.choices(["register", "sign", "delete", "rename", "read", "sync", "status"], [3, 4, 1, 1, 3, 1, 1])[0]
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
            elif kind == "status":
                # What the device found wrong with the store, as `sync status` names it (a reader).
                code, out, err = device.run("--json", "sync", "status")
                if code == 0:
                    op.result = [(p["kind"], p.get("healedAt") is None) for p in json.loads(out)["storeProblems"]]
                    self.note_problems(device.index, json.loads(out))
            else:
                code, out, err = device.run("sync", "now")
            op.end = time.monotonic()
            op.outcome = "info" if code is None else "ok" if code == 0 else "fail"
            op.detail = err.strip()[-300:]
            op.reached = code is not None and "is not used" not in err
            self.record(op)

    def event(self, device: int, what: str, result=None):
        now = time.monotonic()
        self.record(Op(device, "nemesis", {"fault": what}, now, now, "ok", result))

    def nemesis(self, deadline: float):
        try:
            self.faulting(deadline)
        except BaseException as error:  # noqa: BLE001 — said by run(), not lost with the thread
            self.nemesis_error = error
        finally:
            self.busy.clear()

    def faulting(self, deadline: float):
        rng = random.Random(self.rng.random())
        while True:
            time.sleep(rng.uniform(0.5, 1.5))
            if time.monotonic() >= deadline:
                break
            fault = rng.choice([f for f in ("partition", "partition", "kill", "restart", "restore", "failover") if f in self.faults])
            if fault == "partition":
                i = rng.randrange(self.n)
                how = rng.choice(self.partition_kinds)
                self.network.partition(i, how)
                self.event(i, f"partition ({how})")
                time.sleep(rng.uniform(0.5, 2.5))
                self.network.heal(i)
                self.event(i, "heal")
            elif fault == "kill":
                i = rng.randrange(self.n)
                self.devices[i].kill_next.set()
                self.event(i, "kill next command")
            elif fault == "restart":
                self.cluster.stop(rng.choice(["fast", "immediate"]))
                self.event(-1, "server stopped")
                time.sleep(rng.uniform(0.2, 1.0))
                self.cluster.start()
                self.event(-1, "server started")
            else:
                self.rollback(fault, rng, closing=False)
        # The run closes with each rollback asked for, in its most telling shape.
        for fault in ROLLBACKS:
            if fault in self.faults:
                self.rollback(fault, rng, closing=True)

    def rollback(self, how: str, rng: random.Random, closing: bool):
        """Takes the store back in time with acknowledged uploads in what it loses, as a restore
        from an earlier backup (`restore`) or a failover to a replica that lagged (`failover`) does:

        1. some devices are cut off the server, so they read nothing of what the store will lose:
           a random few, or — in the rollback that closes the run — every device but one, the
           `writer`, so what it uploads from the checkpoint on is held by the writer alone; what
           they had sent is committed (or refused) before the checkpoint;
        2. the checkpoint: a dump of the database is taken; or the streaming replica, caught up,
           has its replication link cut — from then on it lags by whatever the primary commits;
        3. until the writer has two registrations acknowledged and uploaded after the checkpoint;
        4. the writer is cut off too, and the store goes back: the dump is restored (the backends
           terminated), or the primary is killed (`immediate`), the replica promoted and the
           service address moved to it;
        5. the others come back and work on until the store's numbering is back where it was — so
           the writer's cursor is not past the head when it returns, and a device that only
           compared the two (as authctl did before it checked the store's chains) sees nothing wrong;
        6. the writer comes back; when the rollback closes the run, the devices stop there (the
           account heals in the rounds of `settle`, and nothing the writer does afterwards
           uploads again what the store lost — only the devices' own checks can).

        Every wait has a deadline (a rollback that could not be shaped still happens, as it would)."""
        server = self.cluster
        writer = rng.randrange(self.n)
        others = [i for i in range(self.n) if i != writer]
        cut_off = others if closing else [i for i in others if rng.random() < 0.5]
        for i in cut_off:
            self.network.partition(i, "link")
            self.event(i, "partition (link)")
        # What they sent before is committed before the checkpoint: none of it is lost unknown to them.
        within(lambda: not busy_clients(server, [Network.device_ip(i) for i in cut_off]), 30)
        if how == "failover":
            if self.standby is None:
                self.standby = Cluster(listen=self.listen, replica_of=server)
                self.clusters.append(self.standby)
            target = server.wal_position()
            within(lambda: self.standby.received_position() >= target, 60)
            self.replication.cut(server.port)
            self.event(-1, "replication cut")
        else:
            dump = self.root / f"dump-{time.monotonic_ns()}.pgdump"
            server.dump(dump)
            self.event(-1, "dump taken")
        checkpoint = time.monotonic()
        uploaded = within(lambda: self.uploaded_since(writer, checkpoint) >= 2, 30)
        self.network.partition(writer, "link")
        self.event(writer, "partition (link)")
        before = heads(server)
        lag = None
        if how == "failover":
            lag = server.wal_position() - self.standby.received_position()
            server.stop("immediate")
            self.standby.promote()
            self.service.move(self.standby.port)
            self.replication.heal()
            self.cluster, self.standby = self.standby, None
        else:
            server.restore(dump)
            dump.unlink()
        after = heads(self.cluster)
        self.event(-1, "restored from the dump" if how == "restore" else "failed over",
                   {"before": before, "after": after, "lag": lag, "writer": writer, "cut off": cut_off, "uploaded": uploaded,
                    "closing": closing})
        for i in cut_off:
            self.network.heal(i)
            self.event(i, "heal")
        caught = within(lambda: all(heads(self.cluster).get(a, 0) >= h for a, h in before.items()), 30)
        self.event(-1, "heads back" if caught else "heads not back in 30 s")
        self.network.heal(writer)
        self.event(writer, "heal")
        if how == "failover" and not closing:
            # The next failover's replica, streaming from the new primary.
            self.standby = Cluster(listen=self.listen, replica_of=self.cluster)
            self.clusters.append(self.standby)

    def note_problems(self, device: int, status: dict):
        """Keeps the store problems a device's `sync status` (or `sync now`) named."""
        with self.lock:
            for p in status["storeProblems"]:
                self.problems.add((device, p["kind"], p["message"], p.get("healedAt") is None))

    def uploaded_since(self, device: int, moment: float) -> int:
        """How many registrations of `device` that began after `moment` were acknowledged, and uploaded."""
        with self.lock:
            return sum(1 for o in self.history
                       if o.device == device and o.kind == "register" and o.outcome == "ok" and o.reached and o.start > moment)

    def setup_standby(self):
        if "failover" in self.faults:
            self.standby = Cluster(listen=self.listen, replica_of=self.cluster)
            self.clusters.append(self.standby)

    def run(self, seconds: float, sabotage=None) -> list[str]:
        """Runs the workload and the nemesis for `seconds` (and until the fault under way is done),
        heals, lets every device catch up, and returns the anomalies found (none: the history is
        one the model allows). `sabotage`: called with the cluster once the account exists (a store
        broken on purpose)."""
        self.setup()
        self.setup_standby()
        if sabotage:
            sabotage(self.cluster)
        self.nemesis_error = None
        deadline = time.monotonic() + seconds
        threads = [threading.Thread(target=self.operate, args=(d, deadline)) for d in self.devices]
        if self.faults:
            self.busy.set()
            threads.append(threading.Thread(target=self.nemesis, args=(deadline,)))
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if self.nemesis_error:
            raise self.nemesis_error
        for i in range(self.n):
            self.network.heal(i)
            self.devices[i].kill_next.clear()
        unusable, final = self.settle()
        self.final = final
        return unusable + check(self.history, final)

    def settle(self) -> tuple[list[str], dict]:
        """Polls every device in rounds (`sync now`: the first round uploads what each queued, the
        next reads it, after the longest download delay) until the account is at rest: no device
        reports an open store problem or a pending transfer, and the devices agree — or nothing
        changed over a round, so nothing more will. After a rollback that takes a few rounds: a
        vault reads the store again and uploads what it lost, asks the others for what only they
        hold (a repair request), each answers at its next sync, and the one that asked sees every
        answer at its next. A device whose problems are still open after `heal_seconds` is an
        anomaly (`unhealed`).
        A poll counts once it reaches the server (`sync now` fails while it cannot); a store that
        cannot be used once reached is an anomaly in itself (`unusable`)."""
        unusable = []
        give_up = time.monotonic() + self.heal_seconds
        previous, rounds = None, 0
        while True:
            rounds += 1
            statuses = {}
            for d in self.devices:
                while True:
                    code, out, err = d.run("--json", "sync", "now")
                    if code == 0:
                        statuses[d.index] = json.loads(out)
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
            open_problems = {}
            for i, status in statuses.items():
                self.note_problems(i, status)
                open_problems[i] = [p for p in status["storeProblems"] if p.get("healedAt") is None]
            pending = any(d["pendingUploads"] or d["pendingDownloads"]
                          for status in statuses.values() for d in status["devices"] if d["vault"] == "this")
            views = [sorted((c["id"], c["userName"], c["signCount"]) for c in held.values()) for held in final.values()]
            at_rest = len(statuses) == self.n and not any(open_problems.values()) and not pending
            if rounds >= 2 and at_rest and (all(v == views[0] for v in views) or final == previous):
                break
            if unusable or time.monotonic() > give_up:
                for i, problems in sorted(open_problems.items()):
                    if problems and not unusable:
                        unusable.append(f"unhealed: {self.heal_seconds:.0f} s after the heal d{i} still reports store problems: "
                                        + "; ".join(f"{p['kind']}: {p['message']}" for p in problems))
                break
            previous = final
        self.rounds = rounds
        return unusable, final


def busy_clients(cluster: Cluster, addresses: list) -> bool:
    """Whether a client at one of `addresses` has a statement or a transaction under way on `cluster`."""
    if not addresses:
        return False
    listed = ",".join(addresses)
    return cluster.sql(f"SELECT count(*) FROM pg_stat_activity WHERE client_addr = ANY('{{{listed}}}'::inet[]) "
                       "AND state IS DISTINCT FROM 'idle'").strip() != "0"


def heads(cluster: Cluster) -> dict:
    """Each account's head (the last sequence the store gave) on `cluster`."""
    rows = cluster.sql("SELECT account, head FROM authctl_accounts")
    return {account: int(head) for account, head in (line.split("|") for line in rows.splitlines() if line)}


def within(condition, seconds: float, poll: float = 0.1) -> bool:
    """Whether condition() holds within `seconds` (checked every `poll`): the nemesis waits on the
    devices with a deadline, and goes on either way."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(poll)
    return True


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
    # A device never loses what it made itself, whatever the store does: each of its reads shows
    # every passkey it registered before, unless a deletion of it had begun.
    first_deletion = {}
    for o in history:
        if o.kind == "delete":
            first_deletion[o.args["id"]] = min(first_deletion.get(o.args["id"], o.start), o.start)
    for o in history:
        if o.kind == "read" and o.outcome == "ok":
            shown = {c["id"] for c in o.result}
            for cid, r in registered.items():
                if r.device == o.device and r.end < o.start and cid not in shown and first_deletion.get(cid, o.end) >= o.end:
                    anomalies.append(f"lost: a read on d{o.device} did not show passkey {cid}, which it registered itself")
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


def operations_behind(anomalies: list[str], history: list[Op]) -> list[Op]:
    """The operations on the passkeys the anomalies name, and the nemesis's, in order: a word of an
    anomaly is a passkey's id when some registration in the history made it (whatever the id's
    length: each profile makes its own). None without an anomaly."""
    if not anomalies:
        return []
    made = {o.result["id"] for o in history if o.kind == "register" and isinstance(o.result, dict) and "id" in o.result}
    named = {w for line in anomalies for w in line.replace("'", " ").replace(",", " ").split()} & made
    return [o for o in history if o.args.get("id") in named or o.kind == "nemesis"
            or (o.kind == "register" and isinstance(o.result, dict) and o.result.get("id") in named)]


def summary(history: list[Op]) -> str:
    counts = {}
    for o in history:
        key = o.args["fault"] if o.kind == "nemesis" else f"{o.kind} {o.outcome}"
        counts[key] = counts.get(key, 0) + 1
    return ", ".join(f"{k}: {v}" for k, v in sorted(counts.items()))


def problem_kinds(problems) -> dict:
    """How many store problems of each kind the devices named (each once, open or healed)."""
    kinds = {}
    for _, kind, _ in {(device, kind, message) for device, kind, message, _ in problems}:
        kinds[kind] = kinds.get(kind, 0) + 1
    return dict(sorted(kinds.items()))


if __name__ == "__main__":
    import argparse
    import pathlib
    import shutil
    import tempfile

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=120)
    parser.add_argument("--devices", type=int, default=3)
    parser.add_argument("--seed", type=int, default=int(time.time()))
    parser.add_argument("--faults", default="partition,kill,restart",
                        help=f"the nemesis's faults, comma-separated, of {','.join(FAULTS)} (empty: none)")
    parser.add_argument("--checks", choices=("on", "off"), default="on",
                        help="off: the devices do not check what the store gives (AUTHCTL_STORE_CHECKS=off)")
    parser.add_argument("--heal-seconds", type=float, default=240, help="how long the account may take to heal after the run")
    parser.add_argument("--broken", action="store_true", help="run against a store that drops about one upload in five")
    parser.add_argument("--keep", metavar="DIR", help="copy the devices' vaults to DIR at the end, to look into (authctl --vault DIR/vault-0 …)")
    parser.add_argument("--history", metavar="FILE", help="write every operation to FILE, one JSON object a line")
    arguments = parser.parse_args()
    faults = tuple(f for f in arguments.faults.split(",") if f)
    if set(faults) - set(FAULTS):
        parser.error(f"--faults: {', '.join(sorted(set(faults) - set(FAULTS)))} is not one of {', '.join(FAULTS)}")
    binary = os.environ.get("AUTHCTL_BIN", ".build/release/authctl")
    with tempfile.TemporaryDirectory(prefix="checker-", dir="/tmp") as root:
        checker = Checker(os.path.abspath(binary), pathlib.Path(root), arguments.devices, arguments.seed,
                          faults=faults, checks=arguments.checks == "on",
                          heal_seconds=arguments.heal_seconds)
        try:
            found = checker.run(arguments.seconds, drop_an_upload if arguments.broken else None)
        finally:
            checker.destroy()
            if arguments.keep:
                for d in checker.devices:
                    if d.vault.exists():
                        shutil.copytree(d.vault, pathlib.Path(arguments.keep) / d.vault.name, dirs_exist_ok=True)
        if arguments.history:
            with open(arguments.history, "w") as out:
                for o in checker.history:
                    out.write(json.dumps(dataclasses.asdict(o), default=str) + "\n")
        print(f"seed {arguments.seed}, {len(checker.history)} operations: {summary(checker.history)}")
        print(f"healed in {getattr(checker, 'rounds', 0)} round(s); store problems the devices reported: {problem_kinds(checker.problems) or 'none'}")
        for o in checker.history:
            if o.kind == "nemesis" and o.result:
                print(f"  {o.start:.3f} {o.args['fault']}: {o.result}")
        for device, kind, message, is_open in sorted(checker.problems):
            if is_open or (device, kind, message, True) not in checker.problems:
                print(f"  d{device} {'healed' if (device, kind, message, False) in checker.problems else 'seen open'} {kind}: {message}")
        print("\n".join(found) if found else "no anomaly")
        for o in operations_behind(found, checker.history):
            print(f"  {o.start:.3f}-{o.end:.3f} d{o.device} {o.kind} {o.args} {o.outcome} {o.result} {o.detail[-160:]!r}")
    raise SystemExit(1 if found else 0)
