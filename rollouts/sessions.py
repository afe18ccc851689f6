"""Where an episode's tool calls go: the in-process runtime, or a domain's HTTP MCP server.

A session is what one episode of the harness holds: the tools and policy the agent sees, the
instruction and profile the simulated user plays, and, when the episode ends, the reward. The
agent never gets the session itself, so rewards, task answers and the database stay out of reach.
"""

from __future__ import annotations

import asyncio
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from domains.policy import episode_instructions
from mcp_servers.control_token import TOKEN_ENV, bearer
from mcp_servers.runtime import CallResult, Environment, Episode


@dataclass(frozen=True)
class Scenario:
    """What the simulated user plays: the task's instruction and user profile, nothing else."""

    task_id: str
    instruction: str
    user_profile: Any = None


class Session(Protocol):
    domain: str
    tools: list[dict]
    policy: str
    scenario: Scenario

    async def call(self, name: str, arguments: dict) -> str:
        """The tool's result as the agent sees it (JSON, or an error message)."""

    async def reward(self, final_message: str = "") -> dict:
        """The runtime's reward result for the state the episode reached and the agent's final message."""

    async def reference_solution(self) -> list[dict]:
        """The task's reference calls [{"tool", "arguments"}]: for oracle agents only."""

    async def answer_key(self) -> dict:
        """The task's kind, facts and policy rule (as in its file): for oracle agents only."""

    async def close(self) -> None: ...


def read_policy(domain_dir: Path) -> str:
    path = domain_dir / "policy.md"
    return path.read_text() if path.is_file() else ""


def episode_policy(policy: str, now: str | None) -> str:
    """The policy an agent reads in one episode: policy.md ending with the episode's date and time
    (as the MCP server's instructions end); a domain without policy.md has none."""
    return episode_instructions(policy, now) if policy.strip() else ""


class InProcessSession:
    """One episode of an `Environment` in this process."""

    def __init__(self, env: Environment, episode: Episode, tools: list[dict]):
        task = episode.task
        self.env, self.episode, self.tools, self.domain = env, episode, tools, env.name
        self.policy = episode_policy(env.policy, episode.now)
        self.scenario = Scenario(task.id, task.instruction, task.user_profile)

    @classmethod
    async def open(cls, env: Environment, task_id: str, tools: list[str] | None = None) -> InProcessSession:
        episode = await asyncio.to_thread(env.create_episode, task_id)
        return cls(env, episode, restrict(env.openai_tools(), tools))

    async def call(self, name: str, arguments: dict) -> str:
        if not any(t["function"]["name"] == name for t in self.tools):
            return f"Error (UnknownTool): unknown tool {name!r}"
        return (await self.episode.acall(name, arguments)).text

    async def reward(self, final_message: str = "") -> dict:
        return await asyncio.to_thread(self.episode.reward, final_message)

    async def reference_solution(self) -> list[dict]:
        return [call.model_dump() for call in self.episode.task.reference_solution]

    async def answer_key(self) -> dict:
        return answer_key(self.episode.task.model_dump(mode="json"))

    async def close(self) -> None:
        await asyncio.to_thread(self.episode.close)


class StateSession:
    """One episode of an `Environment` from a given state, with no task behind it: what an
    expansion gate's oracle searches in. Nothing to reward; every call's outcome is kept, so the
    caller judges the episode by what actually ran rather than by the agent's words."""

    def __init__(self, env: Environment, episode: Episode, tools: list[dict], scenario: Scenario, policy: str = ""):
        self.env, self.episode, self.tools, self.scenario, self.policy = env, episode, tools, scenario, policy
        self.domain = env.name
        self.outcomes: list[tuple[str, dict, CallResult]] = []

    @classmethod
    async def open(cls, env: Environment, state: dict, scenario: Scenario, tools: list[str] | None = None,
                   policy: str = "") -> StateSession:
        episode = await asyncio.to_thread(env.create_episode, state=state)
        return cls(env, episode, restrict(env.openai_tools(), tools), scenario, policy)

    async def call(self, name: str, arguments: dict) -> str:
        if not any(t["function"]["name"] == name for t in self.tools):
            out = CallResult(False, error=f"unknown tool {name!r}", error_type="UnknownTool")
        else:
            out = await self.episode.acall(name, arguments)
        self.outcomes.append((name, arguments, out))
        return out.text

    async def reward(self, final_message: str = "") -> dict:
        return {}

    async def reference_solution(self) -> list[dict]:
        return []

    async def answer_key(self) -> dict:
        return {"kind": "change"}

    async def close(self) -> None:
        await asyncio.to_thread(self.episode.close)


def answer_key(task: dict) -> dict:
    """What an oracle agent is told of a task besides its reference calls (a task file's fields)."""
    return {"kind": task.get("kind", "change"), "facts": task.get("facts"), "policy_rule": task.get("policy_rule")}


def restrict(tools: list[dict], names: list[str] | None) -> list[dict]:
    """The tools an agent may use: all, or the named subset (an expansion gate's remaining tools)."""
    if names is None:
        return tools
    known = {t["function"]["name"] for t in tools}
    unknown = sorted(set(names) - known)
    if unknown:
        raise ValueError(f"no such tools: {', '.join(unknown)}")
    return [t for t in tools if t["function"]["name"] in set(names)]


class MCPSession:
    """One episode on a domain's HTTP MCP server: created through its control API (with the
    server's control token: `token`, default $WORLDSMITH_CONTROL_TOKEN), tools called over the
    episode's own MCP URL, which gets no token (a fresh MCP session per call is fine: the URL
    names the episode)."""

    def __init__(self, base_url: str, http, info: dict, client, tools: list[dict], headers: dict | None = None):
        self.base_url, self.http, self.info, self.client, self.tools = base_url, http, info, client, tools
        self.headers = headers or {}  # the control API's credential
        self.domain = info["domain"]
        self.policy = ""
        self.scenario = Scenario(info["task_id"], info.get("instruction", ""), info.get("user_profile"))

    @classmethod
    async def open(cls, base_url: str, task_id: str, tools: list[str] | None = None, http=None,
                   policy: str = "", token: str | None = None) -> MCPSession:
        import httpx
        from fastmcp import Client

        http = http or httpx.AsyncClient(timeout=60)
        token = token or os.environ.get(TOKEN_ENV)
        headers = bearer(token) if token else {}
        response = await http.post(f"{base_url}/episodes", json={"task_id": task_id}, headers=headers)
        if response.status_code != 201:
            raise RuntimeError(f"POST /episodes for task {task_id}: {response.status_code} {response.text}")
        info = response.json()
        client = Client(info["mcp_url"])
        await client.__aenter__()
        try:
            listed = await client.list_tools()
        except BaseException:
            await client.__aexit__(None, None, None)
            raise
        schemas = [{"type": "function", "function": {"name": t.name, "description": t.description or "",
                                                     "parameters": t.input_schema}} for t in listed]
        session = cls(base_url, http, info, client, restrict(schemas, tools), headers)
        session.policy = episode_policy(policy, info.get("now"))
        return session

    async def call(self, name: str, arguments: dict) -> str:
        if not any(t["function"]["name"] == name for t in self.tools):
            return f"Error (UnknownTool): unknown tool {name!r}"
        result = await self.client.call_tool(name, arguments, raise_on_error=False)
        text = "".join(getattr(block, "text", "") for block in result.content)
        if not text and result.structured_content is not None:
            text = json.dumps(result.structured_content, ensure_ascii=False)
        return text

    async def reward(self, final_message: str = "") -> dict:
        response = await self.http.post(f"{self.base_url}/episodes/{self.info['episode_id']}/reward",
                                        json={"final_message": final_message}, headers=self.headers)
        if response.status_code != 200:
            raise RuntimeError(f"reward: {response.status_code} {response.text}")
        return response.json()

    async def _task(self) -> dict:
        response = await self.http.get(f"{self.base_url}/episodes/{self.info['episode_id']}/task",
                                       headers=self.headers)
        response.raise_for_status()
        return response.json()

    async def reference_solution(self) -> list[dict]:
        return (await self._task())["reference_solution"]

    async def answer_key(self) -> dict:
        return answer_key(await self._task())

    async def close(self) -> None:
        try:
            await self.client.__aexit__(None, None, None)
        finally:
            await self.http.delete(f"{self.base_url}/episodes/{self.info['episode_id']}", headers=self.headers)
