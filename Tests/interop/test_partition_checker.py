"""Devices on separate machines — each in a network namespace of its own, reaching one private
PostgreSQL over a veth link — share an account through the server: a passkey made on one signs in
on another after the delays (py_webauthn verifies it), and a device cut off the server answers
`notHandled` until the partition heals. Then the partition checker (partition_checker.py): a
bounded run with partitions, SIGKILLs and server restarts finds no anomaly, and the same checker
fails against a store that drops an upload."""
import json
import os
import time

import pytest

from conftest import BIN, Authctl, b64url
from partition_checker import Checker, Network, drop_an_upload, summary
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


def test_the_checker_fails_against_a_store_that_drops_an_upload(tmp_path):
    checker = Checker(BIN, tmp_path, devices=3, seed=12, faults=())
    try:
        found = checker.run(15, sabotage=drop_an_upload)
    finally:
        checker.destroy()
    print("\n".join(found[:10]))
    assert any(a.startswith("lost:") for a in found), found[:10]
