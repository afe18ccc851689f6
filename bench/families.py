"""Tokens per verified task of a scripted family run on job_seeking, offline: `python -m bench families`.

The task stage runs in a copy of the domain with `--families 8 --instances 6`, its family requests
answered by the eight hand-written families of domains/job_seeking/families.py (changes: priority,
note, deadline, interview, withdrawal; questions: status, offer, next interview), the gate and the
reward policies by fixed answers. Tokens are the gateway's count of every prompt and completion (the offline count
that scripted answers get), over the verified tasks. g(D) comes from the executed search and the
distractors use no vocabulary, as in job_seeking's recorded run: no oracle request is counted.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path

from domains.job_seeking.families import FAMILIES
from llm import LLM, ScriptedBackend, Transcript
from tasks.__main__ import run_stage

ROOT = Path(__file__).resolve().parent.parent
SCALEENV_TOKENS = 93_200  # ScaleEnv, table of token costs: task generation per task
INSTANCES = 6


def answers(count: int) -> dict:
    out = {}
    for i in range(count):
        item = f"tasks/fam_{i + 1:03d}"
        out[f"{item}.family/0"] = FAMILIES[i % len(FAMILIES)]
        out |= {f"{item}.gate/{n}": {"p": 0.3, "reason": "the remaining tools rarely chain"} for n in range(2)}
        out[f"{item}.reward/0"] = {"policies": {"application_note.note_content": "semantic"}}
    return out


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "job_seeking"
        shutil.copytree(ROOT / "domains" / "job_seeking", out, ignore=shutil.ignore_patterns("tasks", "tests", "*.svg"))
        llm = LLM(ScriptedBackend(answers(len(FAMILIES))), Transcript(out / "tasks" / "transcript.jsonl"))
        started = time.perf_counter()
        summary = run_stage(out, llm, n=0, families=len(FAMILIES), instances=INSTANCES, authored=True,
                            log=lambda _m: None)
        seconds = time.perf_counter() - started
    counts = summary["families"]
    print(f"families: {counts['verified']} of {counts['asked']} verified, {summary['built']} tasks "
          f"({counts['instances_per_family']} per family), kinds {summary.get('kinds', {'change': summary['built']})}, "
          f"levels {summary['levels']}, dropped {summary['dropped_by_reason']}")
    print(f"family-build time: {seconds:.1f} s in all, {seconds / max(summary['built'], 1):.2f} s per verified task")
    print(f"tokens: {summary['tokens']} in all, {summary['tokens_per_task']} per verified task "
          f"(ScaleEnv reports {SCALEENV_TOKENS})")


if __name__ == "__main__":
    main()
