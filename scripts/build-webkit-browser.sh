#!/usr/bin/env bash
# Builds authctl-webkit (clients/webkit/authctl-webkit.c), the WebKitGTK browser that
# WebKitWebDriver launches for the page bridge in WebKit (docs/browser.md, "WebKitGTK"): the C
# compiler links it against Debian's libwebkit2gtk-4.1 (libwebkit2gtk-4.1-dev) into
# .build/CONFIGURATION/authctl-webkit, beside authctl, where the tests and
# `authctl webdriver` look for it. It is not a SwiftPM target: authctl itself must build where
# WebKitGTK's headers are not installed.
#
# usage: scripts/build-webkit-browser.sh [--release] [swift build arguments...]
#   --release  the release configuration's directory; default debug
# Prints the program's path. $CC names the C compiler (default cc).
set -euo pipefail
cd "$(dirname "$0")/.."
configuration=debug
if [ "${1:-}" = --release ]; then configuration=release; shift; fi
cc="${CC:-cc}"
command -v "$cc" >/dev/null || { echo "build-webkit-browser: no C compiler '$cc' (apt-get install gcc, or set CC)" >&2; exit 1; }
pkg-config --exists webkit2gtk-4.1 2>/dev/null ||
  { echo "build-webkit-browser: no WebKitGTK 4.1 development files (apt-get install libwebkit2gtk-4.1-dev pkg-config)" >&2; exit 1; }
directory=$(swift build -c "$configuration" --show-bin-path "$@")
mkdir -p "$directory"
program="$directory/authctl-webkit"
# shellcheck disable=SC2046  # pkg-config's flags are words
"$cc" -std=gnu11 -O2 -Wall -Wextra -Wno-unused-parameter -Werror $(pkg-config --cflags webkit2gtk-4.1) \
  -o "$program.new" clients/webkit/authctl-webkit.c $(pkg-config --libs webkit2gtk-4.1) \
  -Wl,-z,relro -Wl,-z,now -Wl,--build-id
mv -f -- "$program.new" "$program"
echo "$program"
