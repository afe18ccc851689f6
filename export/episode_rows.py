"""Rows bound to served episodes, the shape verl and SkyRL share: data/train.parquet (and the same
rows as data/train.jsonl), one row per task.

A row names its task and the worldsmith HTTP server (`python -m mcp_servers NAME --transport
http`); each rollout opens its own episode there. Every row holds `data_source`, the agent's
`prompt`, a reward field with the task id and reference solution (the reward side only; an answer
task's facts and a refusal task's policy rule beside them; the server's reward reads the final
message from POST /episodes/{id}/reward), and
`extra_info` with the split, the row's index and what reaches the episode (no answer). What sets
the formats apart is passed in: the keys that tell the trainer how to run the row, the reward
field's names, and the format's own bindings in `extra_info`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from export.files import dumps, write_jsonl, write_parquet
from export.source import DomainSource, answer_side


def binding(source: DomainSource, task, base_url: str) -> dict:
    """What a tool, interaction or environment needs to reach the task's episodes: no answers."""
    return {"base_url": base_url.rstrip("/"), "domain": source.name, "task_id": task.id}


def ground_truth(source: DomainSource, task) -> str:
    return dumps({"domain": source.name, "task_id": task.id,
                  "reference_solution": [call.model_dump() for call in task.reference_solution], **answer_side(task)})


def episode_rows(source: DomainSource, base_url: str, *, runner: dict, reward: tuple[str, str],
                 extra_info: Callable[[dict], dict], split: str = "train") -> list[dict]:
    """One row per task: `runner` holds the keys that say how the trainer runs a row, `reward` is
    (the reward field, its key naming the rule style), `extra_info(binding)` the format's own bindings."""
    field, style = reward
    return [{
        "data_source": source.data_source,
        "prompt": source.prompt(task),
        **runner,
        field: {style: "rule", "ground_truth": ground_truth(source, task)},
        "extra_info": {"split": split, "index": index, **extra_info(binding(source, task, base_url))},
    } for index, task in enumerate(source.tasks)]


def write_rows(out: Path, rows: list[dict], split: str = "train") -> list[Path]:
    """The rows as out/data/<split>.parquet and out/data/<split>.jsonl."""
    jsonl = write_jsonl(out / "data" / f"{split}.jsonl", rows)
    return [write_parquet(out / "data" / f"{split}.parquet", jsonl), jsonl]
