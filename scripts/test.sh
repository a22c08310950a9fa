#!/usr/bin/env bash
# The whole test suite: Swift unit tests, then the interop suite, in which py_webauthn,
# python-fido2 and libfido2's fido2-tools judge the built authctl binary.
set -euo pipefail
cd "$(dirname "$0")/.."
# zsh: to check the completion script it generates; python3-venv: for the verifiers; chromium and
# chromium-driver: the differential test against a real browser (Tests/interop/test_chromium.py).
AUTHCTL_EXTRA_PACKAGES="zsh python3-venv chromium chromium-driver" scripts/setup.sh

venv=.venv
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/pip" install -q --disable-pip-version-check -r Tests/interop/requirements.txt

echo "== swift test"
# Only failures, build errors and Swift Testing's summary line (with its test count) are shown.
swift test 2>&1 | grep -E '^✘|Test run with|error:|Build complete'

echo "== public API"
scripts/check-api.sh

echo "== fuzzer build (libFuzzer + AddressSanitizer)"
mkdir -p .build
if ! swift build --product authctl-fuzz --scratch-path .build/fuzz \
    -Xswiftc -sanitize=fuzzer,address -Xswiftc -DFUZZING > .build/fuzz-build.log 2>&1; then
  grep -v 'Cannot export local symbol' .build/fuzz-build.log >&2
  echo "test: the fuzzer build failed" >&2
  exit 1
fi

echo "== interop suite"
AUTHCTL_BIN=.build/debug/authctl "$venv/bin/python" -m pytest -q Tests/interop "$@"
