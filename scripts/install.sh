#!/usr/bin/env bash
# Installs authctl as a tool: PREFIX/bin/authctl, its man pages (made by the binary being
# installed, from its command declarations) in PREFIX/share/man/man1, its bash and zsh
# completions in the places those shells look, and PREFIX/lib/authctl/libauthctl-fido2.so, the
# LD_PRELOAD library that lets libfido2's tools and OpenSSH reach its security keys (docs/ctap.md).
# Records what it installed, with checksums, in
# PREFIX/share/authctl/manifest, so that --uninstall removes exactly that. See docs/install.md.
#
# usage: scripts/install.sh [--prefix DIR] [--binary PATH] [--fido2-library PATH] [--force] [--uninstall]
#   --prefix DIR   where to install (absolute; default /usr/local as root, else ~/.local)
#   --binary PATH  install this authctl rather than building one (scripts/build-release.sh): an
#                  ELF binary that loads only libraries of the system's own directories (the
#                  Swift runtime linked in, not loaded from a toolchain)
#   --fido2-library PATH
#                  install this libauthctl-fido2.so (default: the one beside the binary, where
#                  scripts/build-release.sh leaves it): a shared library that loads only libraries
#                  of the system's own directories and no libfido2
#   --force        replace files (or symbolic links) in the way though no install of authctl
#                  made them; a link is replaced, never written through
#   --uninstall    remove what the manifest under PREFIX lists (a file changed since is kept)
# DESTDIR=DIR stages the install under DIR (DIR/PREFIX/...) for packaging; paths inside the
# manifest are relative to PREFIX either way. Below PREFIX no symbolic link is followed.
# Exit status: 0 done, 1 failed (nothing installed, or what this run installed taken back),
# 64 bad arguments, 65 the binary or the library would not run on a machine without the toolchain
# it was built with, or is not what it should be (nothing installed).
set -euo pipefail
umask 022

say() { printf 'install: %s\n' "$*" >&2; }
fail() { say "error: $*"; reported=1; exit 1; }
refuse_binary() { say "error: $*"; reported=1; exit 65; }
usage_error() { say "error: $*"; reported=1; say "usage: scripts/install.sh [--prefix DIR] [--binary PATH] [--fido2-library PATH] [--force] [--uninstall]"; exit 64; }

prefix="" binary="" library="" uninstall="" force=""
while (($#)); do
  case "$1" in
    --prefix) (($# >= 2)) || usage_error "--prefix needs a directory"; prefix="$2"; shift 2 ;;
    --prefix=*) prefix="${1#--prefix=}"; shift ;;
    --binary) (($# >= 2)) || usage_error "--binary needs a path"; binary="$2"; shift 2 ;;
    --binary=*) binary="${1#--binary=}"; shift ;;
    --fido2-library) (($# >= 2)) || usage_error "--fido2-library needs a path"; library="$2"; shift 2 ;;
    --fido2-library=*) library="${1#--fido2-library=}"; shift ;;
    --uninstall) uninstall=1; shift ;;
    --force) force=1; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) usage_error "unknown argument '$1'" ;;
  esac
done

if [ -z "$prefix" ]; then
  if [ "$(id -u)" -eq 0 ]; then
    prefix=/usr/local
  else
    case "${HOME:-}" in
      /*) prefix="$HOME/.local" ;;
      *) usage_error "no home directory for the default prefix ~/.local: pass --prefix DIR" ;;
    esac
  fi
fi
case "$prefix" in
  /*) ;;
  *) usage_error "--prefix must be an absolute path, not '$prefix' (try --prefix \"\$PWD/$prefix\")" ;;
esac
case "$prefix" in *$'\n'*) usage_error "--prefix must not contain a newline" ;; esac
# One spelling of the prefix: no trailing slash (but / stays /), no doubled slashes.
prefix=$(printf '%s' "$prefix" | tr -s /)
[ "$prefix" = / ] || prefix="${prefix%/}"
destdir="${DESTDIR:-}"
case "$destdir" in ""|/*) ;; *) usage_error "DESTDIR must be an absolute path, not '$destdir'" ;; esac
destdir="${destdir%/}"
root="$destdir$prefix"
[ "$prefix" = / ] && root="${destdir:-/}"
under() { if [ "$root" = / ]; then printf '/%s' "$1"; else printf '%s/%s' "$root" "$1"; fi; }

manifest_rel=share/authctl/manifest
manifest=$(under "$manifest_rel")

# The manifest: "dir REL" for each directory this install made, "file SHA256 REL" for each file.
manifest_files() { sed -n 's/^file [0-9a-f]\{64\} //p' "$1"; }
manifest_sum() { awk -v rel="$2" '$1 == "file" { line = $0; sub(/^file [0-9a-f]+ /, "", line); if (line == rel) print $2 }' "$1"; }
manifest_dirs() { sed -n 's/^dir //p' "$1"; }
sum_of() { sha256sum < "$1" | cut -d' ' -f1; }
# Whether the lines of $1 include $2 exactly. (No `| grep -q`: under pipefail, a writer cut off
# by grep's early exit would turn a match into a failure.)
has_line() { case $'\n'"$1"$'\n' in *$'\n'"$2"$'\n'*) return 0 ;; esac; return 1; }
# A recorded directory: "." is the prefix, ".." and "../.." its parents, anything else below it.
# (Only these forms: a manifest is a file anyone who can write the prefix can edit.)
resolve_dir() {
  local rel="$1" dir="$root"
  if [ "$rel" = . ]; then :
  elif [[ "$rel" =~ ^\.\.(/\.\.)*$ ]]; then
    while [ -n "$rel" ]; do dir=$(dirname -- "$dir"); rel="${rel#..}"; rel="${rel#/}"; done
  elif plain_rel "$rel"; then dir=$(under "$rel")
  else return 1
  fi
  printf '%s' "$dir"
}
# Whether $1 is a plain path below the prefix: relative, no empty, "." or ".." component.
plain_rel() {
  case "/$1/" in *//*|*/./*|*/../*) return 1 ;; esac
  [ -n "$1" ] && [ "${1#/}" = "$1" ]
}
# Whether the directory holding `under $1` is, with every link followed, inside the prefix: a
# link planted in the prefix must not lead a removal out of it.
inside_root() {
  local parent
  parent=$(realpath -m -- "$(dirname -- "$(under "$1")")") || return 1
  case "$parent/" in "${root_real%/}"/*) return 0 ;; esac
  return 1
}
# The first symbolic link among the directories between the prefix and `under $1`, printed (and
# success) if there is one. Nothing below the prefix is followed: an install makes no link, so one
# found there was planted, and would lead a write or a removal into another directory.
link_on_the_way() {
  local dirs part parts="" list
  dirs=$(dirname -- "$1")
  [ "$dirs" = . ] && return 1
  IFS=/ read -r -a list <<< "$dirs"
  for part in "${list[@]}"; do
    parts="${parts:+$parts/}$part"
    if [ -L "$(under "$parts")" ]; then printf '%s' "$(under "$parts")"; return 0; fi
  done
  return 1
}
# "a symbolic link to TARGET", for messages.
link_to() { printf 'a symbolic link to %s' "$(readlink -- "$1")"; }

if [ -n "$uninstall" ]; then
  [ -n "$binary$library$force" ] && usage_error "--uninstall takes only --prefix"
  [ -L "$manifest" ] && fail "the manifest $manifest is $(link_to "$manifest"), which no install makes (nothing removed)"
  [ -f "$manifest" ] || fail "no manifest at $manifest: nothing installed there by scripts/install.sh (nothing removed)"
  root_real=$(realpath -e -- "$root") || fail "cannot resolve $root (nothing removed)"
  if link=$(link_on_the_way "$manifest_rel"); then
    fail "$link is $(link_to "$link"), which no install makes; nothing below the prefix is followed (nothing removed)"
  fi
  # First every entry is checked, then anything is removed: an entry that leaves the prefix, or
  # a directory this user cannot change, stops the uninstall before it has begun.
  rels=()
  while IFS= read -r rel; do
    plain_rel "$rel" && inside_root "$rel" ||
      fail "the manifest $manifest names '$rel', which is not a path inside the prefix; it was changed by hand (nothing removed)"
    if link=$(link_on_the_way "$rel"); then
      fail "the manifest $manifest names '$rel', but $link is $(link_to "$link"), which no install makes; nothing below the prefix is followed (nothing removed)"
    fi
    parent=$(dirname -- "$(under "$rel")")
    if [ -e "$(under "$rel")" ] && [ ! -w "$parent" ]; then
      fail "cannot remove files in $parent as $(id -un): run --uninstall as the user who installed (nothing removed)"
    fi
    rels+=("$rel")
  done < <(manifest_files "$manifest")
  while IFS= read -r rel; do
    [ -n "$rel" ] || continue
    resolve_dir "$rel" > /dev/null ||
      fail "the manifest $manifest names the directory '$rel', which is not one an install makes; it was changed by hand (nothing removed)"
    case "$rel" in .|..|../*) ;; *) inside_root "$rel/x" ||
      fail "the manifest $manifest names the directory '$rel', which leads out of the prefix (nothing removed)" ;; esac
    case "$rel" in .|..|../*) ;; *) if link=$(link_on_the_way "$rel/x"); then
      fail "the manifest $manifest names the directory '$rel', but $link is $(link_to "$link"), which no install makes; nothing below the prefix is followed (nothing removed)"
    fi ;; esac
  done < <(manifest_dirs "$manifest")
  removed=0 kept=0
  # A file line without its checksum (written by an older install.sh that failed to read back
  # what it wrote): its file cannot be told from another, so it is left where it is.
  while IFS= read -r rel; do
    say "warning: kept $(under "$rel"): the manifest records no checksum for it"
    kept=$((kept + 1))
  done < <(sed -n '/^file [0-9a-f]\{64\} /!s/^file  *//p' "$manifest")
  for rel in "${rels[@]}"; do
    path=$(under "$rel")
    if [ ! -e "$path" ] && [ ! -L "$path" ]; then
      say "already gone: $path"
    elif [ -f "$path" ] && [ ! -L "$path" ] && [ "$(sum_of "$path")" = "$(manifest_sum "$manifest" "$rel")" ]; then
      rm -f -- "$path"
      removed=$((removed + 1))
    else
      say "warning: kept $path: it changed since it was installed"
      kept=$((kept + 1))
    fi
  done
  dirs=$(manifest_dirs "$manifest")
  rm -f -- "$manifest"
  # In the reverse of the order they were made (children before parents); a directory that
  # still holds anything stays.
  while IFS= read -r rel; do
    [ -n "$rel" ] || continue
    dir=$(resolve_dir "$rel")
    [ -d "$dir" ] && rmdir -- "$dir" 2>/dev/null || true
  done < <(printf '%s\n' "$dirs" | tac)
  if [ "$kept" -eq 0 ]; then say "removed $removed files from $root"
  else say "removed $removed files from $root; kept $kept changed since they were installed"; fi
  exit 0
fi

# --- install -------------------------------------------------------------------------------
if [ -z "$binary" ]; then
  say "building the release binary (scripts/build-release.sh)"
  binary=$("$(dirname "$0")/build-release.sh" | tail -n 1) || fail "the release build failed; nothing installed"
fi
[ -f "$binary" ] && [ -x "$binary" ] || fail "--binary $binary is not an executable file"

# Whether every library the binary $1 loads comes from this system's own library directories (the
# ld.so cache, the loader's default directories), as on a machine without the Swift toolchain it
# was built with. `swift build` without --static-swift-stdlib links the toolchain's shared Swift
# runtime and Foundation (NEEDED libswiftCore.so, found through a run path into the toolchain):
# such a binary runs here and exits 127 wherever the toolchain is not. Refused with exit 65.
check_loads() {
  local file="$1" listing line name path real toolchain=() others=() system
  [ "$(head -c 4 -- "$file")" = $'\177ELF' ] ||
    refuse_binary "--binary $binary is not an ELF executable (a script, or a wrapper?): pass the authctl binary itself; nothing installed"
  # ldd resolves as the loader does; with no LD_LIBRARY_PATH, all it finds beyond the system's
  # directories it found through the binary's own run path.
  if ! listing=$(env -u LD_LIBRARY_PATH -u LD_PRELOAD ldd -- "$file" 2>&1); then
    case "$listing" in *"not a dynamic executable"*) return 0 ;; esac  # statically linked: loads nothing
    refuse_binary "--binary $binary cannot be read by the dynamic loader: ${listing##*: }; nothing installed"
  fi
  system=$({ "$(command -v ldconfig || echo /sbin/ldconfig)" -p 2>/dev/null || true; } | sed -n 's/.* => //p' |
    xargs -r -d '\n' realpath -q -e -- 2>/dev/null || true)
  while IFS= read -r line; do
    case "$line" in
      *" => not found"*) name=${line%% =>*}; path="" ;;
      *" => "*) name=${line%% =>*}; path=${line#* => }; path=${path% (0x*} ;;
      *) continue ;;  # the vDSO, the loader itself
    esac
    name=${name//[[:space:]]/}
    if [ -n "$path" ]; then
      real=$(realpath -e -- "$path" 2>/dev/null) || real="$path"
      has_line "$system" "$real" && continue
      [[ "$(dirname -- "$real")" =~ ^/(usr/)?lib(32|64|x32)?(/[a-z0-9_]+-linux-[a-z0-9_]+)?$ ]] && continue
    fi
    case "$name" in
      libswift*|libFoundation*|lib_FoundationICU*|libdispatch.so*|libBlocksRuntime.so*)
        # libswiftCore.so named first: it is the runtime itself.
        if [ "$name" = libswiftCore.so ]; then toolchain=("$name${path:+ from $(dirname -- "$path")}" "${toolchain[@]}")
        else toolchain+=("$name${path:+ from $(dirname -- "$path")}"); fi ;;
      *) others+=("$name (${path:+from $(dirname -- "$path")}${path:-not found})") ;;
    esac
  done <<< "$listing"
  if ((${#toolchain[@]})); then
    local more=""
    ((${#toolchain[@]} > 1)) && more=" and $((${#toolchain[@]} - 1)) more"
    refuse_binary "--binary $binary loads the Swift runtime as shared libraries of the toolchain it was built with (${toolchain[0]}$more): where that toolchain is not, it exits 127. Build it with scripts/build-release.sh, which links the runtime in (swift build -c release --static-swift-stdlib); nothing installed"
  fi
  if ((${#others[@]})); then
    refuse_binary "--binary $binary loads libraries that are not in this system's library directories: ${others[*]}; nothing installed"
  fi
}

# Whether $1 is the LD_PRELOAD library libauthctl-fido2.so as any program on a machine without the
# toolchain can load it: an ELF shared object that defines libfido2's fido_dev_open and
# fido_dev_info_manifest and links libc alone — never the Swift runtime (a SwiftPM dynamic library
# product links it: scripts/build-fido2-library.sh links with the C compiler instead), never
# libfido2 (whose functions it finds when called).
check_library() {
  local file="$1" header symbols needed soname name
  [ "$(head -c 4 -- "$file")" = $'\177ELF' ] && header=$(readelf -h -W -- "$file" 2>/dev/null) &&
    [[ "$header" =~ Type:[[:space:]]+DYN ]] ||
    refuse_binary "--fido2-library $library is not a shared library (an ELF shared object); nothing installed"
  symbols=$(readelf --dyn-syms -W -- "$file")
  for name in fido_dev_info_manifest fido_dev_open; do
    awk -v n="$name" '$4 == "FUNC" && $5 == "GLOBAL" && $7 != "UND" && $8 == n { found = 1 } END { exit !found }' <<< "$symbols" ||
      refuse_binary "--fido2-library $library does not define $name: it is not libauthctl-fido2.so; nothing installed"
  done
  needed=$(readelf -d -W -- "$file" | sed -n 's/.*(NEEDED).*\[\(.*\)\]$/\1/p')
  while IFS= read -r soname; do
    case "$soname" in
      libswift*|libFoundation*|lib_FoundationICU*|libdispatch.so*|libBlocksRuntime.so*)
        refuse_binary "--fido2-library $library loads the Swift runtime ($soname), which every program it is preloaded into would load too, and which exits 127 where the toolchain is not: build it with scripts/build-fido2-library.sh; nothing installed" ;;
      libfido2.so*)
        refuse_binary "--fido2-library $library links $soname: preloaded into a program without libfido2 it would load it; build it with scripts/build-fido2-library.sh; nothing installed" ;;
      ""|libc.so.*) ;;
      *) refuse_binary "--fido2-library $library links $soname, and libauthctl-fido2.so links libc alone: it is another library, or not built by scripts/build-fido2-library.sh; nothing installed" ;;
    esac
  done <<< "$needed"
}

# Everything is made in a staging directory first: a binary that does not run here, or a page
# that cannot be made, stops the install before anything under PREFIX changes.
stage=$(mktemp -d "${TMPDIR:-/tmp}/authctl-install.XXXXXX" 2>/dev/null) ||
  fail "cannot make a staging directory in ${TMPDIR:-/tmp}; nothing installed"
# Once files are being put in place (phase "placing"), a failure takes back what this run added:
# the files it created and the directories it made. (A file it replaced stays replaced.)
phase=staging installed=() made=()
finish() {
  local status=$?
  if [ "$phase" = placing ]; then
    for path in "${installed[@]}"; do rm -f -- "$path"; done
    for ((i = ${#made[@]} - 1; i >= 0; i--)); do rmdir -- "${made[i]}" 2>/dev/null || true; done
    if ((${#installed[@]} + ${#made[@]})); then say "the install failed: what it had added under $root is removed again"
    else say "nothing was installed"; fi
  fi
  rm -rf -- "$stage"
  [ "$status" -eq 0 ] || [ -n "${reported:-}" ] || say "error: failed (exit $status)"
  exit "$status"
}
trap finish EXIT
install -m 755 -- "$binary" "$stage/authctl"
check_loads "$stage/authctl"
version=$(env -u LD_LIBRARY_PATH -u LD_PRELOAD "$stage/authctl" --version 2>&1) || fail "$binary does not run here: $version"
case "$version" in
  "authctl "[0-9]*) ;;
  *) refuse_binary "--binary $binary is not authctl: its --version says '${version:0:80}'; nothing installed" ;;
esac
if [ -z "$library" ]; then
  library="$(dirname -- "$binary")/libauthctl-fido2.so"
  [ -f "$library" ] || fail "no libauthctl-fido2.so beside $binary: build both with scripts/build-release.sh, or pass --fido2-library PATH; nothing installed"
fi
[ -f "$library" ] || fail "--fido2-library $library is not a file; nothing installed"
install -m 644 -- "$library" "$stage/libauthctl-fido2.so"
check_library "$stage/libauthctl-fido2.so"
files=(bin/authctl lib/authctl/libauthctl-fido2.so)
mkdir -p "$stage/tree/bin" "$stage/tree/lib/authctl" "$stage/tree/share/man/man1" \
  "$stage/tree/share/bash-completion/completions" "$stage/tree/share/zsh/site-functions"
mv "$stage/authctl" "$stage/tree/bin/authctl"
mv "$stage/libauthctl-fido2.so" "$stage/tree/lib/authctl/libauthctl-fido2.so"
"$stage/tree/bin/authctl" manpages --output "$stage/tree/share/man/man1" > "$stage/pages" || fail "the man pages could not be made"
while IFS= read -r page; do files+=("share/man/man1/${page##*/}"); done < "$stage/pages"
"$stage/tree/bin/authctl" completion bash > "$stage/tree/share/bash-completion/completions/authctl"
"$stage/tree/bin/authctl" completion zsh > "$stage/tree/share/zsh/site-functions/_authctl"
files+=(share/bash-completion/completions/authctl share/zsh/site-functions/_authctl)

# Nothing below the prefix is followed. A directory of the install that is a symbolic link is
# refused, --force or not: the files would go into another directory, and --uninstall would look
# for them here. A link where a file goes is in the way like any file no install made (an install
# makes no link): --force replaces the link itself, never what it points to.
dirs=(bin lib/authctl share/man/man1 share/bash-completion/completions share/zsh/site-functions share/authctl)
root_real=$(realpath -m -- "$root")
if [ -L "$root" ] && [ ! -e "$root" ]; then fail "the prefix $root is $(link_to "$root"), which does not exist; nothing installed"; fi
for rel in "${dirs[@]}"; do
  if link=$(link_on_the_way "$rel/x"); then
    fail "$link is $(link_to "$link"): nothing below the prefix is followed, so nothing is installed through it (make it a directory, or choose another --prefix); nothing installed"
  fi
done
# What an earlier install left: its files are ours to replace; any other file in the way is not.
previous="" conflicts=()
for rel in "${files[@]}" "$manifest_rel"; do
  target=$(under "$rel")
  if [ -L "$target" ]; then
    [ -n "$force" ] || conflicts+=("$target, $(link_to "$target") (an install makes no link)")
  elif [ -d "$target" ]; then
    fail "$target is a directory; nothing installed"
  elif [ -e "$target" ] && [ ! -f "$target" ]; then
    # (A FIFO or a device: not read, not ours.)
    [ -n "$force" ] || conflicts+=("$target (not a regular file)")
  elif [ "$rel" = "$manifest_rel" ]; then
    [ -f "$target" ] && previous="$target"
  fi
done
for rel in "${files[@]}"; do
  target=$(under "$rel")
  [ -f "$target" ] && [ ! -L "$target" ] || continue
  if [ -n "$previous" ] && has_line "$(manifest_files "$previous")" "$rel"; then
    [ "$(sum_of "$target")" = "$(manifest_sum "$previous" "$rel")" ] || say "warning: replacing $target, which changed since it was installed"
  elif [ -z "$force" ]; then
    conflicts+=("$target (not installed by scripts/install.sh)")
  fi
done
if ((${#conflicts[@]})); then
  for c in "${conflicts[@]}"; do say "in the way: $c"; done
  fail "files no install of authctl made are in the way; remove them or pass --force; nothing installed"
fi

# Every directory must be writable, or creatable in a writable parent, before anything is done.
for rel in "${dirs[@]}"; do
  dir=$(under "$rel")
  while [ ! -e "$dir" ]; do dir=$(dirname -- "$dir"); done
  [ -d "$dir" ] || fail "$dir is not a directory; nothing installed"
  if [ ! -w "$dir" ]; then
    hint=""
    [ "$(id -u)" -ne 0 ] && hint=" (run as root, or choose another --prefix; a user's default is ~/.local)"
    fail "cannot write to $dir$hint; nothing installed"
  fi
done

phase=placing
created=()
[ -n "$previous" ] && while IFS= read -r rel; do created+=("$rel"); done < <(manifest_dirs "$previous")
new_dir() {
  local reason
  reason=$(mkdir -- "$1" 2>&1) || fail "cannot make $1: ${reason##*: }"
}
# The prefix and whichever of its parents are missing, outermost first, recorded as ../.., ..
# and . (not under DESTDIR: the staging directory and what holds the prefix are the packager's).
make_root() {
  local dir="$root" up="." missing=() rels=() i
  while [ ! -e "$dir" ]; do
    missing=("$dir" "${missing[@]}")
    rels=("$up" "${rels[@]}")
    dir=$(dirname -- "$dir")
    if [ "$up" = . ]; then up=..; else up="../$up"; fi
  done
  for i in "${!missing[@]}"; do
    new_dir "${missing[i]}"
    made+=("${missing[i]}")
    [ -n "$destdir" ] || created+=("${rels[i]}")
  done
  return 0
}
make_dir() {  # makes `under REL` and its missing parents below the prefix, recording each made
  local rel="$1" parts="" part
  local IFS=/
  for part in $rel; do
    parts="${parts:+$parts/}$part"
    if [ ! -d "$(under "$parts")" ]; then
      new_dir "$(under "$parts")"
      made+=("$(under "$parts")")
      created+=("$parts")
    fi
  done
}
make_root
for rel in "${dirs[@]}"; do make_dir "$rel"; done

new_manifest="$stage/manifest"
{
  echo "# What scripts/install.sh installed under $prefix ($version); 'scripts/install.sh --uninstall' removes it."
  printf '%s\n' "${created[@]}" | awk 'NF && !seen[$0]++ { print "dir " $0 }'
} > "$new_manifest"
# SRC put at TARGET: a new file of this run's own beside it (mktemp: no name planted there is
# reused), then renamed over TARGET itself (-T: over a link, never into the directory it leads
# to), so no one sees half a file and nothing is written through a link. Then TARGET must hold
# what was staged, or the install has written somewhere else, and fails.
place() {
  local src="$1" target="$2" new
  new=$(mktemp -- "$target.authctl-new.XXXXXX") || fail "cannot make a file in $(dirname -- "$target")"
  installed+=("$new")
  cat -- "$src" > "$new" || fail "cannot write $new (is the disk full?)"
  chmod "$(stat -c %a -- "$src")" -- "$new"
  { [ -e "$target" ] || [ -L "$target" ]; } || installed+=("$target")
  mv -fT -- "$new" "$target"
  [ -f "$target" ] && [ ! -L "$target" ] && [ "$(sum_of "$target")" = "$(sum_of "$src")" ] ||
    fail "$target does not hold what was just written there (changed while installing?)"
}
for rel in "${files[@]}"; do
  place "$stage/tree/$rel" "$(under "$rel")"
  echo "file $(sum_of "$stage/tree/$rel") $rel" >> "$new_manifest"
done
# Files of the earlier install that this one no longer has (a command renamed): removed when
# unchanged. (Only plain paths inside the prefix: the old manifest is a file anyone who can write
# the prefix can edit.)
if [ -n "$previous" ]; then
  while IFS= read -r rel; do
    has_line "$(printf '%s\n' "${files[@]}")" "$rel" && continue
    old=$(under "$rel")
    if ! plain_rel "$rel" || ! inside_root "$rel" || link_on_the_way "$rel" >/dev/null; then
      say "warning: the earlier manifest names '$rel', which is not a path inside the prefix; left alone"
    elif [ -f "$old" ] && [ ! -L "$old" ] && [ "$(sum_of "$old")" = "$(manifest_sum "$previous" "$rel")" ]; then rm -f -- "$old"
    elif [ -e "$old" ] || [ -L "$old" ]; then say "warning: kept $old (from an earlier install, changed since)"; fi
  done < <(manifest_files "$previous")
fi
chmod 644 -- "$new_manifest"
place "$new_manifest" "$manifest"
phase=done

say "installed $version into $root: ${#files[@]} files (manifest: $manifest)"
[ -n "$destdir" ] && exit 0

# What the user still has to do for the shell to find it all.
case ":$PATH:" in
  *":$prefix/bin:"*) ;;
  *) say "note: $prefix/bin is not on PATH; add it (then man finds the pages too, as man-db derives MANPATH from PATH):"
     say "      export PATH=$(printf '%q' "$prefix/bin"):\"\$PATH\"   # in ~/.profile or ~/.bashrc" ;;
esac
if [ -n "${MANPATH:-}" ]; then
  case ":$MANPATH:" in
    *":$prefix/share/man:"*) ;;
    *) say "note: MANPATH is set, so man does not derive it from PATH; add $prefix/share/man to it" ;;
  esac
fi
user_data="${XDG_DATA_HOME:-${HOME:-}/.local/share}"
case "$prefix/share" in
  "$user_data"|/usr/local/share|/usr/share) ;;
  *) case ":${XDG_DATA_DIRS:-/usr/local/share:/usr/share}:" in
       *":$prefix/share:"*) ;;
       *) say "note: bash-completion does not look in $prefix/share; add to ~/.bashrc:"
          say "      source \"$prefix/share/bash-completion/completions/authctl\"" ;;
     esac ;;
esac
# zsh's own fpath (Debian's: /usr/local/share/zsh/site-functions and /usr/share/zsh's).
zsh_fpath=$(zsh -fc 'print -rl -- $fpath' 2>/dev/null || echo /usr/local/share/zsh/site-functions)
if ! has_line "$zsh_fpath" "$prefix/share/zsh/site-functions"; then
  say "note: for zsh, add before compinit in ~/.zshrc:"
  say "      fpath=($(printf '%q' "$prefix/share/zsh/site-functions") \$fpath)"
fi
