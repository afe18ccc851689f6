"""One episode: agent ↔ simulated user ↔ environment, scored by the runtime when it ends.

    from mcp_servers.runtime import Environment
    from rollouts import run_task, oracle_best_of_k, ReferenceAgent

    with Environment("job_seeking") as env:
        trajectory = run_task(env, task_id, ReferenceAgent())     # the user defaults to the scripted one
        print(trajectory.reward, trajectory.termination, len(trajectory.messages))
        best = oracle_best_of_k(env, task_id, agent, user, k=16)  # best of k attempts at a task
        print(best.best, best.solved)

The loop: the user opens; each agent turn either calls tools (results come back and the agent
acts again) or writes to the user, who answers or ends with ###STOP###. It ends on the user's
stop, a scripted agent's stop, the turn or tool-call limit, or an error (a model that fails, a
worker that dies): that episode records the error and is still scored; nothing is raised.
"""

from __future__ import annotations

import asyncio
import time

from pydantic import BaseModel

from mcp_servers.runtime import Environment
from rollouts.agents import Agent, AgentView, agent_system_prompt
from rollouts.sessions import InProcessSession, Session
from rollouts.trajectory import STOP, Limits, Termination, Trajectory, Usage, assistant_message
from rollouts.user import InstructionUser, User


async def run_episode(session: Session, agent: Agent, user: User, *, trial: int = 0,
                      limits: Limits | None = None) -> Trajectory:
    """Play one episode on an open session (closed by the caller) and score it."""
    limits = limits or Limits()
    started = time.perf_counter()
    view = AgentView(session.domain, session.scenario.task_id, trial, session.tools, session.policy)
    messages: list[dict] = [{"role": "system", "content": agent_system_prompt(session.domain, session.policy)}]
    heard: list[dict] = []  # the user's view: its own messages and the agent's words, no tool traffic
    tokens = {"agent": Usage(), "user": Usage()}
    turns = calls = 0
    termination: Termination | None = None
    error = None
    final_message = ""

    async def user_says() -> None:
        nonlocal termination
        text, usage = await user.reply(session.scenario, trial, heard)
        tokens["user"].add(usage)
        heard.append({"role": "user", "content": text})
        messages.append({"role": "user", "content": text})
        if STOP in text:
            termination = "user_stop"

    try:
        if agent.needs_reference:
            key = await session.answer_key()
            forbidden = (key.get("policy_rule") or {}).get("forbidden")
            view = AgentView(**{**view.__dict__, "reference": await session.reference_solution(),
                                "kind": key.get("kind", "change"), "forbidden": forbidden})
        await user_says()
        while termination is None:
            if turns >= limits.max_turns:
                termination = "max_turns"
                break
            action, usage = await agent.act(view, messages)
            tokens["agent"].add(usage)
            turns += 1
            ids = [call.id or f"call_{turns}_{i}" for i, call in enumerate(action.tool_calls)]
            messages.append(action.message or assistant_message(action, ids))
            if action.content:
                final_message = action.content  # what an answer task's facts are read from
            for call_id, call in zip(ids, action.tool_calls):
                if call.error:
                    result = f"Error (InvalidArguments): {call.error}"
                elif calls >= limits.max_tool_calls:
                    result = f"Error (CallLimit): this episode's {limits.max_tool_calls} tool calls are used up"
                    termination = "max_tool_calls"
                else:
                    calls += 1
                    result = await session.call(call.name, call.arguments)
                messages.append({"role": "tool", "tool_call_id": call_id, "content": result})
            if termination is None and action.stop:
                termination = "agent_stop"
            elif termination is None and not action.tool_calls:
                heard.append({"role": "agent", "content": action.content})
                await user_says()
    except Exception as failure:  # a model or worker failure ends this episode, never the run
        termination, error = "error", f"{type(failure).__name__}: {failure}"

    outcome: dict = {}
    try:
        outcome = await session.reward(final_message)
    except Exception as failure:
        error = (error + "; " if error else "") + f"reward: {type(failure).__name__}: {failure}"
        termination = "error"
    return Trajectory(
        domain=session.domain, task_id=session.scenario.task_id, trial=trial, agent=agent.name, user=user.name,
        messages=messages, tools=session.tools, reward=float(outcome.get("reward", 0.0)),
        passed=bool(outcome.get("passed", False)), reward_breakdown=outcome, termination=termination,
        error=error, turns=turns, tool_calls=calls, tokens=tokens, seconds=time.perf_counter() - started,
        limits=limits)


async def arun_task(env: Environment, task_id: str, agent: Agent, user: User | None = None, *, trial: int = 0,
                    limits: Limits | None = None, tools: list[str] | None = None) -> Trajectory:
    """run_task() for asyncio code."""
    session = await InProcessSession.open(env, task_id, tools)
    try:
        return await run_episode(session, agent, user or InstructionUser(), trial=trial, limits=limits)
    finally:
        await session.close()


def run_task(env: Environment, task_id: str, agent: Agent, user: User | None = None, *, trial: int = 0,
             limits: Limits | None = None, tools: list[str] | None = None) -> Trajectory:
    """One episode of `task_id` in a fresh isolated episode of `env`: its trajectory and reward.

    `tools` restricts the agent to a subset of the domain's tools; `user` defaults to the scripted
    user that states the instruction and stops at the agent's first reply.
    """
    return asyncio.run(arun_task(env, task_id, agent, user, trial=trial, limits=limits, tools=tools))


class BestOfK(BaseModel):
    task_id: str
    rewards: list[float]
    best: float
    solved: bool  # some attempt earned full reward
    trajectories: list[Trajectory]


async def aoracle_best_of_k(env: Environment, task_id: str, agent: Agent, user: User | None = None, k: int = 16, *,
                            limits: Limits | None = None, tools: list[str] | None = None) -> BestOfK:
    """oracle_best_of_k() for asyncio code: the k attempts run concurrently."""
    if k < 1:
        raise ValueError("k must be at least 1")
    runs = await asyncio.gather(*(arun_task(env, task_id, agent, user, trial=t, limits=limits, tools=tools)
                                  for t in range(k)))
    rewards = [t.reward for t in runs]
    return BestOfK(task_id=task_id, rewards=rewards, best=max(rewards), solved=any(t.passed for t in runs),
                   trajectories=list(runs))


def oracle_best_of_k(env: Environment, task_id: str, agent: Agent, user: User | None = None, k: int = 16, *,
                     limits: Limits | None = None, tools: list[str] | None = None) -> BestOfK:
    """A best-of-k oracle for one task: k attempts (trials 0..k-1) of `agent`, restricted to `tools`
    when given; the best reward and whether any attempt solved it. The expansion gate's g(D) needs
    no task: tasks/oracle.py runs its attempts on the state of the task being built."""
    return asyncio.run(aoracle_best_of_k(env, task_id, agent, user, k, limits=limits, tools=tools))
