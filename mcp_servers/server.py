"""A domain as a FastMCP server: its verified tools, each call run in the caller's episode.

The agent sees only the tools (names, descriptions, typed parameters with descriptions,
read-only and destructive annotations). What the trainer needs is served as resources, never
as tools:

    episode://info    episode id, task id, calls used and allowed
    episode://state   the full database state
    episode://task    the task: instruction, user profile, reference solution, reward spec
    episode://reward  the state-diff reward of the current state (an error when unavailable)

One server serves one episode over stdio; over HTTP one server serves all of them, and
`resolve` finds the episode from the request's URL.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import anyio
from fastmcp import FastMCP
from fastmcp.exceptions import ResourceError
from fastmcp.tools.base import Tool, ToolResult
from mcp_types import TextContent, ToolAnnotations
from pydantic import PrivateAttr

from mcp_servers.runtime import Environment, Episode, EpisodeError, RewardUnavailable, UnknownTask
from mcp_servers.schemas import annotations, input_schema

Resolver = Callable[[], Episode]


def _text(payload: str, is_error: bool = False) -> ToolResult:
    return ToolResult(content=[TextContent(type="text", text=payload)], is_error=is_error)


class DomainTool(Tool):
    """A verified tool; the call itself is validated and run by the episode, off the event loop."""

    _resolve: Resolver | None = PrivateAttr(default=None)

    async def run(self, arguments: dict[str, Any]) -> ToolResult:
        try:
            outcome = await self._resolve().acall(self.name, arguments)
        except EpisodeError as error:
            return _text(f"Error (EpisodeError): {error}", is_error=True)
        if not outcome.ok:
            return _text(outcome.text, is_error=True)
        structured = outcome.result if isinstance(outcome.result, dict) else None
        return ToolResult(content=[TextContent(type="text", text=outcome.text)], structured_content=structured)


def _json(data: object) -> str:
    return json.dumps(data, ensure_ascii=False, sort_keys=True)


def build_server(env: Environment, resolve: Resolver) -> FastMCP:
    server = FastMCP(name=f"worldsmith-{env.name}", instructions=env.spec.description)
    schemas = {}
    for schema in env.tools.values():
        tool = DomainTool(name=schema.name, description=schema.description, parameters=input_schema(schema),
                          annotations=ToolAnnotations(**annotations(schema, env.overwrites(schema.name))))
        tool._resolve = resolve
        server.add_tool(tool)
        schemas[schema.name] = tool.parameters
    # Every caller sees the same tools: without this lookup the SDK's streamable HTTP transport
    # runs a whole tools/list on each call of a 2026-era client, to check Mcp-Param headers.
    server._mcp_server.get_tool_input_schema = schemas.get

    async def in_episode(read: Callable[[Episode], object]) -> str:
        try:
            episode = resolve()
            return _json(await anyio.to_thread.run_sync(read, episode))
        except (EpisodeError, RewardUnavailable, UnknownTask) as error:
            raise ResourceError(str(error)) from None

    @server.resource("episode://info", mime_type="application/json",
                     description="The episode: id, task id, tool calls used and allowed.")
    async def info() -> str:
        return await in_episode(lambda e: e.info())

    @server.resource("episode://state", mime_type="application/json",
                     description="The episode's full database state (for the trainer, not the agent).")
    async def state() -> str:
        return await in_episode(lambda e: e.state())

    @server.resource("episode://task", mime_type="application/json",
                     description="The episode's task, with its reference solution and reward spec (for the trainer).")
    async def task() -> str:
        def read(e: Episode) -> object:
            if e.task is None:
                raise EpisodeError("this episode was not started from a task (it runs on the sample state or a "
                                   "given state)")
            return e.task.model_dump(mode="json")
        return await in_episode(read)

    @server.resource("episode://reward", mime_type="application/json",
                     description="The state-diff reward of the current state against the reference run (for the trainer).")
    async def reward() -> str:
        return await in_episode(lambda e: e.reward())

    return server
