"""scripts/install.sh and scripts/package-deb.sh, driven as a user and a packager would: the
release binary installed into a prefix of the test's own, found by man and by bash's and zsh's
completion in new shells, removed again to the last byte; the .deb, checked by dpkg-deb, apt and
lintian; both run where the Swift toolchain is not; links planted in the prefix; and the LD_PRELOAD
library for libfido2's tools (libauthctl-fido2.so) installed beside the binary, refused when it is
not one that loads anywhere.

The release binary is $AUTHCTL_RELEASE_BIN (scripts/test.sh builds it once), else built here
with scripts/build-release.sh. The debug binary ($AUTHCTL_BIN) stands for one linked against the
toolchain's shared Swift runtime, as `swift build` links it."""
import hashlib
import json
import os
import pathlib
import pty
import re
import select
import shutil
import stat
import subprocess
import tempfile
import time

import pytest

from conftest import BIN, PASSPHRASE, PIN, ROOT, own_environment

INSTALL = str(ROOT / "scripts" / "install.sh")
PACKAGE = str(ROOT / "scripts" / "package-deb.sh")


@pytest.fixture(scope="session")
def release_bin():
    path = os.environ.get("AUTHCTL_RELEASE_BIN")
    if not path:
        result = subprocess.run([str(ROOT / "scripts" / "build-release.sh")], capture_output=True, text=True, timeout=3600)
        assert result.returncode == 0, result.stderr
        path = result.stdout.splitlines()[-1]
    assert os.access(path, os.X_OK), path
    return str(pathlib.Path(path).resolve())


def listing(root: pathlib.Path) -> dict:
    """Everything under `root` (and whether it exists): type, mode and content of each entry."""
    if not root.exists():
        return {}
    out = {".": ("dir", stat.S_IMODE(root.stat().st_mode))}
    for path in sorted(root.rglob("*")):
        info = path.lstat()
        if stat.S_ISLNK(info.st_mode):
            kind = ("link", os.readlink(path))
        elif path.is_dir():
            kind = ("dir", stat.S_IMODE(info.st_mode))
        else:
            kind = ("file", stat.S_IMODE(info.st_mode), hashlib.sha256(path.read_bytes()).hexdigest())
        out[str(path.relative_to(root))] = kind
    return out


def install(binary, *args, env):
    return subprocess.run([INSTALL, "--binary", binary, *args], capture_output=True, text=True, env=env, timeout=300)


def uninstall(*args, env):
    return subprocess.run([INSTALL, "--uninstall", *args], capture_output=True, text=True, env=env, timeout=300)


def user_env(tmp_path) -> dict:
    """A fresh home, with Debian's default .bashrc, and the test's own TMPDIR; no MANPATH."""
    env = own_environment(tmp_path)
    env.pop("MANPATH", None)
    env.pop("MANPAGER", None)
    env.pop("PAGER", None)
    shutil.copy("/etc/skel/.bashrc", pathlib.Path(env["HOME"]) / ".bashrc")
    return env


@pytest.fixture(scope="module")
def installed(release_bin, tmp_path_factory):
    """The release binary installed as the README says: --prefix "$HOME/.local" in a fresh home."""
    scratch = tmp_path_factory.mktemp("user")
    env = user_env(scratch)
    prefix = pathlib.Path(env["HOME"]) / ".local"
    result = install(release_bin, "--prefix", str(prefix), env=env)
    assert result.returncode == 0, result.stderr
    env["PATH"] = f"{prefix}/bin:{env['PATH']}"
    return prefix, env, result


EXPECTED = ["bin/authctl", "lib/authctl/libauthctl-fido2.so", "share/man/man1/authctl.1", "share/man/man1/authctl-sign.1", "share/man/man1/authctl-vault.1",
            "share/man/man1/authctl-vault-info.1", "share/man/man1/authctl-device-add.1",
            "share/bash-completion/completions/authctl", "share/zsh/site-functions/_authctl", "share/authctl/manifest"]


def test_install_puts_the_binary_pages_and_completions_in_place(installed, release_bin):
    prefix, env, result = installed
    for rel in EXPECTED:
        assert (prefix / rel).is_file(), rel
    assert os.access(prefix / "bin" / "authctl", os.X_OK)
    version = subprocess.run([prefix / "bin" / "authctl", "--version"], capture_output=True, text=True, env=env).stdout
    assert version == subprocess.run([release_bin, "--version"], capture_output=True, text=True).stdout
    match = re.fullmatch(r"authctl (\d+\.\d+\.\d+) \(commit ([0-9a-f]{12})(-dirty)?\)\n", version)
    assert match, version
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short=12", "HEAD"], capture_output=True, text=True)
    if head.returncode == 0:  # the release binary is built from this checkout (scripts/test.sh)
        assert match.group(2) == head.stdout.strip(), (version, head.stdout)
    # The manifest names every file with its checksum, and nothing else.
    manifest = (prefix / "share" / "authctl" / "manifest").read_text().splitlines()
    files = {line.split(" ", 2)[2]: line.split(" ", 2)[1] for line in manifest if line.startswith("file ")}
    on_disk = {rel for rel, kind in listing(prefix).items() if kind[0] == "file"} - {"share/authctl/manifest"}
    assert set(files) == on_disk
    for rel, digest in files.items():
        assert hashlib.sha256((prefix / rel).read_bytes()).hexdigest() == digest, rel
    pages = sorted(p.name for p in (prefix / "share" / "man" / "man1").iterdir())
    made = subprocess.run([prefix / "bin" / "authctl", "manpages", "--output", str(prefix.parent / "check")],
                          capture_output=True, text=True, env=env)
    assert pages == sorted(pathlib.Path(p).name for p in made.stdout.split())
    # PATH does not hold the new bin directory yet: the script says what to do.
    assert f"{prefix}/bin is not on PATH" in result.stderr and "export PATH=" in result.stderr


def dynamic_section(path) -> tuple[list, str]:
    """The libraries `path` links (its NEEDED entries) and its dynamic symbol table."""
    dynamic = subprocess.run(["readelf", "-d", "-W", str(path)], capture_output=True, text=True).stdout
    symbols = subprocess.run(["readelf", "--dyn-syms", "-W", str(path)], capture_output=True, text=True).stdout
    return re.findall(r"\(NEEDED\)\s+Shared library: \[(.*)\]", dynamic), symbols


def defines(symbols: str, name: str) -> bool:
    return any(line.split()[3:5] == ["FUNC", "GLOBAL"] and line.split()[6] != "UND" and line.split()[7] == name
               for line in symbols.splitlines() if len(line.split()) >= 8)


def test_install_puts_the_fido2_library_in_place_as_built(installed, release_bin):
    """libauthctl-fido2.so, built beside the release binary, installed as a library (not executable)
    that links libc alone and defines libfido2's functions it extends."""
    prefix, _, _ = installed
    library = prefix / "lib" / "authctl" / "libauthctl-fido2.so"
    assert library.read_bytes() == (pathlib.Path(release_bin).parent / "libauthctl-fido2.so").read_bytes()
    assert stat.S_IMODE(library.stat().st_mode) == 0o644
    needed, symbols = dynamic_section(library)
    assert needed == ["libc.so.6"], needed
    for name in ("fido_dev_info_manifest", "fido_dev_open", "fido_dev_new_with_info"):
        assert defines(symbols, name), name
    # No libfido2 symbol is bound when it is loaded: it finds libfido2's functions when called.
    assert not re.search(r"\bUND\s+fido_", symbols), symbols


def stub_library(tmp_path, *link) -> pathlib.Path:
    """A shared library that defines the two functions the install checks for and links `link`."""
    source = tmp_path / "stub.c"
    source.write_text("int fido_dev_open(void *d, const char *p) { (void)d; (void)p; return 0; }\n"
                      "int fido_dev_info_manifest(void *l, unsigned long i, unsigned long *o) { (void)l; (void)i; *o = 0; return 0; }\n")
    library = tmp_path / "stub" / "libauthctl-fido2.so"
    library.parent.mkdir()
    subprocess.run(["cc", "-shared", "-fPIC", "-o", str(library), str(source), "-Wl,--no-as-needed", *link], check=True)
    return library


@pytest.mark.parametrize("what", ["swift runtime", "links libfido2", "libfido2 itself", "libc", "not a library", "none beside"])
def test_a_fido2_library_that_would_not_load_everywhere_is_refused(release_bin, tmp_path, what):
    """What LD_PRELOAD loads into every program of a session must load anywhere and on its own: a
    library linked as SwiftPM links a dynamic product (the Swift runtime from the toolchain), one
    that links libfido2, libfido2 itself (it defines the functions, and links more than libc), one
    that does not define them, a file that is no shared library; and a --binary without the library
    beside it."""
    env = user_env(tmp_path)
    binary = release_bin
    code = 65
    if what == "swift runtime":
        where = toolchain_library_dir(BIN)
        if where is None:
            pytest.skip(f"{BIN} links the Swift runtime in: no toolchain library to link")
        library = stub_library(tmp_path, f"-L{where}", "-lswiftCore", f"-Wl,-rpath,{where}")
        expected = "loads the Swift runtime (libswiftCore.so)"
    elif what == "links libfido2":
        library = stub_library(tmp_path, "-l:libfido2.so.1")
        expected = "links libfido2.so.1: preloaded into a program without libfido2 it would load it"
    elif what in ("libfido2 itself", "libc"):
        loaded = subprocess.run(["ldd", shutil.which("fido2-token")], capture_output=True, text=True).stdout
        soname = "libfido2.so.1" if what == "libfido2 itself" else "libc.so.6"
        library = pathlib.Path(re.search(rf"{re.escape(soname)} => (\S+)", loaded).group(1))
        expected = ("links libcbor.so.0.8, and libauthctl-fido2.so links libc alone" if what == "libfido2 itself"
                    else "does not define fido_dev_info_manifest: it is not libauthctl-fido2.so")
    elif what == "not a library":
        library = tmp_path / "libauthctl-fido2.so"
        library.write_text("not a library\n")
        expected = "is not a shared library"
    else:
        alone = tmp_path / "alone"
        alone.mkdir()
        binary = str(alone / "authctl")
        shutil.copy(release_bin, binary)
        library, code, expected = None, 1, f"no libauthctl-fido2.so beside {binary}: build both with scripts/build-release.sh, or pass --fido2-library PATH"
    before = listing(tmp_path)
    result = install(binary, "--prefix", str(tmp_path / "p"), *(["--fido2-library", str(library)] if library else []), env=env)
    assert result.returncode == code, result.stderr
    assert expected in result.stderr and "nothing installed" in result.stderr, result.stderr
    assert listing(tmp_path) == before


def test_man_renders_the_installed_page(installed):
    prefix, env, _ = installed
    page = prefix / "share" / "man" / "man1" / "authctl-sign.1"
    result = subprocess.run(["man", "--warnings", "-l", str(page)], capture_output=True, text=True, env=env, timeout=60)
    assert result.returncode == 0 and result.stderr == "", result.stderr
    assert "authctl-sign - sign in with a passkey" in result.stdout
    assert "--origin URL" in result.stdout and "EXAMPLES" in result.stdout


def test_man_finds_the_page_through_path(installed):
    prefix, env, _ = installed
    assert "MANPATH" not in env
    # man-db derives the manual path from PATH: PREFIX/bin gives PREFIX/share/man.
    where = subprocess.run(["man", "-w", "authctl-sign"], capture_output=True, text=True, env=env, timeout=60)
    assert where.stdout.strip() == str(prefix / "share" / "man" / "man1" / "authctl-sign.1"), where.stderr
    shown = subprocess.run(["man", "authctl-sign"], capture_output=True, text=True, env=env, timeout=60)
    assert shown.returncode == 0 and "authctl-sign - sign in with a passkey" in shown.stdout, shown.stderr
    top = subprocess.run(["man", "authctl"], capture_output=True, text=True, env=env, timeout=60)
    assert "EXIT STATUS" in top.stdout and "AUTHCTL_VAULT" in top.stdout
    # Without the prefix on PATH, the pages are not found (so the test above proves the lookup).
    bare = dict(env, PATH=env["PATH"].split(":", 1)[1])
    assert subprocess.run(["man", "-w", "authctl-sign"], capture_output=True, env=bare, timeout=60).returncode != 0


@pytest.mark.skipif(not os.path.exists("/usr/share/bash-completion/bash_completion"), reason="bash-completion is not installed")
def test_bash_completes_in_a_new_interactive_shell_through_the_on_demand_loader(installed):
    prefix, env, _ = installed
    # What readline does on TAB: the -D default, bash-completion's loader, finds the file by the
    # command's name and registers it; then the registered function answers.
    probe = """
complete -p authctl >/dev/null 2>&1 && echo "@@loaded-too-early"
echo "@@default $(complete -p -D)"
_completion_loader authctl
echo "@@loader $?"
spec=$(complete -p authctl); echo "@@spec $spec"
fn=${spec##*-F }; fn=${fn%% *}
COMP_WORDS=(authctl si); COMP_CWORD=1; COMP_LINE="authctl si"; COMP_POINT=${#COMP_LINE}
"$fn" authctl si authctl
printf '@@candidate %s\\n' "${COMPREPLY[@]}"
COMP_WORDS=(authctl vault p); COMP_CWORD=2; COMP_LINE="authctl vault p"; COMP_POINT=${#COMP_LINE}
"$fn" authctl p vault
printf '@@candidate %s\\n' "${COMPREPLY[@]}"
"""
    result = subprocess.run(["bash", "-i", "-c", probe], capture_output=True, text=True, env=env, timeout=120)
    out = result.stdout
    assert "@@loaded-too-early" not in out
    assert "@@default complete -F _completion_loader -D" in out, out + result.stderr
    assert "@@loader 124" in out  # 124: "completion loaded, try again"
    assert "@@spec complete -o default -F _authctl authctl" in out
    candidates = re.findall(r"^@@candidate (.*)$", out, re.M)
    assert "sign" in candidates and "signal" in candidates and "passwd" in candidates, out


def pty_complete(env: dict, typed: bytes, wanted: bytes) -> bytes:
    """Types `typed` (ending in TAB) into a new interactive bash on a pseudo-terminal and returns
    what it shows once `wanted` appears (or when the deadline passes)."""
    pid, fd = pty.fork()
    if pid == 0:
        os.chdir(env["HOME"])
        os.execve("/bin/bash", ["bash", "-i"], env)
    buf = b""
    deadline = time.monotonic() + 60

    def wait_for(marker: bytes, start: int) -> bool:
        nonlocal buf
        while marker not in buf[start:] and time.monotonic() < deadline:
            ready, _, _ = select.select([fd], [], [], 1)
            if ready:
                try:
                    buf += os.read(fd, 4096)
                except OSError:
                    break
        return marker in buf[start:]

    try:
        # The markers are split in what is typed, so the terminal's echo of it never matches.
        os.write(fd, b"PS1='@@P''ROMPT> '; bind 'set show-all-if-ambiguous on'; echo @@RE''ADY\n")
        assert wait_for(b"@@READY", 0), buf
        start = buf.index(b"@@READY")
        assert wait_for(b"@@PROMPT> ", start), buf
        start = buf.index(b"@@PROMPT> ", start) + len(b"@@PROMPT> ")
        os.write(fd, typed)
        wait_for(wanted, start)
        return buf[start:]
    finally:
        os.write(fd, b"\x15exit\n")
        os.close(fd)
        os.waitpid(pid, 0)


@pytest.mark.skipif(not os.path.exists("/usr/share/bash-completion/bash_completion"), reason="bash-completion is not installed")
def test_tab_completes_in_a_new_bash_on_a_terminal(installed):
    prefix, env, _ = installed
    screen = pty_complete(dict(env, TERM="dumb"), b"authctl si\t", b"signal")
    assert re.search(rb"\bsign\s+signal\b", screen), screen


@pytest.mark.skipif(shutil.which("zsh") is None, reason="zsh is not installed")
def test_zsh_loads_the_completion_from_fpath_with_compinit(installed, tmp_path):
    prefix, env, _ = installed
    functions = prefix / "share" / "zsh" / "site-functions"
    script = f"""fpath=({functions} $fpath); autoload -Uz compinit; compinit -u -d {tmp_path}/zcompdump
print -r -- "@@comp ${{_comps[authctl]}}"; autoload +X _authctl && print -r -- "@@autoload ok"
"""
    result = subprocess.run(["zsh", "-f", "-c", script], capture_output=True, text=True, env=env, timeout=60)
    assert "@@comp _authctl" in result.stdout and "@@autoload ok" in result.stdout, result.stdout + result.stderr
    # And it completes, in a real zsh on a terminal, loaded from fpath (not sourced).
    driven = subprocess.run(["zsh", str(ROOT / "Tests" / "interop" / "zsh_complete.zsh"), str(functions), "authctl vault p"],
                            capture_output=True, text=True, env=env, timeout=120)
    assert "@@ERROR" not in driven.stdout, driven.stdout
    assert "passwd" in driven.stdout.split(), driven.stdout


def test_uninstall_leaves_the_prefix_exactly_as_before(release_bin, tmp_path):
    env = user_env(tmp_path)
    # A prefix that already holds things of its own, and one that does not exist yet.
    prefix = tmp_path / "opt"
    (prefix / "bin").mkdir(parents=True)
    (prefix / "bin" / "other-tool").write_text("#!/bin/sh\n")
    (prefix / "share" / "man" / "man1").mkdir(parents=True)
    (prefix / "share" / "man" / "man1" / "other.1").write_text(".TH OTHER 1\n")
    before = listing(prefix)
    assert install(release_bin, "--prefix", str(prefix), env=env).returncode == 0
    assert listing(prefix) != before
    result = uninstall("--prefix", str(prefix), env=env)
    assert result.returncode == 0 and "removed" in result.stderr, result.stderr
    assert listing(prefix) == before
    fresh = tmp_path / "new" / "deeper"
    assert install(release_bin, "--prefix", str(fresh), env=env).returncode == 0
    assert uninstall("--prefix", str(fresh), env=env).returncode == 0
    assert not (tmp_path / "new").exists()  # every directory the install made, and only those


def test_uninstall_keeps_a_file_changed_since_install(release_bin, tmp_path):
    env = user_env(tmp_path)
    prefix = tmp_path / "p"
    assert install(release_bin, "--prefix", str(prefix), env=env).returncode == 0
    changed = prefix / "share" / "man" / "man1" / "authctl-sign.1"
    changed.write_text(changed.read_text() + ".\\\" a note of mine\n")
    result = uninstall("--prefix", str(prefix), env=env)
    assert result.returncode == 0
    assert f"kept {changed}" in result.stderr and "changed since" in result.stderr
    assert changed.exists()
    left = {rel for rel, kind in listing(prefix).items() if kind[0] == "file"}
    assert left == {"share/man/man1/authctl-sign.1"}
    # The directories that still hold it stay; the emptied ones are gone.
    assert not (prefix / "bin").exists() and not (prefix / "share" / "authctl").exists()


@pytest.mark.parametrize("entry", ["file {sum} ../outside", "file {sum} share/../../outside", "file {sum} /outside",
                                   "dir ../q", "dir share/../../victim", "dir ../../x/.."])
def test_a_manifest_changed_to_leave_the_prefix_removes_nothing(release_bin, tmp_path, entry):
    """The manifest is a file anyone who can write the prefix can edit: an entry that leads out
    of it stops the uninstall before anything is removed, inside the prefix or out."""
    env = user_env(tmp_path)
    prefix = tmp_path / "p"
    outside = tmp_path / "outside"
    outside.write_text("precious\n")
    (tmp_path / "victim").mkdir()
    assert install(release_bin, "--prefix", str(prefix), env=env).returncode == 0
    before = listing(prefix)
    manifest = prefix / "share" / "authctl" / "manifest"
    digest = hashlib.sha256(outside.read_bytes()).hexdigest()
    manifest.write_text(manifest.read_text() + entry.format(sum=digest) + "\n")
    result = uninstall("--prefix", str(prefix), env=env)
    assert result.returncode == 1, result.stderr
    assert "changed by hand" in result.stderr or "out of the prefix" in result.stderr
    assert outside.read_text() == "precious\n" and (tmp_path / "victim").is_dir()
    after = listing(prefix)
    assert after.keys() == before.keys()


def test_a_link_planted_in_the_prefix_does_not_lead_uninstall_out_of_it(release_bin, tmp_path):
    env = user_env(tmp_path)
    prefix = tmp_path / "p"
    assert install(release_bin, "--prefix", str(prefix), env=env).returncode == 0
    pages = prefix / "share" / "man" / "man1"
    elsewhere = tmp_path / "elsewhere"
    shutil.copytree(pages, elsewhere)
    shutil.rmtree(pages)
    pages.symlink_to(elsewhere)
    result = uninstall("--prefix", str(prefix), env=env)
    assert result.returncode == 1 and "not a path inside the prefix" in result.stderr
    assert len(list(elsewhere.glob("*.1"))) > 40
    assert (prefix / "bin" / "authctl").exists()


def test_reinstall_replaces_its_own_files_but_not_anyone_elses(release_bin, tmp_path):
    env = user_env(tmp_path)
    prefix = tmp_path / "p"
    assert install(release_bin, "--prefix", str(prefix), env=env).returncode == 0
    once = listing(prefix)
    again = install(release_bin, "--prefix", str(prefix), env=env)
    assert again.returncode == 0, again.stderr
    assert listing(prefix) == once
    assert uninstall("--prefix", str(prefix), env=env).returncode == 0
    # A file no install made is in the way: nothing is installed unless --force says so.
    (prefix / "bin").mkdir(parents=True)
    (prefix / "bin" / "authctl").write_text("someone else's\n")
    before = listing(prefix)
    refused = install(release_bin, "--prefix", str(prefix), env=env)
    assert refused.returncode == 1 and "in the way" in refused.stderr and "nothing installed" in refused.stderr
    assert listing(prefix) == before
    forced = install(release_bin, "--prefix", str(prefix), "--force", env=env)
    assert forced.returncode == 0 and (prefix / "bin" / "authctl").read_bytes() == pathlib.Path(release_bin).read_bytes()


def test_a_prefix_with_spaces_installs_and_uninstalls(release_bin, tmp_path):
    env = user_env(tmp_path)
    prefix = tmp_path / "with space" / "a  b"
    result = install(release_bin, "--prefix", str(prefix), env=env)
    assert result.returncode == 0, result.stderr
    shown = subprocess.run(["man", "-l", str(prefix / "share" / "man" / "man1" / "authctl-vault-info.1")],
                           capture_output=True, text=True, env=env, timeout=60)
    assert "authctl-vault-info - show the vault" in shown.stdout
    ran = subprocess.run([prefix / "bin" / "authctl", "--version"], capture_output=True, text=True, env=env)
    assert ran.stdout.startswith("authctl ")
    # Its completion, sourced as the script's hint says, works in bash too.
    sourced = subprocess.run(["bash", "-c", f'source "{prefix}/share/bash-completion/completions/authctl"; COMP_WORDS=(authctl ver); COMP_CWORD=1; _authctl; echo "${{COMPREPLY[@]}}"'],
                             capture_output=True, text=True, env=env, timeout=60)
    assert sourced.stdout.split() == ["version"]
    assert f'source "{prefix}/share/bash-completion/completions/authctl"' in result.stderr
    assert uninstall("--prefix", str(prefix), env=env).returncode == 0
    assert not (tmp_path / "with space").exists()


def test_destdir_stages_the_install_for_packaging(release_bin, tmp_path):
    env = user_env(tmp_path)
    env["DESTDIR"] = str(tmp_path / "stage")
    result = install(release_bin, "--prefix", "/usr", env=env)
    assert result.returncode == 0, result.stderr
    staged = listing(tmp_path / "stage")
    for rel in EXPECTED:
        assert ("usr/" + rel) in staged, rel
    manifest = (tmp_path / "stage" / "usr" / "share" / "authctl" / "manifest").read_text()
    assert "file " in manifest and str(tmp_path) not in manifest.split("\n", 1)[1]  # relative to the prefix
    assert "dir ." not in manifest.splitlines()  # the staging directory is not the install's
    assert "not on PATH" not in result.stderr  # no hints for a staged tree
    assert sorted(p.name for p in tmp_path.iterdir()) == ["home", "stage", "tmp"]


def test_bad_prefixes_are_refused_and_install_nothing(release_bin, tmp_path):
    env = user_env(tmp_path)
    before = listing(tmp_path)
    relative = subprocess.run([INSTALL, "--binary", release_bin, "--prefix", "rel/prefix"], capture_output=True, text=True,
                              env=env, cwd=tmp_path, timeout=60)
    assert relative.returncode == 64 and "must be an absolute path" in relative.stderr
    # A directory that cannot be made (root can write anywhere else, so /proc stands in).
    proc = install(release_bin, "--prefix", "/proc/authctl-test", env=env)
    assert proc.returncode == 1 and "cannot make /proc/authctl-test" in proc.stderr and "nothing was installed" in proc.stderr
    missing = install(str(tmp_path / "no-such-binary"), "--prefix", str(tmp_path / "p"), env=env)
    assert missing.returncode == 1 and "not an executable file" in missing.stderr
    unknown = install(release_bin, "--prefix", str(tmp_path / "p"), "--bogus", env=env)
    assert unknown.returncode == 64 and "unknown argument '--bogus'" in unknown.stderr
    nothing = uninstall("--prefix", str(tmp_path / "never"), env=env)
    assert nothing.returncode == 1 and "no manifest at" in nothing.stderr and "nothing removed" in nothing.stderr
    assert listing(tmp_path) == before


def test_a_prefix_the_user_cannot_write_is_refused_before_anything_is_done(release_bin, tmp_path):
    env = user_env(tmp_path)
    # Root writes through any mode, so the install runs as nobody there, from copies of the script
    # and the binary in a directory nobody can read (pytest's own are private).
    base = pathlib.Path(tempfile.mkdtemp(prefix="authctl-locked-"))
    locked = base / "locked"
    try:
        base.chmod(0o755)
        script, binary = base / "install.sh", base / "authctl"
        shutil.copy(INSTALL, script)
        shutil.copy(release_bin, binary)
        shutil.copy(pathlib.Path(release_bin).parent / "libauthctl-fido2.so", base / "libauthctl-fido2.so")
        locked.mkdir()
        locked.chmod(0o555)
        command = [str(script), "--binary", str(binary), "--prefix", str(locked / "p")]
        if os.geteuid() == 0:
            if shutil.which("setpriv") is None:
                pytest.skip("setpriv is not installed")
            command = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", *command]
            env["TMPDIR"] = "/tmp"
        env["HOME"] = str(locked)
        result = subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)
        assert result.returncode == 1, result.stderr
        assert f"cannot write to {locked}" in result.stderr and "nothing installed" in result.stderr, result.stderr
        assert list(locked.iterdir()) == []
        # The default prefix of a user without a writable home is refused the same way.
        result = subprocess.run(command[:-2], capture_output=True, text=True, env=env, timeout=120)
        assert result.returncode == 1 and "nothing installed" in result.stderr, result.stderr
        assert list(locked.iterdir()) == []
    finally:
        if locked.exists():
            locked.chmod(0o755)
        shutil.rmtree(base)


# --- links planted in the prefix -------------------------------------------------------------

FILES = ["bin/authctl", "share/man/man1/authctl-sign.1", "share/bash-completion/completions/authctl",
         "share/zsh/site-functions/_authctl", "share/authctl/manifest"]


def plant(path: pathlib.Path, kind: str, elsewhere: pathlib.Path) -> pathlib.Path:
    """A symbolic link at `path`: to a directory elsewhere, to a file elsewhere, or to nothing."""
    target = elsewhere / path.name
    if kind == "directory":
        target.mkdir(parents=True)
    elif kind == "file":
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("not authctl's\n")
    if path.exists() or path.is_symlink():
        path.unlink()
    path.symlink_to(target)
    return target


@pytest.mark.parametrize("kind", ["directory", "file", "dangling"])
def test_a_link_where_a_file_goes_is_in_the_way_and_never_written_through(release_bin, tmp_path, kind):
    """Over an earlier install, a link in place of the binary, a page and each completion, then of
    the manifest: the install refuses; --force replaces each link itself, never what it leads to,
    and records every file with its checksum; --uninstall then takes exactly those files away."""
    env = user_env(tmp_path)
    prefix = tmp_path / "p"
    assert install(release_bin, "--prefix", str(prefix), env=env).returncode == 0
    for n, rel in enumerate(FILES):
        if rel != "share/authctl/manifest":
            plant(prefix / rel, kind, tmp_path / "elsewhere" / str(n))
    for step in ("files", "manifest"):
        if step == "manifest":
            plant(prefix / "share" / "authctl" / "manifest", kind, tmp_path / "elsewhere" / "manifest")
        before, elsewhere = listing(prefix), listing(tmp_path / "elsewhere")
        refused = install(release_bin, "--prefix", str(prefix), env=env)
        assert refused.returncode == 1 and "nothing installed" in refused.stderr, refused.stderr
        for rel in FILES if step == "manifest" else FILES[:-1]:
            assert f"in the way: {prefix / rel}, a symbolic link to " in refused.stderr, (rel, refused.stderr)
        assert listing(prefix) == before and listing(tmp_path / "elsewhere") == elsewhere

    forced = install(release_bin, "--prefix", str(prefix), "--force", env=env)
    assert forced.returncode == 0, forced.stderr
    assert listing(tmp_path / "elsewhere") == elsewhere
    for rel in FILES:
        assert not (prefix / rel).is_symlink() and (prefix / rel).is_file(), rel
    assert (prefix / "bin" / "authctl").read_bytes() == pathlib.Path(release_bin).read_bytes()
    lines = [line for line in (prefix / "share" / "authctl" / "manifest").read_text().splitlines() if line.startswith("file ")]
    assert lines and all(re.fullmatch(r"file [0-9a-f]{64} \S.*", line) for line in lines), lines
    removed = uninstall("--prefix", str(prefix), env=env)
    assert removed.returncode == 0 and "kept" not in removed.stderr, removed.stderr
    assert not any(kind[0] == "file" for kind in listing(prefix).values())
    assert listing(tmp_path / "elsewhere") == elsewhere


@pytest.mark.parametrize("rel,kind", [("bin", "directory"), ("bin", "dangling"), ("share/man/man1", "directory"),
                                      ("share", "directory"), ("share/authctl", "directory")])
def test_a_directory_of_the_install_that_is_a_link_is_refused_even_with_force(release_bin, tmp_path, rel, kind):
    env = user_env(tmp_path)
    prefix = tmp_path / "p"
    (prefix / rel).parent.mkdir(parents=True, exist_ok=True)
    plant(prefix / rel, kind, tmp_path / "elsewhere")
    before, elsewhere = listing(prefix), listing(tmp_path / "elsewhere")
    for extra in ((), ("--force",)):
        result = install(release_bin, "--prefix", str(prefix), *extra, env=env)
        assert result.returncode == 1, result.stderr
        assert f"{prefix / rel} is a symbolic link to " in result.stderr and "nothing installed" in result.stderr, result.stderr
        assert listing(prefix) == before and listing(tmp_path / "elsewhere") == elsewhere


@pytest.mark.parametrize("planted", ["pages", "manifest"])
def test_uninstall_follows_no_link_inside_the_prefix(release_bin, tmp_path, planted):
    """Pages moved to another directory of the prefix with a link left in their place, or the
    manifest made a link: nothing the install did not put there is removed (nothing at all)."""
    env = user_env(tmp_path)
    prefix = tmp_path / "p"
    assert install(release_bin, "--prefix", str(prefix), env=env).returncode == 0
    if planted == "pages":
        pages = prefix / "share" / "man" / "man1"
        pages.rename(prefix / "mine")
        pages.symlink_to(prefix / "mine")
    else:
        manifest = prefix / "share" / "authctl" / "manifest"
        manifest.rename(prefix / "share" / "authctl" / "mine")
        manifest.symlink_to(prefix / "share" / "authctl" / "mine")
    before = listing(prefix)
    result = uninstall("--prefix", str(prefix), env=env)
    assert result.returncode == 1 and "is a symbolic link to" in result.stderr and "nothing removed" in result.stderr, result.stderr
    assert listing(prefix) == before


def test_manifest_entries_that_leave_the_prefix_or_lack_a_checksum_lose_nothing(release_bin, tmp_path):
    """An earlier manifest edited to name a file outside the prefix (with its right checksum) does
    not have a new install remove it; a file line without a checksum is kept, and said so."""
    env = user_env(tmp_path)
    prefix = tmp_path / "p"
    outside = tmp_path / "outside"
    outside.write_text("precious\n")
    assert install(release_bin, "--prefix", str(prefix), env=env).returncode == 0
    manifest = prefix / "share" / "authctl" / "manifest"
    digest = hashlib.sha256(outside.read_bytes()).hexdigest()
    manifest.write_text(manifest.read_text() + f"file {digest} ../outside\n")
    again = install(release_bin, "--prefix", str(prefix), env=env)
    assert again.returncode == 0, again.stderr
    assert outside.read_text() == "precious\n"
    assert "'../outside', which is not a path inside the prefix" in again.stderr
    (prefix / "bin" / "mine").write_text("mine\n")
    manifest.write_text(manifest.read_text() + "file  bin/mine\n")
    result = uninstall("--prefix", str(prefix), env=env)
    assert result.returncode == 0
    assert f"kept {prefix}/bin/mine: the manifest records no checksum for it" in result.stderr, result.stderr
    assert [rel for rel, kind in listing(prefix).items() if kind[0] == "file"] == ["bin/mine"]


# --- the Debian package ---------------------------------------------------------------------

pytestdeb = pytest.mark.skipif(shutil.which("dpkg-deb") is None or shutil.which("dpkg-shlibdeps") is None,
                               reason="dpkg-dev is not installed")


@pytest.fixture(scope="module")
def deb(release_bin, tmp_path_factory):
    out = tmp_path_factory.mktemp("deb")
    env = own_environment(out)
    result = subprocess.run([PACKAGE, "--binary", release_bin, "--output", str(out)], capture_output=True, text=True,
                            env=env, timeout=600)
    assert result.returncode == 0, result.stderr
    path = pathlib.Path(result.stdout.strip())
    arch = subprocess.run(["dpkg", "--print-architecture"], capture_output=True, text=True).stdout.strip()
    version = json.loads(subprocess.run([release_bin, "--json", "version"], capture_output=True, text=True).stdout)["version"]
    assert path.name == f"authctl_{version}_{arch}.deb"
    return path


def field(deb_path, name):
    return subprocess.run(["dpkg-deb", "-f", str(deb_path), name], capture_output=True, text=True).stdout.strip()


@pytestdeb
def test_the_deb_holds_the_files_debian_expects(deb):
    contents = subprocess.run(["dpkg-deb", "--contents", str(deb)], capture_output=True, text=True).stdout
    paths = {line.split()[-1].lstrip(".") for line in contents.splitlines()}
    for expected in ["/usr/bin/authctl", "/usr/lib/authctl/libauthctl-fido2.so", "/usr/share/man/man1/authctl.1.gz", "/usr/share/man/man1/authctl-sign.1.gz",
                     "/usr/share/man/man1/authctl-vault-info.1.gz", "/usr/share/man/man1/authctl-device-add.1.gz",
                     "/usr/share/bash-completion/completions/authctl", "/usr/share/zsh/vendor-completions/_authctl",
                     "/usr/share/doc/authctl/copyright", "/usr/share/doc/authctl/changelog.gz"]:
        assert expected in paths, expected
    assert not any("/share/authctl/" in p or "site-functions" in p for p in paths)
    for line in contents.splitlines():
        assert " root/root " in line, line  # --root-owner-group
    library = next(line for line in contents.splitlines() if line.endswith("/libauthctl-fido2.so"))
    assert library.startswith("-rw-r--r-- "), library  # a library, not a program


@pytestdeb
def test_the_debs_depends_come_from_what_the_binary_loads(deb, release_bin):
    depends = field(deb, "Depends")
    names = [re.match(r"\s*([a-z0-9.+-]+)", part).group(1) for part in depends.split(",")]
    for pattern in [r"libcbor\d", r"libsodium\d+", r"libpsl\d+", r"libidn2-\d+", r"libcurl4", r"libssl3|libssl\d", r"libc6"]:
        assert any(re.fullmatch(pattern + r".*", name) for name in names), (pattern, depends)
    # Each library the binary links (every NEEDED entry), found here by the dynamic loader,
    # belongs to a named package.
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[(.*)\]",
                        subprocess.run(["readelf", "-d", "-W", release_bin], capture_output=True, text=True).stdout)
    assert {"libcbor.so.0.8", "libsodium.so.23", "libpsl.so.5", "libidn2.so.0"} <= set(needed), needed
    ldd = subprocess.run(["ldd", release_bin], capture_output=True, text=True).stdout
    for soname in needed:
        path = re.search(rf"^\s*(?:{re.escape(soname)} => )?(\S*{re.escape(soname)}) ", ldd, re.M).group(1)
        # (Under merged /usr, dpkg knows a library by one of its two paths.)
        owners = [subprocess.run(["dpkg-query", "-S", candidate], capture_output=True, text=True).stdout.split(":")[0]
                  for candidate in (path, os.path.realpath(path))]
        assert any(owner in names for owner in owners), (soname, owners, depends)
    curl = re.search(r"libcurl4 \(>= ([^)]+)\)", depends)
    assert curl, depends
    # libmicrohttpd, which `authctl serve` loads with dlopen, at the version of the symbols it resolves.
    assert re.search(r"libmicrohttpd12 \(>= 0\.9\.\d+\)", depends), depends
    # libpq, which an account store on PostgreSQL loads with dlopen.
    assert re.search(r"libpq5 \(>= [^)]+\)", depends), depends
    assert field(deb, "Recommends") == "publicsuffix"
    # Every dependency is satisfiable here: apt would install it.
    simulated = subprocess.run(["apt-get", "install", "-s", "--no-install-recommends", str(deb)], capture_output=True,
                               text=True, timeout=300)
    assert simulated.returncode == 0, simulated.stdout + simulated.stderr
    assert "Inst authctl" in simulated.stdout


@pytestdeb
@pytest.mark.skipif(shutil.which("lintian") is None, reason="lintian is not installed")
def test_lintian_finds_no_error_and_no_warning(deb):
    result = subprocess.run(["lintian", "--pedantic", str(deb)], capture_output=True, text=True, timeout=600)
    tags = [line for line in result.stdout.splitlines() if re.match(r"[EWIPX]: ", line)]
    assert result.returncode == 0, result.stdout + result.stderr
    assert not [t for t in tags if t.startswith(("E:", "W:"))], "\n".join(tags)


@pytestdeb
def test_the_extracted_deb_runs_and_documents_itself(deb, release_bin, tmp_path):
    subprocess.run(["dpkg-deb", "-x", str(deb), str(tmp_path)], check=True)
    binary = tmp_path / "usr" / "bin" / "authctl"
    result = subprocess.run([binary, "--version"], capture_output=True, text=True)
    assert result.returncode == 0 and result.stdout == subprocess.run([release_bin, "--version"], capture_output=True, text=True).stdout
    symbols = subprocess.run(["readelf", "-S", "-W", str(binary)], capture_output=True, text=True).stdout
    assert " .symtab " not in symbols and " .comment " not in symbols  # stripped as dh_strip strips
    library = tmp_path / "usr" / "lib" / "authctl" / "libauthctl-fido2.so"
    sections = subprocess.run(["readelf", "-S", "-W", str(library)], capture_output=True, text=True).stdout
    assert " .symtab " not in sections and " .comment " not in sections
    needed, dynamic = dynamic_section(library)
    assert needed == ["libc.so.6"] and defines(dynamic, "fido_dev_open") and defines(dynamic, "fido_dev_info_manifest")
    copyright = (tmp_path / "usr" / "share" / "doc" / "authctl" / "copyright").read_text()
    assert copyright.startswith("Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/")
    assert "License: Apache-2.0" in copyright and "/usr/share/common-licenses/Apache-2.0" in copyright
    changelog = subprocess.run(["zcat", str(tmp_path / "usr" / "share" / "doc" / "authctl" / "changelog.gz")],
                               capture_output=True, text=True).stdout
    assert changelog.startswith(f"authctl ({field(deb, 'Version')}) ")
    page = tmp_path / "usr" / "share" / "man" / "man1" / "authctl-sign.1.gz"
    shown = subprocess.run(["man", "--warnings", "-l", str(page)], capture_output=True, text=True, timeout=60)
    assert shown.stderr == "" and "authctl-sign - sign in" in shown.stdout


# --- where the Swift toolchain is not -------------------------------------------------------

def toolchain_library_dir(binary: str) -> str | None:
    """The directory `binary` loads libswiftCore.so from, if it loads it (the toolchain's)."""
    ldd = subprocess.run(["ldd", binary], capture_output=True, text=True).stdout
    found = re.search(r"libswiftCore\.so => (\S+)", ldd)
    return os.path.dirname(found.group(1)) if found else None


@pytest.fixture(scope="session")
def toolchain() -> str:
    """The Swift toolchain's directory (/opt/swift for /opt/swift/usr/bin/swift), which the tests
    below hide under an empty tmpfs in a mount namespace of their own."""
    swift = shutil.which("swift")
    if swift is None:
        pytest.skip("no Swift toolchain on PATH")
    usr = pathlib.Path(swift).resolve().parents[1]
    top = usr.parent if usr.name == "usr" else usr
    if str(top) in ("/", "/usr"):
        pytest.skip(f"the toolchain is installed in {top}, which cannot be hidden")
    probe = subprocess.run(["unshare", "--mount", "--propagation", "private", "true"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip("no mount namespace here (unshare --mount needs CAP_SYS_ADMIN)")
    return str(top)


def without_toolchain(toolchain: str, command: list, **kw) -> subprocess.CompletedProcess:
    """`command` run where the toolchain's directory is an empty tmpfs, as on a machine without it."""
    hide = 'mount -t tmpfs authctl-no-toolchain "$0" && exec "$@"'
    return subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c", hide, toolchain, *command],
                          capture_output=True, text=True, timeout=120, **kw)


def passkey_round_trip(binary: pathlib.Path, toolchain: str, scratch: pathlib.Path):
    """--version, a vault made, a passkey registered and used to sign in, each command run with the
    toolchain hidden, and judged by py_webauthn."""
    from webauthn import (generate_authentication_options, generate_registration_options, options_to_json,
                          verify_authentication_response, verify_registration_response)
    from webauthn.helpers.structs import PublicKeyCredentialDescriptor
    env = own_environment(scratch)
    env.update(AUTHCTL_VAULT=str(scratch / "vault"), AUTHCTL_PASSPHRASE=PASSPHRASE, AUTHCTL_PIN=PIN)
    env.pop("LD_LIBRARY_PATH", None)
    version = without_toolchain(toolchain, [binary, "--version"], env=env)
    assert version.returncode == 0 and version.stdout.startswith("authctl "), (version.returncode, version.stderr)
    made = without_toolchain(toolchain, [binary, "init", "--kdf", "min"], env=env)
    assert made.returncode == 0, made.stderr
    options = generate_registration_options(rp_id="example.com", rp_name="Example", user_name="alice", user_id=b"alice")
    registered = without_toolchain(toolchain, [binary, "register", "--origin", "https://example.com", "--options", "-"],
                                   env=env, input=options_to_json(options))
    assert registered.returncode == 0, registered.stderr
    verified = verify_registration_response(credential=json.loads(registered.stdout), expected_challenge=options.challenge,
                                            expected_rp_id="example.com", expected_origin="https://example.com")
    request = generate_authentication_options(rp_id="example.com",
                                              allow_credentials=[PublicKeyCredentialDescriptor(id=verified.credential_id)])
    signed = without_toolchain(toolchain, [binary, "sign", "--origin", "https://example.com", "--options", "-"],
                               env=env, input=options_to_json(request))
    assert signed.returncode == 0, signed.stderr
    verify_authentication_response(credential=json.loads(signed.stdout), expected_challenge=request.challenge,
                                   expected_rp_id="example.com", expected_origin="https://example.com",
                                   credential_public_key=verified.credential_public_key, credential_current_sign_count=0)


def test_what_install_sh_installs_runs_without_the_swift_toolchain(installed, toolchain, tmp_path):
    prefix, _, _ = installed
    # The toolchain is hidden indeed: the debug binary, which loads the runtime from it, cannot start.
    if toolchain_library_dir(BIN):
        assert without_toolchain(toolchain, [BIN, "--version"]).returncode == 127
    passkey_round_trip(prefix / "bin" / "authctl", toolchain, tmp_path)
    # The LD_PRELOAD library loads into libfido2's tools there too, and reaches the installed
    # authctl's security key: one that needs the toolchain's Swift runtime stops every program it
    # is preloaded into (exit 127, checked).
    if shutil.which("fido2-token"):
        fido2_tools_reach_the_installed_key(prefix, toolchain, tmp_path)


def fido2_tools_reach_the_installed_key(prefix: pathlib.Path, toolchain: str, scratch: pathlib.Path):
    """`authctl ctap serve` of the installed binary on a Unix socket, and fido2-token -L and -I
    with the installed library preloaded, each run where the toolchain is not."""
    import signal
    library = prefix / "lib" / "authctl" / "libauthctl-fido2.so"
    directory = tempfile.mkdtemp(prefix="authctl-installed-", dir="/tmp")  # a socket path within 107 bytes
    env = own_environment(scratch)
    hide = 'mount -t tmpfs authctl-no-toolchain "$0" && exec "$@"'
    key = subprocess.Popen(["unshare", "--mount", "--propagation", "private", "sh", "-c", hide, toolchain,
                            str(prefix / "bin" / "authctl"), "ctap", "serve", "--socket", f"{directory}/key.sock"],
                           env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert key.stdout.readline() == f"ctap unix {directory}/key.sock\n", key.stderr.read() if key.poll() is not None else ""
        tool = ["env", f"LD_PRELOAD={library}", f"AUTHCTL_CTAP=unix:{directory}/key.sock,bogus", "fido2-token"]
        listed = without_toolchain(toolchain, [*tool, "-L"], env=env)
        assert listed.returncode == 0 and listed.stdout.startswith(f"authctl:unix:{directory}/key.sock: "), listed.stdout + listed.stderr
        assert listed.stderr == "libauthctl-fido2: AUTHCTL_CTAP: the entry 'bogus' is left out: not unix:/ABSOLUTE/PATH or udp:HOST:PORT\n", listed.stderr
        shown = without_toolchain(toolchain, [*tool, "-I", f"authctl:unix:{directory}/key.sock"], env=env)
        assert shown.returncode == 0 and "version strings: U2F_V2, FIDO_2_0, FIDO_2_1" in shown.stdout, shown.stdout + shown.stderr
    finally:
        key.send_signal(signal.SIGTERM)
        try:
            assert key.wait(timeout=60) == 0, key.stderr.read()
        finally:
            if key.poll() is None:
                key.kill()
            shutil.rmtree(directory, ignore_errors=True)


@pytestdeb
def test_what_the_deb_holds_runs_without_the_swift_toolchain(deb, toolchain, tmp_path):
    subprocess.run(["dpkg-deb", "-x", str(deb), str(tmp_path / "root")], check=True)
    binary = tmp_path / "root" / "usr" / "bin" / "authctl"
    needed = subprocess.run(["readelf", "-d", "-W", str(binary)], capture_output=True, text=True).stdout
    assert "libswift" not in needed and "RUNPATH" not in needed and "RPATH" not in needed, needed
    passkey_round_trip(binary, toolchain, tmp_path / "run")


@pytest.mark.parametrize("tool", ["install", "package"])
def test_a_binary_that_loads_the_swift_runtime_from_the_toolchain_is_refused(tool, tmp_path):
    """`swift build` links the toolchain's shared Swift runtime (a run path into the toolchain):
    such a binary runs here and exits 127 anywhere else, so neither script ships it."""
    where = toolchain_library_dir(BIN)
    if where is None:
        pytest.skip(f"{BIN} links the Swift runtime in")
    env = user_env(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    before = listing(tmp_path)
    if tool == "install":
        result = install(BIN, "--prefix", str(tmp_path / "p"), env=env)
    else:
        if shutil.which("dpkg-deb") is None:
            pytest.skip("dpkg-dev is not installed")
        result = subprocess.run([PACKAGE, "--binary", BIN, "--output", str(out)], capture_output=True, text=True,
                                env=env, timeout=600)
    assert result.returncode == 65, result.stderr
    assert f"loads the Swift runtime as shared libraries of the toolchain it was built with (libswiftCore.so from {where}" in result.stderr
    assert "scripts/build-release.sh" in result.stderr and "--static-swift-stdlib" in result.stderr
    assert listing(tmp_path) == before


@pytest.mark.parametrize("what", ["script", "another program"])
def test_a_binary_that_is_not_authctl_is_refused(release_bin, what, tmp_path):
    """A wrapper script that runs authctl from where it is (installed, it would run nothing once
    that is gone), or a program that is not authctl at all."""
    env = user_env(tmp_path)
    if what == "script":
        binary = tmp_path / "authctl"
        binary.write_text(f'#!/bin/sh\nexec "{release_bin}" "$@"\n')
        binary.chmod(0o755)
        expected = "is not an ELF executable"
    else:
        binary = pathlib.Path(shutil.which("true"))
        expected = "is not authctl: its --version says 'true (GNU coreutils)"
    before = listing(tmp_path)
    result = install(str(binary), "--prefix", str(tmp_path / "p"), env=env)
    assert result.returncode == 65 and expected in result.stderr and "nothing installed" in result.stderr, result.stderr
    assert listing(tmp_path) == before
