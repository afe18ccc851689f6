"""verl multi-turn rows (agent_name "tool_agent"): data/train.parquet, one row per task.

    {data_source, agent_name, prompt, ability, reward_model{style, ground_truth},
     extra_info{split, index, task_id, need_tools_kwargs, tools_kwargs, interaction_kwargs}}

A row names its task and the worldsmith HTTP server (`python -m mcp_servers NAME --transport
http`); the episode itself is made per rollout. verl calls `tool.create(create_kwargs=...)` for
every tool call, with the same kwargs for every rollout of a row, so the kwargs cannot carry an
episode id: the trajectory's request id does. The interaction's `start_interaction(request_id,
**interaction_kwargs)` opens the episode with POST {base_url}/episodes {"task_id", "episode_id":
request_id}; each tool call (verl hands the tool `agent_data.request_id`) goes to
{base_url}/episodes/{request_id}/mcp (a tool that runs first makes the same POST, and 409 "already exists" means the episode is open); the reward is GET
{base_url}/episodes/{request_id}/reward once the episode ends. `reward_model.ground_truth` holds
the task id and reference solution for the reward side; the kwargs hold no answer. The control
requests (the POST, the reward) carry the server's control token, which the trainer's processes
read from WORLDSMITH_CONTROL_TOKEN (trainers/control.py): no row holds it.
"""

from __future__ import annotations

from pathlib import Path

from export.files import dumps, write_jsonl, write_parquet
from export.source import DomainSource

AGENT_NAME = "tool_agent"
INTERACTION = "worldsmith"


def binding(source: DomainSource, task, base_url: str) -> dict:
    """What a tool or interaction needs to reach the task's episodes: no answers."""
    return {"base_url": base_url.rstrip("/"), "domain": source.name, "task_id": task.id}


def ground_truth(source: DomainSource, task) -> str:
    return dumps({"domain": source.name, "task_id": task.id,
                  "reference_solution": [call.model_dump() for call in task.reference_solution]})


def row(source: DomainSource, task, index: int, base_url: str, split: str = "train") -> dict:
    bound = binding(source, task, base_url)
    return {
        "data_source": source.data_source,
        "agent_name": AGENT_NAME,
        "prompt": source.prompt(task),
        "ability": "tool_use",
        "reward_model": {"style": "rule", "ground_truth": ground_truth(source, task)},
        "extra_info": {
            "split": split,
            "index": index,
            "task_id": task.id,
            "need_tools_kwargs": True,
            "tools_kwargs": {tool["function"]["name"]: {"create_kwargs": bound} for tool in source.tools},
            "interaction_kwargs": {"name": INTERACTION, **bound},
        },
    }


def export(source: DomainSource, out: Path, base_url: str, **_options) -> list[Path]:
    rows = [row(source, task, i, base_url) for i, task in enumerate(source.tasks)]
    jsonl = write_jsonl(out / "data" / "train.jsonl", rows)
    return [write_parquet(out / "data" / "train.parquet", jsonl), jsonl]
