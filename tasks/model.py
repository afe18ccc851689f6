"""The task file format: domains/<name>/tasks/<id>.json."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from domains.spec import State


class ToolCall(BaseModel):
    model_config = ConfigDict(extra="forbid")

    tool: str
    arguments: dict[str, Any] = {}


class Task(BaseModel):
    """A verifiable task: executing `reference_solution` on `initial_state` gives the ground truth
    that the final state of an episode is rewarded against, under `reward_spec`'s field policies."""

    model_config = ConfigDict(extra="forbid")

    id: str
    instruction: str
    user_profile: dict[str, Any] = {}
    initial_state: State
    reference_solution: list[ToolCall] = Field(min_length=1)
    reward_spec: dict[str, Any] = {}
