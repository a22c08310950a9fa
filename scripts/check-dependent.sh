#!/usr/bin/env bash
# Depends on authctl as another package would: by version, from a tagged git repository. It makes
# a throw-away repository of this tree (tracked and untracked files, not ignored ones), tags it
# with `authctl --version`'s version, builds a package whose manifest says
# `.package(url: "file://…", from: "VERSION")` and whose program (Tests/dependent/Sources) runs a
# registration and a sign-in through `import Keychain`, and checks what it prints. SwiftPM refuses a
# dependency whose targets carry unsafe flags, so this fails if the manifest regains any.
#   scripts/check-dependent.sh [SOURCES_DIR]     (default: Tests/dependent/Sources)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
sources=${1:-Tests/dependent/Sources}
version=$(sed -n 's/^ *static let version = "\(.*\)"$/\1/p' Sources/authctl/Commands/VersionCommand.swift)
[ -n "$version" ] || { echo "check-dependent: no version in VersionCommand.swift" >&2; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/authctl-dependent.XXXXXX")
[ -n "${AUTHCTL_KEEP_DEPENDENT:-}" ] || trap 'rm -rf "$work"' EXIT

# The tagged repository: this tree as it is, committed once.
mkdir "$work/authctl"
git ls-files -z --cached --others --exclude-standard | while IFS= read -r -d '' f; do
  [ -e "$f" ] && printf '%s\0' "$f"
done | tar --null -T - -cf - | tar -xf - -C "$work/authctl"
git -C "$work/authctl" init -q
git -C "$work/authctl" add -A
git -C "$work/authctl" -c user.name=check -c user.email=check@localhost commit -qm "authctl $version"
git -C "$work/authctl" tag "$version"

# The dependent package.
mkdir "$work/dependent"
cp -R "$sources" "$work/dependent/Sources"
cat > "$work/dependent/Package.swift" <<MANIFEST
// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "dependent",
    dependencies: [.package(url: "file://$work/authctl", from: "$version")],
    targets: [.executableTarget(name: "Dependent", dependencies: [.product(name: "Keychain", package: "authctl")])]
)
MANIFEST
cd "$work/dependent"
status=0
swift build > build.log 2>&1 || status=$?
grep -Ev '^\[[0-9]+/[0-9]+\] |^Building for |^Build (of product .* )?complete|^(Fetching|Fetched|Cloning|Cloned|Computing|Computed|Creating working copy|Working copy of) ' build.log >&2 || true
if [ "$status" -ne 0 ]; then
  echo "check-dependent: a package that depends on authctl $version does not build" >&2
  exit 1
fi
.build/debug/Dependent > out.json
python3 - "$version" <<'PY'
import json, sys
version = sys.argv[1]
pins = json.load(open("Package.resolved"))["pins"]
assert [(p["identity"], p["state"].get("version")) for p in pins] == [("authctl", version)], pins
lines = open("out.json").read().splitlines()
assert len(lines) == 2, lines
registration, assertion = (json.loads(line) for line in lines)
assert registration["type"] == assertion["type"] == "public-key"
assert registration["id"] == assertion["id"], "the sign-in used another credential"
assert "attestationObject" in registration["response"] and "signature" in assertion["response"]
print(f"check-dependent: authctl {version}, pinned by version, registered and signed through import Keychain")
PY
