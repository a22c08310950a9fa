#!/usr/bin/env bash
# The whole test suite: Swift unit tests, then the interop suite, in which py_webauthn,
# python-fido2 and libfido2's fido2-tools judge the built authctl binary.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh

venv=.venv
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv" 2>/dev/null || {
    SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
    $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq python3-venv >/dev/null
    python3 -m venv "$venv"
  }
fi
"$venv/bin/pip" install -q --disable-pip-version-check -r Tests/interop/requirements.txt

echo "== swift test"
# Only failures, build errors and Swift Testing's summary line (with its test count) are shown.
swift test 2>&1 | grep -E '^✘|Test run with|error:|Build complete'

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
