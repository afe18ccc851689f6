"""One episode: scripted agents, an LLM agent and user through the gateway, limits and errors."""

from __future__ import annotations

import json

import pytest

from llm import LLM, ScriptedBackend, Transcript
from mcp_servers.runtime import Environment
from rollouts import (
    AgentAction,
    Limits,
    LLMAgent,
    LLMUser,
    NoopAgent,
    ReferenceAgent,
    ToolCall,
    oracle_best_of_k,
    run_task,
)
from tests.support.rollouts_tasks import TASKS, WITHDRAW, write_domain


class Recording(ScriptedBackend):
    """Keeps every prompt it was shown, per stage."""

    def __init__(self, answers):
        super().__init__(answers)
        self.prompts: dict[str, list[str]] = {"agent": [], "user": []}

    def complete(self, key, turn, messages, **kwargs):
        self.prompts[key.stage].append(json.dumps([messages, kwargs]))
        return super().complete(key, turn, messages, **kwargs)


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    with Environment(write_domain(tmp_path_factory.mktemp("rollouts")), workers=1) as environment:
        yield environment


@pytest.mark.parametrize("task_id", sorted(TASKS))
def test_reference_scores_full_reward_and_noop_less(env, task_id):
    reference = run_task(env, task_id, ReferenceAgent())
    assert (reference.reward, reference.passed, reference.termination) == (1.0, True, "agent_stop")
    assert reference.tool_calls == len(TASKS[task_id]["reference_solution"])
    noop = run_task(env, task_id, NoopAgent())
    assert noop.reward < 1.0 and not noop.passed and noop.tool_calls == 0


def test_llm_agent_and_user_converse_until_the_user_stops(env, tmp_path):
    backend = Recording(WITHDRAW)
    llm = LLM(backend, Transcript(tmp_path / "t.jsonl"))
    trajectory = run_task(env, "withdraw_figma_infra", LLMAgent(llm), LLMUser(llm, env.name))
    assert (trajectory.reward, trajectory.termination, trajectory.error) == (1.0, "user_stop", None)
    assert [m["role"] for m in trajectory.messages] == ["system", "user", "assistant", "tool", "assistant", "tool",
                                                        "assistant", "user"]
    call = trajectory.messages[4]["tool_calls"][0]
    assert call["function"] == {"name": "withdraw_application", "arguments": '{"application_id": "APP-0010"}'}
    assert trajectory.messages[5]["tool_call_id"] == call["id"]
    assert json.loads(trajectory.messages[5]["content"])["status"] == "withdrawn"
    assert trajectory.tokens["agent"].total > 0 and trajectory.tokens["user"].total > 0
    # the user hears the agent's words, never tool traffic; the agent never sees rewards or answers
    assert not any("APP-0010" in p or "list_applications" in p for p in backend.prompts["user"])
    assert "Figma" in backend.prompts["user"][-1] and "withdrawn" in backend.prompts["user"][-1]
    assert not any("reward" in p or "reference_solution" in p for p in backend.prompts["agent"])


def test_a_model_error_ends_the_episode_with_the_error_recorded(env, tmp_path):
    answers = {k: v for k, v in WITHDRAW.items() if k != "agent/withdraw_figma_infra@0/1"}
    llm = LLM(ScriptedBackend(answers), Transcript(tmp_path / "t.jsonl"))
    trajectory = run_task(env, "withdraw_figma_infra", LLMAgent(llm), LLMUser(llm, env.name))
    assert trajectory.termination == "error" and "agent/withdraw_figma_infra@0/1" in trajectory.error
    assert trajectory.reward < 1.0 and trajectory.tool_calls == 1  # scored on the state it reached


class Looping:
    """Calls a read-only tool twice per turn, forever."""

    name, needs_reference = "looping", False

    async def act(self, view, messages):
        call = ToolCall(name="list_applications", arguments={})
        return AgentAction(tool_calls=[call, call]), {}


def test_turn_and_tool_call_limits_end_the_episode(env):
    by_turns = run_task(env, "withdraw_figma_infra", Looping(), limits=Limits(max_turns=3, max_tool_calls=100))
    assert (by_turns.termination, by_turns.turns, by_turns.tool_calls) == ("max_turns", 3, 6)
    by_calls = run_task(env, "withdraw_figma_infra", Looping(), limits=Limits(max_turns=100, max_tool_calls=5))
    assert (by_calls.termination, by_calls.tool_calls) == ("max_tool_calls", 5)
    assert "CallLimit" in by_calls.messages[-1]["content"]


def test_oracle_best_of_k_restricted_to_tools_that_cannot_solve_the_task(env):
    solvable = oracle_best_of_k(env, "decline_cloudflare_offer", ReferenceAgent(), k=3)
    assert solvable.solved and solvable.rewards == [1.0, 1.0, 1.0]
    blocked = oracle_best_of_k(env, "decline_cloudflare_offer", ReferenceAgent(), k=2, tools=["list_applications"])
    assert not blocked.solved and blocked.best < 1.0
    assert "UnknownTool" in blocked.trajectories[0].messages[3]["content"]
