"""Run under .venv-trainers by tests/test_trainers.py: verl's agent loop, as its docs describe
it, over the configs `python -m trainers.verl_tools` writes (verl itself cannot be installed here).

    python tests/support/trainers_verl_probe.py WORLDSMITH_URL TASKS_DIR TASK_IDS OUT_DIR CONVERSATIONAL_TASK

Loads the tool and interaction classes the way verl does (class_name, config, tool_schema
validated as verl's OpenAIFunctionToolSchema), then plays each task of TASK_IDS (comma-separated)
as a rollout: the interaction starts with the request id, each reference call is create → execute
(with agent_data.request_id) → calc_reward → release, and the agent's answers go to the simulated
user (generate_response) until the episode ends; the reference agent's answer states an answer
task's facts. Each task is played with nothing too, and a refusal task with its forbidden call.
The conversational task is played once more by an agent that first asks the user for the email
its request leaves out and uses the reply.
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

from tests.support.task_sample import final_message, forbidden_call
from tests.support.trainers_openenv_probe import QUESTION, task_files, with_email
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


async def rollout(tools: dict, interaction, task: dict, calls: list[dict], ask: bool = False, answer: str = "Done.",
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
                                                                                   "content": answer}])
        replies.append(reply)
        if done:
            break
        step_rewards.append(score)
    await interaction.finalize_interaction(request_id)
    return {"episode": episode == request_id, "done": done, "score": score, "step_rewards": step_rewards,
            "replies": replies}


async def main(url: str, tasks_dir: Path, ids: str, out: Path, conversational: str) -> None:
    write_configs(["--worldsmith-url", url, "--out", str(out)])
    tool_config = yaml.safe_load((out / "tool_config.yaml").read_text())
    interaction_config = yaml.safe_load((out / "interaction_config.yaml").read_text())
    tools = {}
    for entry in tool_config["tools"]:
        schema = OpenAIFunctionToolSchema.model_validate(entry["tool_schema"])
        tools[schema.function.name] = load(entry["class_name"])(config=entry["config"], tool_schema=schema)
    spec = interaction_config["interaction"][0]
    interaction = load(spec["class_name"])({"name": spec["name"], **spec["config"]})
    tasks = task_files(tasks_dir, ids)
    reference = [await rollout(tools, interaction, t, t["reference_solution"], answer=final_message(t)) for t in tasks]
    noop = [await rollout(tools, interaction, t, []) for t in tasks]
    forbidden = {t["id"]: await rollout(tools, interaction, t, [forbidden_call(t)]) for t in tasks if forbidden_call(t)}
    task = task_files(tasks_dir, conversational)[0]
    conversation = await rollout(tools, interaction, task, task["reference_solution"], ask=True)
    single_turn = await rollout(tools, interaction, task, [], ask=True, single_turn=True)
    print(json.dumps({"interaction_name": interaction.name, "tools": len(tools),
                      "reference": {t["id"]: r for t, r in zip(tasks, reference)},
                      "noop": {t["id"]: r for t, r in zip(tasks, noop)}, "forbidden": forbidden,
                      "conversation": conversation, "single_turn": single_turn}))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], Path(sys.argv[2]), sys.argv[3], Path(sys.argv[4]), sys.argv[5]))
