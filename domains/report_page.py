"""A domain's report page: report.json as `domains/<name>/report.md`, the page a person reads,
with the mutation scores per tool as a picture (`mutation.svg`).

Rendered from report.json, spec.json and the tests alone, so it is rewritten whenever
report.json is (after the pipeline and after the task stage), and the same inputs give the
same bytes.
"""

from __future__ import annotations

import json
from pathlib import Path

from domains.spec import DomainSpec

PICTURE = "mutation.svg"


def write_report_page(domain_dir: Path) -> None:
    domain_dir = Path(domain_dir)
    report = json.loads((domain_dir / "report.json").read_text())
    spec = DomainSpec.model_validate_json((domain_dir / "spec.json").read_text())
    cases = {p.stem: len(json.loads(p.read_text())) for p in sorted((domain_dir / "tests").glob("*.json"))
             if p.stem != "integrity"}
    mutation = report.get("mutation", {}).get("tools", {})
    picture = mutation_figure(mutation, domain_dir / PICTURE, spec.name) if mutation else None
    if picture is None:
        (domain_dir / PICTURE).unlink(missing_ok=True)
    (domain_dir / "report.md").write_text(markdown(spec, report, cases, picture))


def _n(value: int) -> str:
    return f"{value:,}"


def markdown(spec: DomainSpec, report: dict, cases: dict[str, int], picture: str | None) -> str:
    tools, tokens = report["tools"], report.get("tokens", {})
    verified = tools["verified"]
    lines = [f"# {spec.name}: domain report", "", spec.description, "", "| | |", "|---|---|"]
    dropped = "; ".join(f"{n} ({report.get('dropped_reasons', {}).get(n, '')})" for n in tools["dropped"])
    lines.append(f"| tools | {len(tools['proposed'])} proposed, {len(verified)} verified"
                 + (f", {len(tools['dropped'])} dropped: {_cell(dropped)}" if tools["dropped"] else "") + " |")
    lines.append("| tables | " + ", ".join(f"{t.name} ({len(t.columns)} columns)" for t in spec.db.tables) + " |")
    if not spec.policy.empty():
        policy = spec.policy
        lines.append(f"| policy ([policy.md](policy.md)) | {len(policy.machines)} status tables, "
                     f"{sum(len(r) for r in policy.preconditions.values())} preconditions, "
                     f"{len(policy.invariants)} invariants, {len(policy.clock.tools)} tools that read the clock |")
    debug = report.get("debug", {})
    lines.append(f"| procedural tests | {_n(sum(cases.get(n, 0) for n in verified))} cases over {len(verified)} tools; "
                 f"{len(debug.get('repaired', []))} tools repaired by the debug loop in {debug.get('attempts', 0)} "
                 f"attempts |")
    summary = report.get("mutation")
    if summary:
        tool_rows = summary["tools"].values()
        argued = summary["equivalent"] - summary.get("proved_equivalent", 0)
        left = sum(len(r["survived"]) for r in tool_rows)
        before = mutation_before(summary)
        lines.append(f"| mutation score | {summary['score']:.3f} over {_n(summary['mutants'])} non-equivalent mutants "
                     f"({_score(before)} before the gate); {summary['equivalent']} equivalent "
                     f"({summary.get('proved_equivalent', 0)} proved, {argued} argued); {left} surviving |")
        if "score_counting_argued" in summary:  # older reports took argued equivalences on trust
            lines.append(f"| mutation score, argued equivalences not believed | "
                         f"{_score(summary['score_counting_argued'])} counting the {argued} argued equivalences as "
                         f"survivors; {summary['refuted_equivalences']} argued equivalences refuted by differential "
                         f"testing, each now a killing case |")
    graph = report.get("graph")
    if graph:
        kinds = graph["kinds"]
        lines.append(f"| tool graph ([graph.md](graph.md)) | {graph['edges']['total']} edges (flow {kinds['flow']}, "
                     f"precondition {kinds['precondition']}, state {kinds['state']}), "
                     f"{graph['pruned']['total']} candidate links pruned |")
    tasks = report.get("tasks")
    if tasks:
        levels = " / ".join(str(v) for _, v in sorted(tasks.get("levels", {}).items()))
        lines.append(f"| tasks ([tasks/](tasks/README.md)) | {tasks['built']} built (by level: {levels}), "
                     f"{tasks['dropped']} dropped |")
    if tokens:
        total = tokens["total"]
        per_tool = f", {_n(round(total['total'] / len(verified)))} per verified tool" if verified else ""
        lines.append(f"| tokens, synthesis | {_n(total['total'])} ({_n(total['prompt'])} prompt + "
                     f"{_n(total['completion'])} completion){per_tool} |")
    if summary:
        lines += ["", "## Mutation score per tool", "",
                  "Each tool's code is mutated one change at a time and its tests run against every mutant; the gate "
                  "then asks for cases that kill the survivors. Equivalent mutants (no call can tell them from the "
                  "code) are left out of the score.", ""]
        if picture:
            lines += [f"![mutation score per tool]({picture})", ""]
        lines += ["| tool | cases | mutants | before the gate | after | equivalent (proved) | surviving |",
                  "|---|---|---|---|---|---|---|"]
        for name, r in sorted(summary["tools"].items(), key=lambda kv: (kv[1]["score"] or 0, kv[0])):
            lines.append(f"| {name} | {cases.get(name, 0)} | {r['mutants']} | {_score(_before(r))} | "
                         f"{_score(r['score'])} | {len(r['equivalent'])} ({len(r.get('proved_equivalent', []))}) | "
                         f"{_cell('; '.join(r['survived']))} |")
    if tokens:
        lines += ["", "## Tokens per stage", "", "| stage | prompt | completion |", "|---|---|---|"]
        lines += [f"| {stage} | {_n(t['prompt'])} | {_n(t['completion'])} |" for stage, t in tokens["stages"].items()]
    return "\n".join(lines) + "\n"


def mutation_before(summary: dict) -> float | None:
    """report.json's mutation score before the gate: the share of the mutants the tests killed then."""
    tools = summary["tools"].values()
    return sum(_killed_before(r) for r in tools) / summary["mutants"] if summary["mutants"] else None


def _killed_before(record: dict) -> int:
    """Mutants the tests killed before the gate (older reports keep only the share of all mutants)."""
    return record.get("killed_before", round((record.get("score_before") or 0) * record["mutants"]))


def _before(record: dict) -> float | None:
    """The share of the non-equivalent mutants the tests killed before the gate."""
    counted = record["mutants"] - len(record["equivalent"])
    return round(_killed_before(record) / counted, 4) if counted else None


def _score(value: float | None) -> str:
    return "" if value is None else f"{value:.3f}"


def _cell(value: str) -> str:
    return value.replace("|", "\\|").replace("\n", " ")


def mutation_figure(tools: dict[str, dict], path: Path, name: str) -> str | None:
    """Per tool, the share of its non-equivalent mutants killed before and after the gate, as SVG."""
    rows = sorted(((n, r) for n, r in tools.items() if r.get("score") is not None),
                  key=lambda kv: (kv[1]["score"], _before(kv[1]) or 0, kv[0]), reverse=True)
    if not rows:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    matplotlib.rcParams["svg.hashsalt"] = "worldsmith"  # same data, same bytes
    matplotlib.rcParams["svg.fonttype"] = "none"
    figure, axes = plt.subplots(figsize=(7, 1.2 + 0.2 * len(rows)))
    ys = range(len(rows))
    axes.barh(ys, [r["score"] for _, r in rows], color="#4c72b0", label="after the gate")
    axes.barh(ys, [_before(r) or 0 for _, r in rows], color="#c7d4e8", label="before the gate")
    axes.set_yticks(list(ys), [n for n, _ in rows], fontsize=7)
    axes.invert_yaxis()
    axes.set(xlim=(0, 1), xlabel="share of non-equivalent mutants killed", title=f"{name}: mutation score per tool")
    axes.grid(axis="x", alpha=0.3)
    axes.legend(loc="lower left", fontsize=7)
    figure.tight_layout()
    figure.savefig(path, metadata={"Date": None})
    plt.close(figure)
    return path.name
