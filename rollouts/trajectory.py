"""What one episode produces and the limits it runs under."""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

STOP = "###STOP###"  # the simulated user's end-of-conversation signal (tau2-bench's)

Termination = Literal["user_stop", "agent_stop", "max_turns", "max_tool_calls", "error"]


class Limits(BaseModel):
    """Per-episode budget. A turn is one agent action (one model call: a reply or a batch of tool calls)."""

    model_config = ConfigDict(extra="forbid")

    max_turns: int = Field(30, ge=1)
    max_tool_calls: int = Field(50, ge=0)


class ToolCall(BaseModel):
    """A call the agent asks for; `id` is the model's own (native tool calling), `error` says why
    the call cannot run (arguments that are not a JSON object): the episode answers it with that."""

    name: str
    arguments: dict[str, Any] = {}
    id: str | None = None
    error: str | None = None


class AgentAction(BaseModel):
    """One agent turn: tool calls to run, or a message to the user (a turn with both runs the calls
    and shows the message after them). `stop` ends the episode (scripted agents use it).
    `message` is the assistant message exactly as the model answered it (native tool calling):
    the episode records that one rather than rebuilding it."""

    content: str = ""
    tool_calls: list[ToolCall] = []
    stop: bool = False
    message: dict | None = None


class Usage(BaseModel):
    prompt: int = 0
    completion: int = 0

    @property
    def total(self) -> int:
        return self.prompt + self.completion

    def add(self, usage: dict) -> None:
        self.prompt += int(usage.get("prompt_tokens", 0) or 0)
        self.completion += int(usage.get("completion_tokens", 0) or 0)


class Trajectory(BaseModel):
    """One episode: OpenAI chat-format messages (usable as SFT data) and its outcome."""

    domain: str
    task_id: str
    trial: int
    agent: str
    user: str
    messages: list[dict]
    tools: list[dict] = Field(default_factory=list, description="the OpenAI function schemas the agent saw")
    reward: float = 0.0
    passed: bool = False
    reward_breakdown: dict = Field(default_factory=dict, description="the runtime's reward result")
    termination: Termination
    error: str | None = None
    turns: int = 0
    tool_calls: int = 0
    tokens: dict[str, Usage] = Field(default_factory=lambda: {"agent": Usage(), "user": Usage()})
    seconds: float = 0.0
    limits: Limits = Field(default_factory=Limits)

    def jsonl(self) -> str:
        return json.dumps(self.model_dump(mode="json"), ensure_ascii=False, sort_keys=True)


def assistant_message(action: AgentAction, call_ids: list[str]) -> dict:
    """The agent's turn in OpenAI chat format."""
    message: dict[str, Any] = {"role": "assistant", "content": action.content or None}
    if action.tool_calls:
        message["tool_calls"] = [
            {"id": call_id, "type": "function",
             "function": {"name": call.name, "arguments": json.dumps(call.arguments, ensure_ascii=False)}}
            for call_id, call in zip(call_ids, action.tool_calls)]
    return message
