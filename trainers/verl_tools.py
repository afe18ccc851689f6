"""verl's multi-turn agent loop over a served worldsmith domain: a tool class, an interaction
class and the two configs that name them.

    python -m trainers.verl_tools --worldsmith-url http://127.0.0.1:8000 --out verl_configs/

writes `tool_config.yaml` (one entry per tool of the domain, all served by `WorldsmithTool`) and
`interaction_config.yaml` (`WorldsmithInteraction`, named `worldsmith` as the rows of `make
export FORMAT=verl` expect). Point `actor_rollout_ref.rollout.multi_turn.tool_config_path` and
`interaction_config_path` at them.

verl creates a tool afresh for every call (every call may open a new MCP session) and gives
every rollout of a row the same kwargs, so the episode is named by the trajectory's request id:
`start_interaction(request_id, task_id=...)` opens it, a tool call reaches it through
`agent_data.request_id` (or opens it itself when it runs first; the server answers 409 for an
episode already open), and `generate_response` is the simulated user: when the agent answers
without calling a tool, its message goes to the user (served by `python -m rollouts.serve`, see
trainers/conversation.py) and the user's reply is the next turn. The episode ends when the user
stops or after `max_user_turns` (default 10) messages; its score is then the episode's
state-diff reward, the only reward; tool calls score 0.0. Multi-turn is the default;
`single_turn: true` in the interaction config (or a row's interaction_kwargs) ends the episode at
the agent's first answer instead. The classes follow verl's documented `BaseTool` and
`BaseInteraction` interfaces without importing verl, which needs a CUDA torch and an inference
engine to install.
"""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path
from typing import Any

import yaml

from trainers.control import ControlError
from trainers.conversation import MAX_USER_TURNS, connected, tell_user

INTERACTION_NAME = "worldsmith"


def _field(obj: Any, name: str) -> Any:
    return obj.get(name) if isinstance(obj, dict) else getattr(obj, name, None)


class WorldsmithTool:
    """One domain tool (verl BaseTool): create → execute → calc_reward → release."""

    def __init__(self, config: dict, tool_schema: Any):
        self.config, self.tool_schema = config, tool_schema
        self.name = _field(_field(tool_schema, "function"), "name")
        self._instances: dict[str, dict] = {}

    def get_openai_tool_schema(self) -> Any:
        return self.tool_schema

    async def create(self, instance_id: str | None = None, create_kwargs: dict | None = None, **kwargs) -> str:
        instance_id = instance_id or f"{self.name}-{len(self._instances)}"
        self._instances[instance_id] = dict(create_kwargs or kwargs.get("create_kwargs") or {})
        return instance_id

    async def execute(self, instance_id: str, parameters: dict, agent_data: Any = None,
                      **kwargs) -> tuple[str, float, dict]:
        bound = self._instances.get(instance_id, {})
        episode = _field(agent_data, "request_id") or instance_id

        def call() -> tuple[str, bool]:
            with connected(bound.get("base_url") or self.config["base_url"]) as control:
                try:
                    control.open(bound.get("task_id"), episode)  # the interaction usually opened it already
                    return control.call(episode, self.name, dict(parameters or {}))
                except ControlError as error:
                    return f"Error: {error}", True

        text, is_error = await asyncio.to_thread(call)
        return text, 0.0, {"is_error": is_error}

    async def calc_reward(self, instance_id: str, **kwargs) -> float:
        return 0.0  # the reward is the interaction's, once the episode ends

    async def release(self, instance_id: str, **kwargs) -> None:
        self._instances.pop(instance_id, None)


class WorldsmithInteraction:
    """The episode's life (verl BaseInteraction): opened at the start; each answer without a tool
    call goes to the simulated user, whose reply comes back; scored when the user stops or the
    turns are spent (single-turn: at the first answer)."""

    def __init__(self, config: dict):
        self.config = config
        self.name = config.get("name", INTERACTION_NAME)
        self._episodes: dict[str, dict] = {}

    async def start_interaction(self, instance_id: str | None = None, **kwargs) -> str:
        base_url = kwargs.get("base_url") or self.config["base_url"]
        with connected(base_url) as control:
            episode = await asyncio.to_thread(control.open, kwargs.get("task_id"), instance_id)
        self._episodes[episode["episode_id"]] = {
            "base_url": base_url, "reward": None,
            "single_turn": bool(kwargs.get("single_turn", self.config.get("single_turn", False))),
            "max_user_turns": int(kwargs.get("max_user_turns", self.config.get("max_user_turns", MAX_USER_TURNS)))}
        return episode["episode_id"]

    async def generate_response(self, instance_id: str, messages: list[dict], **kwargs) -> tuple[bool, str, float, dict]:
        episode = self._episodes[instance_id]
        said = next((m.get("content") or "" for m in reversed(messages) if m.get("role") == "assistant"), "")

        def talk():
            with connected(episode["base_url"]) as control:
                return tell_user(control, instance_id, said, episode["max_user_turns"], episode["single_turn"])

        turn = await asyncio.to_thread(talk)
        if not turn.done:
            return False, turn.message, 0.0, {}
        episode["reward"] = turn.reward
        return True, turn.message, turn.reward, {"passed": turn.passed}

    async def calculate_score(self, instance_id: str | None = None, **kwargs) -> float:
        episode = self._episodes.get(instance_id or "", {})
        return episode.get("reward") or 0.0

    async def finalize_interaction(self, instance_id: str | None = None, **kwargs) -> None:
        episode = self._episodes.pop(instance_id or "", None)
        if episode:
            with connected(episode["base_url"]) as control:
                control.delete(instance_id)


def configs(worldsmith_url: str, single_turn: bool = False) -> tuple[dict, dict]:
    """verl's tool config and interaction config for the server's domain."""
    with connected(worldsmith_url) as control:
        tools = control.tools()
    tool_config = {"tools": [{
        "class_name": f"{__name__}.WorldsmithTool",
        "config": {"type": "native", "base_url": worldsmith_url},
        "tool_schema": {"type": "function", "function": {"name": t["name"], "description": t["description"],
                                                         "parameters": t["input_schema"]}},
    } for t in tools]}
    interaction_config = {"interaction": [{"name": INTERACTION_NAME, "class_name": f"{__name__}.WorldsmithInteraction",
                                           "config": {"base_url": worldsmith_url, "single_turn": single_turn,
                                                      "max_user_turns": MAX_USER_TURNS}}]}
    return tool_config, interaction_config


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m trainers.verl_tools", description=__doc__.splitlines()[0])
    parser.add_argument("--worldsmith-url", required=True)
    parser.add_argument("--out", type=Path, default=Path("verl_configs"))
    parser.add_argument("--single-turn", action="store_true",
                        help="end each episode at the agent's first answer (default: the simulated user replies)")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    tool_config, interaction_config = configs(args.worldsmith_url, args.single_turn)
    (args.out / "tool_config.yaml").write_text(yaml.safe_dump(tool_config, sort_keys=False))
    (args.out / "interaction_config.yaml").write_text(yaml.safe_dump(interaction_config, sort_keys=False))
    print(f"{args.out}/tool_config.yaml ({len(tool_config['tools'])} tools), {args.out}/interaction_config.yaml")


if __name__ == "__main__":
    main()
