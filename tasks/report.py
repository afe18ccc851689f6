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


def family_counts(asked: int, built: list, tasks: list[Task]) -> dict:
    """Families asked, verified and dropped; per family its instances by kind and level, the instances
    it dropped, its repairs and tokens (`built`: tasks.family.Built)."""
    mine = {b.family: [t for t in tasks if t.metadata and t.metadata.family == b.family] for b in built}
    made = sum(len(b.tasks) for b in built)
    tokens = sum(b.tokens for b in built)
    return {
        "asked": asked, "verified": len(built), "dropped": asked - len(built),
        "instances": made, "instances_per_family": round(made / len(built), 2) if built else 0,
        "tokens": tokens, "tokens_per_instance": round(tokens / made) if made else 0,
        "by_family": {b.family: {
            "instances": len(b.tasks), "dropped": sum(len(v) for v in b.dropped.values()),
            "kinds": dict(sorted(Counter(t.kind for t in mine[b.family]).items())),
            "levels": dict(sorted(Counter(str(t.metadata.complexity_level) for t in mine[b.family]).items())),
            "repairs": len(b.repairs), "tokens": b.tokens} for b in built},
    }


def write_outputs(out: Path, spec: DomainSpec, tasks: list[Task], dropped: dict[str, list[str]], llm: LLM,
                  seconds: float, settings: dict | None = None, families: tuple[int, list] | None = None) -> dict:
    """`settings`: the stage's options (task slots, seed, derived kinds, oracle, families), kept in
    index.json so that a replay builds the same tasks without being told them again. `families`:
    (families asked, tasks.family.Built of each verified one), when the run built families."""
    folder = out / "tasks"
    folder.mkdir(parents=True, exist_ok=True)
    for stale in [*folder.glob("task_*.json"), *folder.glob("answer_*.json"), *folder.glob("refusal_*.json"),
                  *folder.glob("fam_*.json")]:
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
    if families is not None:  # counted only where a run built families, so that other reports keep their bytes
        summary["families"] = family_counts(*families, tasks)
    if settings and settings.get("calibration"):
        summary["calibration"] = calibration_counts(settings["calibration"], tasks, dropped)
    index = {**({"settings": settings} if settings else {}), "summary": summary,
             "dropped": {k: v for k, v in sorted(dropped.items())},
             "tasks": [{"id": t.id, "level": t.metadata.complexity_level, "chain": t.metadata.chain,
                        "calls": len(t.reference_solution), "distractor_rows": t.metadata.distractor_rows,
                        "subgraph_tools": len(t.metadata.subgraph_nodes), "complexity": t.metadata.complexity,
                        "tokens": t.metadata.tokens, "instruction": t.instruction,
                        **({"kind": t.kind} if t.kind != "change" else {}),
                        **({"family": t.metadata.family} if t.metadata.family else {})} for t in tasks]}
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


def calibration_counts(calibration: dict, tasks: list[Task], dropped: dict[str, list[str]]) -> dict:
    """What an eval run's solve rates did (tasks/calibrate.py): tasks measured, re-levelled, dropped."""
    measured = [t for t in tasks if t.metadata and t.metadata.solve_rate is not None]
    return {"run": calibration["run"], "keep_at_most": calibration.get("keep_at_most"), "measured": len(measured),
            "relevelled": sum(t.metadata.complexity_level != t.metadata.structural_level for t in measured),
            "dropped": len(dropped.get("calibration:solved", []))}


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
                "are derived from the verified change tasks without a model"
                + ("; a family's instances with facts are answer tasks too" if "families" in summary else "") + ")"]
               if "kinds" in summary else []),
             *(["- levels by kind: " + "; ".join(
                 f"{kind} " + ", ".join(f"{level}: {n}" for level, n in levels.items())
                 for kind, levels in summary["levels_by_kind"].items())] if "levels_by_kind" in summary else []),
             *(_family_lines(summary["families"]) if "families" in summary else []),
             *([_calibration_line(summary["calibration"])] if "calibration" in summary else []), "",
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


def _calibration_line(counts: dict) -> str:
    kept = f"; dropped when solved in more than {counts['keep_at_most']:.0%} of the trials: {counts['dropped']}" \
        if counts["keep_at_most"] is not None else ""
    return (f"- levels calibrated by eval run `{counts['run']}`: {counts['measured']} tasks measured, "
            f"{counts['relevelled']} re-levelled by their solve rate{kept}")


def _family_lines(counts: dict) -> list[str]:
    lines = [f"- families: {counts['verified']} of {counts['asked']} verified ({counts['dropped']} dropped), "
             f"{counts['instances']} instances ({counts['instances_per_family']} per family), "
             f"{counts['tokens']} family tokens, {counts['tokens_per_instance']} per instance", "",
             "| family | instances | dropped | kinds | levels | repairs | tokens |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for name, c in counts["by_family"].items():
        kinds = ", ".join(f"{k}: {v}" for k, v in c["kinds"].items())
        levels = ", ".join(f"{k}: {v}" for k, v in c["levels"].items())
        lines.append(f"| {name} | {c['instances']} | {c['dropped']} | {kinds} | {levels} | {c['repairs']} | {c['tokens']} |")
    return lines
