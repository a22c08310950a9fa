#!/usr/bin/env bash
# The whole test suite: Swift unit tests, then the interop suite, in which py_webauthn,
# python-fido2 and libfido2's fido2-tools judge the built authctl binary.
set -euo pipefail
cd "$(dirname "$0")/.."
# zsh: to check the completion script it generates; python3-venv: for the verifiers; chromium and
# chromium-driver: the differential test against a real browser (Tests/interop/test_chromium.py);
# man-db, groff-base, bash-completion: the installed man pages and completions as a user meets
# them; dpkg-dev, binutils, lintian: building and checking the .deb (Tests/interop/test_install.py);
# strace: counting the flushes a command asks for (Tests/interop/test_durability.py); nodejs: the
# JavaScript client's suite (Tests/interop/test_client_js.py); postgresql, iproute2, iptables: private PostgreSQL
# clusters for the account store on a server, and the network namespaces of its partition checker;
# openssh-client: ssh-keygen's -sk keys on the security key, through libauthctl-fido2.so
# (Tests/interop/test_ctap_fido2_tools.py); firefox-esr: the page bridge and the bank in headless
# Firefox, driven over WebDriver BiDi (Tests/interop/test_browser_page.py, test_browser_bank.py);
# webkit2gtk-driver, xvfb, libwebkit2gtk-4.1-dev: the page bridge in WebKitGTK — Debian's
# WebKitWebDriver, the X server it needs (WebKitGTK has no headless mode), and the headers
# authctl-webkit builds against (the same suites, and Tests/interop/test_browser_webkit.py).
AUTHCTL_EXTRA_PACKAGES="zsh python3-venv wrk chromium chromium-driver man-db groff-base bash-completion dpkg-dev binutils lintian strace nodejs postgresql iproute2 iptables openssh-client firefox-esr webkit2gtk-driver xvfb libwebkit2gtk-4.1-dev" \
  scripts/setup.sh

venv=.venv
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/pip" install -q --disable-pip-version-check -r Tests/interop/requirements.txt

# The commit the builds are given (scripts/build-env.sh), exported so the version test can hold
# the binary to it.
. scripts/build-env.sh

echo "== swift build, with the tests"
# All of the compiler's output but the progress lines: warnings show, and a warning in our own
# sources fails the run.
mkdir -p .build
status=0
swift build --build-tests > .build/test-build.log 2>&1 || status=$?
grep -Ev '^\[[0-9]+/[0-9]+\] |^Building for |^Build complete' .build/test-build.log || true
[ "$status" -eq 0 ] || { echo "test: the build failed" >&2; exit 1; }
if grep -qE "^$PWD/(Sources|Tests)/.*: warning:" .build/test-build.log; then
  echo "test: the build has warnings (above)" >&2
  exit 1
fi

echo "== authctl-webkit (the WebKitGTK browser WebKitWebDriver launches, beside authctl)"
scripts/build-webkit-browser.sh > /dev/null

echo "== swift test"
# Only failures and Swift Testing's summary line (with its test count) are shown.
swift test --skip-build 2>&1 | grep -E '^✘|Test run with|error:'

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

echo "== release build (what scripts/install.sh and scripts/package-deb.sh ship)"
AUTHCTL_RELEASE_BIN=$(scripts/build-release.sh)
export AUTHCTL_RELEASE_BIN

"$venv/bin/pip" install -q --disable-pip-version-check ./clients/python
echo "== Python client"
AUTHCTL_BIN=.build/debug/authctl "$venv/bin/python" -m pytest -q -p no:cacheprovider clients/python/tests

echo "== interop suite"
# Tests/interop/test_ctap_device_suite.py runs python-fido2's own device tests from the sdist of
# the installed version, which it downloads from PyPI once into .build/interop/.
AUTHCTL_BIN=.build/debug/authctl "$venv/bin/python" -m pytest -q Tests/interop "$@"
