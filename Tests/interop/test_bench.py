"""The benchmarks' machine-readable output and the chart drawn from it (figures are not judged:
timing belongs to benchmarks, not tests)."""
import json
import os
import subprocess
import sys

from conftest import BIN, ROOT


def run(*args, env=None):
    environment = {k: v for k, v in os.environ.items() if not k.startswith("AUTHCTL_")}
    environment.update(env or {})
    return subprocess.run([BIN, *args], capture_output=True, text=True, timeout=300, env=environment)


def test_bench_vault_json_keep_and_chart(tmp_path):
    kept = tmp_path / "kept"
    result = run("--json", "bench", "vault", "--sizes", "5,20", "--runs", "1", "--dir", str(tmp_path), "--keep", str(kept))
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert [r["size"] for r in report["rows"]] == [5, 20] and report["runs"] == 1
    assert all(r[k] > 0 for r in report["rows"] for k in ("openMs", "registerMs", "signMs", "openSignMs", "logMiB"))
    # The largest vault is left behind, and signs with the passphrase the notice gives.
    assert "passphrase 'bench'" in result.stderr
    signed = run("--vault", str(kept), "sign", "--origin", "https://target.example", env={"AUTHCTL_PASSPHRASE": "bench"})
    assert signed.returncode == 0, signed.stderr
    again = run("bench", "vault", "--sizes", "5", "--runs", "1", "--dir", str(tmp_path), "--keep", str(kept))
    assert again.returncode == 64  # an existing path is never overwritten
    (tmp_path / "vault.json").write_text(result.stdout)
    svg = subprocess.run([sys.executable, str(ROOT / "scripts" / "bench_chart.py"), str(tmp_path / "vault.json")],
                         capture_output=True, text=True, timeout=60)
    assert svg.returncode == 0, svg.stderr
    assert svg.stdout.startswith("<svg") and svg.stdout.count("<polyline") == 4


def test_bench_ceremonies_json(tmp_path):
    result = run("--json", "bench", "ceremonies", "--seconds", "0.1")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["opensslSignsPerSecond"] > 0 and report["keyGenerationsPerSecond"] > 0
    cases = {(r["ceremony"], r["store"]) for r in report["rows"]}
    assert {("sign", "memory"), ("sign", "vault"), ("register (none)", "memory"), ("register (none)", "vault")} <= cases
    assert all(r["perSecond"] > 0 and 0 < r["cryptoShare"] for r in report["rows"])
    assert run("bench", "ceremonies", "--seconds", "0").returncode == 64
