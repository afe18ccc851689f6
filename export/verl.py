"""verl multi-turn rows (agent_name "tool_agent"): data/train.parquet, one row per task.

    {data_source, prompt, agent_name, ability, reward_model{style, ground_truth},
     extra_info{split, index, task_id, need_tools_kwargs, tools_kwargs, interaction_kwargs}}

A row names its task and the worldsmith HTTP server (`python -m mcp_servers NAME --transport
http`); the episode itself is made per rollout. verl calls `tool.create(create_kwargs=...)` for
every tool call, with the same kwargs for every rollout of a row, so the kwargs cannot carry an
episode id: the trajectory's request id does. The interaction's `start_interaction(request_id,
**interaction_kwargs)` opens the episode with POST {base_url}/episodes {"task_id", "episode_id":
request_id}; each tool call (verl hands the tool `agent_data.request_id`) goes to
{base_url}/episodes/{request_id}/mcp (a tool that runs first makes the same POST, and 409
"already exists" means the episode is open); the reward is GET {base_url}/episodes/{request_id}/reward
once the episode ends. `reward_model.ground_truth` holds the task id and reference solution for
the reward side; the kwargs hold no answer. The rows are built by export/episode_rows.py. The
control requests (the POST, the reward) carry the server's control token, which the trainer's
processes read from WORLDSMITH_CONTROL_TOKEN (trainers/control.py): no row holds it.
"""

from __future__ import annotations

from pathlib import Path

from export.episode_rows import episode_rows, write_rows
from export.source import DomainSource

AGENT_NAME = "tool_agent"
INTERACTION = "worldsmith"


def rows(source: DomainSource, base_url: str) -> list[dict]:
    def extra_info(bound: dict) -> dict:
        return {
            "task_id": bound["task_id"],
            "need_tools_kwargs": True,
            "tools_kwargs": {tool["function"]["name"]: {"create_kwargs": bound} for tool in source.tools},
            "interaction_kwargs": {"name": INTERACTION, **bound},
        }

    return episode_rows(source, base_url, runner={"agent_name": AGENT_NAME, "ability": "tool_use"},
                        reward=("reward_model", "style"), extra_info=extra_info)


def export(source: DomainSource, out: Path, base_url: str, **_options) -> list[Path]:
    return write_rows(out, rows(source, base_url))
