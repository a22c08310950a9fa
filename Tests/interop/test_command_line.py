"""The command line parses like one: global options before or after the command, `--` ends
options, every command has --help (the same text as `authctl help COMMAND`), --version, unknown
names get the nearest known one, and shell completion comes from the same declarations."""
import json
import os
import re
import shutil
import subprocess

import pytest

from conftest import BIN, ROOT

ORIGIN = "https://example.com"


def expect_usage(result, *fragments):
    assert (result.code, result.stdout) == (64, ""), result.stderr
    assert result.stderr.startswith("authctl: error: usage: "), result.stderr
    for fragment in fragments:
        assert fragment in result.stderr, result.stderr


def test_global_options_work_before_and_after_the_command(authctl):
    made = authctl.run("register", "--origin", ORIGIN).json["id"]
    vault = str(authctl.vault)
    elsewhere = {"AUTHCTL_VAULT": None}
    for args in (["--vault", vault, "list", "--json"], ["list", "--vault", vault, "--json"],
                 ["--json", "list", f"--vault={vault}"], ["list", "--json", "--vault", vault]):
        listing = authctl.run(*args, env=elsewhere).json
        assert [c["id"] for c in listing["credentials"]] == [made], args
    for args in (["vault", "--vault", vault, "info"], ["--vault", vault, "vault", "info"], ["vault", "info", "--vault", vault]):
        result = authctl.run(*args, env=elsewhere)
        assert result.code == 0 and f"path: {vault}" in result.stdout, (args, result.stderr)
    # A value given before the command is not mistaken for the command.
    result = authctl.run("--vault", vault, "list", env=elsewhere)
    assert result.code == 0 and made in result.stdout


def test_double_dash_ends_options_so_ids_may_start_with_a_dash(authctl):
    # Credential ids are random base64url: register until one starts with '-' (1 in 64 does).
    script = f"""
    for i in $(seq 1 1500); do
      id=$("{BIN}" register --origin {ORIGIN} --user-id "$(printf 'u%04d' $i | base64 | tr -d '=')" \\
           --user-verification discouraged | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
      case "$id" in -*) echo "$id"; exit 0;; esac
    done
    exit 1
    """
    found = subprocess.run(["bash", "-c", script], env=authctl.env, capture_output=True, text=True, timeout=300)
    assert found.returncode == 0, found.stderr
    dashed = found.stdout.strip()
    assert dashed.startswith("-")

    # A single dash starts no option: where the command takes an argument, the word is one.
    signed = authctl.run("sign", "--origin", ORIGIN, "--user-verification", "discouraged", "--", dashed).json
    assert signed["id"] == dashed
    assert authctl.run("sign", "--origin", ORIGIN, dashed, "--user-verification", "discouraged").json["id"] == dashed
    # A long option mistyped with one dash is still caught, and so is a dash word where no argument is taken.
    expect_usage(authctl.run("sign", "-origin", ORIGIN), "did you mean '--origin'?")
    expect_usage(authctl.run("list", dashed), "after '--'")
    # An option that takes a value takes the next word, dash or not.
    assert authctl.run("sign", "--origin", ORIGIN, "--credential", dashed, "--user-verification", "discouraged").json["id"] == dashed
    assert authctl.run("sign", "--origin", ORIGIN, f"--credential={dashed}", "--user-verification", "discouraged").json["id"] == dashed
    # After `--`, even --help is an argument.
    result = authctl.run("sign", "--origin", ORIGIN, "--", "--help")
    assert result.code == 65 and "not unpadded base64url" in result.stderr
    assert authctl.run("delete", "--", dashed).code == 0
    assert dashed not in [c["id"] for c in authctl.listing()]
    result = authctl.run("delete", "--", dashed)
    assert result.code == 13 and "notHandled" in result.stderr


def test_an_id_that_starts_with_two_dashes_is_an_id_where_one_is_taken(authctl):
    # 1 id in 4,096 starts with '--'; as `list` prints it, it must work without '--' before it.
    made = authctl.run("register", "--origin", ORIGIN, "--user-verification", "discouraged").json["id"]
    ghost = "--" + made[2:]  # a well-formed id, as long as the one made, that no passkey has
    for args in (["delete", ghost], ["credential", "show", ghost], ["sign", "--origin", ORIGIN, ghost]):
        result = authctl.run(*args)
        assert result.code == 13 and "notHandled" in result.stderr, (args, result.stderr)
    # Not an id: a mistyped option (near a name), a short word, a word with '=', or where no id is taken.
    expect_usage(authctl.run("delete", "--vaultt", "x"), "did you mean '--vault'?")
    expect_usage(authctl.run("delete", "--abcdef"), "unknown option")
    expect_usage(authctl.run("delete", "--" + made[2:] + "=x"), "unknown option")
    expect_usage(authctl.run("list", ghost), "unknown option")
    assert authctl.run("credential", "show", made).code == 0


@pytest.mark.parametrize("path", [["sign"], ["register"], ["init"], ["list"], ["delete"], ["vault"], ["vault", "passwd"],
                                  ["biometry", "enroll"], ["bench", "vault"], ["completion"], ["faults"]])
def test_every_command_has_help_and_help_command_says_the_same(authctl, path):
    direct = authctl.run(*path, "--help")
    assert direct.code == 0 and direct.stderr == "", direct.stderr
    assert direct.stdout.startswith("usage: authctl " + " ".join(path))
    assert authctl.run("help", *path).stdout == direct.stdout
    assert authctl.run(*path, "-h").stdout == direct.stdout
    assert authctl.run("--help", *path).stdout == direct.stdout


def test_help_lists_what_the_command_declares(authctl):
    text = authctl.run("sign", "--help").stdout
    for option in ("--origin URL", "--options FILE", "--credential ID", "--user NAME", "--allow ID", "--fault NAME",
                   "--user-action approve|cancel|timeout|wrong-pin", "--vault DIR", "--pin-file FILE", "--json"):
        assert option in text, option
    assert "usage: authctl sign --origin URL [OPTIONS] [CREDENTIAL_ID]" in text
    top = authctl.run("help").stdout
    assert authctl.run().stdout == top and authctl.run("--help").stdout == top
    for command in ("init", "register", "sign", "list", "delete", "vault info", "vault passwd", "biometry enroll",
                    "faults", "completion", "bench vault"):
        assert f"\n  {command} " in top, command


def test_version(authctl):
    """The version and the commit the binary was built from; scripts/test.sh exports the commit
    its build was given (scripts/build-env.sh), which the binary must name exactly."""
    lines = set()
    for args in (["--version"], ["version"], ["list", "--version"]):
        result = authctl.run(*args)
        assert (result.code, result.stderr) == (0, "")
        lines.add(result.stdout)
    assert len(lines) == 1
    match = re.fullmatch(r"authctl (\d+\.\d+\.\d+) \(commit ([0-9a-f]{12}(?:-dirty)?|unknown)\)\n", lines.pop())
    assert match, "version line"
    as_json = json.loads(authctl.run("--json", "version").stdout)
    assert as_json == {"version": match[1], "commit": match[2]}
    if os.environ.get("AUTHCTL_COMMIT"):
        assert match[2] == os.environ["AUTHCTL_COMMIT"]


def test_unknown_names_get_the_nearest_known_one(authctl):
    expect_usage(authctl.run("regster", "--origin", ORIGIN), "unknown command 'regster'", "did you mean 'register'?")
    expect_usage(authctl.run("register", "--orign", ORIGIN), "unknown option '--orign'", "did you mean '--origin'?")
    expect_usage(authctl.run("vault", "inf"), "did you mean 'info'?")
    expect_usage(authctl.run("init", "--kdf", "minn"), "--kdf must be one of", "did you mean 'min'?")
    expect_usage(authctl.run("vault", "--kdf", "min", "passwd"), "--kdf belongs to 'authctl vault passwd'")
    expect_usage(authctl.run("register"), "--origin URL is required")
    expect_usage(authctl.run("vault"), "needs one of: info, check, compact, passwd")
    expect_usage(authctl.run("list", "--json=yes"), "--json is a flag")
    expect_usage(authctl.run("list", "extra"), "unexpected argument 'extra'")
    expect_usage(authctl.run("register", "--origin"), "--origin needs a value")
    expect_usage(authctl.run("register", "--origin", ORIGIN, "--origin", ORIGIN), "given more than once")
    result = authctl.run("--json", "frobnicate")
    assert result.code == 64 and json.loads(result.stderr)["error"] == "usage"


def complete(script: str, words: list[str]) -> list[str]:
    line = " ".join(words)
    probe = f"""{script}
COMP_WORDS=({line}); COMP_CWORD=$(( ${{#COMP_WORDS[@]}} - 1 ))
[[ "{line}" == *" " ]] && COMP_WORDS+=("") && COMP_CWORD=${{#COMP_WORDS[@]}}-1
_authctl; printf '%s\\n' "${{COMPREPLY[@]}}"
"""
    result = subprocess.run(["bash", "-c", probe], capture_output=True, text=True, timeout=30)
    assert result.returncode == 0, result.stderr
    return sorted(result.stdout.split())


def test_bash_completion_knows_commands_options_and_values(authctl):
    script = authctl.run("completion", "bash").stdout
    assert "complete -o default -F _authctl authctl" in script
    assert complete(script, ["authctl", "re"]) == ["register"]
    assert complete(script, ["authctl", "vault", "p"]) == ["passwd"]
    assert complete(script, ["authctl", "--vault", "/tmp", "vault", "c"]) == ["check", "compact"]
    assert complete(script, ["authctl", "sign", "--cr"]) == ["--credential"]
    assert complete(script, ["authctl", "init", "--kdf", "m"]) == ["min", "moderate"]
    assert complete(script, ["authctl", "sign", "--origin", "https://x", "--user-action", "w"]) == ["wrong-pin"]
    assert "--passphrase-file" in complete(script, ["authctl", "register", "--pa"])
    assert complete(script, ["authctl", "completion", "z"]) == ["zsh"]
    # `--name=value`: bash splits the word at "=", the value is still completed.
    assert complete(script, ["authctl", "init", "--kdf", "=", "m"]) == ["min", "moderate"]
    assert complete(script, ["authctl", "sign", "--user-action", "="]) == ["approve", "cancel", "timeout", "wrong-pin"]
    assert complete(script, ["authctl", "--vault", "=", "/tmp", "vault", "i"]) == ["info"]
    assert complete(script, ["authctl", "help", "va"]) == ["vault"]
    assert "--origin" not in complete(script, ["authctl", "sign", "--", "--o"])


@pytest.mark.skipif(shutil.which("zsh") is None, reason="zsh is not installed")
def test_zsh_completion_completes_in_a_real_zsh(authctl, tmp_path):
    script = authctl.run("completion", "zsh").stdout
    assert script.startswith("#compdef authctl")
    path = tmp_path / "_authctl"
    path.write_text(script)
    assert subprocess.run(["zsh", "-n", str(path)], capture_output=True).returncode == 0

    def zsh_complete(line):
        result = subprocess.run(["zsh", str(ROOT / "Tests" / "interop" / "zsh_complete.zsh"), str(path), line],
                                capture_output=True, text=True, timeout=60)
        assert "@@ERROR" not in result.stdout, result.stdout
        return sorted(set(" ".join(result.stdout.split("\n")).split()))

    assert zsh_complete("authctl re") == ["register"]
    assert zsh_complete("authctl vault ") == ["check", "compact", "info", "passwd"]
    assert zsh_complete("authctl --vault /tmp vault c") == ["check", "compact"]
    assert zsh_complete("authctl init --kdf s") == ["sensitive"]
    assert zsh_complete("authctl sign --user-action=w") == ["wrong-pin"]
    assert zsh_complete("authctl list --r") == ["--rp-id"]
    assert zsh_complete("authctl completion z") == ["zsh"]
    assert zsh_complete("authctl help va") == ["vault"]


def test_streams_and_exit_codes_stay_as_documented(authctl):
    result = authctl.run("help")
    assert result.code == 0 and result.stdout and result.stderr == ""
    result = authctl.run("faults")
    assert result.code == 0 and "bad-signature" in result.stdout and result.stderr == ""


def test_credential_ids_are_strict_unpadded_base64url(authctl):
    """A credential id typed on the command line is what `list` prints and a response's `id`
    carries: unpadded base64url. The same id with `=` padding, or in standard base64 (`+`, `/`),
    was accepted; now each is badInput naming the character, wherever an id is typed."""
    made = authctl.run("register", "--origin", "https://example.com", "--user-verification", "discouraged").json
    while made["id"].startswith("-"):  # 1 in 64: it would read as an option where `--` is not used below
        assert authctl.run("delete", "--", made["id"]).code == 0
        made = authctl.run("register", "--origin", "https://example.com", "--user-verification", "discouraged").json
    good = made["id"]
    assert len(good) % 4
    variants = [good + "=" * (-len(good) % 4), "A+" + good[2:], "A/" + good[2:], good + " "]
    for bad in variants:
        for args in (["credential", "show", "--", bad], ["delete", "--", bad],
                     ["sign", "--origin", "https://example.com", "--user-verification", "discouraged", "--credential", bad],
                     ["sign", "--origin", "https://example.com", "--user-verification", "discouraged", "--allow", bad],
                     ["register", "--origin", "https://example.com", "--exclude", bad]):
            result = authctl.run(*args)
            assert result.code == 65, (args, result.stderr)
            assert "is not unpadded base64url" in result.stderr and "badInput" in result.stderr, result.stderr
    assert authctl.run("credential", "show", "--", good).code == 0
    assert authctl.run("sign", "--origin", "https://example.com", "--user-verification", "discouraged", "--credential", good).code == 0
    assert [c["id"] for c in authctl.listing()] == [good]  # nothing was deleted or added


def test_huge_input_is_echoed_cut_in_errors(authctl):
    """An unknown credential id, a device name or a malformed value echoed in an error is cut to
    64 characters with an ellipsis and its whole length: 100 KB of input (near the kernel's limit
    for one argument) made a 100 KB error line."""
    huge = "A" * 100_000  # valid base64url: 75,000 bytes that name no passkey
    cases = [
        (["credential", "show", "--", huge], 13, "… (75000 bytes)"),
        (["delete", "--", huge], 13, "… (75000 bytes)"),
        (["credential", "show", "--", huge + "="], 65, "… (100001 characters)"),
        (["--device", "d" * 100_000, "list"], 64, "… (100000 characters)"),
        (["register", "--origin", "https://example.com", "--challenge", "*" * 100_000], 65, "… (100000 characters)"),
    ]
    for args, code, tail in cases:
        for json_flag in ([], ["--json"]):
            result = authctl.run(*json_flag, *args)
            assert result.code == code, (args[:2], result.stderr[:300])
            assert len(result.stderr) < 1_000 and tail in result.stderr, (args[:2], result.stderr[:300])


def test_a_value_of_one_grapheme_and_many_combining_marks_is_echoed_cut(authctl):
    """A letter followed by 50,000 combining accents is one grapheme cluster (one Swift Character)
    but 50,001 code points: counted in graphemes it was never cut, and a 100 KB argument made a
    100 KB error line; an RP ID of 400,000 marks, 800 KB."""
    assert authctl.run("register", "--origin", "https://example.com", "--user-name", "alice").code == 0
    marks = "a" + "\u0301" * 50_000
    cases = [
        (["--device", marks, "list"], 64),
        (["sign", "--origin", "https://example.com", "--user", marks], 13),
        (["delete", "--", marks], 65),
    ]
    for args, code in cases:
        for json_flag in ([], ["--json"]):
            result = authctl.run(*json_flag, *args)
            assert result.code == code, (args[:2], result.stderr[:300])
            assert len(result.stderr) < 1_000 and "… (50001 characters)" in result.stderr, (args[:2], result.stderr[:300])
    options = json.dumps({"challenge": "Y2hhbA", "rpId": "a" + "\u0301" * 400_000}, ensure_ascii=False)
    result = authctl.run("sign", "--origin", "https://example.com", "--options", "-", stdin=options)
    assert result.code == 16 and len(result.stderr) < 1_000 and "… (400001 characters)" in result.stderr, result.stderr[:300]


def test_a_huge_account_choice_is_echoed_cut(authctl):
    """A sign-in's --user or --credential that matches no passkey is named in the error cut, as
    every echoed value is."""
    assert authctl.run("register", "--origin", "https://example.com", "--user-name", "alice").code == 0
    for option, value in (("--user", "u" * 100_000), ("--credential", "A" * 100_000)):
        result = authctl.run("sign", "--origin", "https://example.com", option, value)
        assert result.code == 13 and "notHandled" in result.stderr, result.stderr[:300]
        assert len(result.stderr) < 1_000 and ("characters)" in result.stderr or "bytes)" in result.stderr), result.stderr[:300]


def test_huge_origins_rp_ids_and_option_values_are_echoed_cut(authctl):
    """An origin, a top origin, an RP ID or an option's value echoed in an error is cut as an id
    is: a megabyte RP ID in the options (which go in on stdin) or 100 KB on the command line (near
    the kernel's limit for one argument) makes a short error line, of the name and exit code
    errors.md gives."""
    long = "a" * 100_000
    huge = "a" * 1_000_000
    origin = "https://example.com"
    register_options = {"rp": {"id": huge, "name": "RP"}, "user": {"id": "dXNlcg", "name": "u", "displayName": "u"},
                        "challenge": "AAAAAAAAAAAAAAAAAAAAAA", "pubKeyCredParams": [{"type": "public-key", "alg": -7}]}
    sign_options = {"rpId": huge, "challenge": "AAAAAAAAAAAAAAAAAAAAAA"}
    cases = [
        (["register", "--origin", "https://" + long + ".com"], None, 16, "securityError"),
        (["register", "--origin", "ftp://" + long], None, 16, "securityError"),
        (["register", "--origin", origin, "--top-origin", "ftp://" + long], None, 16, "securityError"),
        (["register", "--origin", origin, "--options", "-"], register_options, 16, "securityError"),
        (["sign", "--origin", origin, "--options", "-"], sign_options, 16, "securityError"),
        (["register", "--origin", origin, "--mediation", long], None, 65, "badInput"),
        (["register", "--origin", origin, "--aaguid", long], None, 64, "usage"),
        (["register", "--origin", origin, "--enterprise-rp", "-" + long], None, 64, "usage"),
        (["register", "--origin", origin, "--user-action", long], None, 64, "usage"),
        (["sync", "set", "--upload-delay", long], None, 64, "usage"),
        (["--wait", "9" * 100_000, "list"], None, 64, "usage"),
        ([long], None, 64, "usage"),
        (["list", "--" + long], None, 64, "usage"),
        (["help", long], None, 64, "usage"),
    ]
    before = authctl.snapshot()
    for args, stdin, code, name in cases:
        for json_flag in ([], ["--json"]):
            result = authctl.run(*json_flag, *args, stdin=json.dumps(stdin) if stdin else None)
            assert result.code == code, (args[:3], result.stderr[:300])
            assert len(result.stderr) < 1_000 and name in result.stderr, (args[:3], result.stderr[:1000])
            assert "characters)" in result.stderr, (args[:3], result.stderr[:300])
    assert authctl.snapshot() == before


PATH_LIMIT = 4096  # EchoedInput.pathLimit: PATH_MAX, so every path the system could open is named whole


def test_huge_paths_are_echoed_cut_in_errors(authctl, tmp_path):
    """A file or directory named on the command line is echoed in an error as every value is:
    whole while it could name a file (a path of more than 64 characters included, as temporary
    directories are), and past PATH_MAX its start, an ellipsis and its whole length. 100 KB paths
    made 100 KB error lines."""
    huge = str(tmp_path / ("p" * 100_000))
    whole = f"… ({len(huge)} characters)"
    registered = authctl.run("register", "--origin", ORIGIN, "--user-verification", "discouraged").json["id"]
    export = {"AUTHCTL_EXPORT_PASSPHRASE": "x"}
    cases = [
        (["register", "--origin", ORIGIN, "--options", huge], 65, "badInput", "cannot read options file "),
        (["--passphrase-file", huge, "list"], 65, "badInput", "cannot read "),
        (["--pin-file", huge, "register", "--origin", ORIGIN], 65, "badInput", "cannot read "),
        (["--vault", huge, "list"], 74, "ioError", "cannot reach "),
        (["--vault", huge, "init", "--kdf", "min"], 74, "ioError", "cannot create directory "),
        (["credential", "import", huge], 65, "badInput", "cannot read "),
        (["credential", "export", "--out", huge, registered], 74, "ioError", "cannot create "),
        (["scenario", "run", huge], 65, "badInput", ""),
        (["manpages", "--output", huge], 74, "ioError", "cannot make "),
        (["bench", "vault", "--dir", huge], 64, "usage", "--dir "),
        (["register", "--origin", ORIGIN, "--related-origins", huge], 65, "badInput", "cannot read related origins file "),
    ]
    before = authctl.snapshot()
    for args, code, name, says in cases:
        for json_flag in ([], ["--json"]):
            result = authctl.run(*json_flag, *args, env=export)
            assert result.code == code, (args[:2], result.stderr[:300])
            assert len(result.stderr) < PATH_LIMIT + 300, (args[:2], len(result.stderr), result.stderr[:300])
            message = json.loads(result.stderr)["message"] if json_flag else result.stderr
            assert name in result.stderr and says + huge[:PATH_LIMIT - 1] + whole in message, (args[:2], result.stderr[:300])
    assert authctl.snapshot() == before
    # One that could be a path is named whole, however long past 64 characters.
    longish = str(tmp_path / ("q" * 200) / "options.json")
    result = authctl.run("register", "--origin", ORIGIN, "--options", longish)
    assert result.code == 65 and f"cannot read options file {longish}: " in result.stderr, result.stderr


def test_a_huge_vault_dir_is_echoed_cut(authctl, tmp_path):
    """`device add --vault-dir DIR` names the new vault's directory as --vault does."""
    huge = str(tmp_path / ("d" * 100_000))
    result = authctl.run("device", "add", "desk", "--vault-dir", huge, "--kdf", "min", "--no-biometry")
    assert result.code == 74 and "ioError" in result.stderr, result.stderr[:300]
    assert len(result.stderr) < PATH_LIMIT + 300 and huge[:PATH_LIMIT - 1] + f"… ({len(huge)} characters)" in result.stderr


def test_related_origins_are_named_once_and_as_themselves(authctl, tmp_path):
    """--related-origins echoes its URL once (libcurl's words named it a second time), cut as every
    value is; a file it cannot read is its own, not an options file, and so is a closed stdin."""
    options = {"rp": {"id": "other.example", "name": "RP"}, "user": {"id": "dXNlcg", "name": "u", "displayName": "u"},
               "challenge": "AAAAAAAAAAAAAAAAAAAAAA", "pubKeyCredParams": [{"type": "public-key", "alg": -7}]}
    path = tmp_path / "options.json"
    path.write_text(json.dumps(options))
    url = "http://127.0.0.1:1/" + "u" * 100_000  # nothing listens on port 1: refused at once
    result = authctl.run("register", "--origin", ORIGIN, "--options", str(path), "--related-origins", url)
    assert result.code == 16 and "securityError" in result.stderr, result.stderr[:300]
    assert len(result.stderr) < 1_000, result.stderr[:300]
    assert result.stderr.count(url[:63]) == 1 and f"cannot fetch {url[:63]}… ({len(url)} characters) for related origins: " in result.stderr
    missing = tmp_path / "missing.json"
    result = authctl.run("register", "--origin", ORIGIN, "--options", str(path), "--related-origins", str(missing))
    assert result.code == 65 and f"cannot read related origins file {missing}: " in result.stderr, result.stderr
    assert "options file" not in result.stderr
    closed = subprocess.run([BIN, "register", "--origin", ORIGIN, "--options", str(path), "--related-origins", "-"],
                            env=authctl.env, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=60,
                            preexec_fn=lambda: os.close(0))
    assert closed.returncode == 65 and "--related-origins -: stdin is closed" in closed.stderr, closed.stderr


def test_a_huge_json_number_is_echoed_cut(authctl):
    """Foundation's words for a number it cannot hold quote the number: cut there too."""
    number = "1" + "2" * 100_000
    for json_flag in ([], ["--json"]):
        result = authctl.run(*json_flag, "register", "--origin", ORIGIN, "--options", "-", stdin='{"challenge": ' + number + "}")
        assert result.code == 65 and "badInput" in result.stderr, result.stderr[:300]
        assert len(result.stderr) < 1_000, result.stderr[:300]
        assert f"options: malformed JSON (Number {number[:63]}… ({len(number)} characters) is not representable" in result.stderr
