#!/usr/bin/env python3
"""Prints docs/ctap.md's conformance section: how many of python-fido2's own device tests pass
against `authctl ctap serve`, and a row for each one that does not (skipped, with pytest's
reason; failing, with the reason the page gave it, else its exception).

    scripts/ctap_conformance.py                 # runs the device tests (a few minutes), prints the section
    scripts/ctap_conformance.py --junit FILE    # from a run's JUnit XML instead, e.g. the one
                                                # Tests/interop/test_ctap_device_suite.py leaves in
                                                # .build/interop/ctap-device-suite.xml
    scripts/ctap_conformance.py --write         # and puts it into docs/ctap.md

Runs with the interop suite's Python (.venv/bin/python: python-fido2, pytest); the binary is
$AUTHCTL_BIN, else .build/debug/authctl.
"""
import argparse
import pathlib
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "Tests" / "interop"))

import ctap_support  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--junit", type=pathlib.Path, help="a JUnit XML of a run of python-fido2's device tests")
    parser.add_argument("--write", action="store_true", help="replace the section in docs/ctap.md")
    arguments = parser.parse_args()

    with tempfile.TemporaryDirectory() as scratch:
        junit = arguments.junit
        if junit is None:
            scratch = pathlib.Path(scratch)
            key = ctap_support.CtapServe(scratch, unix=True, touch="button")
            try:
                result, junit = ctap_support.device_suite(key, scratch)
            finally:
                key.stop()
            if result.returncode not in (0, 1):
                sys.stderr.write(result.stdout[-6000:])
                print(f"ctap_conformance: the device tests did not run through (pytest exit {result.returncode})", file=sys.stderr)
                return 1
        text = ctap_support.DOC.read_text()
        _, rows = ctap_support.documented(text)
        section = ctap_support.section(ctap_support.outcomes(junit), ctap_support.fido2_version(), rows)
    if arguments.write:
        before, rest = text.split(ctap_support.BEGIN, 1)
        after = rest.split(ctap_support.END, 1)[1]
        ctap_support.DOC.write_text(before + section + after)
        print(f"wrote {ctap_support.DOC.relative_to(ROOT)}", file=sys.stderr)
    else:
        print(section)
    return 0


if __name__ == "__main__":
    sys.exit(main())
