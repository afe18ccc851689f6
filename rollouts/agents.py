"""Agents: an LLM agent through the gateway, and scripted ones that need no model.

An agent sees an `AgentView` (the domain's tools as OpenAI function schemas, its policy, the
task id it is keyed by) and the conversation in OpenAI chat format; it answers one
`AgentAction` per turn. Rewards, the database and other episodes are never in its view; only an
oracle agent (`needs_reference`) is also handed the task's reference solution.
"""

from __future__ import annotations

import asyncio
import json
from concurrent.futures import Executor
from dataclasses import dataclass
from typing import Protocol

from pydantic import BaseModel

from llm import LLM, StepKey
from rollouts.trajectory import AgentAction, ToolCall


@dataclass(frozen=True)
class AgentView:
    domain: str
    task_id: str
    trial: int
    tools: list[dict]
    policy: str = ""
    reference: list[dict] | None = None  # set only for agents with needs_reference


class Agent(Protocol):
    name: str
    needs_reference: bool

    async def act(self, view: AgentView, messages: list[dict]) -> tuple[AgentAction, dict]:
        """The next action and the tokens it cost ({prompt_tokens, completion_tokens})."""


NO_USAGE: dict = {}


class ReferenceAgent:
    """Replays the task's reference solution, one call per turn, then says it is done: reward 1."""

    name = "reference"
    needs_reference = True

    async def act(self, view: AgentView, messages: list[dict]) -> tuple[AgentAction, dict]:
        done = sum(1 for m in messages if m["role"] == "tool")
        if view.reference is None or done >= len(view.reference):
            return AgentAction(content="Done.", stop=True), NO_USAGE
        call = view.reference[done]
        return AgentAction(tool_calls=[ToolCall(name=call["tool"], arguments=call.get("arguments") or {})]), NO_USAGE


class NoopAgent:
    """Does nothing: the untouched initial state must score below 1 on every task."""

    name = "noop"
    needs_reference = False

    async def act(self, view: AgentView, messages: list[dict]) -> tuple[AgentAction, dict]:
        return AgentAction(content="Sorry, I cannot help with that.", stop=True), NO_USAGE


class ModelTurn(BaseModel):
    """What the model answers each turn."""

    content: str = ""
    tool_calls: list[ToolCall] = []


AGENT_SYSTEM = """You are a customer-service agent for the {domain} service. You act on the service's
database only through the tools below, on behalf of the user you are talking to.

# Policy
{policy}

# Tools (OpenAI function schemas)
{tools}

# How to answer
Each turn, either call tools or write to the user:
- to call tools: {{"content": "", "tool_calls": [{{"name": "<tool>", "arguments": {{...}}}}]}}
- to write to the user: {{"content": "<your message>", "tool_calls": []}}
Tool results come back as messages with role "tool". Look records up with the tools instead of
asking the user for internal identifiers. Confirm what you did when the request is complete."""

DEFAULT_POLICY = "Help the user with their request. Do only what the user asks; ask when a detail is missing."


def agent_system_prompt(view: AgentView) -> str:
    return AGENT_SYSTEM.format(domain=view.domain, policy=view.policy.strip() or DEFAULT_POLICY,
                               tools=json.dumps(view.tools, ensure_ascii=False))


def step_usage(llm: LLM, key: StepKey) -> dict:
    """Tokens of a step's exchanges (re-asks included), as recorded in the transcript."""
    usage = {"prompt_tokens": 0, "completion_tokens": 0}
    for turn in range(llm.max_reasks + 1):
        entry = llm.transcript.get(f"{key}#{turn}" if turn else str(key))
        if entry is None:
            break
        for name in usage:
            usage[name] += int(entry.get("usage", {}).get(name, 0) or 0)
    return usage


class LLMAgent:
    """An LLM through the gateway (retries, concurrency limit, recording and replay).

    Steps are keyed <stage>/<task>@<trial>/<turn>, stage "agent" unless given (the task stage's
    oracle keys its steps under "tasks", beside the task they were spent on); `fixed_trial` keys
    every trial as that one, so a recorded single trial replays for any number of trials.
    """

    needs_reference = False

    def __init__(self, llm: LLM, name: str = "llm", executor: Executor | None = None, fixed_trial: int | None = None,
                 stage: str = "agent"):
        self.llm, self.name, self.executor, self.fixed_trial, self.stage = llm, name, executor, fixed_trial, stage

    async def act(self, view: AgentView, messages: list[dict]) -> tuple[AgentAction, dict]:
        trial = view.trial if self.fixed_trial is None else self.fixed_trial
        turn = sum(1 for m in messages if m["role"] == "assistant")
        key = StepKey(self.stage, f"{view.task_id}@{trial}", turn)
        conversation = json.dumps([m for m in messages if m["role"] != "system"], ensure_ascii=False, indent=1)
        reply = await asyncio.get_running_loop().run_in_executor(
            self.executor, self.llm.structured, key, agent_system_prompt(view),
            "The conversation so far:\n" + conversation + "\n\nYour next turn:", ModelTurn)
        return AgentAction(content=reply.content, tool_calls=reply.tool_calls), step_usage(self.llm, key)
