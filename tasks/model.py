"""The task file format: domains/<name>/tasks/<id>.json."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from domains.spec import State


class ToolCall(BaseModel):
    model_config = ConfigDict(extra="forbid")

    tool: str
    arguments: dict[str, Any] = {}


class Task(BaseModel):
    """A verifiable task: executing `reference_solution` on `initial_state` gives the ground truth
    that an episode's final state is rewarded against, under `reward_spec`'s field policies.
    Fields a reader does not use are kept."""

    model_config = ConfigDict(extra="allow")

    id: str
    instruction: str = ""
    user_profile: Any = None
    initial_state: State = {}
    reference_solution: list[ToolCall] = []
    reward_spec: dict[str, Any] | None = None
    now: str | None = None  # the episode clock; the DB layer's default when absent
