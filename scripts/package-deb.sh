#!/usr/bin/env bash
# Builds the Debian package authctl_VERSION_ARCH.deb: scripts/install.sh staged under DESTDIR with
# prefix /usr, then laid out as Debian wants it (binary and library stripped, man pages gzipped, zsh
# completion in vendor-completions, copyright and changelog in /usr/share/doc/authctl), and packed
# with `dpkg-deb --build --root-owner-group`. The LD_PRELOAD library for libfido2's tools and
# OpenSSH is /usr/lib/authctl/libauthctl-fido2.so (a library of the package's own, in its own
# directory). See docs/install.md.
#
# usage: scripts/package-deb.sh [--binary PATH] [--fido2-library PATH] [--output DIR]
#   --binary PATH  package this authctl rather than building one (scripts/build-release.sh): what
#                  scripts/install.sh accepts (the Swift runtime linked in), with no run path
#   --fido2-library PATH
#                  package this libauthctl-fido2.so (default: the one beside the binary), what
#                  scripts/install.sh accepts
#   --output DIR   where the .deb goes (default: the current directory)
# Depends: is computed, not typed: dpkg-shlibdeps reads what the binary and the library link, and
# every library they link must be shipped by a package Depends names; the libraries authctl loads with dlopen
# (each `dlopen("...")` in Sources) are found by their sonames and the symbols their loaders
# resolve in the packages that ship them. $AUTHCTL_MAINTAINER names the maintainer (default: the
# author of the commit built). Prints the .deb's path.
# Exit status: 0 built, 1 failed, 64 bad arguments, 65 the binary refused (it would not run on a
# machine that installs the package: see scripts/install.sh); nothing is written to DIR unless 0.
set -euo pipefail
umask 022
repo=$(cd "$(dirname "$0")/.." && pwd)

say() { printf 'package-deb: %s\n' "$*" >&2; }
fail() { say "error: $*"; reported=1; exit 1; }
refuse_binary() { say "error: $*"; reported=1; exit 65; }
usage_error() { say "error: $*"; reported=1; say "usage: scripts/package-deb.sh [--binary PATH] [--fido2-library PATH] [--output DIR]"; exit 64; }

binary="" fido2_library="" output="$PWD"
while (($#)); do
  case "$1" in
    --binary) (($# >= 2)) || usage_error "--binary needs a path"; binary="$2"; shift 2 ;;
    --binary=*) binary="${1#--binary=}"; shift ;;
    --fido2-library) (($# >= 2)) || usage_error "--fido2-library needs a path"; fido2_library="$2"; shift 2 ;;
    --fido2-library=*) fido2_library="${1#--fido2-library=}"; shift ;;
    --output) (($# >= 2)) || usage_error "--output needs a directory"; output="$2"; shift 2 ;;
    --output=*) output="${1#--output=}"; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) usage_error "unknown argument '$1'" ;;
  esac
done
for tool in dpkg-deb dpkg-shlibdeps strip readelf strings gzip; do
  command -v "$tool" >/dev/null || fail "$tool is missing (apt-get install dpkg-dev binutils)"
done
mkdir -p -- "$output" || fail "cannot make $output"
output=$(cd "$output" && pwd)

if [ -z "$binary" ]; then
  say "building the release binary (scripts/build-release.sh)"
  binary=$("$repo/scripts/build-release.sh" | tail -n 1) || fail "the release build failed"
fi
[ -f "$binary" ] && [ -x "$binary" ] || fail "--binary $binary is not an executable file"
binary=$(cd "$(dirname "$binary")" && pwd)/$(basename "$binary")

work=$(mktemp -d "${TMPDIR:-/tmp}/authctl-deb.XXXXXX")
trap 'status=$?; rm -rf -- "$work"; [ "$status" -eq 0 ] || [ -n "${reported:-}" ] || say "error: failed (exit $status)"' EXIT
root="$work/src/debian/authctl"  # where dpkg-shlibdeps expects a package's files

# The files, as scripts/install.sh installs them (which first refuses, with 65, a binary that loads
# anything from outside the system's library directories: the Swift runtime from a toolchain);
# then Debian's layout.
status=0
DESTDIR="$root" "$repo/scripts/install.sh" --prefix /usr --binary "$binary" ${fido2_library:+--fido2-library "$fido2_library"} 2>"$work/install.log" || status=$?
if [ "$status" -ne 0 ]; then
  sed -e 's/^install: error: /package-deb: error: /' -e 's/; nothing installed$/; no package built/' "$work/install.log" >&2
  reported=1
  [ "$status" -eq 65 ] && exit 65
  fail "staging with scripts/install.sh failed"
fi
staged="$root/usr/bin/authctl"
staged_library="$root/usr/lib/authctl/libauthctl-fido2.so"
# A run path makes the loader look for libraries where the build put them, not where the system
# keeps them; a Debian package may not carry one (lintian: custom-library-search-path).
runpath=$(readelf -d -W -- "$staged" | sed -n 's/.*(R\(UN\)\{0,1\}PATH).*\[\(.*\)\]$/\2/p')
[ -z "$runpath" ] || refuse_binary "--binary $binary carries a run path ($runpath): a package may load only what the system's library directories hold; build it with scripts/build-release.sh"

version_json=$("$staged" --json version) || fail "$binary does not run: $version_json"
version=$(printf '%s' "$version_json" | sed -n 's/.*"version":"\([^"]*\)".*/\1/p')
commit=$(printf '%s' "$version_json" | sed -n 's/.*"commit":"\([^"]*\)".*/\1/p')
[ -n "$version" ] || fail "no version in '$version_json'"
arch=$(dpkg --print-architecture)
maintainer="${AUTHCTL_MAINTAINER:-$(git -C "$repo" log -1 --format='%an <%ae>' 2>/dev/null || true)}"
case "$maintainer" in ?*" <"?*@?*">") ;; *) fail "no maintainer: set AUTHCTL_MAINTAINER='Name <address>' (outside a git checkout)" ;; esac
# One date for every timestamp in the package (the commit's, unless SOURCE_DATE_EPOCH says): the
# same binary makes the same .deb.
export SOURCE_DATE_EPOCH="${SOURCE_DATE_EPOCH:-$(git -C "$repo" log -1 --format=%ct 2>/dev/null || date +%s)}"

rm -r -- "$root/usr/share/authctl"  # the install manifest: dpkg keeps its own list
mkdir -p "$root/usr/share/zsh/vendor-completions"
mv "$root/usr/share/zsh/site-functions/_authctl" "$root/usr/share/zsh/vendor-completions/_authctl"
rmdir "$root/usr/share/zsh/site-functions"
# What dh_strip does to an executable.
strip --remove-section=.comment --remove-section=.note "$root/usr/bin/authctl"
"$root/usr/bin/authctl" --version >/dev/null || fail "the stripped binary does not run"
# ... and to a shared library (its dynamic symbols, the functions it defines for libfido2's
# callers, stay).
strip --remove-section=.comment --remove-section=.note --strip-unneeded "$staged_library"
gzip -9n "$root"/usr/share/man/man1/*.1

doc="$root/usr/share/doc/authctl"
mkdir -p "$doc"
year=$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y)
cat > "$doc/copyright" <<EOF
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: authctl
Comment: The full text of the license is LICENSE in the source.

Files: *
Copyright: $year The authctl authors
License: Apache-2.0

License: Apache-2.0
 Licensed under the Apache License, Version 2.0 (the "License"); you may not
 use this file except in compliance with the License. You may obtain a copy of
 the License at
 .
 http://www.apache.org/licenses/LICENSE-2.0
 .
 Unless required by applicable law or agreed to in writing, software
 distributed under the License is distributed on an "AS IS" BASIS, WITHOUT
 WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied. See the
 License for the specific language governing permissions and limitations under
 the License.
 .
 On Debian systems, the complete text of the Apache License 2.0 can be found
 in "/usr/share/common-licenses/Apache-2.0".
EOF
{
  echo "authctl ($version) unstable; urgency=medium"
  echo
  echo "  * authctl $version, built from commit $commit."
  echo
  echo " -- $maintainer  $(date -u -R -d "@$SOURCE_DATE_EPOCH")"
} > "$work/changelog"
gzip -9n -c "$work/changelog" > "$doc/changelog.gz"

# Where the system's loader finds SONAME ($1): its path in the ld.so cache (this architecture's
# entry first), or nothing.
system_library() {
  local library
  library=$(ldconfig -p | awk -v so="$1" '!found && $1 == so && $0 ~ /x86-64|64bit/ { print $NF; found = 1 }')
  [ -n "$library" ] || library=$(ldconfig -p | awk -v so="$1" '!found && $1 == so { print $NF; found = 1 }')
  printf '%s' "$library"
}
# The package that ships the library at $1 (under merged /usr, dpkg may know it by the other
# spelling of its path), or nothing.
owner_of() {
  local candidate owner
  for candidate in "$1" "$(readlink -f "$1")" "/usr${1#/usr}" "${1/#\/lib\//\/usr\/lib\/}"; do
    owner=$(dpkg-query -S -- "$candidate" 2>/dev/null | awk -F: 'NR == 1 { print $1 }') && [ -n "$owner" ] && break
  done
  printf '%s' "$owner"
}
# Whether the package $1 is among those the Depends list $2 names.
depends_on() { printf '%s\n' "$2" | tr ',|' '\n\n' | awk -v p="$1" '{ sub(/^ +/, ""); sub(/[ (:].*/, "") } $0 == p { found = 1 } END { exit !found }'; }

# Depends: what the binary and the library link, as dpkg-shlibdeps reads it (it wants a
# debian/control to stand in).
mkdir -p "$work/src/debian" "$root/DEBIAN"  # DEBIAN/ tells dpkg-shlibdeps where the package's root is
printf 'Source: authctl\n\nPackage: authctl\nArchitecture: any\n' > "$work/src/debian/control"
shlibs=$(cd "$work/src" && dpkg-shlibdeps -O debian/authctl/usr/bin/authctl debian/authctl/usr/lib/authctl/libauthctl-fido2.so 2>"$work/shlibdeps.log") ||
  { cat "$work/shlibdeps.log" >&2; fail "dpkg-shlibdeps failed"; }
grep -v '^$' "$work/shlibdeps.log" >&2 || true
depends=$(printf '%s\n' "$shlibs" | sed -n 's/^shlibs:Depends=//p')
[ -n "$depends" ] || fail "dpkg-shlibdeps found no dependencies"

# dpkg-shlibdeps passes over, with a warning, a library it has no information for; so each library
# the binary or the library links (NEEDED) is checked here: the system must have it and a package
# must ship it, and that package is in Depends (named, unversioned, when dpkg-shlibdeps left it out).
needed=$(readelf -d -W -- "$staged" "$staged_library" | sed -n 's/.*(NEEDED).*\[\(.*\)\]$/\1/p' | LC_ALL=C sort -u)
while IFS= read -r soname; do
  [ -n "$soname" ] || continue
  library=$(system_library "$soname")
  [ -n "$library" ] || refuse_binary "--binary $binary links $soname, which is not in this system's library directories (the ld.so cache)"
  owner=$(owner_of "$library")
  [ -n "$owner" ] || refuse_binary "--binary $binary links $soname ($library), which no Debian package ships: a machine that installs the package would not have it"
  depends_on "$owner" "$depends" || depends="$depends, $owner"
done <<< "$needed"

# ... and the libraries the binary loads with dlopen (libcurl, libmicrohttpd, libpq: no NEEDED
# entry for dpkg-shlibdeps to see), every `dlopen("...")` in Sources: for each loader, the package
# that ships the soname it opens, at the version that has every symbol it resolves.
loaders=$(grep -rlF --include='*.c' --include='*.h' --include='*.swift' -- 'dlopen("' "$repo/Sources" | LC_ALL=C sort)
[ -n "$loaders" ] || fail "no dlopen(\"...\") in $repo/Sources"
opened=""
while IFS= read -r loader; do
# (No pipe here ends early, as `| head` or awk's exit would: under pipefail the writer's SIGPIPE
# would fail the script.)
soname=$(sed -n '/dlopen("/ { s/.*dlopen("\([^"]*\)".*/\1/p; q }' "$loader")
[ -n "$soname" ] || fail "no dlopen soname in $loader"
[ "$(grep -cF -- 'dlopen("' "$loader")" -eq 1 ] || fail "$loader opens more than one library with dlopen; this script reads one soname per loader"
grep -qaF -- "$soname" "$binary" || fail "$binary does not name $soname: is it built from this source?"
opened="$opened$soname"$'\n'
library=$(system_library "$soname")
[ -n "$library" ] || fail "$soname is not installed here (scripts/setup.sh installs it), so its package cannot be named"
owner=$(owner_of "$library")
[ -n "$owner" ] || fail "no package owns $library"
symbols=$(sed -n 's/^ *SYMBOL([a-z_]*, *"\([^"]*\)").*/\1/p' "$loader")
[ -n "$symbols" ] || fail "no SYMBOL(...) lines in $loader"
minimum=""
while IFS= read -r symbol; do
  needs=$(dpkg-query --control-show "$owner" symbols 2>/dev/null | awk -v s="$symbol" '{ split($1, a, "@") } !found && a[1] == s { print $2; found = 1 }')
  [ -n "$needs" ] || fail "$owner's symbols file has no $symbol"
  if [ -z "$minimum" ] || dpkg --compare-versions "$needs" gt "$minimum"; then minimum="$needs"; fi
done <<< "$symbols"
depends="$depends, $owner (>= $minimum)"
done <<< "$loaders"

# A library the binary could load that neither list above holds (a dlopen outside Sources, in a
# runtime linked in): the binary names every soname it links or opens, so any other is a gap.
while IFS= read -r soname; do
  has=$(printf '%s\n%s' "$needed" "$opened" | grep -cxF -- "$soname" || true)
  [ "$has" -gt 0 ] || fail "$binary names $soname, which it neither links nor opens in a loader in Sources: if it loads it, Depends would miss its package"
done < <(strings -a -- "$staged" | grep -xE 'lib[A-Za-z0-9_+-]+\.so(\.[0-9]+)*' | LC_ALL=C sort -u)

installed_size=$(du -sk --apparent-size --exclude=DEBIAN "$root" | cut -f1)
cat > "$root/DEBIAN/control" <<EOF
Package: authctl
Version: $version
Architecture: $arch
Maintainer: $maintainer
Installed-Size: $installed_size
Depends: $depends
Recommends: publicsuffix
Section: devel
Priority: optional
Description: software platform authenticator (passkeys) for RP developers
 authctl keeps passkeys (ES256, EdDSA, RS256) in an encrypted vault, gates
 them behind a simulated biometric PIN, and answers WebAuthn options JSON with
 the response JSON a browser would POST, so relying-party code can be tested
 without a phone or a security key. It can answer as iCloud Keychain, Google
 Password Manager, Windows Hello, an Android phone or a security key, sync
 passkeys between simulated devices, and run scripted scenarios on a virtual
 clock. Its security key answers CTAP2 over a socket; loaded with LD_PRELOAD,
 libauthctl-fido2.so lets libfido2's tools and OpenSSH's -sk keys use it.
EOF
(cd "$root" && find usr -type f -print0 | LC_ALL=C sort -z | xargs -0 md5sum) > "$root/DEBIAN/md5sums"
find "$root" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +

deb="$output/authctl_${version}_${arch}.deb"
dpkg-deb --build --root-owner-group -Zxz "$root" "$deb" >/dev/null || fail "dpkg-deb failed"
say "built $deb (Depends: $depends)"
echo "$deb"
