"""A run's report: average reward, pass^k and pass@k (overall, per complexity level, per task kind),
per-task table, token cost, and three plots (pass^k curves, per-level bars, reward histogram)."""

from __future__ import annotations

import json
import statistics
from collections import Counter, defaultdict
from pathlib import Path

from rollouts.passk import CONVENTION, curves


def _grouped(by_task: dict[str, list[dict]], group_of: dict[str, str]) -> dict:
    """pass^k and the average reward of each group of tasks (a level, a kind); "-": not recorded."""
    groups: dict[str, list[str]] = defaultdict(list)
    for task in by_task:
        groups[group_of.get(task) or "-"].append(task)
    out = {}
    for name, tasks in sorted(groups.items()):
        successes = {t: [r["passed"] for r in by_task[t]] for t in tasks}
        out[name] = {"tasks": len(tasks),
                     "average_reward": statistics.fmean(r["reward"] for t in tasks for r in by_task[t]),
                     "pass^k": {str(k): v for k, v in curves(successes)["pass^k"].items()}}
    return out


def summarize(records: list[dict], config: dict, groups: dict[str, dict[str, str]] | None = None) -> dict:
    """report.json's content from the run's trajectory records; `groups`: {"level"|"kind": task -> group}."""
    by_task: dict[str, list[dict]] = defaultdict(list)
    for record in sorted(records, key=lambda r: (r["task_id"], r["trial"])):
        by_task[record["task_id"]].append(record)
    successes = {task: [r["passed"] for r in rows] for task, rows in by_task.items()}
    tokens = {role: {part: sum(r["tokens"][role][part] for r in records) for part in ("prompt", "completion")}
              for role in ("agent", "user")}
    seconds = sorted(r["seconds"] for r in records)
    return {
        "config": config,
        "episodes": len(records),
        "tasks": len(by_task),
        "average_reward": statistics.fmean(r["reward"] for r in records) if records else 0.0,
        "success_rate": statistics.fmean(r["passed"] for r in records) if records else 0.0,
        "convention": CONVENTION,
        **{name: {str(k): v for k, v in curve.items()} for name, curve in curves(successes).items()},
        **{f"by_{name}": _grouped(by_task, group_of) for name, group_of in (groups or {}).items()},
        "terminations": dict(sorted(Counter(r["termination"] for r in records).items())),
        "errors": [{"task_id": r["task_id"], "trial": r["trial"], "error": r["error"]} for r in records if r["error"]],
        "tokens": {**tokens, "total": sum(v for role in tokens.values() for v in role.values())},
        "episode_seconds": {"mean": statistics.fmean(seconds), "p50": seconds[len(seconds) // 2],
                            "max": seconds[-1]} if seconds else {},
        "per_task": {task: {
            "trials": len(rows), "successes": sum(r["passed"] for r in rows),
            "mean_reward": statistics.fmean(r["reward"] for r in rows),
            "rewards": [r["reward"] for r in rows],
            "mean_turns": statistics.fmean(r["turns"] for r in rows),
            "mean_tool_calls": statistics.fmean(r["tool_calls"] for r in rows),
            "errors": sum(1 for r in rows if r["error"]),
        } for task, rows in by_task.items()},
    }


def plot(summary: dict, records: list[dict], out: Path) -> list[str]:
    """pass^k / pass@k against k, and the reward distribution, as SVG files in `out`."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    matplotlib.rcParams["svg.hashsalt"] = "worldsmith"  # same data, same bytes
    matplotlib.rcParams["svg.fonttype"] = "none"
    name = f"{summary['config'].get('domain', '')} · {summary['config'].get('agent', '')}"
    figure, axes = plt.subplots(figsize=(5, 3.5))
    for label, marker in (("pass^k", "o"), ("pass@k", "s")):
        curve = summary[label]
        axes.plot([int(k) for k in curve], list(curve.values()), marker=marker, label=label)
    axes.set(xlabel="k", ylabel="share of tasks", ylim=(-0.02, 1.02), title=name)
    axes.xaxis.get_major_locator().set_params(integer=True)
    axes.grid(alpha=0.3)
    axes.legend()
    figure.tight_layout()
    figure.savefig(out / "pass_k.svg", metadata={"Date": None})
    plt.close(figure)

    pictures = ["pass_k.svg"]
    if summary.get("by_level"):
        figure, axes = plt.subplots(figsize=(5, 3.5))
        levels = list(summary["by_level"])
        ks = list(summary["pass^k"])
        width = 0.8 / max(len(ks), 1)
        for i, k in enumerate(ks):
            axes.bar([x + i * width for x in range(len(levels))],
                     [summary["by_level"][level]["pass^k"].get(k, 0.0) for level in levels], width, label=f"pass^{k}")
        axes.set_xticks([x + width * (len(ks) - 1) / 2 for x in range(len(levels))],
                        [f"level {level} ({summary['by_level'][level]['tasks']})" for level in levels])
        axes.set(ylabel="share of tasks", ylim=(0, 1.02), title=name)
        axes.legend(fontsize="small")
        figure.tight_layout()
        figure.savefig(out / "levels.svg", metadata={"Date": None})
        plt.close(figure)
        pictures.append("levels.svg")

    figure, axes = plt.subplots(figsize=(5, 3.5))
    axes.hist([r["reward"] for r in records], bins=[i / 10 for i in range(11)], edgecolor="black")
    axes.set(xlabel="episode reward", ylabel="episodes", xlim=(0, 1), title=name)
    figure.tight_layout()
    figure.savefig(out / "rewards.svg", metadata={"Date": None})
    plt.close(figure)
    return [*pictures, "rewards.svg"]


def markdown(summary: dict, pictures: list[str]) -> str:
    config, tokens = summary["config"], summary["tokens"]
    lines = [
        f"# {config.get('domain')}: {config.get('agent')}" + (f" ({config['model']})" if config.get("model") else ""),
        "",
        f"- episodes: {summary['episodes']} ({summary['tasks']} tasks × up to {config.get('k')} trials), "
        f"via {config.get('via')}, user: {config.get('user')}",
        f"- average reward: **{summary['average_reward']:.3f}**, full-reward episodes: {summary['success_rate']:.1%}",
        f"- limits per episode: {config['limits']['max_turns']} turns (agent actions), "
        f"{config['limits']['max_tool_calls']} tool calls",
        "- ended by: " + ", ".join(f"{k} {v}" for k, v in summary["terminations"].items()),
        f"- tokens: agent {tokens['agent']['prompt']:,} prompt + {tokens['agent']['completion']:,} completion, "
        f"user {tokens['user']['prompt']:,} + {tokens['user']['completion']:,}; total {tokens['total']:,}",
    ]
    if config.get("models"):
        lines.append("- models: " + ", ".join(f"{role} {model}" for role, model in config["models"].items()))
    if summary["episode_seconds"]:
        s = summary["episode_seconds"]
        lines.append(f"- episode seconds: mean {s['mean']:.3f}, median {s['p50']:.3f}, max {s['max']:.3f}")
    lines += ["", "## pass^k", "", f"Convention: {summary['convention']}.", "",
              "| k | pass^k | pass@k |", "| --- | --- | --- |"]
    lines += [f"| {k} | {summary['pass^k'][k]:.3f} | {summary['pass@k'][k]:.3f} |" for k in summary["pass^k"]]
    for name, title in (("by_level", "complexity level"), ("by_kind", "mode"), ("by_task_kind", "task kind")):
        if summary.get(name):
            ks = list(summary["pass^k"])
            lines += ["", f"### pass^k by {title}", "", f"| {title} | tasks | average reward | "
                      + " | ".join(f"pass^{k}" for k in ks) + " |", "| --- " * (3 + len(ks)) + "|"]
            lines += [f"| {group} | {row['tasks']} | {row['average_reward']:.3f} | "
                      + " | ".join(f"{row['pass^k'].get(k, 0.0):.3f}" for k in ks) + " |"
                      for group, row in summary[name].items()]
    lines += [""] + [f"![{p}]({p})" for p in pictures]
    lines += ["", "## Tasks", "", "| task | trials | full reward | mean reward | rewards | turns | tool calls | errors |",
              "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for task, row in summary["per_task"].items():
        rewards = " ".join(f"{r:.2f}" for r in row["rewards"])
        lines.append(f"| {task} | {row['trials']} | {row['successes']} | {row['mean_reward']:.3f} | {rewards} | "
                     f"{row['mean_turns']:.1f} | {row['mean_tool_calls']:.1f} | {row['errors']} |")
    if summary["errors"]:
        lines += ["", "## Errors", ""] + [f"- {e['task_id']} trial {e['trial']}: {e['error']}"
                                           for e in summary["errors"]]
    return "\n".join(lines) + "\n"


def write_report(records: list[dict], config: dict, out: Path,
                 groups: dict[str, dict[str, str]] | None = None) -> dict:
    summary = summarize(records, config, groups)
    pictures = plot(summary, records, out) if records else []
    (out / "report.json").write_text(json.dumps(summary, indent=1, sort_keys=True) + "\n")
    (out / "report.md").write_text(markdown(summary, pictures))
    return summary
