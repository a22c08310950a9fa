"""Wall time of each shipped scenario, end to end (process start included), with the example RP
on a free loopback port: python3 scripts/bench_scenarios.py [BINARY] [RUNS]. Needs py_webauthn
(the test suite's .venv has it)."""
import importlib.util
import os
import pathlib
import statistics
import subprocess
import sys
import threading
import time

root = pathlib.Path(__file__).resolve().parents[1]
binary = sys.argv[1] if len(sys.argv) > 1 else str(root / ".build" / "release" / "authctl")
runs = int(sys.argv[2]) if len(sys.argv) > 2 else 7

spec = importlib.util.spec_from_file_location("rp_server", root / "docs" / "examples" / "rp_server.py")
rp_server = importlib.util.module_from_spec(spec)
spec.loader.exec_module(rp_server)
server = rp_server.serve(0)
threading.Thread(target=server.serve_forever, daemon=True).start()
env = dict(os.environ, RP=f"http://127.0.0.1:{server.server_address[1]}")

print(f"{'scenario':28s} {'steps':>5s} {'median ms':>10s} {'max ms':>8s}")
for path in sorted((root / "docs" / "scenarios").glob("*.scn")):
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        result = subprocess.run([binary, "scenario", "run", str(path)], env=env, capture_output=True, text=True)
        times.append((time.perf_counter() - start) * 1000)
        if result.returncode != 0:
            sys.exit(f"{path.name}: exit {result.returncode}: {result.stderr}")
    steps = result.stdout.splitlines()[-1].split()[1]
    print(f"{path.name:28s} {steps:>5s} {statistics.median(times):10.1f} {max(times):8.1f}")
server.shutdown()
