"""An OpenEnv environment server over a served worldsmith domain.

    python -m trainers.openenv_server --worldsmith-url http://127.0.0.1:8000 [--port 8001]

Runs in `.venv-trainers` (openenv-core) in front of `python -m mcp_servers NAME --transport
http`. OpenEnv's own server (`create_fastapi_app`) speaks the protocol, so its clients work
unchanged:

- `reset(seed, episode_id, task_id, domain)` opens a worldsmith episode of the task (no task_id:
  one picked by seed); the observation holds the user's request and the tools. `domain` names
  the task's domain where the worldsmith server serves several.
- `step(ListToolsAction)` lists the domain's tools plus `message_user` and `end_episode`;
  `step(CallToolAction)` calls one in the episode (a tool's own error is its result, the state
  unchanged). `message_user` is the agent's message to the simulated user (served by the
  worldsmith server, `python -m rollouts.serve`; trainers/conversation.py): the observation's
  result is the user's reply.
- Reward and done arrive only when the episode ends: when the user stops (or after
  --max-user-turns messages to it), on `end_episode` (its optional `message` is the agent's answer,
  which an answer task's facts are read from), or when the step budget is spent.
  Nothing earlier carries the reward, and `state` never does.

Multi-turn is the default. With --single-turn there is no `message_user`: the agent ends the
episode with `end_episode` (its request is all it gets), as trainers without a user expect, and a
reset without a task_id picks among the tasks that need no answer from the user.

Over WebSocket one connection is one episode. Over HTTP each request gets a fresh
environment (OpenEnv's stateless HTTP mode), so the client names the episode: `episode_id`
in the reset body, and the same `episode_id` beside every step's action. An episode closes on
the server when it ends; an abandoned one is closed by the worldsmith server's idle timeout.
"""

from __future__ import annotations

import argparse
import random
import uuid
from typing import Any, Optional

from openenv.core.env_server.http_server import create_fastapi_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.mcp_types import (
    CallToolAction,
    CallToolObservation,
    ListToolsAction,
    ListToolsObservation,
    Tool,
    ToolError,
    ToolErrorType,
)
from openenv.core.env_server.types import Action, Observation, State

from trainers.control import END_TOOL, END_TOOL_SCHEMA, Control, ControlError
from trainers.conversation import MAX_USER_TURNS, MESSAGE_TOOL, MESSAGE_TOOL_SCHEMA, playable, tell_user

MAX_STEPS = 50


class EpisodeObservation(Observation):
    """What reset returns to the agent: the user's request and the tools (no episode id: the
    connection, or the id an HTTP client chose, names the episode)."""

    task_id: Optional[str] = None
    instruction: str = ""
    tools: list[Tool] = []


class WorldsmithEnvironment(Environment):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self, worldsmith_url: str, max_steps: int = MAX_STEPS, single_turn: bool = False,
                 max_user_turns: int = MAX_USER_TURNS):
        super().__init__()
        self.control = Control(worldsmith_url)
        self.max_steps, self.single_turn, self.max_user_turns = max_steps, single_turn, max_user_turns
        self._state = State()
        self._domain: str | None = None
        self._tools: dict[str | None, list[Tool]] = {}

    # -- OpenEnv API ----------------------------------------------------------------------
    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None,
              task_id: Optional[str] = None, domain: Optional[str] = None, **kwargs: Any) -> EpisodeObservation:
        if task_id is None:
            tasks = playable(self.control, self.single_turn, domain)
            task_id = random.Random(seed).choice(tasks) if tasks else None
        if episode_id:  # a reset starts over, even under an id used before
            self.control.delete(episode_id)
        episode = self.control.open(task_id, episode_id or f"openenv-{uuid.uuid4().hex[:16]}", domain)
        self._state = State(episode_id=episode["episode_id"], step_count=0, task_id=task_id)
        self._domain = domain
        return EpisodeObservation(task_id=task_id,
                                  instruction=episode.get("instruction") or "", tools=self.tools(domain))

    def step(self, action: Action, timeout_s: Optional[float] = None, episode_id: Optional[str] = None,
             **kwargs: Any) -> Observation:
        if isinstance(action, ListToolsAction):
            domain = self._domain
            if episode_id and episode_id != self._state.episode_id:  # HTTP: the episode's own domain
                try:
                    domain = self.control.info(episode_id)["domain"]
                except ControlError as error:
                    return ListToolsObservation(tools=[], error=ToolError(error_type=ToolErrorType.EXECUTION_ERROR,
                                                                          message=str(error)))
            return ListToolsObservation(tools=self.tools(domain))
        if not isinstance(action, CallToolAction):
            return CallToolObservation(tool_name="", error=ToolError(
                error_type=ToolErrorType.INVALID_ARGS, message="actions are list_tools or call_tool"))
        episode = episode_id or self._state.episode_id
        if episode is None:
            return self._error(action, ToolErrorType.EXECUTION_ERROR, "no episode: reset first")
        if episode_id and episode_id != self._state.episode_id:  # HTTP: a fresh environment per request
            self._state = State(episode_id=episode_id, step_count=self._calls_used(episode_id))
        if action.tool_name == END_TOOL:
            return self._end(action.tool_name, episode, final_message=(action.arguments or {}).get("message"))
        if action.tool_name == MESSAGE_TOOL and not self.single_turn:
            return self._tell_user(action, episode)
        try:
            text, is_error = self.control.call(episode, action.tool_name, action.arguments)
        except ControlError as error:
            return self._error(action, ToolErrorType.TRANSPORT_ERROR, str(error))
        self._state.step_count += 1
        if self._state.step_count >= self.max_steps:
            return self._end(action.tool_name, episode, result=text)
        return CallToolObservation(tool_name=action.tool_name, result=text,
                                   metadata={"is_error": is_error})

    @property
    def state(self) -> State:
        return self._state

    def close(self) -> None:
        # Called after every HTTP request too: the episode outlives this object.
        self.control.close()

    # -- helpers ---------------------------------------------------------------------------
    def tools(self, domain: str | None = None) -> list[Tool]:
        if domain not in self._tools:
            ours = [END_TOOL_SCHEMA] if self.single_turn else [MESSAGE_TOOL_SCHEMA, END_TOOL_SCHEMA]
            self._tools[domain] = [Tool(**spec) for spec in [*self.control.tools(domain), *ours]]
        return self._tools[domain]

    def _tell_user(self, action: CallToolAction, episode: str) -> Observation:
        message = str((action.arguments or {}).get("message", ""))
        try:
            turn = tell_user(self.control, episode, message, self.max_user_turns)
        except ControlError as error:
            return self._error(action, ToolErrorType.EXECUTION_ERROR, str(error))
        if not turn.done:
            return CallToolObservation(tool_name=action.tool_name, result=turn.message)
        self.control.delete(episode)
        return CallToolObservation(tool_name=action.tool_name, result=turn.message, done=True, reward=turn.reward)

    def _calls_used(self, episode_id: str) -> int:
        try:
            return int(self.control.info(episode_id).get("calls", 0))
        except ControlError:
            return 0

    def _end(self, tool_name: str, episode: str, result: str = "episode ended",
             final_message: str | None = None) -> Observation:
        try:
            reward = float(self.control.reward(episode, final_message)["reward"])
        except ControlError as error:
            return CallToolObservation(tool_name=tool_name, error=ToolError(
                error_type=ToolErrorType.EXECUTION_ERROR, message=str(error)))
        self.control.delete(episode)
        return CallToolObservation(tool_name=tool_name, result=result, done=True, reward=reward)

    @staticmethod
    def _error(action: CallToolAction, kind: ToolErrorType, message: str) -> CallToolObservation:
        return CallToolObservation(tool_name=action.tool_name, error=ToolError(error_type=kind, message=message))


def create_app(worldsmith_url: str, max_steps: int = MAX_STEPS, max_concurrent_envs: int = 256,
               single_turn: bool = False, max_user_turns: int = MAX_USER_TURNS):
    return create_fastapi_app(lambda: WorldsmithEnvironment(worldsmith_url, max_steps, single_turn, max_user_turns),
                              CallToolAction, CallToolObservation, max_concurrent_envs=max_concurrent_envs)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m trainers.openenv_server", description=__doc__.splitlines()[0])
    parser.add_argument("--worldsmith-url", required=True, help="a worldsmith HTTP server (python -m mcp_servers "
                                                                 "NAME --transport http)")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8001)
    parser.add_argument("--max-steps", type=int, default=MAX_STEPS, help="tool calls before the episode ends")
    parser.add_argument("--single-turn", action="store_true", help="no simulated user: no message_user tool")
    parser.add_argument("--max-user-turns", type=int, default=MAX_USER_TURNS,
                        help="messages to the user before the episode ends")
    args = parser.parse_args(argv)
    import uvicorn

    app = create_app(args.worldsmith_url, args.max_steps, single_turn=args.single_turn,
                     max_user_turns=args.max_user_turns)
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
