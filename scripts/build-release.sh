#!/usr/bin/env bash
# Builds what users run: `swift build -c release --static-swift-stdlib`, which links the Swift
# runtime and Foundation into the binary (loading them as shared libraries took half of every
# command's start; docs/benchmarks.md), with the commit it is built from for `authctl --version`.
# No $ORIGIN run path: with the runtime linked in, the binary loads nothing from beside itself
# (and a Debian package may not carry one: lintian's custom-library-search-path).
# Linked with -z now (with RELRO, a read-only GOT): it costs no measurable start-up time here.
# Beside the binary, libauthctl-fido2.so (scripts/build-fido2-library.sh), the LD_PRELOAD library
# for libfido2's tools and OpenSSH that scripts/install.sh installs with it.
# Prints the binary's path. Extra arguments go to `swift build`. Build output (warnings included)
# goes to stderr, less the progress lines.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/build-env.sh
mkdir -p .build
status=0
flags=(-c release --static-swift-stdlib --disable-local-rpath -Xlinker -z -Xlinker now)
swift build "${flags[@]}" --product authctl "$@" > .build/release-build.log 2>&1 || status=$?
grep -Ev '^\[[0-9]+/[0-9]+\] |^Building for |^Build (of product .* )?complete' .build/release-build.log >&2 || true
if [ "$status" -ne 0 ]; then
  echo "build-release: the build failed" >&2
  exit 1
fi
# The same flags, so that SwiftPM keeps one build plan for the release directory.
scripts/build-fido2-library.sh --release "${flags[@]:2}" "$@" > /dev/null || { echo "build-release: libauthctl-fido2.so failed to build" >&2; exit 1; }
echo "$PWD/.build/release/authctl"
