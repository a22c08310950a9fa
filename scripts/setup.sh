#!/usr/bin/env bash
# Installs what authctl needs on Debian 12 (C libraries: OpenSSL, libcbor, libsodium, libpsl,
# libidn2, libcurl, libmicrohttpd, libpq; fido2-tools; the public suffix list; gcc, which links
# libauthctl-fido2.so) and builds it. Safe to run again: it installs only
# what is missing. $AUTHCTL_EXTRA_PACKAGES adds packages (the test suite's own).
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(libssl-dev libcbor-dev libsodium-dev libpsl-dev libidn2-dev libcurl4-openssl-dev libmicrohttpd-dev libpq5 pkg-config publicsuffix fido2-tools openssl gcc)
read -r -a extra <<< "${AUTHCTL_EXTRA_PACKAGES:-}"
packages+=("${extra[@]}")
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}" >&2
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

. scripts/build-env.sh
mkdir -p .build
status=0
swift build ${AUTHCTL_BUILD_FLAGS:-} > .build/setup-build.log 2>&1 || status=$?
# Everything but the progress lines: errors and warnings both show.
grep -Ev '^\[[0-9]+/[0-9]+\] |^Building for |^Build (of product .* )?complete' .build/setup-build.log >&2 || true
if [ "$status" -ne 0 ]; then
  echo "setup: the build failed" >&2
  exit 1
fi
