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


def tokens(domain: Path) -> dict:
    """LLM tokens of the recorded run (the same on replay as when recorded): per verified tool and
    per procedural test case, prompt and completion, and the largest single answer."""
    report = json.loads((domain / "report.json").read_text())
    verified = len(report["tools"]["verified"])
    total = report["tokens"]["total"]
    tests = report["tokens"]["stages"].get("tests", {"prompt": 0, "completion": 0})
    entries = [json.loads(line) for line in (domain / "transcript.jsonl").read_text().splitlines() if line.strip()]
    largest = max(entries, key=lambda e: e["usage"]["completion_tokens"])
    return {
        "per_tool": {k: total[k] / verified for k in ("prompt", "completion", "total")},
        "per_case": {k: tests[k] / report["procedural_tests"] for k in ("prompt", "completion")},
        "requests": len(entries),
        "largest_answer": (largest["usage"]["completion_tokens"], largest["key"]),
    }


def main(name: str = "job_seeking", runs: int = 3) -> None:
    domain = ROOT / "domains" / name
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    env.pop("MODEL", None)
    walls = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-m", "pipeline", name], cwd=ROOT, env=env, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        walls.append(time.perf_counter() - started)
    timings = json.loads((domain / "timings.json").read_text())
    print(f"make domain NAME={name} (offline replay, {runs} runs): median {statistics.median(walls):.1f} s, "
          f"min {min(walls):.1f} s")
    for stage in ("schema", "database", "compile_db", "graph"):
        if stage in timings["stages"]:
            print(f"  stage {stage:<10} {timings['stages'][stage]:.2f} s")

    t = tokens(domain)
    print(f"tokens per verified tool: {t['per_tool']['total']:,.0f} ({t['per_tool']['prompt']:,.0f} prompt + "
          f"{t['per_tool']['completion']:,.0f} completion); tests stage per case: {t['per_case']['prompt']:,.0f} prompt + "
          f"{t['per_case']['completion']:,.0f} completion; {t['requests']} requests; largest answer "
          f"{t['largest_answer'][0]:,} tokens ({t['largest_answer'][1]})")

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
