"""The task stage's outputs: task files, the index, the tasks report page and report.json's counts."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from domains.report_page import write_report_page
from domains.spec import DomainSpec
from domains.task_model import Task
from llm import LLM


def _write_json(path: Path, data: object) -> None:
    path.write_text(json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False) + "\n")


def write_outputs(out: Path, spec: DomainSpec, tasks: list[Task], dropped: dict[str, list[str]], llm: LLM,
                  seconds: float, settings: dict | None = None) -> dict:
    """`settings`: the stage's options (task slots, seed, derived kinds, oracle), kept in index.json
    so that a replay builds the same tasks without being told them again."""
    folder = out / "tasks"
    folder.mkdir(parents=True, exist_ok=True)
    for stale in [*folder.glob("task_*.json"), *folder.glob("answer_*.json"), *folder.glob("refusal_*.json")]:
        stale.unlink()
    for task in tasks:
        _write_json(folder / f"{task.id}.json", task.model_dump(mode="json", exclude_none=True))
    tokens = sum(e["usage"]["prompt_tokens"] + e["usage"]["completion_tokens"]
                 for e in llm.transcript.entries.values() if e["stage"] == "tasks")
    levels = Counter(t.metadata.complexity_level for t in tasks)
    summary = {
        "built": len(tasks),
        "repaired": sum(bool(t.metadata.repairs) for t in tasks),
        "dropped": sum(len(v) for v in dropped.values()),
        "dropped_by_reason": {k: len(v) for k, v in sorted(dropped.items())},
        "levels": {str(k): levels[k] for k in sorted(levels)},
        "distractor_rows": sum(t.metadata.distractor_rows for t in tasks),
        "distractors_rejected": sum(t.metadata.distractors_rejected for t in tasks),
        "tokens": tokens,
        "tokens_per_task": round(tokens / len(tasks)) if tasks else 0,
    }
    kinds = Counter(t.kind for t in tasks)
    if set(kinds) - {"change"}:  # counted where there is more than one kind, so older reports keep their bytes
        summary["kinds"] = {k: kinds[k] for k in sorted(kinds)}
        summary["levels_by_kind"] = {k: dict(sorted(Counter(str(t.metadata.complexity_level) for t in tasks
                                                             if t.kind == k).items())) for k in sorted(kinds)}
    index = {**({"settings": settings} if settings else {}), "summary": summary,
             "dropped": {k: v for k, v in sorted(dropped.items())},
             "tasks": [{"id": t.id, "level": t.metadata.complexity_level, "chain": t.metadata.chain,
                        "calls": len(t.reference_solution), "distractor_rows": t.metadata.distractor_rows,
                        "subgraph_tools": len(t.metadata.subgraph_nodes), "complexity": t.metadata.complexity,
                        "tokens": t.metadata.tokens, "instruction": t.instruction,
                        **({"kind": t.kind} if t.kind != "change" else {})} for t in tasks]}
    _write_json(folder / "index.json", index)
    (folder / "README.md").write_text(report_page(spec, tasks, summary, index["dropped"]))
    report_path = out / "report.json"
    report = json.loads(report_path.read_text()) if report_path.exists() else {}
    report["tasks"] = summary
    report_path.write_text(json.dumps(report, indent=2, sort_keys=True) + "\n")
    if (out / "spec.json").exists():
        write_report_page(out)  # the domain's page shows the tasks too
    summary["seconds"] = round(seconds, 3)
    return summary


def report_page(spec: DomainSpec, tasks: list[Task], summary: dict, dropped: dict[str, list[str]]) -> str:
    lines = [f"# {spec.name}: tasks", "",
             "Built by the task stage (`make tasks NAME=" + spec.name + "`): each task was verified by execution "
             "(reward 1 after replaying its reference solution, below 1 on its untouched initial state).", "",
             f"- verified: **{summary['built']}** ({summary['repaired']} after a repair), dropped: "
             f"**{summary['dropped']}** {json.dumps(summary['dropped_by_reason'])}",
             f"- complexity levels: {', '.join(f'level {k}: {v}' for k, v in summary['levels'].items())}",
             f"- distractor rows: {summary['distractor_rows']} kept, {summary['distractors_rejected']} groups "
             "rejected because they changed the outcome",
             f"- LLM tokens: {summary['tokens']} in all, {summary['tokens_per_task']} per verified task",
             *([f"- kinds: {', '.join(f'{k}: {v}' for k, v in summary['kinds'].items())} (answer and refusal tasks "
                "are derived from the verified change tasks without a model)"] if "kinds" in summary else []), "",
             "| task | level | calls | distractor rows | subgraph tools | c(H) | instruction |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for t in tasks:
        m = t.metadata
        text = t.instruction.replace("|", "/").replace("\n", " ")
        lines.append(f"| {t.id} | {m.complexity_level} | {len(t.reference_solution)} | {m.distractor_rows} | "
                     f"{len(m.subgraph_nodes)} | {m.complexity:.2f} | {text[:140]} |")
    if dropped:
        lines += ["", "Dropped: " + "; ".join(f"{k}: {', '.join(v)}" for k, v in dropped.items())]
    return "\n".join(lines) + "\n"
