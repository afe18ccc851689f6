"""Run under .venv-trainers by tests/test_trainers_universe.py: the adapters in front of a server
that serves several domains.

    python tests/support/trainers_universe_probe.py WORLDSMITH_URL SOLUTIONS_JSON

SOLUTIONS_JSON maps domain -> task id -> its reference calls. Loads the verifiers environment over
every domain there with the last one held out and lists each split's tasks (and the resets they
carry); then, through the OpenEnv adapter over WebSocket, plays each task with its reference
solution. Prints one JSON object: the splits, and each domain's tool names and reward.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

from openenv import GenericEnvClient

from tests.support.trainers_openenv_probe import call, serve
from trainers.verifiers_env import load_environment


async def play(url: str, domain: str, task_id: str, calls: list[dict]) -> tuple[list[str], float | None]:
    async with GenericEnvClient(base_url=url) as env:
        await env.reset(task_id=task_id, domain=domain)
        listed = await env.step({"type": "list_tools"})
        for step in calls:
            await env.step(call(step["tool"], step["arguments"]))
        result = await env.step(call("end_episode", {}))
        return sorted(t["name"] for t in listed.observation["tools"]), result.reward if result.done else None


def main(worldsmith_url: str, solutions_path: str) -> None:
    solutions = json.loads(Path(solutions_path).read_text())
    domains = list(solutions)
    openenv_url = serve(worldsmith_url)
    splits = {}
    for split in ("train", "test"):
        env = load_environment(domains=domains, holdout=domains[-1:], split=split, openenv_url=openenv_url,
                               worldsmith_url=worldsmith_url)
        splits[split] = [[task.data.name, task.data.reset] for task in env.taskset]
    played = {}
    for domain, tasks in solutions.items():
        for task_id, calls in tasks.items():
            tools, reward = asyncio.run(play(openenv_url, domain, task_id, calls))
            played[domain] = {"tools": tools, "reward": reward}
    print(json.dumps({"splits": splits, "played": played}))


if __name__ == "__main__":
    main(*sys.argv[1:])
