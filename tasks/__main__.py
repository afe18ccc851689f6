"""`python -m tasks NAME [--n N] [--families F --instances M] [--seed S] [--model MODEL]
[--calibrate RUN/report.json [--keep-at-most P]]`: the task stage alone (`make tasks`).

Writes domains/NAME/tasks/<id>.json, index.json and README.md (the tasks report), and the task
counts into report.json. Every LLM exchange goes to domains/NAME/tasks/transcript.jsonl; with no
model that transcript is replayed, so a bundled domain rebuilds the same bytes offline. With a
model, the expansion gate's g(D) comes from an LLM oracle agent (tasks/oracle.py), replayed with
the rest; without one, and in transcripts recorded before it, from the executed search. With
`--families`, each family is one model-written generator whose instances are verified one by one
(tasks/family.py). With `--calibrate`, an eval run's measured solve rates re-level the tasks and,
with `--keep-at-most`, drop those solved more often (tasks/calibrate.py).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from domains import registry
from domains.spec import DomainSpec, valid_name
from domains.task_model import Task
from graph.model import from_json
from llm import LLM, MissingStep, Transcript, backend_for
from mcp_servers.runtime import Environment
from tasks import execute
from tasks.build import Dropped, Stage, build_task
from tasks.calibrate import Calibration, CalibrationError, calibrate, from_report
from tasks.family import build_family
from tasks.kinds import derive
from tasks.oracle import oracle_for
from tasks.report import write_outputs
from tasks.vocabulary import recorded_or_asked

DEFAULT_N, DEFAULT_SEED, DEFAULT_INSTANCES = 48, 1, 6


def run_stage(out: Path, llm: LLM, n: int = DEFAULT_N, seed: int = DEFAULT_SEED, log=None, answers: int = 0,
              refusals: int = 0, oracle: str = "auto", families: int = 0, instances: int = DEFAULT_INSTANCES,
              authored: bool = False, calibration: dict | None = None) -> dict:
    """Build up to `n` tasks for the domain in `out` and `families` task families of up to `instances`
    verified instances each, then up to `answers` answer tasks and `refusals` refusal tasks from the
    verified ones (tasks/kinds.py, no model); returns the summary written to report.json.
    `oracle="executed"` decides g(D) by the executed search even with a model (no oracle requests).
    `authored`: the answers are written by hand (a scripted backend), so g(D) comes from the executed
    search and the distractors from no vocabulary, as when the bundled job_seeking tasks were recorded.
    `calibration`: a tasks.calibrate.Calibration (as a dict) applied to the verified tasks last."""
    log = log or (lambda m: print(m, file=sys.stderr, flush=True))
    spec = DomainSpec.model_validate_json((out / "spec.json").read_text())
    graph = from_json((out / "graph.json").read_text())
    started = time.perf_counter()
    tasks: list[Task] = []
    dropped: dict[str, list[str]] = {}
    built_families = []
    with Environment(out, workers=2) as env:
        feasibility = None if oracle == "executed" or authored else oracle_for(llm, env)
        stage = Stage(spec, graph, llm, env, feasibility=feasibility, log=log,
                      vocabulary=None if authored else recorded_or_asked(llm, spec))
        try:
            for i in range(n):
                task_id = f"task_{i + 1:03d}"
                try:
                    task = build_task(stage, task_id, i, seed)
                except Dropped as drop:
                    dropped.setdefault(drop.reason, []).append(task_id)
                    log(f"{task_id}: dropped ({drop.reason}): {drop.detail.splitlines()[0]}")
                    continue
                tasks.append(task)
                log(f"{task_id}: verified, level {task.metadata.complexity_level}, "
                    f"{len(task.reference_solution)} calls, {task.metadata.distractor_rows} distractor rows, "
                    f"{task.metadata.tokens} tokens")
            for i in range(families):
                family_id = f"fam_{i + 1:03d}"
                try:
                    family = build_family(stage, family_id, i, seed, instances)
                except Dropped as drop:
                    dropped.setdefault(f"family:{drop.reason}", []).append(family_id)
                    log(f"{family_id}: dropped ({drop.reason}): {drop.detail.splitlines()[0]}")
                    continue
                built_families.append(family)
                tasks += family.tasks
                for reason, ids in family.dropped.items():
                    dropped.setdefault(f"instance:{reason}", []).extend(ids)
                log(f"{family_id}: {len(family.tasks)} of {instances} instances verified, {family.tokens} tokens")
            if answers or refusals:
                tasks += derive(env, spec, list(tasks), answers, refusals, seed, dropped, log)
            if calibration:
                tasks = calibrate(tasks, Calibration.model_validate(calibration), dropped, log)
                kept = {t.id: t for t in tasks}
                for family in built_families:  # their counts by level and kind follow the calibrated tasks
                    family.tasks = [kept[t.id] for t in family.tasks if t.id in kept]
        finally:
            execute.close()  # the chain programs' template process
    settings = {"n": n, "seed": seed, "answers": answers, "refusals": refusals, "oracle": oracle,
                # kept only where a run built families, so that the other indexes keep their bytes
                **({"families": families, "instances": instances, "authored": authored} if families else {}),
                **({"calibration": calibration} if calibration else {})}
    return write_outputs(out, spec, tasks, dropped, llm, time.perf_counter() - started, settings,
                         families=(families, built_families) if families else None)


def recorded_settings(out: Path) -> dict:
    """The options the recorded task stage ran with (index.json), {} where none were kept."""
    index = out / "tasks" / "index.json"
    return json.loads(index.read_text()).get("settings", {}) if index.is_file() else {}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tasks", description=__doc__)
    parser.add_argument("name")
    parser.add_argument("--n", type=int, help=f"task slots to try (default {DEFAULT_N}; on replay, the recorded run's)")
    parser.add_argument("--seed", type=int, help=f"default {DEFAULT_SEED}; on replay, the recorded run's")
    parser.add_argument("--model", default=None, help="litellm model string; without it the transcript is replayed")
    parser.add_argument("--answers", type=int,
                        help="answer tasks to derive from the verified tasks' reads (no model; default 0)")
    parser.add_argument("--refusals", type=int,
                        help="refusal tasks to derive from calls the policy forbids (no model; default 0)")
    parser.add_argument("--families", type=int,
                        help="task families to build: one model-written generator each (default 0; on replay, the "
                             "recorded run's)")
    parser.add_argument("--instances", type=int,
                        help=f"instances to draw and verify per family (default {DEFAULT_INSTANCES})")
    parser.add_argument("--oracle", choices=["auto", "executed"],
                        help="g(D): the model's best-of-k agent where a chain is possible (auto, with a model), "
                             "or the executed search, which asks nothing")
    parser.add_argument("--calibrate", type=Path, metavar="REPORT",
                        help="an eval run's report.json (runs/NAME/RUN/report.json): re-level each task it played "
                             "by its solve rate (on replay, the recorded run's rates)")
    parser.add_argument("--keep-at-most", type=float, metavar="P",
                        help="with --calibrate: drop the tasks solved in more than P of their trials (CodeGym: 0.25)")
    parser.add_argument("--fresh", action="store_true",
                        help="with a model: forget the recorded answers (by default a rerun reuses every answer "
                             "whose prompt is unchanged, so an interrupted run pays for nothing twice)")
    args = parser.parse_args(argv)
    out = registry.root() / args.name
    if not valid_name(args.name) or not (out / "graph.json").is_file():
        print(f"worldsmith: no built domain {args.name!r} with a tool graph: run `make domain NAME={args.name}` first",
              file=sys.stderr)
        return 2
    transcript_path = out / "tasks" / "transcript.jsonl"
    if not args.model and not transcript_path.exists():
        print(f"worldsmith: no recorded task transcript for {args.name!r}; set MODEL=<litellm model> to synthesize "
              "tasks", file=sys.stderr)
        return 2
    # what is not given: on replay as the recorded run had it, else the defaults
    recorded = {} if args.model else recorded_settings(out)
    defaults = {"n": DEFAULT_N, "seed": DEFAULT_SEED, "answers": 0, "refusals": 0, "oracle": "auto", "families": 0,
                "instances": DEFAULT_INSTANCES}
    options = {k: v if (v := getattr(args, k)) is not None else recorded.get(k, default) for k, default in defaults.items()}
    options["authored"] = recorded.get("authored", False)  # a hand-written recording replays as it was made
    if args.keep_at_most is not None and not args.calibrate:
        parser.error("--keep-at-most needs --calibrate REPORT")
    try:
        options["calibration"] = (from_report(args.calibrate, args.keep_at_most).model_dump(exclude_none=True)
                                  if args.calibrate else recorded.get("calibration"))
    except (CalibrationError, ValueError) as error:
        print(f"worldsmith: --calibrate: {error}", file=sys.stderr)
        return 2
    if options["families"] and options["instances"] < 1:
        parser.error("--instances must be at least 1")
    transcript = Transcript(transcript_path)
    if args.model and args.fresh:
        transcript.clear()
    llm = LLM(backend_for(args.model), transcript)
    try:
        summary = run_stage(out, llm, **options)
    except MissingStep as error:
        print(f"worldsmith: task replay stopped: {error}. Re-record with MODEL=<litellm model>.", file=sys.stderr)
        return 1
    finally:
        if not llm.replaying:
            transcript.save()
    print(f"worldsmith: {summary['built']} tasks verified, {summary['dropped']} dropped, "
          f"{summary['tokens_per_task']} tokens per task", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
