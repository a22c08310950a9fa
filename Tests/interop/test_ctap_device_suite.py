"""python-fido2's own device tests (tests/device of the installed version's sdist, unmodified)
against `authctl ctap serve --touch button`, through the connector's pytest plugin and the key's
controller, as they run against a USB key on a Pico controller: every test passes or is in
docs/ctap.md's conformance table with its outcome and reason, and at least as many pass as the
page says. `scripts/ctap_conformance.py --write` regenerates the table from a run."""
import shutil

import pytest

from ctap_support import CACHE, CtapServe, device_suite, documented, fido2_version, outcomes, row_for, section

REGENERATE = "scripts/ctap_conformance.py --write (or --junit .build/interop/ctap-device-suite.xml --write) regenerates it"


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    scratch = tmp_path_factory.mktemp("device-suite")
    key = CtapServe(scratch, unix=True, touch="button")
    try:
        result, junit = device_suite(key, scratch)
    except BaseException:
        key.kill()
        raise
    # Kept for scripts/ctap_conformance.py --junit, and the log to read why a test failed.
    CACHE.mkdir(parents=True, exist_ok=True)
    (CACHE / "ctap-device-suite.log").write_text(result.stdout)
    if junit.exists():
        shutil.copy(junit, CACHE / "ctap-device-suite.xml")
    yield key, result, junit
    # The key outlived the whole suite (its power cycles and resets included) and exits cleanly.
    key.stop()


def test_the_device_suite_runs_against_the_key(run):
    key, result, junit = run
    # 0: every test passed; 1: some failed. Anything else (2: interrupted, e.g. the suite's own
    # pytest.exit when it finds no key, a PIN already set, or no controller) is a broken run.
    assert result.returncode in (0, 1), result.stdout[-6000:]
    assert f"authctl security keys (AUTHCTL_CTAP): {key.unix_key}" in result.stdout, result.stdout[:2000]
    found = outcomes(junit)
    # The device suite is hundreds of tests (test_sign_extension_v4.py alone has 256 cases of one):
    # a run that collected a handful did not run it.
    assert len(found) > 300, sorted(found)


def test_every_test_passes_or_is_documented(run):
    _, result, junit = run
    _, rows = documented()
    unlisted, changed = [], []
    for test, (outcome, message) in sorted(outcomes(junit).items()):
        if outcome == "passed":
            continue
        row = row_for(rows, test)
        if row is None:
            unlisted.append(f"{test}: {outcome}: {message}")
        elif row[1] != outcome:
            changed.append(f"{test}: {outcome} ({message}), the page says {row[1]} ({row[2]})")
    assert not unlisted and not changed, (
        f"python-fido2 {fido2_version()}'s device tests, against docs/ctap.md's conformance table ({REGENERATE}):\n"
        + "\n".join(["not in the table:", *unlisted, "listed otherwise:", *changed]))


def test_at_least_the_documented_number_pass(run):
    _, _, junit = run
    floor, _ = documented()
    passed = sorted(test for test, (outcome, _) in outcomes(junit).items() if outcome == "passed")
    assert len(passed) >= floor, f"{len(passed)} passed, docs/ctap.md says {floor}: {passed}"


def test_the_conformance_table_covers_each_test_that_does_not_pass():
    """The table scripts/ctap_conformance.py writes, read back as the tests above read it: a row
    per file or parametrized test whose tests all end alike, a failing row's reason kept from the
    page while the row stands as it was, a `|` in a reason escaped."""
    found = {"test_a.py::x[1]": ("skipped", "not supported"), "test_a.py::x[2]": ("skipped", "not supported"),
             "test_a.py::y": ("passed", ""), "test_b.py::p": ("failing", "CtapError: 0x01 | INVALID_COMMAND"),
             "test_b.py::q": ("failing", "CtapError: 0x01 | INVALID_COMMAND"), "test_c.py::z": ("failing", "AssertionError"),
             "test_c.py::w": ("passed", ""), "test_c.py::v[1]": ("skipped", "one"), "test_c.py::v[2]": ("failing", "two")}
    text = section(found, "2.2.1", [("test_c.py::z", "failing", "GetAssertion answers UP 0 here")])
    floor, rows = documented(text)
    assert floor == 2 and "2 of python-fido2 2.2.1's 9 device tests pass" in text
    assert [row[0] for row in rows] == ["test_a.py::x[*]", "test_b.py::*", "test_c.py::v[1]", "test_c.py::v[2]", "test_c.py::z"]
    for test, (outcome, message) in found.items():
        row = row_for(rows, test)
        assert (row is None) == (outcome == "passed") and (row is None or row[1] == outcome), (test, row)
    assert row_for(rows, "test_b.py::p")[2] == "CtapError: 0x01 | INVALID_COMMAND"
    assert row_for(rows, "test_c.py::z")[2] == "GetAssertion answers UP 0 here"
    assert "\\| INVALID_COMMAND" in text and row_for(rows, "test_d.py::x") is None
    # A run whose every test ends alike (its session's setup failed) is one row.
    alike = {test: ("failing", "setup failed") for test in found}
    floor, rows = documented(section(alike, "2.2.1"))
    assert floor == 0 and rows == [("*", "failing", "setup failed")] and row_for(rows, "test_z.py::anything")
    # Once they no longer end alike, that row's reason is not carried to the rows that replace it.
    _, rows = documented(section(found, "2.2.1", [("*", "failing", "setup failed"), ("test_b.py::*", "skipped", "gone")]))
    assert row_for(rows, "test_c.py::z")[2] == "AssertionError" and row_for(rows, "test_b.py::q")[2].startswith("CtapError")
