"""The man pages `authctl manpages` makes: `--help` and the rendered page say the same, because
both come from the command declarations; every page renders without a warning; authctl.1 lists
every variable the sources read and the real error table."""
import json
import os
import pathlib
import re
import shutil
import stat
import subprocess

import pytest

from conftest import BIN, ROOT, own_environment

pytestmark = pytest.mark.skipif(shutil.which("man") is None or shutil.which("groff") is None,
                                reason="man-db and groff are not installed")


def run(*args, env=None, cwd=None):
    return subprocess.run([BIN, *args], capture_output=True, text=True, timeout=60, env=env, cwd=cwd)


def normalized(text: str) -> str:
    return " ".join(text.split())


def rendered(page: pathlib.Path) -> str:
    """The page as man shows it (no pager, no formatting: stdout is a pipe)."""
    env = dict(os.environ, MANWIDTH="100", LC_ALL="C.UTF-8")
    env.pop("MANPAGER", None)
    env.pop("PAGER", None)
    result = subprocess.run(["man", "-l", str(page)], capture_output=True, text=True, env=env, timeout=60)
    assert result.returncode == 0 and result.stderr == "", result.stderr
    return result.stdout


def help_sections(text: str) -> dict:
    """`--help` taken apart: usage, the prose, each table's (left, right) rows, the examples."""
    lines = text.splitlines()
    out = {"usage": None, "prose": [], "tables": {}, "examples": []}
    section = None
    rows = None
    for i, line in enumerate(lines):
        if line.startswith("usage: "):
            out["usage"] = line[len("usage: "):]
            section = "prose"
            continue
        header = re.fullmatch(r"(commands|arguments|options|global options \(before or after the command\)|examples):", line)
        if header:
            section = header.group(1)
            rows = out["tables"].setdefault(section, []) if section != "examples" else None
            continue
        if not line.strip():
            if section not in ("prose", None):
                section = "after"
            continue
        if section == "prose":
            out["prose"].append(line)
        elif section == "examples":
            out["examples"].append(line.strip())
        elif rows is not None and section not in ("after", None):
            match = re.fullmatch(r"  (\S.*?)(?: {2,}(\S.*))?", line)
            if match:
                rows.append([match.group(1), match.group(2)])
            else:  # a long left column: its right column is the next line, indented
                assert rows and rows[-1][1] is None, line
                rows[-1][1] = line.strip()
    return out


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    directory = tmp_path_factory.mktemp("man1")
    result = run("manpages", "--output", str(directory))
    assert result.returncode == 0, result.stderr
    written = result.stdout.split("\n")[:-1]
    assert written == [str(directory / p.name) for p in map(pathlib.Path, written)]
    return directory


def command_paths() -> list[list[str]]:
    """Every command path, read from `authctl help`: the leaves it lists and the groups they are in."""
    top = help_sections(run("help").stdout)
    leaves = [left.split() for left, _ in top["tables"]["commands"]]
    groups = {tuple(leaf[:1]) for leaf in leaves if len(leaf) > 1}
    return [[]] + sorted([list(g) for g in groups]) + leaves


def test_there_is_one_page_per_command_and_no_other(pages):
    expected = {"-".join(["authctl", *path]) + ".1" for path in command_paths()}
    assert {p.name for p in pages.iterdir()} == expected
    for name in ("authctl.1", "authctl-sign.1", "authctl-vault.1", "authctl-vault-info.1", "authctl-device-add.1", "authctl-manpages.1"):
        assert name in expected


@pytest.mark.parametrize("path", command_paths(), ids=lambda p: " ".join(p) or "authctl")
def test_help_and_the_man_page_say_the_same(pages, path):
    help_text = run(*path, "--help").stdout
    sections = help_sections(help_text)
    page = normalized(rendered(pages / ("-".join(["authctl", *path]) + ".1")))
    name = "-".join(["authctl", *path])
    synopsis = page.split(" SYNOPSIS ", 1)[1].split(" DESCRIPTION ", 1)[0]
    assert synopsis == sections["usage"]
    abstract = sections["prose"][0] if path else help_text.splitlines()[0].split(" — ", 1)[1]
    assert f"NAME {name} - {abstract} SYNOPSIS" in page
    discussion = sections["prose"][1:] if path else sections["prose"]
    assert normalized(" ".join(discussion)) in page
    assert sections["tables"], help_text
    for table, rows in sections["tables"].items():
        for left, right in rows:
            # The tag, then its help: each row of --help is one entry of the page.
            assert normalized(f"{left} {right}") in page, (table, left, right)
    for example in sections["examples"]:
        assert normalized(example) in page, example


def test_every_page_renders_without_warnings(pages):
    for page in sorted(pages.iterdir()):
        for device in ([], ["-Tutf8"]):
            result = subprocess.run(["groff", "-man", "-ww", "-z", *device, str(page)], capture_output=True, text=True, timeout=60)
            assert (result.returncode, result.stderr) == (0, ""), f"{page.name}: {result.stderr}"
        result = subprocess.run(["man", "--warnings", "-l", str(page)], capture_output=True, text=True, timeout=60,
                                env=dict(os.environ, MANWIDTH="80"))
        assert (result.returncode, result.stderr) == (0, ""), f"{page.name}: {result.stderr}"
        if shutil.which("lexgrog"):
            result = subprocess.run(["lexgrog", str(page)], capture_output=True, text=True, timeout=60)
            name = page.name[:-2]
            assert result.returncode == 0 and f'"{name} - ' in result.stdout, result.stdout + result.stderr


def section(page_text: str, title: str) -> str:
    match = re.search(rf"^{title}\n(.*?)(?=^[A-Z][A-Z ]+\n)", page_text, re.S | re.M)
    assert match, title
    return normalized(match.group(1))


def test_the_program_page_lists_every_variable_the_sources_read(pages):
    text = rendered(pages / "authctl.1")
    environment = section(text, "ENVIRONMENT")
    # The fuzz harness (Sources/authctl-fuzz, docs/fuzzing.md) is not the program this page is of.
    sources = " ".join(p.read_text() for p in (ROOT / "Sources").rglob("*.swift") if "authctl-fuzz" not in p.parts)
    names = set(re.findall(r"\bAUTHCTL_[A-Z_]+\b", sources)) - {"AUTHCTL_COMMIT"}  # the build's, not the CLI's
    assert len(names) >= 9, names
    for name in sorted(names | {"XDG_DATA_HOME", "HOME", "NO_PROXY", "OPENSSL_CONF"}):
        assert re.search(rf"(^| ){name} ", environment), name
    # And nothing the sources do not read.
    for listed in re.findall(r"(?:^| )(AUTHCTL_[A-Z_]+) ", environment):
        assert listed in names, listed


def test_the_program_page_has_the_real_error_table(pages):
    text = rendered(pages / "authctl.1")
    exit_status = section(text, "EXIT STATUS")
    rows = [line.split("|") for line in (ROOT / "docs" / "errors.md").read_text().splitlines()
            if re.match(r"\| `[a-zA-Z]+` \| \d+ \|", line)]
    assert len(rows) >= 20
    for row in rows:
        name, code = row[1].strip().strip("`"), row[2].strip()
        assert f" {code} {name}: " in f" {exit_status}", (code, name)
    assert exit_status.count(": ") >= len(rows)
    for title in ("FILES", "SEE ALSO", "COMMANDS", "OPTIONS", "EXAMPLES"):
        assert f"\n{title}\n" in text, title


def test_pages_are_the_same_each_time_and_carry_the_version(pages, tmp_path):
    again = tmp_path / "again"
    assert run("manpages", "--output", str(again)).returncode == 0
    for page in pages.iterdir():
        assert (again / page.name).read_bytes() == page.read_bytes(), page.name
    version = json.loads(run("--json", "version").stdout)["version"]
    header = (pages / "authctl-sign.1").read_text().splitlines()[1]
    assert header.startswith('.TH "AUTHCTL\\-SIGN" "1" "') and f'"authctl {version}"' in header


def test_manpages_prints_one_page_or_writes_them(tmp_path):
    env = own_environment(tmp_path)
    sign = run("manpages", "sign", env=env)
    assert sign.returncode == 0
    assert sign.stdout.splitlines()[1].startswith('.TH "AUTHCTL\\-SIGN"')
    assert run("manpages", env=env).stdout.splitlines()[1].startswith('.TH "AUTHCTL"')
    # A group and what is below it; --json lists the paths; the pages are readable by all.
    out = tmp_path / "out"
    result = run("--json", "manpages", "vault", "--output", str(out), env=env)
    assert result.returncode == 0, result.stderr
    written = json.loads(result.stdout)
    assert [pathlib.Path(p).name for p in written] == ["authctl-vault.1", "authctl-vault-info.1", "authctl-vault-check.1",
                                                       "authctl-vault-compact.1", "authctl-vault-passwd.1"]
    for p in written:
        assert stat.S_IMODE(os.stat(p).st_mode) == 0o644
    # A page is replaced whole; no temporary file stays behind.
    (out / "authctl-vault.1").write_text("stale")
    assert run("manpages", "vault", "--output", str(out), env=env).returncode == 0
    assert (out / "authctl-vault.1").read_text().startswith(".\\\"")
    assert sorted(p.name for p in out.iterdir()) == sorted(pathlib.Path(p).name for p in written)
    # Relative directories work from the current directory.
    assert run("manpages", "list", "--output", "rel", env=env, cwd=tmp_path).stdout == "rel/authctl-list.1\n"


def test_manpages_makes_a_missing_output_directory_with_its_parents(tmp_path):
    deeper = tmp_path / "missing" / "deeper"
    result = run("manpages", "list", "--output", str(deeper), env=own_environment(tmp_path))
    assert result.returncode == 0 and result.stdout == f"{deeper}/authctl-list.1\n"
    assert '\n.TH "AUTHCTL\\-LIST" "1"' in (deeper / "authctl-list.1").read_text()


def test_manpages_refuses_what_it_cannot_do(tmp_path):
    env = own_environment(tmp_path)
    result = run("manpages", "frobnicate", env=env)
    assert result.returncode == 64 and "no command 'frobnicate'" in result.stderr and result.stdout == ""
    (tmp_path / "file").write_text("x")
    result = run("manpages", "--output", str(tmp_path / "file" / "deeper"), env=env)
    assert result.returncode == 74 and "cannot make" in result.stderr and result.stdout == ""
    result = run("manpages", "--output", str(tmp_path / "file"), env=env)
    assert result.returncode == 74 and "not a directory" in result.stderr
    result = run("manpages", "--output", "", env=env)
    assert result.returncode == 64
