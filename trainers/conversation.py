"""What every adapter does with an episode besides tool calls: talk to the simulated user, end it.

The simulated user lives on the worldsmith server (`python -m rollouts.serve NAME`, route
POST /episodes/{id}/user): one implementation, whichever trainer asks. An episode's
conversation opens with the task's instruction; the agent's message to the user gets the
user's reply, and the episode ends, scored by its state-diff reward, when the user stops
(###STOP###) or the agent has written to the user `max_user_turns` times. Single-turn episodes
(an adapter's `single_turn` setting) end at the agent's first message instead, unheard, and
leave out the tasks marked conversational (those only the user's answers make solvable).
A server without the user's routes (`python -m mcp_servers`) gets single-turn episodes and every
task, with a warning.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterator
from dataclasses import dataclass

import httpx

from trainers.control import Control

MAX_USER_TURNS = 10
MESSAGE_TOOL = "message_user"
MESSAGE_TOOL_SCHEMA = {
    "name": MESSAGE_TOOL,
    "description": "Write to the user (ask for a missing detail, confirm what you did); the result is "
                   "the user's reply. The episode ends when the user is satisfied.",
    "input_schema": {"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"],
                     "additionalProperties": False},
}


@contextlib.contextmanager
def connected(base_url: str) -> Iterator[Control]:
    """A control client for one exchange, closed after it."""
    control = Control(base_url)
    try:
        yield control
    finally:
        control.close()


@dataclass
class UserTurn:
    """The user's reply, and whether the episode ended with it (then its reward)."""

    message: str
    done: bool = False
    reward: float = 0.0
    passed: bool = False


NO_USER = ("the worldsmith server has no simulated user (serve the domain with python -m rollouts.serve): "
           "episodes end at the agent's first message, and tasks that need the user's answers are not left out")


def _user_route(control: Control, method: str, path: str, **body) -> httpx.Response | None:
    """The response of one of the user's routes; None, with a warning, where the server has none."""
    response = control.http.request(method, path, **body)
    if response.status_code == 404 and not response.headers.get("content-type", "").startswith("application/json"):
        warnings.warn(NO_USER, stacklevel=3)
        return None
    return response


def playable(control: Control, single_turn: bool = False, domain: str | None = None) -> list[str]:
    """The server's task ids (of `domain`, where it serves several); single-turn: only those that
    need no answer from the user."""
    tasks = control.tasks(domain)
    response = _user_route(control, "GET", "/tasks/modes") if single_turn else None
    if response is None:
        return tasks
    modes = control._json(response)["modes"]
    return [t for t in tasks if modes.get(t) != "conversational"]


def finish(control: Control, episode_id: str, message: str = "", final_message: str | None = None) -> UserTurn:
    """The episode's end: its reward, on the state it reached and the agent's `final_message`;
    `message` is the user's last reply."""
    result = control.reward(episode_id, final_message)
    return UserTurn(message, True, float(result["reward"]), bool(result.get("passed")))


def tell_user(control: Control, episode_id: str, message: str, max_user_turns: int = MAX_USER_TURNS,
              single_turn: bool = False) -> UserTurn:
    """The agent's `message` to the user: the user's reply, and the end when the user stops or the
    turns are spent (single-turn: the end at once)."""
    response = None if single_turn else _user_route(control, "POST", f"/episodes/{episode_id}/user",
                                                     json={"message": message})
    if response is None:
        return finish(control, episode_id, final_message=message)
    reply = control._json(response)
    if reply["stop"] or reply["turns"] >= max_user_turns:
        return finish(control, episode_id, reply["message"], final_message=message)
    return UserTurn(reply["message"])
