"""Run under .venv-trainers by tests/test_trainers.py: OpenEnv's own client against the adapter.

    python tests/support/trainers_openenv_probe.py WORLDSMITH_URL TASKS_DIR TASK_IDS CONVERSATIONAL_TASK

Starts trainers.openenv_server on a free port, then plays each task of TASK_IDS (comma-separated)
over WebSocket (one connection per episode) with the reference solution (ending with a message
that states an answer task's facts), with nothing, and on a refusal task with the call its policy
forbids; one (an answer task where there is one) over plain HTTP, and the conversational task as
an agent that first asks the simulated user for the email its request leaves out. Prints one JSON
object: rewards, and every observation or state that carried a reward or done before the episode
ended.
"""

from __future__ import annotations

import asyncio
import json
import re
import socket
import sys
import threading
import time
from pathlib import Path

import httpx
import uvicorn
from openenv import GenericEnvClient

from tests.support.task_sample import final_message, forbidden_call
from trainers.openenv_server import create_app


def serve(worldsmith_url: str) -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(create_app(worldsmith_url), host="127.0.0.1", port=port,
                                           log_level="critical"))
    threading.Thread(target=server.run, daemon=True).start()
    url = f"http://127.0.0.1:{port}"
    for _ in range(600):
        try:
            if httpx.get(f"{url}/health", timeout=1).status_code == 200:
                return url
        except httpx.HTTPError:
            time.sleep(0.1)
    raise RuntimeError("the OpenEnv server did not start")


def call(tool: str, arguments: dict) -> dict:
    return {"type": "call_tool", "tool_name": tool, "arguments": arguments}


async def play(url: str, task: dict, calls: list[dict], leaks: list[str], message: str = "") -> float | None:
    async with GenericEnvClient(base_url=url) as env:
        result = await env.reset(task_id=task["id"])
        if result.reward is not None or result.done:
            leaks.append(f"{task['id']}: reset")
        listed = await env.step({"type": "list_tools"})
        names = {t["name"] for t in listed.observation["tools"]}
        if "end_episode" not in names:
            leaks.append(f"{task['id']}: no end_episode tool")
        for step in calls:
            result = await env.step(call(step["tool"], step["arguments"]))
            if result.reward is not None or result.done or "reward" in json.dumps(result.observation):
                leaks.append(f"{task['id']}: {step['tool']}")
        state = await env.state()
        if "reward" in json.dumps(state):
            leaks.append(f"{task['id']}: state")
        result = await env.step(call("end_episode", {"message": message} if message else {}))
        return result.reward if result.done else None


QUESTION = "Which email address should the application use?"


def with_email(calls: list[dict], reply: str) -> list[dict]:
    """The reference calls with every `email` argument the one the user's reply gave."""
    found = re.search(r"[\w.+-]+@[\w-]+\.[\w.]+", reply)
    email = found.group(0).rstrip(".") if found else "unknown"
    return [{"tool": c["tool"], "arguments": {k: (email if k == "email" else v) for k, v in c["arguments"].items()}}
            for c in calls]


async def converse(url: str, task: dict, leaks: list[str]) -> dict:
    """Ask the user, act on the answer with the reference calls, tell the user it is done."""
    async with GenericEnvClient(base_url=url) as env:
        await env.reset(task_id=task["id"])
        asked = await env.step(call("message_user", {"message": QUESTION}))
        if asked.reward is not None or asked.done or "reward" in json.dumps(asked.observation):
            leaks.append(f"{task['id']}: the user's reply")
        reply = asked.observation["result"]
        for step in with_email(task["reference_solution"], reply):
            await env.step(call(step["tool"], step["arguments"]))
        ended = await env.step(call("message_user", {"message": "Your application is submitted."}))
        return {"reply": reply, "done": ended.done, "reward": ended.reward, "last": ended.observation["result"]}


def task_files(tasks_dir: Path, ids: str) -> list[dict]:
    """The task files of the comma-separated `ids`, in that order."""
    return [json.loads((tasks_dir / f"{task_id}.json").read_text()) for task_id in ids.split(",")]


async def main(worldsmith_url: str, tasks_dir: Path, ids: str, conversational: str) -> None:
    url = serve(worldsmith_url)
    tasks = task_files(tasks_dir, ids)
    refusals = [t for t in tasks if forbidden_call(t)]
    leaks: list[str] = []
    limit = asyncio.Semaphore(8)

    async def one(task: dict, calls: list[dict], message: str = "") -> float | None:
        async with limit:
            return await play(url, task, calls, leaks, message)

    started = time.perf_counter()
    reference = await asyncio.gather(*(one(t, t["reference_solution"], final_message(t)) for t in tasks))
    seconds = time.perf_counter() - started
    noop = await asyncio.gather(*(one(t, []) for t in tasks))
    forbidden = await asyncio.gather(*(one(t, [forbidden_call(t)]) for t in refusals))
    conversation = await converse(url, task_files(tasks_dir, conversational)[0], leaks)

    # plain HTTP: a fresh environment per request, the episode named by its id; an answer task's
    # facts travel in end_episode's message
    task = next((t for t in tasks if t.get("kind") == "answer"), tasks[0])
    with httpx.Client(base_url=url, timeout=60) as http:
        episode = "probe-http-episode"
        observation = http.post("/reset", json={"task_id": task["id"], "episode_id": episode}).json()
        if episode in json.dumps(observation):
            leaks.append("http: the episode id reached the observation")
        for step in task["reference_solution"]:
            reply = http.post("/step", json={"action": call(step["tool"], step["arguments"]), "episode_id": episode})
            if reply.json()["reward"] is not None:
                leaks.append("http: step")
        end = call("end_episode", {"message": final_message(task)})
        http_reward = http.post("/step", json={"action": end, "episode_id": episode}).json()

    print(json.dumps({"reference": dict(zip((t["id"] for t in tasks), reference)),
                      "noop": dict(zip((t["id"] for t in tasks), noop)),
                      "forbidden": dict(zip((t["id"] for t in refusals), forbidden)),
                      "http": {"task": task["id"], "reward": http_reward["reward"], "done": http_reward["done"]},
                      "conversation": conversation, "leaks": leaks, "reference_seconds": seconds,
                      "calls": sum(len(t["reference_solution"]) + 3 for t in tasks)}))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], Path(sys.argv[2]), sys.argv[3], sys.argv[4]))
