"""Devices on separate machines — each in a network namespace of its own, reaching one private
PostgreSQL over a veth link — share an account through the server: a passkey made on one signs in
on another after the delays (py_webauthn verifies it), and a device cut off the server answers
`notHandled` until the partition heals. Then the partition checker (partition_checker.py): a
bounded run with partitions, SIGKILLs and server restarts finds no anomaly; against a store that
keeps one upload in five empty it finds lost passkeys when the devices do not check what the store
gives, and none when they do; short runs that restore the server from a dump, or
fail over to a replica that lagged, find none either — and, with the devices' checks off, the same
runs lose what the rollback took."""
import json
import os
import time

import pytest

from conftest import BIN, Authctl, b64url
from partition_checker import Checker, Network, Op, drop_an_upload, operations_behind, problem_kinds, summary
from postgres_support import Cluster
from test_sync import LAPTOP_PIN, register, sign, sign_once_arrived

pytestmark = pytest.mark.skipif(os.getuid() != 0, reason="network namespaces need root (CI runs as root)")


def in_namespace(vault, ns) -> Authctl:
    """An Authctl whose commands run inside network namespace `ns`."""
    return Authctl(vault, prefix=("ip", "netns", "exec", ns))


def test_a_passkey_made_on_one_machine_signs_in_on_another_and_a_partitioned_one_waits(tmp_path):
    network = Network(2)
    cluster = Cluster(listen=("127.0.0.1", Network.host_ip(0), Network.host_ip(1)), trust=("10.213.0.0/16",))
    try:
        def address(i):
            return f"postgresql://authctl@{Network.host_ip(i)}:{cluster.port}/postgres#machines"
        phone = in_namespace(tmp_path / "phone", network.ns(0))
        made = phone.run("init", "--store", address(0), "--device", "phone", "--kdf", "min", "--recovery-file", str(tmp_path / "r"))
        assert made.code == 0, made.stderr
        assert phone.run("sync", "set", "--download-delay", "1s").code == 0
        laptop = in_namespace(tmp_path / "laptop", network.ns(1))
        joined = laptop.run("init", "--join", address(1), "--recovery", "--recovery-file", str(tmp_path / "r"), "--device", "laptop",
                            "--kdf", "min", env={"AUTHCTL_PIN": LAPTOP_PIN})
        assert joined.code == 0, joined.stderr

        started = time.monotonic()
        result, registration = register(phone)
        assert registration is not None, result.stderr
        result, assertion = sign_once_arrived(laptop, registration.credential_public_key, pin=LAPTOP_PIN)
        assert assertion is not None and assertion.user_verified, result.stderr
        assert time.monotonic() >= started + 1.0

        # The laptop cut off the server: what the phone makes meanwhile does not reach it.
        network.partition(1, "link")
        result, second = register(phone, user=b"user-2", name="bob")
        assert second is not None, result.stderr
        time.sleep(1.5)  # past the download delay: only the partition keeps it away
        only = ("--credential", b64url(second.credential_id))
        cut, _ = sign(laptop, second.credential_public_key, *only, pin=LAPTOP_PIN)
        assert cut.code == 13 and "notHandled" in cut.stderr, cut.stderr
        assert "is not used" in cut.stderr, cut.stderr  # and it says why
        network.heal(1)
        result, healed = sign_once_arrived(laptop, second.credential_public_key, *only, pin=LAPTOP_PIN)
        assert healed is not None, result.stderr
    finally:
        cluster.destroy()
        network.destroy()


def test_a_report_finds_the_operations_behind_an_anomaly_whatever_the_ids_length():
    """The ids an anomaly names are those registrations made — 20 bytes from the default profile,
    65 from android-device, 16 from google-password-manager — and not other words of that length."""
    ids = [b64url(bytes([n]) * length) for n, length in ((1, 20), (2, 65), (3, 16), (4, 20))]
    history = [Op(0, "register", {"user": f"u{i}"}, float(i), float(i) + 0.5, "ok", {"id": cid}) for i, cid in enumerate(ids)]
    history += [Op(1, "sign", {"id": ids[0]}, 5.0, 5.5, "ok", 1), Op(2, "delete", {"id": ids[3]}, 6.0, 6.5, "ok"),
                Op(0, "nemesis", {"fault": "partition"}, 7.0, 7.0, "info", {"device": 1})]
    decoy = "x" * len(ids[3])  # as long as an id, but no registration made it
    anomalies = [f"lost: passkey {ids[0]} registered on d0, acknowledged, missing on d1",
                 f"phantom: d2 at the end showed passkey '{ids[1]}', of user {decoy}, never registered",
                 f"count went back: d0 signed {ids[2]}, with count 1 after 2"]
    behind = operations_behind(anomalies, history)
    assert [(o.kind, o.start) for o in behind] == [("register", 0.0), ("register", 1.0), ("register", 2.0), ("sign", 5.0), ("nemesis", 7.0)]
    assert operations_behind([], history) == []


def test_the_checker_finds_no_anomaly_under_partitions_kills_and_restarts(tmp_path):
    checker = Checker(BIN, tmp_path, devices=3, seed=int(os.environ.get("AUTHCTL_CHECKER_SEED", "11")))
    try:
        found = checker.run(float(os.environ.get("AUTHCTL_CHECKER_SECONDS", "40")))
    finally:
        checker.destroy()
    print(summary(checker.history))
    kinds = {o.args.get("fault", "").split(" ")[0] for o in checker.history if o.kind == "nemesis"}
    assert {"partition", "kill", "server"} <= kinds, kinds  # every fault was injected
    assert sum(1 for o in checker.history if o.kind == "register" and o.outcome == "ok") >= 20
    assert found == [], "\n".join(found[:20])


def test_the_checker_fails_against_a_store_that_drops_an_upload_when_the_devices_do_not_check(tmp_path):
    checker = Checker(BIN, tmp_path, devices=3, seed=12, faults=(), checks=False)
    try:
        found = checker.run(15, sabotage=drop_an_upload)
    finally:
        checker.destroy()
    print("\n".join(found[:10]))
    assert any(a.startswith("lost:") for a in found), found[:10]


def test_devices_that_check_give_back_what_a_store_that_drops_uploads_spoiled(tmp_path):
    # The devices find each empty upload (a gap in its vault's chain, or the change at their
    # cursor not as they uploaded it) and upload again what it held; a deletion the store spoiled
    # is not collected before every device has a copy that opens.
    checker = Checker(BIN, tmp_path, devices=3, seed=12, faults=())
    try:
        found = checker.run(15, sabotage=drop_an_upload)
    finally:
        checker.destroy()
    print(f"{summary(checker.history)}; store problems reported: {problem_kinds(checker.problems)}")
    assert found == [], "\n".join(found[:20])
    assert problem_kinds(checker.problems).get("missing"), checker.problems


# The rollbacks: a short run of each, with partitions, kills and restarts besides, closing with the
# rollback in the shape that leaves what the store lost on one device alone (partition_checker.py,
# Checker.rollback). With the devices' checks on, nothing is lost; with them off, the same run —
# same seed, same faults — loses what that device uploaded between the checkpoint and the rollback.
ROLLBACK_SECONDS = float(os.environ.get("AUTHCTL_CHECKER_ROLLBACK_SECONDS", "12"))
ROLLBACK_SEEDS = {"restore": 21, "failover": 22}
ROLLED_BACK = {"restore": "restored from the dump", "failover": "failed over"}


def rollback_run(tmp_path, fault: str, checks: bool):
    seed = int(os.environ.get("AUTHCTL_CHECKER_SEED", ROLLBACK_SEEDS[fault]))
    checker = Checker(BIN, tmp_path, devices=3, seed=seed, faults=("partition", "kill", "restart", fault), checks=checks)
    try:
        found = checker.run(ROLLBACK_SECONDS)
    finally:
        checker.destroy()
    print(f"seed {seed}: {summary(checker.history)}; store problems reported: {problem_kinds(checker.problems)}")
    for o in checker.history:
        if o.kind == "nemesis" and o.result:
            print(f"{o.args['fault']}: {o.result}")
    closing = [o for o in checker.history if o.kind == "nemesis" and o.args["fault"] == ROLLED_BACK[fault] and o.result["closing"]]
    assert len(closing) == 1, [o.args for o in checker.history if o.kind == "nemesis"]
    rollback = closing[0]
    # It went back, and took acknowledged uploads with it: the writer's registrations since the checkpoint.
    assert rollback.result["uploaded"], "the writer had no registration acknowledged before the rollback"
    assert all(rollback.result["after"][a] < h for a, h in rollback.result["before"].items()), rollback.result
    if fault == "failover":
        assert rollback.result["lag"] > 0, rollback.result
    checkpoint = max(o.start for o in checker.history if o.kind == "nemesis" and o.start < rollback.start
                     and o.args["fault"] in ("dump taken", "replication cut"))
    lost = {o.result["id"] for o in checker.history if o.device == rollback.result["writer"] and o.kind == "register"
            and o.outcome == "ok" and o.reached and checkpoint < o.start < rollback.start}
    assert len(lost) >= 2, lost
    return checker, found, lost


@pytest.mark.parametrize("fault", ["restore", "failover"])
def test_after_a_restore_or_a_failover_every_acknowledged_passkey_comes_back(tmp_path, fault):
    checker, found, _ = rollback_run(tmp_path, fault, checks=True)
    assert found == [], "\n".join(found[:20])
    # The devices saw what the store did, and named it (sync status: storeProblems).
    assert "rolledBack" in problem_kinds(checker.problems), checker.problems


@pytest.mark.parametrize("fault", ["restore", "failover"])
def test_with_the_checks_off_the_same_run_loses_what_the_rollback_took(tmp_path, fault):
    checker, found, lost = rollback_run(tmp_path, fault, checks=False)
    print("\n".join(found[:20]))
    assert any(line.startswith(f"lost: passkey {cid} ") for line in found for cid in lost), (lost, found[:20])
    assert not checker.problems, "nothing is reported with the checks off"
