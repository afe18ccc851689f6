"""Run under .venv-trainers by tests/test_trainers.py: verl's agent loop, as its docs describe
it, over the configs `python -m trainers.verl_tools` writes (verl itself cannot be installed here).

    python tests/support/trainers_verl_probe.py WORLDSMITH_URL TASKS_DIR OUT_DIR CONVERSATIONAL_TASK

Loads the tool and interaction classes the way verl does (class_name, config, tool_schema
validated as verl's OpenAIFunctionToolSchema), then plays every task as a rollout: the
interaction starts with the request id, each reference call is create → execute (with
agent_data.request_id) → calc_reward → release, and the agent's answers go to the simulated user
(generate_response) until the episode ends. The conversational task is played once more by an
agent that first asks the user for the email its request leaves out and uses the reply.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import sys
import uuid
from pathlib import Path
from types import SimpleNamespace

import yaml
from pydantic import BaseModel

from tests.support.trainers_openenv_probe import QUESTION, with_email
from trainers.verl_tools import main as write_configs


class OpenAIFunctionParametersSchema(BaseModel):  # verl.tools.schemas, restated
    type: str
    properties: dict
    required: list[str] = []


class OpenAIFunctionSchema(BaseModel):
    name: str
    description: str
    parameters: OpenAIFunctionParametersSchema
    strict: bool = False


class OpenAIFunctionToolSchema(BaseModel):
    type: str
    function: OpenAIFunctionSchema


def load(class_name: str):
    module, _, name = class_name.rpartition(".")
    return getattr(importlib.import_module(module), name)


async def rollout(tools: dict, interaction, task: dict, calls: list[dict], ask: bool = False,
                  **interaction_kwargs) -> dict:
    request_id = f"verl-{uuid.uuid4().hex[:12]}"
    bound = {"base_url": sys.argv[1], "domain": "job_seeking", "task_id": task["id"]}
    episode = await interaction.start_interaction(request_id, name="worldsmith", **bound, **interaction_kwargs)
    step_rewards, replies, done = [], [], False
    if ask:  # the agent's first answer is a question; the user's reply is the next turn
        done, reply, score, _ = await interaction.generate_response(
            request_id, [{"role": "assistant", "content": QUESTION}])
        replies.append(reply)
        if not done:
            step_rewards.append(score)
        calls = [] if done else with_email(calls, reply)
    for call in calls:
        tool = tools[call["tool"]]
        instance = await tool.create(create_kwargs=bound)
        text, step_reward, _ = await tool.execute(instance, call["arguments"], agent_data=SimpleNamespace(
            request_id=request_id))
        step_rewards.append(step_reward + await tool.calc_reward(instance))
        await tool.release(instance)
    for _ in range(0 if done else 3):  # the user may answer before it is satisfied
        done, reply, score, _ = await interaction.generate_response(request_id, [{"role": "assistant",
                                                                                   "content": "Done."}])
        replies.append(reply)
        if done:
            break
        step_rewards.append(score)
    await interaction.finalize_interaction(request_id)
    return {"episode": episode == request_id, "done": done, "score": score, "step_rewards": step_rewards,
            "replies": replies}


async def main(url: str, tasks_dir: Path, out: Path, conversational: str) -> None:
    write_configs(["--worldsmith-url", url, "--out", str(out)])
    tool_config = yaml.safe_load((out / "tool_config.yaml").read_text())
    interaction_config = yaml.safe_load((out / "interaction_config.yaml").read_text())
    tools = {}
    for entry in tool_config["tools"]:
        schema = OpenAIFunctionToolSchema.model_validate(entry["tool_schema"])
        tools[schema.function.name] = load(entry["class_name"])(config=entry["config"], tool_schema=schema)
    spec = interaction_config["interaction"][0]
    interaction = load(spec["class_name"])({"name": spec["name"], **spec["config"]})
    tasks = [json.loads(p.read_text()) for p in sorted(tasks_dir.glob("*.json")) if p.name != "index.json"]
    reference = [await rollout(tools, interaction, t, t["reference_solution"]) for t in tasks]
    noop = [await rollout(tools, interaction, t, []) for t in tasks]
    task = next(t for t in tasks if t["id"] == conversational)
    conversation = await rollout(tools, interaction, task, task["reference_solution"], ask=True)
    single_turn = await rollout(tools, interaction, task, [], ask=True, single_turn=True)
    print(json.dumps({"interaction_name": interaction.name, "tools": len(tools),
                      "reference": {t["id"]: r for t, r in zip(tasks, reference)},
                      "noop": {t["id"]: r for t, r in zip(tasks, noop)},
                      "conversation": conversation, "single_turn": single_turn}))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3]), sys.argv[4]))
