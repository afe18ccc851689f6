"""Run under .venv-trainers by tests/test_trainers.py: verifiers' own OpenEnv loop over worldsmith.

    python tests/support/trainers_verifiers_probe.py WORLDSMITH_URL TASKS_DIR TASK_IDS CONVERSATIONAL_TASK

Loads the environment with `trainers.verifiers_env.load_environment`, then runs verifiers'
`OpenEnvEnv.run` on each task of TASK_IDS (comma-separated) with a scripted player in the model's
seat: `reference` answers each turn with the next call of the task's reference solution, then
`end_episode` with a message stating an answer task's facts; `noop` ends at once; `forbidden`
makes a refusal task's forbidden call, then ends. The conversational task is played once more by a player that first asks the
simulated user for the email its request leaves out and uses the reply. Prints the rewards
verifiers recorded and every model-visible text that named the episode or carried a reward.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from pathlib import Path

from tests.support.task_sample import final_message, forbidden_call
from tests.support.trainers_openenv_probe import QUESTION, serve, task_files, with_email
from trainers.verifiers_env import load_environment


class Trace:
    def __init__(self):
        self.rewards: dict[str, float] = {}
        self.stopped: str | None = None

    def record_reward(self, name: str, value: float) -> None:
        self.rewards[name] = value

    def stop(self, reason: str) -> None:
        self.stopped = reason


class Segment:
    def __init__(self, reply: str):
        self.last_reply, self.terminated = reply, False


class Player:
    """The model's seat: what verifiers' loop sends it is kept, what it answers is scripted (a
    callable reply is given what it was sent and returns the replies that take its place)."""

    def __init__(self, replies: list):
        self.replies = list(replies)
        self.seen: list[str] = []

    @contextlib.asynccontextmanager
    async def interaction(self, task):
        player = self

        class Interaction:
            trace = Trace()

            async def turn(self, text: str) -> Segment:
                player.seen.append(text)
                reply = player.replies.pop(0) if player.replies else ""
                if callable(reply):
                    player.replies[:0] = reply(text)
                    reply = player.replies.pop(0)
                return Segment(reply if isinstance(reply, str) else json.dumps(reply))

        self.current = Interaction()
        yield self.current


class Agents:
    def __init__(self, player: Player):
        self.player = player


def call(tool: str, arguments: dict) -> dict:
    return {"type": "call_tool", "tool_name": tool, "arguments": arguments}


async def main(worldsmith_url: str, tasks_dir: Path, ids: str, conversational: str) -> None:
    openenv_url = serve(worldsmith_url)
    env = load_environment(domain="job_seeking", split="all", openenv_url=openenv_url, worldsmith_url=worldsmith_url)
    files = {t["id"]: t for t in task_files(tasks_dir, f"{ids},{conversational}")}
    solutions = {task_id: t["reference_solution"] for task_id, t in files.items()}
    out: dict = {"reference": {}, "noop": {}, "forbidden": {}, "leaks": [], "tasks": 0}
    for task in env.taskset:
        out["tasks"] += 1
        task_id = task.data.reset["task_id"]
        if task_id not in ids.split(","):
            continue
        forbidden = forbidden_call(files[task_id])
        plans = {"reference": ([call(c["tool"], c["arguments"]) for c in solutions[task_id]],
                               final_message(files[task_id])),
                 "noop": ([], ""), **({"forbidden": ([call(forbidden["tool"], forbidden["arguments"])], "")}
                                      if forbidden else {})}
        for agent, (plan, message) in plans.items():
            player = Player([*plan, call("end_episode", {"message": message} if message else {})])
            await env.run(task, Agents(player))
            out[agent][task_id] = player.current.trace.rewards.get("openenv_reward")
            for text in player.seen:
                if '"reward"' in text or "openenv-" in text:
                    out["leaks"].append(f"{agent} {task_id}: {text[:200]}")
    def act_on_reply(text: str) -> list[dict]:
        reply = json.loads(text)["observation"]["result"]
        out["conversation"]["reply"] = reply
        return [*(call(c["tool"], c["arguments"]) for c in with_email(solutions[conversational], reply)),
                call("message_user", {"message": "Your application is submitted."})]

    out["conversation"] = {}
    task = next(t for t in env.taskset if t.data.reset["task_id"] == conversational)
    player = Player([call("message_user", {"message": QUESTION}), act_on_reply])
    await env.run(task, Agents(player))
    out["conversation"]["reward"] = player.current.trace.rewards.get("openenv_reward")
    out["leaks"] += [f"conversation: {text[:200]}" for text in player.seen if '"reward"' in text]
    splits = {s: sum(1 for _ in load_environment(split=s, openenv_url=openenv_url,
                                                 worldsmith_url=worldsmith_url).taskset) for s in ("train", "test")}
    out["splits"] = splits
    out["single_turn_tasks"] = sorted(t.data.reset["task_id"] for t in load_environment(
        openenv_url=openenv_url, worldsmith_url=worldsmith_url, single_turn=True).taskset)
    print(json.dumps(out))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], Path(sys.argv[2]), sys.argv[3], sys.argv[4]))
