"""The stages in order, for one domain: the verified tools (agents), the tool graph (graph), the
report page, then the tasks (tasks), each stage called from here and none calling another.

A build that stops after its tools keeps the tool stages' checkpoint, so the same command
resumes at the graph without building a tool again or paying for an answer twice.
"""

from __future__ import annotations

import json
import sys
import time

from agents.build import Run, checkpoint_path, run_pipeline, write_json
from domains import registry
from domains.report_page import write_report_page
from domains.spec import DomainSpec
from graph.build import graph_stage
from llm import LLMError, MissingStep


def build_domain(run: Run, fresh: bool = False, with_graph: bool = True) -> int:
    """The tool stages, then (with_graph) the tool graph; save what was recorded, write the timings
    and the report page, and say how it went. Returns the exit code: 0 built, 1 stopped or no
    tool verified, 3 written without the tools the model failed on."""
    started = time.perf_counter()
    where = f"domains/{run.domain}" if run.out == registry.folder(run.domain) else str(run.out)
    try:
        state = run_pipeline(run, fresh=fresh, keep_checkpoint=with_graph)
        stages = dict(state.get("timings", {}))
        if with_graph:
            stages["graph"] = _graph(run, state)
            checkpoint_path(run.out).unlink(missing_ok=True)  # every stage with a checkpoint is done
    except MissingStep as error:
        print(f"worldsmith: replay stopped: {error}. Re-record with MODEL=<litellm model>.", file=sys.stderr)
        return 1
    except LLMError as error:  # a whole stage (schema, database) could not be completed
        print(f"worldsmith: the run stopped: {error}. The domain was not written; every exchange so far is in "
              f"{where}/transcript.jsonl.", file=sys.stderr)
        return 1
    finally:
        if not run.llm.replaying:
            run.llm.transcript.save()
    timings = {"total_seconds": round(time.perf_counter() - started, 3), "stages": stages}
    (run.out / "timings.json").write_text(json.dumps(timings, indent=2, sort_keys=True) + "\n")
    if run.llm.changed_prompts:
        print(f"worldsmith: {len(run.llm.changed_prompts)} replayed steps were recorded with a different prompt "
              f"(the answers were served as recorded): {', '.join(run.llm.changed_prompts[:10])}", file=sys.stderr)
    write_report_page(run.out)
    print(f"worldsmith: {run.domain} written to {where}/ in {timings['total_seconds']:.1f} s "
          f"(report.md: what was built and how well it is tested)", file=sys.stderr)
    tools = json.loads((run.out / "report.json").read_text())["tools"]
    if not tools["verified"]:
        print(f"worldsmith: no tool of {run.domain} was verified (see {where}/report.json, "
              f"dropped_reasons): the domain is not usable.", file=sys.stderr)
        return 1
    if tools.get("dropped_model_failed"):
        print(f"worldsmith: {len(tools['dropped_model_failed'])} tool(s) were dropped because the model failed, not "
              f"because their tests did: {', '.join(tools['dropped_model_failed'])} (report.json: "
              f"tools.dropped_model_failed). The domain was written without them.", file=sys.stderr)
        return 3
    return 0


def _graph(run: Run, state: dict) -> float:
    """The graph stage on the verified tools, with the run's gateway; the report's token counts
    then include its requests. Returns its seconds."""
    started = time.perf_counter()
    spec = DomainSpec.model_validate(state["spec"])
    verified = sorted(n for n, r in state["results"].items() if r["status"] == "verified")
    stats = graph_stage(run.out, spec, verified, run.llm)
    report = json.loads((run.out / "report.json").read_text())
    report["tokens"] = run.llm.transcript.tokens()
    write_json(run.out / "report.json", report)
    run.log(f"graph: {stats['edges']['total']} edges")
    return time.perf_counter() - started


def task_stage(name: str, model: str | None) -> int:
    """The task stage on domains/NAME, with its own transcript: skipped when there is neither a
    model nor a recorded task transcript to replay."""
    from tasks.__main__ import main as tasks_main

    if not model and not (registry.folder(name) / "tasks" / "transcript.jsonl").exists():
        print(f"worldsmith: no task transcript for {name!r} and no model: task stage skipped", file=sys.stderr)
        return 0
    return tasks_main([name] + (["--model", model] if model else []))
