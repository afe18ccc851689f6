"""The rollout harness's own cost: episodes per second with scripted agents at concurrency 1, 16, 256.

Three workloads, each a batch of episodes (every task, repeated to fill the batch):
  harness    a scripted agent making 3 tool calls against a null session (instant tools and
             reward): the loop itself, messages and trajectories, nothing else
  noop       the noop agent on the domain's runtime: episode creation, reward, close
  reference  the reference agent on the domain's runtime: its tool calls as well
The domain's tasks are used; a domain without tasks gets the hand-made ones of the tests.

    python -m bench.rollouts [--domain NAME_OR_PATH] [--episodes N]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

from domains.task_model import task_ids
from mcp_servers.runtime import Environment, resolve_domain
from rollouts.agents import NoopAgent, ReferenceAgent
from rollouts.evaluate import play_all
from rollouts.sessions import InProcessSession, Scenario
from rollouts.trajectory import AgentAction, Limits, ToolCall
from rollouts.user import InstructionUser

CONCURRENCY = (1, 16, 256)


class NullSession:
    domain, policy = "null", ""
    tools = [{"type": "function", "function": {"name": "lookup", "description": "", "parameters": {}}}]

    def __init__(self, task_id: str):
        self.scenario = Scenario(task_id, "Look three things up.")

    async def call(self, name, arguments):
        return '{"ok": true}'

    async def reward(self, final_message=""):
        return {"reward": 1.0, "passed": True}

    async def reference_solution(self):
        return []

    async def answer_key(self):
        return {"kind": "change"}

    async def close(self):
        pass


class ThreeCalls:
    name, needs_reference = "three-calls", False

    async def act(self, view, messages):
        if sum(m["role"] == "tool" for m in messages) >= 3:
            return AgentAction(content="Done.", stop=True), {}
        return AgentAction(tool_calls=[ToolCall(name="lookup", arguments={"q": len(messages)})]), {}


def timed(open_session, agent, todo, concurrency) -> tuple[float, int]:
    finished = []
    started = time.perf_counter()
    asyncio.run(play_all(open_session, agent, InstructionUser(), todo, concurrency, Limits(), finished.append))
    seconds = time.perf_counter() - started
    errors = sum(1 for t in finished if t.error)
    return len(finished) / seconds, errors


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.rollouts")
    parser.add_argument("--domain", default="job_seeking")
    parser.add_argument("--episodes", type=int, default=512)
    args = parser.parse_args(argv or [])  # `python -m bench` passes its own argv
    domain_dir = resolve_domain(args.domain)
    with tempfile.TemporaryDirectory() as tmp:
        if not task_ids(domain_dir):
            from tests.support.rollouts_tasks import write_domain

            domain_dir = write_domain(Path(tmp))
            print("(the domain has no tasks: using the tests' hand-made job_seeking tasks)")
        tasks = task_ids(domain_dir)
        todo = [(tasks[i % len(tasks)], i // len(tasks)) for i in range(args.episodes)]
        print(f"{domain_dir.name}: {len(tasks)} tasks, {args.episodes} episodes per measurement")

        async def null(task_id):
            return NullSession(task_id)

        with Environment(domain_dir, max_calls=None) as env:
            async def real(task_id):
                return await InProcessSession.open(env, task_id)

            for task in tasks:  # expected states and templates once, outside the timings
                env.expected_state(task)
            timed(real, ReferenceAgent(), todo[:len(tasks)], 1)
            print(f"{'workload':<10} {'concurrency':>11} {'episodes/s':>11} {'ms/episode':>11} {'errors':>7}")
            for label, opener, agent in (("harness", null, ThreeCalls()), ("noop", real, NoopAgent()),
                                         ("reference", real, ReferenceAgent())):
                for concurrency in CONCURRENCY:
                    rate, errors = timed(opener, agent, todo, concurrency)
                    print(f"{label:<10} {concurrency:>11} {rate:>11.1f} {1000 / rate:>11.2f} {errors:>7}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
