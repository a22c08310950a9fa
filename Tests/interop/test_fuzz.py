"""A bounded libFuzzer run over the decoders (vault header and batches, options JSON, CBOR,
authenticator data), and the inputs that once broke them. The fuzzer binary is built by
scripts/test.sh (see docs/fuzzing.md); AUTHCTL_FUZZ_BIN names it."""
import os
import pathlib
import subprocess

from conftest import ROOT

FUZZ_BIN = os.environ.get("AUTHCTL_FUZZ_BIN", str(ROOT / ".build" / "fuzz" / "debug" / "authctl-fuzz"))
REPLAY_BIN = str(ROOT / ".build" / "debug" / "authctl-fuzz")
REGRESSIONS = ROOT / "Tests" / "fuzz" / "regressions"
# A bounded run is a number of inputs, not a time: on a loaded machine it takes longer, and
# still tries as many. The time is only a backstop.
RUNS = int(os.environ.get("AUTHCTL_FUZZ_RUNS", "1000"))
SECONDS = int(os.environ.get("AUTHCTL_FUZZ_SECONDS", "600"))


def test_regression_inputs_are_handled():
    inputs = sorted(str(p) for p in REGRESSIONS.iterdir())
    assert inputs
    for binary in (REPLAY_BIN, FUZZ_BIN):
        result = subprocess.run([binary, *inputs], capture_output=True, text=True, timeout=120)
        assert result.returncode == 0, result.stderr[-2000:]


def test_bounded_fuzz_run_finds_nothing(tmp_path):
    corpus = tmp_path / "corpus"
    subprocess.run([REPLAY_BIN, "seeds", str(corpus)], check=True, timeout=60)
    assert len(list(corpus.iterdir())) >= 6
    result = subprocess.run([FUZZ_BIN, f"-runs={RUNS}", f"-max_total_time={SECONDS}", "-rss_limit_mb=2048", "-timeout=10",
                             f"-artifact_prefix={tmp_path}/", str(corpus)],
                            capture_output=True, text=True, timeout=SECONDS + 120)
    crashes = list(tmp_path.glob("crash-*")) + list(tmp_path.glob("leak-*")) + list(tmp_path.glob("timeout-*"))
    assert result.returncode == 0 and not crashes, result.stderr[-3000:]
    assert "Done" in result.stderr
    runs = int(result.stderr.split("Done ")[1].split()[0])
    assert runs >= RUNS, runs  # it really ran them all
