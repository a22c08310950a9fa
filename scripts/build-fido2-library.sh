#!/usr/bin/env bash
# Builds libauthctl-fido2.so, the LD_PRELOAD library that lets libfido2's tools and OpenSSH reach
# authctl's security keys (docs/ctap.md): SwiftPM compiles the C target CFIDO2Preload, and the C
# compiler links its objects into a plain shared library, .build/CONFIGURATION/libauthctl-fido2.so
# (beside authctl). (A SwiftPM dynamic library product is linked by the Swift driver, which adds
# the Swift runtime — libswiftCore.so, found through a run path into the toolchain — to what every
# program the library is preloaded into would load.)
# The library needs libc alone: -z defs holds it to that, so no symbol of libfido2 is bound when
# it is loaded (libfido2's functions are found with dlsym when called). Linked with -z relro and
# -z now; it exports the functions it defines for libfido2's callers alone (the rest is static or
# hidden in its sources).
#
# usage: scripts/build-fido2-library.sh [--release] [swift build arguments...]
#   --release  the release configuration (scripts/build-release.sh); default debug
# Prints the library's path. $CC names the C compiler that links (default cc).
set -euo pipefail
cd "$(dirname "$0")/.."
configuration=debug
if [ "${1:-}" = --release ]; then configuration=release; shift; fi
cc="${CC:-cc}"
command -v "$cc" >/dev/null || { echo "build-fido2-library: no C compiler '$cc' (apt-get install gcc, or set CC)" >&2; exit 1; }
mkdir -p .build
status=0
swift build -c "$configuration" --target CFIDO2Preload "$@" > ".build/fido2-library-$configuration.log" 2>&1 || status=$?
grep -Ev '^\[[0-9]+/[0-9]+\] |^Building for |^Build (of (product|target):? .* )?complete' ".build/fido2-library-$configuration.log" >&2 || true
if [ "$status" -ne 0 ]; then
  echo "build-fido2-library: the build failed" >&2
  exit 1
fi
directory=$(swift build -c "$configuration" --show-bin-path "$@")
# Where SwiftPM puts a C target's objects: TARGET.build/SOURCE.o (one per file of Sources/CFIDO2Preload).
objects=()
for source in Sources/CFIDO2Preload/*.c; do
  object="$directory/CFIDO2Preload.build/${source##*/}.o"
  [ -f "$object" ] || { echo "build-fido2-library: SwiftPM made no $object" >&2; exit 1; }
  objects+=("$object")
done
library="$directory/libauthctl-fido2.so"
"$cc" -shared -o "$library.new" "${objects[@]}" -Wl,-z,defs -Wl,-z,relro -Wl,-z,now -Wl,--build-id
mv -f -- "$library.new" "$library"
echo "$library"
