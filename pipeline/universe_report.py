"""`python -m pipeline.universe_report`: domains/README.md and domains/universe.svg, the universe report.

Written from what every bundled domain folder holds, never by hand: a row per domain (verified
tools, tables, procedural tests, mutation score before and after the gate, graph density, tasks
by level and kind, tokens per verified tool and per task, and how it was made: the model its
transcript records and the date its README gives), the totals, and ScaleEnv's Figure 5 drawn for
this universe (tools by tables, bubble size and colour by graph density, each domain labelled).
The picture is rendered with a fixed SVG hash salt and no date, so a rerun on the same folders
writes the same bytes; a test regenerates both files and compares them with the committed ones.

A domain is a folder under domains/ with spec.json and tools.py (`bundled_domains`).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from pathlib import Path

from domains.report_page import mutation_before

DOMAINS = Path(__file__).resolve().parent.parent / "domains"
_DATE = re.compile(r"(?i)\b(?:built|recorded|made|date)\b[^\n]{0,80}?(\d{4}-\d{2}-\d{2})")


def bundled_domains(root: Path = DOMAINS) -> list[Path]:
    """The domain folders under `root`: each holds spec.json and tools.py. Sorted by name."""
    return sorted(p for p in root.iterdir() if p.is_dir() and (p / "spec.json").is_file() and (p / "tools.py").is_file())


def _read(path: Path) -> dict:
    return json.loads(path.read_text()) if path.is_file() else {}


def provenance(folder: Path) -> dict:
    """The model(s) the domain's transcript records and the date its README gives, where it gives one."""
    models: Counter = Counter()
    transcript = folder / "transcript.jsonl"
    if transcript.is_file():
        for line in transcript.read_text().splitlines():
            if line.strip():
                models[json.loads(line).get("model") or "unknown"] += 1
    readme = folder / "README.md"
    found = _DATE.search(readme.read_text()) if readme.is_file() else None
    return {"models": [m for m, _ in models.most_common()], "date": found.group(1) if found else None}


def domain_row(folder: Path) -> dict:
    """One domain's figures, from its report.json, tasks/index.json, graph and transcript."""
    report = _read(folder / "report.json")
    tasks = _read(folder / "tasks" / "index.json").get("summary") or report.get("tasks") or {}
    mutation = report.get("mutation") or {}
    verified = len(report.get("tools", {}).get("verified", []))
    tokens = report.get("tokens", {}).get("total", {}).get("total", 0)
    graph = report.get("graph") or {}
    built = tasks.get("built", 0)
    return {
        "name": folder.name,
        "tools": verified,
        "tables": report.get("tables", 0),
        "tests": report.get("procedural_tests", 0),
        "mutation_before": round(mutation_before(mutation), 4) if mutation.get("mutants") else None,
        "mutation_after": mutation.get("score"),
        "density": graph.get("density"),
        "tasks": built,
        "levels": tasks.get("levels", {}),
        "kinds": tasks.get("kinds") or ({"change": built} if built else {}),
        "tokens": tokens,
        "tokens_per_tool": round(tokens / verified) if verified else None,
        "task_tokens": tasks.get("tokens", 0),
        "tokens_per_task": tasks.get("tokens_per_task"),
        **provenance(folder),
    }


def _score(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _counts(counts: dict) -> str:
    return ", ".join(f"{k}: {v}" for k, v in sorted(counts.items())) or "-"


def totals(rows: list[dict]) -> dict:
    tools = sum(r["tools"] for r in rows)
    tasks = sum(r["tasks"] for r in rows)
    tokens, task_tokens = sum(r["tokens"] for r in rows), sum(r["task_tokens"] for r in rows)
    levels: Counter = Counter()
    kinds: Counter = Counter()
    for r in rows:
        levels.update(r["levels"])
        kinds.update(r["kinds"])
    return {"domains": len(rows), "tools": tools, "tables": sum(r["tables"] for r in rows),
            "tests": sum(r["tests"] for r in rows), "tasks": tasks, "levels": dict(levels), "kinds": dict(kinds),
            "tokens": tokens, "tokens_per_tool": round(tokens / tools) if tools else None,
            "task_tokens": task_tokens, "tokens_per_task": round(task_tokens / tasks) if tasks else None}


def markdown(rows: list[dict], picture: str) -> str:
    total = totals(rows)
    lines = ["# The bundled domains", "",
             "Written by `python -m pipeline.universe_report` from each domain folder's `report.json`,",
             "`tasks/index.json` and transcript; do not edit by hand. Mutation scores are the share of",
             "non-equivalent mutants the procedural tests kill, before and after the mutation gate; graph",
             "density is the tool dependency graph's; tokens are the model's, prompt and completion, as each",
             "transcript records them (per verified tool for the domain build, per verified task for the",
             "task stage).", "",
             "| domain | tools | tables | tests | mutation before → after | graph density | tasks | by level "
             "| by kind | tokens per tool | tokens per task | made by |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        made = ", ".join(r["models"]) or "-"
        made += f" ({r['date']})" if r["date"] else ""
        lines.append(f"| [{r['name']}]({r['name']}/README.md) | {r['tools']} | {r['tables']} | {r['tests']:,} | "
                     f"{_score(r['mutation_before'])} → {_score(r['mutation_after'])} | {_score(r['density'])} | "
                     f"{r['tasks']} | {_counts(r['levels'])} | {_counts(r['kinds'])} | "
                     f"{r['tokens_per_tool'] or '-':,} | {r['tokens_per_task'] or '-':,} | {made} |")
    lines.append(f"| **total** | {total['tools']} | {total['tables']} | {total['tests']:,} | | | {total['tasks']} | "
                 f"{_counts(total['levels'])} | {_counts(total['kinds'])} | {total['tokens_per_tool'] or '-':,} | "
                 f"{total['tokens_per_task'] or '-':,} | |")
    plural = "domain" if total["domains"] == 1 else "domains"
    lines += ["", f"{total['domains']} {plural}, {total['tools']} verified tools over {total['tables']} tables, "
              f"{total['tests']:,} procedural tests, {total['tasks']} verified tasks;",
              f"{total['tokens']:,} tokens for the domains and {total['task_tokens']:,} for their tasks.", "",
              f"![tools by tables, bubble size and colour by graph density]({picture})", "",
              "ScaleEnv's Figure 5 for this universe: verified tools on the x-axis, tables on the y-axis,",
              "each bubble's size and colour its tool graph's density.", ""]
    return "\n".join(lines)


def figure(rows: list[dict], path: Path) -> None:
    """ScaleEnv's Figure 5: tools by tables, bubble size and colour by graph density, labelled."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    matplotlib.rcParams["svg.hashsalt"] = "worldsmith"  # same data, same bytes
    matplotlib.rcParams["svg.fonttype"] = "none"
    density = [r["density"] or 0.0 for r in rows]
    top = max(density, default=0.0) or 1.0
    fig, axes = plt.subplots(figsize=(6.5, 4.5))
    points = axes.scatter([r["tools"] for r in rows], [r["tables"] for r in rows],
                          s=[300 + 2700 * d / top for d in density], c=density, cmap="Blues", vmin=0.0, vmax=top,
                          edgecolors="#1f3b63", linewidths=0.8, alpha=0.85)
    for r in rows:
        axes.annotate(r["name"], (r["tools"], r["tables"]), textcoords="offset points", xytext=(0, -4),
                      ha="center", va="top", fontsize=8)
    tools, tables = [r["tools"] for r in rows] or [0], [r["tables"] for r in rows] or [0]
    axes.set(xlabel="tools", ylabel="database tables", title="Structure of the bundled domains",
             xlim=(min(tools) - 10, max(tools) + 10), ylim=(max(0, min(tables) - 3), max(tables) + 3))
    axes.grid(alpha=0.3)
    fig.colorbar(points, ax=axes, label="tool graph density")
    fig.tight_layout()
    fig.savefig(path, format="svg", metadata={"Date": None})
    plt.close(fig)


def write(root: Path = DOMAINS, out: Path | None = None) -> list[Path]:
    """README.md and universe.svg in `out` (default: `root`) from the domain folders under `root`."""
    rows = [domain_row(folder) for folder in bundled_domains(root)]
    out = out or root
    out.mkdir(parents=True, exist_ok=True)
    svg, readme = out / "universe.svg", out / "README.md"
    figure(rows, svg)
    readme.write_text(markdown(rows, svg.name))
    return [readme, svg]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pipeline.universe_report", description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=DOMAINS, help="the folder of domain folders (default domains/)")
    parser.add_argument("--out", type=Path, help="where to write README.md and universe.svg (default: --root)")
    args = parser.parse_args(argv)
    for path in write(args.root, args.out):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
