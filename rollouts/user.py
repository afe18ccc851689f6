"""Simulated users: an LLM playing the task's instruction and profile, and a scripted one.

The user sees only its scenario (instruction and user profile) and the agent's messages to it,
never the database, the tool calls or the reward. It knows the external values in its
instruction (names, emails, companies, dates), never internal identifiers, and ends the
conversation with `###STOP###` when its goal is met or cannot be (ScaleEnv appendix C's user
simulator; the stop signal and rules follow tau2-bench's).
"""

from __future__ import annotations

import asyncio
import json
from concurrent.futures import Executor
from typing import Protocol

from pydantic import BaseModel

from llm import LLM, StepKey
from rollouts.agents import step_usage
from rollouts.sessions import Scenario
from rollouts.trajectory import STOP


class User(Protocol):
    name: str

    async def reply(self, scenario: Scenario, trial: int, conversation: list[dict]) -> tuple[str, dict]:
        """The user's next message given the conversation so far ([{"role": "user"|"agent", "content"}];
        empty for the first message), and its token usage."""


class InstructionUser:
    """States the instruction, then stops at the agent's first reply: for scripted agents."""

    name = "instruction"

    async def reply(self, scenario: Scenario, trial: int, conversation: list[dict]) -> tuple[str, dict]:
        return (scenario.instruction if not conversation else STOP), {}


USER_SYSTEM = """You are playing a user who contacts the customer-service agent of a {domain} service.

# Your goal
{instruction}

# Who you are
{profile}

# Rules
- Write one message at a time, as this user would: short, natural, no lists of everything at once.
  Start by saying what you want; give details when the agent needs them.
- You know the facts in your goal and profile (names, emails, companies, job titles, dates, amounts).
  You do NOT know internal identifiers (record ids such as APP-0001): if asked for one, say you do not
  know it and give what you do know. Never invent facts that are not in your goal or profile.
- You cannot see the service's database or tools; judge only from what the agent tells you.
- When your goal is fully met, or the agent cannot meet it, answer with the message {stop} alone.

Answer with JSON: {{"message": "<your next message>"}}"""


class UserTurn(BaseModel):
    message: str


def user_system_prompt(domain: str, scenario: Scenario) -> str:
    profile = scenario.user_profile
    if not isinstance(profile, str):
        profile = json.dumps(profile, ensure_ascii=False, indent=1)
    return USER_SYSTEM.format(domain=domain, instruction=scenario.instruction, profile=profile or "(nothing more)",
                              stop=STOP)


class LLMUser:
    """An LLM user simulator through the gateway; steps keyed user/<task>@<trial>/<turn>."""

    def __init__(self, llm: LLM, domain: str, name: str = "llm-user", executor: Executor | None = None,
                 fixed_trial: int | None = None):
        self.llm, self.domain, self.name, self.executor, self.fixed_trial = llm, domain, name, executor, fixed_trial

    async def reply(self, scenario: Scenario, trial: int, conversation: list[dict]) -> tuple[str, dict]:
        trial = trial if self.fixed_trial is None else self.fixed_trial
        key = StepKey("user", f"{scenario.task_id}@{trial}", sum(1 for m in conversation if m["role"] == "user"))
        if conversation:
            prompt = ("The conversation so far (you are \"user\"):\n"
                      + json.dumps(conversation, ensure_ascii=False, indent=1) + "\n\nYour next message:")
        else:
            prompt = "Start the conversation: your first message to the agent."
        turn = await asyncio.get_running_loop().run_in_executor(
            self.executor, self.llm.structured, key, user_system_prompt(self.domain, scenario), prompt, UserTurn)
        return turn.message, step_usage(self.llm, key)
