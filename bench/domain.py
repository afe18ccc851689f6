"""Offline end-to-end time of `make domain NAME=job_seeking` (environment already set up),
and the procedural-test time per tool."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from verification.procedural import open_domain, tool_names

ROOT = Path(__file__).resolve().parent.parent


def main(name: str = "job_seeking", runs: int = 3) -> None:
    domain = ROOT / "domains" / name
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    env.pop("MODEL", None)
    walls = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-m", "agents", name], cwd=ROOT, env=env, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        walls.append(time.perf_counter() - started)
    timings = json.loads((domain / "timings.json").read_text())
    print(f"make domain NAME={name} (offline replay, {runs} runs): median {statistics.median(walls):.1f} s, "
          f"min {min(walls):.1f} s")
    for stage in ("schema", "database", "compile_db", "graph"):
        if stage in timings["stages"]:
            print(f"  stage {stage:<10} {timings['stages'][stage]:.2f} s")

    per_tool = []
    with open_domain(domain) as box:
        for tool in tool_names(domain):
            tests = json.loads((domain / "tests" / f"{tool}.json").read_text())
            started = time.perf_counter()
            for _ in range(5):
                box.run_tests(tool, tests)
            per_tool.append(((time.perf_counter() - started) / 5, len(tests), tool))
    seconds = [s for s, _, _ in per_tool]
    cases = sum(n for _, n, _ in per_tool)
    print(f"procedural tests: {len(per_tool)} tools, {cases} cases; per tool median {statistics.median(seconds) * 1e3:.1f} ms, "
          f"max {max(seconds) * 1e3:.1f} ms ({max(per_tool)[2]}); per case {sum(seconds) / cases * 1e3:.2f} ms")


if __name__ == "__main__":
    main()
