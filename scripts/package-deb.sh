#!/usr/bin/env bash
# Builds the Debian package authctl_VERSION_ARCH.deb: scripts/install.sh staged under DESTDIR with
# prefix /usr, then laid out as Debian wants it (binary stripped, man pages gzipped, zsh completion
# in vendor-completions, copyright and changelog in /usr/share/doc/authctl), and packed with
# `dpkg-deb --build --root-owner-group`. See docs/install.md.
#
# usage: scripts/package-deb.sh [--binary PATH] [--output DIR]
#   --binary PATH  package this authctl rather than building one (scripts/build-release.sh)
#   --output DIR   where the .deb goes (default: the current directory)
# Depends: is computed, not typed: dpkg-shlibdeps reads what the binary links; libcurl, which
# authctl loads with dlopen, is found by its soname and the symbols the loader resolves
# (Sources/CCurl/curl_loader.c) in the package that ships it. $AUTHCTL_MAINTAINER names the
# maintainer (default: the author of the commit built). Prints the .deb's path.
set -euo pipefail
umask 022
repo=$(cd "$(dirname "$0")/.." && pwd)

say() { printf 'package-deb: %s\n' "$*" >&2; }
fail() { say "error: $*"; reported=1; exit 1; }
usage_error() { say "error: $*"; reported=1; say "usage: scripts/package-deb.sh [--binary PATH] [--output DIR]"; exit 64; }

binary="" output="$PWD"
while (($#)); do
  case "$1" in
    --binary) (($# >= 2)) || usage_error "--binary needs a path"; binary="$2"; shift 2 ;;
    --binary=*) binary="${1#--binary=}"; shift ;;
    --output) (($# >= 2)) || usage_error "--output needs a directory"; output="$2"; shift 2 ;;
    --output=*) output="${1#--output=}"; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) usage_error "unknown argument '$1'" ;;
  esac
done
for tool in dpkg-deb dpkg-shlibdeps strip gzip; do
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

version_json=$("$binary" --json version) || fail "$binary does not run: $version_json"
version=$(printf '%s' "$version_json" | sed -n 's/.*"version":"\([^"]*\)".*/\1/p')
commit=$(printf '%s' "$version_json" | sed -n 's/.*"commit":"\([^"]*\)".*/\1/p')
[ -n "$version" ] || fail "no version in '$version_json'"
arch=$(dpkg --print-architecture)
maintainer="${AUTHCTL_MAINTAINER:-$(git -C "$repo" log -1 --format='%an <%ae>' 2>/dev/null || true)}"
case "$maintainer" in ?*" <"?*@?*">") ;; *) fail "no maintainer: set AUTHCTL_MAINTAINER='Name <address>' (outside a git checkout)" ;; esac
# One date for every timestamp in the package (the commit's, unless SOURCE_DATE_EPOCH says): the
# same binary makes the same .deb.
export SOURCE_DATE_EPOCH="${SOURCE_DATE_EPOCH:-$(git -C "$repo" log -1 --format=%ct 2>/dev/null || date +%s)}"

work=$(mktemp -d "${TMPDIR:-/tmp}/authctl-deb.XXXXXX")
trap 'status=$?; rm -rf -- "$work"; [ "$status" -eq 0 ] || [ -n "${reported:-}" ] || say "error: failed (exit $status)"' EXIT
root="$work/src/debian/authctl"  # where dpkg-shlibdeps expects a package's files

# The files, as scripts/install.sh installs them; then Debian's layout.
DESTDIR="$root" "$repo/scripts/install.sh" --prefix /usr --binary "$binary" 2>"$work/install.log" ||
  { cat "$work/install.log" >&2; fail "staging with scripts/install.sh failed"; }
rm -r -- "$root/usr/share/authctl"  # the install manifest: dpkg keeps its own list
mkdir -p "$root/usr/share/zsh/vendor-completions"
mv "$root/usr/share/zsh/site-functions/_authctl" "$root/usr/share/zsh/vendor-completions/_authctl"
rmdir "$root/usr/share/zsh/site-functions"
# What dh_strip does to an executable.
strip --remove-section=.comment --remove-section=.note "$root/usr/bin/authctl"
"$root/usr/bin/authctl" --version >/dev/null || fail "the stripped binary does not run"
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

# Depends: what the binary links, as dpkg-shlibdeps reads it (it wants a debian/control to stand in).
mkdir -p "$work/src/debian" "$root/DEBIAN"  # DEBIAN/ tells dpkg-shlibdeps where the package's root is
printf 'Source: authctl\n\nPackage: authctl\nArchitecture: any\n' > "$work/src/debian/control"
shlibs=$(cd "$work/src" && dpkg-shlibdeps -O debian/authctl/usr/bin/authctl 2>"$work/shlibdeps.log") ||
  { cat "$work/shlibdeps.log" >&2; fail "dpkg-shlibdeps failed"; }
grep -v '^$' "$work/shlibdeps.log" >&2 || true
depends=$(printf '%s\n' "$shlibs" | sed -n 's/^shlibs:Depends=//p')
[ -n "$depends" ] || fail "dpkg-shlibdeps found no dependencies"

# ... and the libraries the binary loads with dlopen (libcurl, libmicrohttpd, libpq: no NEEDED entry for
# dpkg-shlibdeps to see): for each loader, the package that ships the soname it opens, at the
# version that has every symbol it resolves.
for loader in "$repo/Sources/CCurl/curl_loader.c" "$repo/Sources/CMicroHTTPD/http_server.c" "$repo/Sources/CPostgres/postgres.c"; do
# (No pipe here ends early, as `| head` or awk's exit would: under pipefail the writer's SIGPIPE
# would fail the script.)
soname=$(sed -n '/dlopen("/ { s/.*dlopen("\([^"]*\)".*/\1/p; q }' "$loader")
[ -n "$soname" ] || fail "no dlopen soname in $loader"
grep -qaF -- "$soname" "$binary" || fail "$binary does not name $soname: is it built from this source?"
library=$(ldconfig -p | awk -v so="$soname" '!found && $1 == so && $0 ~ /x86-64|64bit/ { print $NF; found = 1 }')
[ -n "$library" ] || library=$(ldconfig -p | awk -v so="$soname" '!found && $1 == so { print $NF; found = 1 }')
[ -n "$library" ] || fail "$soname is not installed here (scripts/setup.sh installs it), so its package cannot be named"
owner=""
for candidate in "$library" "$(readlink -f "$library")" "/usr${library#/usr}" "${library/#\/lib\//\/usr\/lib\/}"; do
  owner=$(dpkg-query -S -- "$candidate" 2>/dev/null | awk -F: 'NR == 1 { print $1 }') && [ -n "$owner" ] && break
done
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
done

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
 clock.
EOF
(cd "$root" && find usr -type f -print0 | LC_ALL=C sort -z | xargs -0 md5sum) > "$root/DEBIAN/md5sums"
find "$root" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +

deb="$output/authctl_${version}_${arch}.deb"
dpkg-deb --build --root-owner-group -Zxz "$root" "$deb" >/dev/null || fail "dpkg-deb failed"
say "built $deb (Depends: $depends)"
echo "$deb"
