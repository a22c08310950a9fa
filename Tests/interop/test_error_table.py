"""docs/errors.md is the truth: each error triggered from the CLI carries, in its --json form,
exactly the exit code, DOMException, Apple code and CTAP2 status its row of the table gives."""
import hashlib
import importlib.util
import json
import re
import threading

import subprocess

from conftest import BIN, ROOT, wait_until_prompting

ORIGIN = "https://example.com"


def table():
    rows = {}
    for line in (ROOT / "docs" / "errors.md").read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 5 and re.fullmatch(r"`\w+`", cells[0]):
            apple = re.match(r"(\d+)", cells[3])
            ctap = re.match(r"0x([0-9A-Fa-f]{2})", cells[4])
            rows[cells[0].strip("`")] = {"exitCode": int(cells[1]), "domException": cells[2],
                                         "appleCode": int(apple.group(1)) if apple else None,
                                         "ctapStatus": int(ctap.group(1), 16) if ctap else None}
    return rows


def test_every_triggerable_error_matches_its_row(authctl, tmp_path):
    made = authctl.run("register", "--origin", ORIGIN).json["id"]
    lockout_env = {"AUTHCTL_VAULT": str(tmp_path / "locked")}
    authctl.run("init", "--kdf", "min", "--max-pin-attempts", "1", env=lockout_env)
    authctl.run("register", "--origin", ORIGIN, env=lockout_env)
    authctl.run("sign", "--origin", ORIGIN, env=dict(lockout_env, AUTHCTL_PIN="0000"))
    triggers = {
        "canceled": (["sign", "--origin", ORIGIN, "--user-action", "cancel"], {}),
        "failed": (["sign", "--origin", ORIGIN], {"AUTHCTL_PIN": "0000"}),
        "notHandled": (["sign", "--origin", "https://nobody.example"], {}),
        "notInteractive": (["sign", "--origin", ORIGIN], {"AUTHCTL_PIN": None}),
        "matchedExcludedCredential": (["register", "--origin", ORIGIN, f"--exclude={made}"], {}),
        "securityError": (["register", "--origin", "http://example.com"], {}),
        "biometryLockout": (["sign", "--origin", ORIGIN], lockout_env),
        "timedOut": (["sign", "--origin", ORIGIN, "--user-action", "timeout", "--instant-timeout"], {}),
        "vaultLocked": (["list"], {"AUTHCTL_PASSPHRASE": "wrong"}),
        "vaultNotFound": (["list"], {"AUTHCTL_VAULT": str(tmp_path / "none")}),
        "vaultExists": (["init", "--kdf", "min"], {}),
        "usage": (["frobnicate"], {}),
        "badInput": (["register", "--origin", ORIGIN, "--challenge", "!!"], {}),
    }
    insecure = tmp_path / "open"
    authctl.run("init", "--kdf", "min", env={"AUTHCTL_VAULT": str(insecure)})
    insecure.chmod(0o777)
    triggers["vaultInsecure"] = (["list"], {"AUTHCTL_VAULT": str(insecure)})
    triggers["ioError"] = (["list"], {})  # with stdout on /dev/full, below
    open_store = tmp_path / "open-store"  # a store directory others can write
    open_store.mkdir()
    open_store.chmod(0o777)
    triggers["storeUnavailable"] = (["init", "--kdf", "min", "--store", str(open_store)], {"AUTHCTL_VAULT": str(tmp_path / "on-open-store")})
    badly_encoded = tmp_path / "badly-encoded.json"
    badly_encoded.write_text('{"challenge": "a+b="}')
    triggers["encodingError"] = (["sign", "--origin", ORIGIN, "--options", str(badly_encoded)], {})
    no_public_key = tmp_path / "no-public-key.json"  # no pubKeyCredParams entry of a supported type
    no_public_key.write_text(json.dumps({"rp": {"name": "RP"}, "user": {"id": "AQ", "name": "a", "displayName": "A"},
                                         "challenge": "AAAA", "pubKeyCredParams": [{"type": "password", "alg": -7}]}))
    triggers["notSupported"] = (["register", "--origin", ORIGIN, "--options", str(no_public_key)], {})
    unlisted_key = tmp_path / "unlisted-key.json"  # a prf evalByCredential key that is no allowCredentials id
    unlisted_key.write_text(json.dumps({"challenge": "AAAA", "allowCredentials": [{"type": "public-key", "id": made}],
                                        "extensions": {"prf": {"evalByCredential": {"AAAA": {"first": "AQ"}}}}}))
    triggers["syntaxError"] = (["sign", "--origin", ORIGIN, "--options", str(unlisted_key)], {})
    triggers["vaultBusy"] = (["sign", "--origin", ORIGIN, "--wait", "0"], {})  # while `holder` waits for its user
    unsupported = tmp_path / "unsupported"
    authctl.run("init", "--kdf", "min", env={"AUTHCTL_VAULT": str(unsupported)})
    authctl.run("device", "unsupported", "default", "on", env={"AUTHCTL_VAULT": str(unsupported)})
    triggers["passkeysNotSupported"] = (["sign", "--origin", ORIGIN], {"AUTHCTL_VAULT": str(unsupported)})
    unmet = tmp_path / "unmet.scn"
    unmet.write_text("device add phone\nphone holds => alice\n")
    triggers["scenarioFailed"] = (["scenario", "run", str(unmet)], {})
    null_provider = tmp_path / "null.cnf"  # OpenSSL with no usable provider
    null_provider.write_text("openssl_conf = init\n[init]\nproviders = p\n[p]\nnull = n\n[n]\nactivate = 1\n")
    triggers["unknown"] = (["sign", "--origin", ORIGIN], {"OPENSSL_CONF": str(null_provider)})
    too_new = tmp_path / "too-new"  # a header of format version 2, checksum recomputed
    authctl.run("init", "--kdf", "min", env={"AUTHCTL_VAULT": str(too_new)})
    header = bytearray((too_new / "header").read_bytes())
    header[8:10] = (2).to_bytes(2, "big")
    header[131:] = hashlib.blake2b(bytes(header[:131]), digest_size=32).digest()
    (too_new / "header").write_bytes(bytes(header))
    triggers["vaultTooNew"] = (["list"], {"AUTHCTL_VAULT": str(too_new)})
    # An RP that accepts a replayed response (docs/examples/rp_server.py with that flaw), and one
    # that does not answer.
    spec = importlib.util.spec_from_file_location("rp_server_errors", ROOT / "docs" / "examples" / "rp_server.py")
    rp_server = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(rp_server)
    flawed = rp_server.serve(0, flaws=frozenset(["challenge-not-consumed"]))
    threading.Thread(target=flawed.serve_forever, daemon=True).start()
    triggers["auditFindings"] = (["audit", "--preset", "rp-server", "--only", "sign-replay", f"http://127.0.0.1:{flawed.server_address[1]}"], {})
    triggers["rpUnusable"] = (["audit", "--preset", "rp-server", "http://127.0.0.1:9"], {})
    rows = table()
    assert set(rows) - set(triggers) == {"invalidResponse", "vaultCorrupted"}
    for name, (args, env) in triggers.items():
        holder = None
        if name == "vaultBusy":
            holder = subprocess.Popen([BIN, "sign", "--origin", ORIGIN, "--user-action", "timeout", "--options", "-"],
                                      env=authctl.env, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                      stderr=subprocess.DEVNULL, text=True)
            holder.stdin.write('{"challenge": "aG9sZA", "timeout": 120000}')  # ended below, once used
            holder.stdin.close()
            wait_until_prompting(authctl.vault, holder)
        if name == "ioError":
            full = subprocess.run([BIN, "--json", *args], env=authctl.env, stdout=open("/dev/full", "w"),
                                  stderr=subprocess.PIPE, text=True, timeout=60)
            result = type("R", (), {"code": full.returncode, "stdout": "", "stderr": full.stderr})
        else:
            result = authctl.run("--json", *args, env=env)
        if holder:
            assert holder.poll() is None, "the vault was held throughout"
            holder.terminate()
            holder.wait(timeout=60)
        if name == "scenarioFailed":  # the report of the run is on stdout, by design
            assert json.loads(result.stdout)["passed"] is False
        elif name == "auditFindings":  # so is the audit's
            assert json.loads(result.stdout)["counts"] == {"ACCEPTED": 1}
        else:
            assert result.stdout == "", name
        error = json.loads(result.stderr)
        assert error["error"] == name, (name, result.stderr)
        assert result.code == rows[name]["exitCode"] == error["exitCode"], name
        assert {k: error[k] for k in ("domException", "appleCode", "ctapStatus")} == \
            {k: rows[name][k] for k in ("domException", "appleCode", "ctapStatus")}, name
    flawed.shutdown()
    flawed.server_close()
