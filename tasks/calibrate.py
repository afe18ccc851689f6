"""Levels by a model's measured solve rate: an eval run re-levels the tasks it played and, as an
option, keeps only those the model rarely solves (CodeGym keeps the configurations a model passes
at most 25% of the time).

`python -m tasks NAME --calibrate RUN/report.json [--keep-at-most 0.25]`: the task stage (replayed
from its transcript, or with a model) ends by reading each task's solve rate, the share of its
trials that passed, from the report of an eval run (`make eval NAME=… MODEL=…` writes
runs/<name>/<run id>/report.json). A task the run played takes the level its rate says: solved in
more than two thirds of its trials, level 1; in more than a third, level 2; else level 3; its rate
and the level its structure gave stay in its metadata. With `keep_at_most`, a task solved more
often than that is dropped and counted as `calibration:solved`. A task the run did not play keeps
its level. The rates are kept in index.json's settings, so a replay calibrates the same way
without the run folder.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel, Field

from domains.task_model import Task

DROPPED = "calibration:solved"


class Calibration(BaseModel):
    run: str = Field(description="the eval run the rates were measured in (its run id)")
    rates: dict[str, float] = Field(description="task id -> share of the run's trials of it that passed")
    keep_at_most: float | None = Field(None, ge=0, le=1,
                                       description="drop a task solved more often than this (CodeGym: 0.25)")


class CalibrationError(ValueError):
    """The report is not an eval run's report.json."""


def solve_rates(report: dict) -> dict[str, float]:
    """Each played task's share of passed trials, from a run report's per-task rows."""
    try:
        rows = report["per_task"]
        return {task: round(row["successes"] / row["trials"], 4) for task, row in sorted(rows.items()) if row["trials"]}
    except (KeyError, TypeError) as error:
        raise CalibrationError(f"not an eval run's report.json (per_task successes and trials): missing {error}") from None


def from_report(path: Path, keep_at_most: float | None = None) -> Calibration:
    """The calibration an eval run's report.json gives."""
    try:
        report = json.loads(Path(path).read_text())
    except (OSError, ValueError) as error:
        raise CalibrationError(f"cannot read the run report {path}: {error}") from None
    run = (report.get("config") or {}).get("run_id") or Path(path).parent.name
    return Calibration(run=run, rates=solve_rates(report), keep_at_most=keep_at_most)


def level_for(rate: float) -> int:
    """The level a solve rate says: above two thirds 1, above a third 2, else 3."""
    return 1 if rate > 2 / 3 else 2 if rate > 1 / 3 else 3


def calibrate(tasks: list[Task], calibration: Calibration, dropped: dict[str, list[str]],
              log: Callable[[str], None] = lambda _m: None) -> list[Task]:
    """The tasks re-levelled by their measured rates, less those solved more often than
    `keep_at_most` (added to `dropped`); unmeasured tasks as they were."""
    kept = []
    for task in tasks:
        rate = calibration.rates.get(task.id)
        if rate is None or task.metadata is None:
            kept.append(task)
            continue
        if calibration.keep_at_most is not None and rate > calibration.keep_at_most:
            dropped.setdefault(DROPPED, []).append(task.id)
            log(f"{task.id}: dropped, solved in {rate:.0%} of the trials of run {calibration.run} "
                f"(kept: at most {calibration.keep_at_most:.0%})")
            continue
        structural = task.metadata.structural_level or task.metadata.complexity_level
        metadata = task.metadata.model_copy(update={"complexity_level": level_for(rate), "solve_rate": rate,
                                                    "structural_level": structural})
        kept.append(task.model_copy(update={"metadata": metadata}))
    return kept
