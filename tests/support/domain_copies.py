"""A domains root with job_seeking under several names: many domains before many are built.

`domains_root(tmp, ["job_seeking", "job_seeking_copy"])` copies what serving, exporting and
scoring read (spec, tools, DB layer, report, policy, sample state, tasks) from the bundled
job_seeking under each name, with the spec's name rewritten; point domains.registry at it with
WORLDSMITH_DOMAINS. `tasks` keeps the first n tasks only, where a test needs few.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from domains.registry import ROOT_ENV

SOURCE = Path(__file__).resolve().parents[2] / "domains" / "job_seeking"
FILES = ("spec.json", "tools.py", "db.py", "report.json", "policy.md", "sample_state.json")


def copy_domain(target: Path, name: str, tasks: int | None = None) -> Path:
    folder = target / name
    (folder / "tasks").mkdir(parents=True)
    for file in FILES:
        shutil.copy(SOURCE / file, folder / file)
    spec = json.loads((SOURCE / "spec.json").read_text())
    (folder / "spec.json").write_text(json.dumps({**spec, "name": name}, indent=2))
    task_files = sorted(p for p in (SOURCE / "tasks").glob("task_*.json"))
    for path in task_files[:tasks]:
        shutil.copy(path, folder / "tasks" / path.name)
    return folder


def domains_root(target: Path, names: list[str], tasks: int | None = None) -> Path:
    """`target` holding a copy of job_seeking under each of `names`."""
    for name in names:
        copy_domain(target, name, tasks)
    return target


def root_env(root: Path) -> dict[str, str]:
    """The environment variable that points the registry at `root`."""
    return {ROOT_ENV: str(root)}
