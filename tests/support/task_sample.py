"""A fixed sample of a domain's bundled tasks, and what a scripted agent says at the end of each kind.

Adapter and export tests check the adapter, not every task: they play `sample(domain)`, the first
tasks of each kind (change, answer, refusal), complexity level and origin (built alone or drawn
from a family), spread evenly over each group's ids as the bundled index lists them, so the sample
covers every kind and level however many tasks the domain bundles. One test (tests/test_tasks_mcp.py) plays every bundled task.
Stdlib only: the trainer probes import it under .venv-trainers.
"""

from __future__ import annotations

import json
from pathlib import Path

PER_GROUP = 2


def index(domain_dir: Path) -> dict:
    return json.loads((domain_dir / "tasks" / "index.json").read_text())


def bundled_count(domain_dir: Path) -> int:
    """How many verified tasks the domain bundles, as its index counts them."""
    return index(domain_dir)["summary"]["built"]


def group_of(entry: dict) -> tuple[str, int, str]:
    """An index line's (kind, level, origin)."""
    return entry.get("kind", "change"), entry["level"], "family" if entry.get("family") else "alone"


def sample(domain_dir: Path, per_group: int = PER_GROUP, also: tuple[str, ...] = ()) -> list[str]:
    """Up to `per_group` task ids of each (kind, level, origin), evenly spaced in the group's sorted
    ids (the first, then the middle, ...), sorted, with the ids in `also`."""
    groups: dict[tuple, list[str]] = {}
    for entry in index(domain_dir)["tasks"]:
        groups.setdefault(group_of(entry), []).append(entry["id"])
    picked = {ids[j * len(ids) // per_group] for ids in map(sorted, groups.values()) for j in range(min(per_group, len(ids)))}
    return sorted(picked | set(also))


def kinds(domain_dir: Path) -> dict[str, str]:
    """Each bundled task's kind."""
    return {e["id"]: e.get("kind", "change") for e in index(domain_dir)["tasks"]}


def final_message(task: dict) -> str:
    """The agent's last message to the user: on an answer task it states every fact the task asks for."""
    if task.get("kind") == "answer":
        return "Here is what I found: " + "; ".join(f"{f['label']}: {f['value']}" for f in task["facts"]) + "."
    return "Done."


def forbidden_call(task: dict) -> dict | None:
    """The call a refusal task's policy forbids (tool, arguments); None on other kinds."""
    rule = task.get("policy_rule")
    return {"tool": rule["forbidden"]["tool"], "arguments": rule["forbidden"].get("arguments", {})} if rule else None
