"""What every adapter does with an episode besides tool calls: talk to the simulated user, end it.

The simulated user lives on the worldsmith server (`python -m rollouts.serve NAME`, route
POST /episodes/{id}/user): one implementation, whichever trainer asks. An episode's
conversation opens with the task's instruction; the agent's message to the user gets the
user's reply, and the episode ends, scored by its state-diff reward, when the user stops
(###STOP###) or the agent has written to the user `max_user_turns` times. Single-turn episodes
(an adapter's `single_turn` setting) end at the agent's first message instead, unheard, and
leave out the tasks marked conversational (those only the user's answers make solvable).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass

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


def playable(control: Control, single_turn: bool = False) -> list[str]:
    """The server's task ids; single-turn: only those that need no answer from the user."""
    tasks = control.tasks()
    if not single_turn:
        return tasks
    modes = control._json(control.http.get("/tasks/modes"))["modes"]
    return [t for t in tasks if modes.get(t) != "conversational"]


def finish(control: Control, episode_id: str, message: str = "") -> UserTurn:
    """The episode's end: its reward, on the state it reached."""
    result = control.reward(episode_id)
    return UserTurn(message, True, float(result["reward"]), bool(result.get("passed")))


def tell_user(control: Control, episode_id: str, message: str, max_user_turns: int = MAX_USER_TURNS,
              single_turn: bool = False) -> UserTurn:
    """The agent's `message` to the user: the user's reply, and the end when the user stops or the
    turns are spent (single-turn: the end at once)."""
    if single_turn:
        return finish(control, episode_id)
    reply = control._json(control.http.post(f"/episodes/{episode_id}/user", json={"message": message}))
    if reply["stop"] or reply["turns"] >= max_user_turns:
        return finish(control, episode_id, reply["message"])
    return UserTurn(reply["message"])
