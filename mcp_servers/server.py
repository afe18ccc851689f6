"""A domain as a FastMCP server: its verified tools, each call run in the caller's episode.

This server is the agent's surface. It serves the tools (names, descriptions, typed parameters
with descriptions, read-only and destructive annotations) and the instructions, and nothing
else: no resource, resource template or prompt, so an agent's client cannot read the task's
reference solution, the reward or the database state; reading any resource fails with an error
that says so. The trainer reads those through its own channel: the in-process API
(mcp_servers.runtime) or the HTTP control API, which needs the operator's token (http_app.py).

For trainers and debugging only, `expose_trainer_resources=True` (the CLI's
--expose-trainer-resources) also serves them as resources, to every client of this server:

    episode://info    episode id, task id, calls used and allowed
    episode://state   the full database state
    episode://task    the task: instruction, user profile, reference solution, reward spec
    episode://reward  the state-diff reward of the current state (an error when unavailable);
                      episode://reward?final_message=<URL-encoded text> also reads an answer
                      task's facts in the agent's final message

One server serves one episode over stdio; over HTTP one server serves all of them, and
`resolve` finds the episode from the request's URL.

The server's instructions are the domain's policy.md (its description when it has none),
ending with the episode's current date and time: set when a client initializes (or discovers),
from the episode the request resolves to, so that each HTTP episode states its own clock. Tool
descriptions end with the tool's preconditions ("Requires: ...").
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import anyio
from fastmcp import FastMCP
from fastmcp.exceptions import ResourceError
from fastmcp.server.middleware import Middleware
from fastmcp.tools.base import Tool, ToolResult
from mcp_types import TextContent, ToolAnnotations
from pydantic import PrivateAttr

from domains.policy import episode_instructions
from domains.tool_schemas import annotations, input_schema
from mcp_servers.runtime import Environment, Episode, EpisodeError, RewardUnavailable, UnknownTask

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


class EpisodeClock(Middleware):
    """Ends the instructions an initializing (or discovering) client gets with its episode's date."""

    def __init__(self, env: Environment, resolve: Resolver):
        self.env, self.resolve = env, resolve

    def _instructions(self) -> str:
        try:
            now = self.resolve().now
        except Exception:  # no episode behind this request (an unknown one is refused before the MCP layer)
            now = None
        return episode_instructions(self.env.instructions, now)

    async def on_initialize(self, context, call_next):
        result = await call_next(context)
        if result is not None and hasattr(result, "instructions"):
            result.instructions = self._instructions()
        return result

    async def on_discover(self, context, call_next):
        result = await call_next(context)
        if isinstance(result, dict):
            return {**result, "instructions": self._instructions()}
        if hasattr(result, "instructions"):
            result.instructions = self._instructions()
        return result


class ToolsOnly(Middleware):
    """Answers every resource read with an error that says why: the agent's surface has none."""

    async def on_read_resource(self, context, call_next):
        raise ResourceError(f"{context.message.uri} is not served here: this MCP server offers tools only. "
                            "An episode's task, reward and state go to the trainer, not to the agent.")


def build_server(env: Environment, resolve: Resolver, expose_trainer_resources: bool = False) -> FastMCP:
    """The agent's server: tools and instructions; with `expose_trainer_resources` (trainers and
    debugging only) also the episode:// resources, readable by every client."""
    server = FastMCP(name=f"worldsmith-{env.name}", instructions=episode_instructions(env.instructions, None))
    server.add_middleware(EpisodeClock(env, resolve))
    schemas = {}
    for schema in env.tools.values():
        tool = DomainTool(name=schema.name, description=env.descriptions[schema.name], parameters=input_schema(schema),
                          annotations=ToolAnnotations(**annotations(schema, env.overwrites(schema.name))))
        tool._resolve = resolve
        server.add_tool(tool)
        schemas[schema.name] = tool.parameters
    # Every caller sees the same tools: without this lookup the SDK's streamable HTTP transport
    # runs a whole tools/list on each call of a 2026-era client, to check Mcp-Param headers.
    server._mcp_server.get_tool_input_schema = schemas.get
    if expose_trainer_resources:
        add_trainer_resources(server, resolve)
    else:
        server.add_middleware(ToolsOnly())
    return server


def add_trainer_resources(server: FastMCP, resolve: Resolver) -> None:
    """The episode:// resources (see the module docstring): the trainer's data, on the agent's server."""

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

    @server.resource("episode://reward{?final_message}", mime_type="application/json",
                     description="The reward with the agent's final message to the user, which an answer task's "
                                 "facts are read from (for the trainer).")
    async def reward_with_message(final_message: str | None = None) -> str:
        return await in_episode(lambda e: e.reward(final_message))
