"""Task-build time and tokens per verified task for job_seeking, offline: `python -m bench tasks`.

The task stage replays its recorded transcript (with the families and derived tasks it recorded)
in a copy of the domain folder, so the time is the stage's own work: confined chain programs and
generators, runtime episodes, distractor checks, probes and the reward both ways. Tokens are those
the recorded answers cost when they were made, every request of the recording counted (tasks,
families, repairs, gate and reward policies, and the oracle and vocabulary where they were asked),
over the tasks it verified, beside ScaleEnv's 93.2k per task.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path

from llm import LLM, Transcript
from tasks.__main__ import recorded_settings, run_stage

ROOT = Path(__file__).resolve().parent.parent
SCALEENV_TOKENS = 93_200  # ScaleEnv, table of token costs: task generation per task
AIM = 2_000  # tokens per verified task, everything the model is asked included


def main() -> None:
    source = ROOT / "domains" / "job_seeking"
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "job_seeking"
        shutil.copytree(source, out, ignore=shutil.ignore_patterns("task_*.json", ".embeddings", "*.svg"))
        llm = LLM(None, Transcript(out / "tasks" / "transcript.jsonl"))
        started = time.perf_counter()
        summary = run_stage(out, llm, log=lambda _m: None, **recorded_settings(out))  # what the recording built
        seconds = time.perf_counter() - started
    built = summary["built"]
    print(f"tasks built: {built} verified of {built + summary['dropped']}, levels {summary['levels']}, "
          f"kinds {summary.get('kinds', {'change': built})}")
    if "families" in summary:
        counts = summary["families"]
        print(f"families: {counts['verified']} of {counts['asked']} verified, {counts['instances']} instances "
              f"({counts['instances_per_family']} per family), {counts['tokens_per_instance']} tokens per instance")
    print(f"task-build time: {seconds:.1f} s in all, {seconds / max(built, 1):.2f} s per verified task")
    print(f"tokens: {summary['tokens']} in all, {summary['tokens_per_task']} per verified task "
          f"(aim <= {AIM}; ScaleEnv reports {SCALEENV_TOKENS}, {SCALEENV_TOKENS / max(summary['tokens_per_task'], 1):.0f}x)")


if __name__ == "__main__":
    main()
