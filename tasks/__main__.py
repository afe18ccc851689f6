"""`python -m tasks NAME [--n N] [--families F --instances M] [--seed S] [--model MODEL]`: the task stage alone
(`make tasks`).

Writes domains/NAME/tasks/<id>.json, index.json and README.md (the tasks report), and the task
counts into report.json. Every LLM exchange goes to domains/NAME/tasks/transcript.jsonl; with no
model that transcript is replayed, so a bundled domain rebuilds the same bytes offline. With a
model, the expansion gate's g(D) comes from an LLM oracle agent (tasks/oracle.py), replayed with
the rest; without one, and in transcripts recorded before it, from the executed search. With
`--families`, each family is one model-written generator whose instances are verified one by one
(tasks/family.py). A recorded run that built families or derived tasks leaves its options in
tasks/options.jsonl, and a replay takes them as its defaults, so it rebuilds the same tasks.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from domains.spec import DomainSpec, valid_name
from domains.task_model import Task
from graph.model import from_json
from llm import LLM, MissingStep, Transcript, backend_for
from mcp_servers.runtime import Environment
from tasks import execute
from tasks.build import Dropped, Stage, build_task
from tasks.family import build_family
from tasks.kinds import derive
from tasks.oracle import oracle_for
from tasks.report import write_outputs
from tasks.vocabulary import recorded_or_asked

DOMAINS = Path(__file__).resolve().parent.parent / "domains"
DEFAULT_N, DEFAULT_SEED, DEFAULT_INSTANCES = 48, 1, 6
# Beside the transcript: what a recorded run built beyond its task slots, one JSON line (not a
# .json file, which readers of the folder take for a task).
OPTIONS = "options.jsonl"


def recorded_options(out: Path) -> dict:
    path = out / "tasks" / OPTIONS
    return json.loads(path.read_text()) if path.is_file() else {}


def _remember(out: Path, options: dict) -> None:
    """Keep a recording's options for its replays; none where it built no family and derived no
    task, so that the domains recorded before there were options keep their files."""
    path = out / "tasks" / OPTIONS
    path.parent.mkdir(parents=True, exist_ok=True)
    if options["families"] or options["answers"] or options["refusals"]:
        path.write_text(json.dumps(options, sort_keys=True) + "\n")
    else:
        path.unlink(missing_ok=True)


def run_stage(out: Path, llm: LLM, n: int = DEFAULT_N, seed: int = DEFAULT_SEED, log=None, answers: int = 0,
              refusals: int = 0, families: int = 0, instances: int = DEFAULT_INSTANCES, authored: bool = False) -> dict:
    """Build up to `n` tasks for the domain in `out` and `families` task families of up to `instances`
    verified instances each, then up to `answers` answer tasks and `refusals` refusal tasks from the
    verified ones (tasks/kinds.py, no model); returns the summary written to report.json. `authored`:
    the answers are written by hand (a scripted backend), so g(D) comes from the executed search and
    the distractors from no vocabulary, as when the bundled job_seeking tasks were recorded."""
    log = log or (lambda m: print(m, file=sys.stderr, flush=True))
    if not llm.replaying:
        _remember(out, {"n": n, "seed": seed, "families": families, "instances": instances, "answers": answers,
                        "refusals": refusals})
    spec = DomainSpec.model_validate_json((out / "spec.json").read_text())
    graph = from_json((out / "graph.json").read_text())
    started = time.perf_counter()
    tasks: list[Task] = []
    dropped: dict[str, list[str]] = {}
    built_families = []
    with Environment(out, workers=2) as env:
        stage = Stage(spec, graph, llm, env, feasibility=None if authored else oracle_for(llm, env), log=log,
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
        finally:
            execute.close()  # the chain programs' template process
    return write_outputs(out, spec, tasks, dropped, llm, time.perf_counter() - started,
                         families=(families, built_families) if families else None)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tasks", description=__doc__)
    parser.add_argument("name")
    parser.add_argument("--n", type=int, help=f"task slots to try (default {DEFAULT_N})")
    parser.add_argument("--seed", type=int)
    parser.add_argument("--model", default=None, help="litellm model string; without it the transcript is replayed")
    parser.add_argument("--families", type=int, help="task families to build: one model-written generator each (default 0)")
    parser.add_argument("--instances", type=int,
                        help=f"instances to draw and verify per family (default {DEFAULT_INSTANCES})")
    parser.add_argument("--answers", type=int,
                        help="answer tasks to derive from the verified tasks' reads (no model; default 0)")
    parser.add_argument("--refusals", type=int,
                        help="refusal tasks to derive from calls the policy forbids (no model; default 0)")
    args = parser.parse_args(argv)
    out = DOMAINS / args.name
    # a replay rebuilds what was recorded; what the command line says still wins
    defaults = {"n": DEFAULT_N, "seed": DEFAULT_SEED, "families": 0, "instances": DEFAULT_INSTANCES, "answers": 0,
                "refusals": 0} | ({} if args.model or not valid_name(args.name) else recorded_options(out))
    for key, value in defaults.items():
        if getattr(args, key) is None:
            setattr(args, key, value)
    if args.families and args.instances < 1:
        parser.error("--instances must be at least 1")
    if not valid_name(args.name) or not (out / "graph.json").is_file():
        print(f"worldsmith: no built domain {args.name!r} with a tool graph: run `make domain NAME={args.name}` first",
              file=sys.stderr)
        return 2
    transcript_path = out / "tasks" / "transcript.jsonl"
    if not args.model and not transcript_path.exists():
        print(f"worldsmith: no recorded task transcript for {args.name!r}; set MODEL=<litellm model> to synthesize "
              "tasks", file=sys.stderr)
        return 2
    transcript = Transcript(transcript_path)
    if args.model:
        transcript.clear()
    llm = LLM(backend_for(args.model), transcript)
    try:
        summary = run_stage(out, llm, args.n, args.seed, answers=args.answers, refusals=args.refusals,
                            families=args.families, instances=args.instances)
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
