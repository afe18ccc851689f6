"""g(D) from an LLM oracle agent: the expansion gate's feasibility score (ScaleEnv 4.2.2).

ScaleEnv defines g(D) as the success rate of an oracle agent at identifying executable tool
chains within the remaining tools D, with a best-of-k search (k = 16 rollouts). Here the oracle
is rollouts' LLM agent, through the gateway, in episodes of the rollouts loop on the task's
initial state, each seeing only D's tools and told its goal by a scripted user. An attempt
succeeds when what it ran holds a chain (`chain_in`): two or more calls of different tools of D
that ran without error, each taking a value the chain's previous call returned (outputs feed
inputs, as in a ScaleEnv tool chain); failed calls on the way are search, not the chain. Attempt
t is pointed at a different chain sampled inside D, so that k attempts are k searches even when
the model answers deterministically.

The model is asked only where it can succeed. Structure decides first (`expand.structural_link`):
when no two tools of D can pass a value with every identifier they need produced inside D, g(D)
is 0 and no request is made. Otherwise the k attempts run in batches of 1, 2, 4, ... and stop
after the first batch in which one succeeded. Batches rather than cancelling in-flight attempts:
a batch always runs to its end, so which attempts ran, and so the transcript, does not depend
on which reply came first, and a recorded run replays step for step. g(D) is the share of the
attempts that ran which succeeded (the success rate's maximum-likelihood estimate, whatever the
stopping rule); 0 when none of the k did.

Step keys: tasks/<task>.oracle<round>@<attempt>/<turn>, beside the task's other steps, so the
task's token count includes its oracle and a recorded run replays its oracle too.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass, field

import networkx as nx

from domains.spec import State
from graph.sampler import sample_chain
from llm import LLM
from mcp_servers.runtime import Environment
from rollouts.agents import LLMAgent
from rollouts.episode import run_episode
from rollouts.sessions import Scenario, StateSession
from rollouts.trajectory import STOP, Limits
from tasks.expand import restricted, structural_link

K = 16  # ScaleEnv's best-of-k
LIMITS = Limits(max_turns=8, max_tool_calls=12)
ORACLE_STEP = re.compile(r"^tasks/[^/]+\.oracle\d+@\d+/")

POLICY = ("You are testing which tools of this service work together on its current data. Act only "
          "through the tools; look every record up with them and never invent an identifier.")

BRIEF = ("Find a chain of the available tools that runs on the data as it is, and run it: at least two "
         "different tools, where a later call takes a value (an id, a name, a date) that an earlier call "
         "returned. Attempt {n} of {k}; one chain the tool graph suggests: {hint}. Follow it or find "
         "another. When the chain has run, reply with the tools you chained, in order.")


def _strings(value) -> set[str]:
    """The strings inside a JSON value: what one call's output can hand to the next."""
    if isinstance(value, dict):
        return set().union(*map(_strings, value.values())) if value else set()
    if isinstance(value, list):
        return set().union(*map(_strings, value)) if value else set()
    return {value} if isinstance(value, str) else set()


def chain_in(calls: list[tuple[str, dict, bool, object]], tools: set[str], fixed: set[str] = frozenset()) -> list[str]:
    """The longest chain in an attempt's calls [(tool, arguments, ok, result)], as tool names.

    A call extends a chain when it ran, is one of `tools`, differs from the chain's last tool and
    takes as an argument a string that last call returned: a value it could only have
    learned from that output. Enum choices (`fixed`) and strings under 3 characters match by
    chance, so they link nothing. Shorter than 2: the attempt found no chain."""
    ran = [(tool, {s for s in _strings(args) if len(s) >= 3 and s not in fixed}, _strings(result))
           for tool, args, ok, result in calls if ok and tool in tools]
    best: list[list[str]] = []
    for j, (tool, taken, _) in enumerate(ran):
        linked = [best[i] for i in range(j) if ran[i][0] != tool and taken & ran[i][2]]
        best.append(max(linked, key=len, default=[]) + [tool])
    return max(best, key=len, default=[])


class _BriefUser:
    """States attempt t's brief, then stops at the agent's first reply to it."""

    name = "oracle-brief"

    def __init__(self, briefs: list[str]):
        self.briefs = briefs

    async def reply(self, scenario: Scenario, trial: int, conversation: list[dict]) -> tuple[str, dict]:
        return (self.briefs[trial] if not conversation else STOP), {}


class _Watched:
    """The agent, keeping what the model raised: the episode loop records a failure as text and
    scores on, but an attempt the model could not answer is no evidence about D."""

    def __init__(self, agent: LLMAgent):
        self.agent, self.name, self.needs_reference = agent, agent.name, False
        self.failures: list[Exception] = []

    async def act(self, view, messages):
        try:
            return await self.agent.act(view, messages)
        except Exception as failure:
            self.failures.append(failure)
            raise


def briefs(g: nx.DiGraph, remaining: set[str], seed: int, k: int) -> list[str]:
    """Attempt t's brief names the chain executed_feasibility would sample for it."""
    sub = restricted(g, remaining)
    hints = [" -> ".join(sample_chain(sub, seed * 100 + t, max_len=5)) or "none found" for t in range(k)]
    return [BRIEF.format(n=t + 1, k=k, hint=hint) for t, hint in enumerate(hints)]


def batches(k: int) -> list[range]:
    """Attempt indices 0..k-1 in batches of 1, 2, 4, ...: one request's worth of search when the
    first attempt succeeds, few rounds of waiting when success is rare."""
    out, start, size = [], 0, 1
    while start < k:
        out.append(range(start, min(start + size, k)))
        start, size = start + size, size * 2
    return out


async def aattempts(env: Environment, llm: LLM, g: nx.DiGraph, remaining: set[str], seed: int, state: State,
                    item: str, k: int = K, limits: Limits = LIMITS) -> list[list[str]]:
    """The chain each attempt that ran found ([] for none); a batch's attempts run concurrently,
    and no batch starts after one in which an attempt found a chain."""
    tools = sorted(set(remaining) & set(env.tools))
    fixed = {str(v) for t in tools for p in env.tools[t].parameters for v in (p.enum or [])}
    agent = _Watched(LLMAgent(llm, "oracle", stage="tasks"))
    user = _BriefUser(briefs(g, remaining, seed, k))

    async def attempt(t: int) -> list[str]:
        session = await StateSession.open(env, state, Scenario(item, ""), tools, POLICY)
        try:
            await run_episode(session, agent, user, trial=t, limits=limits)
            return chain_in([(n, a, out.ok, out.result) for n, a, out in session.outcomes], set(tools), fixed)
        finally:
            await session.close()

    found: list[list[str]] = []
    for batch in batches(k):
        found += [c if len(c) >= 2 else [] for c in await asyncio.gather(*(attempt(t) for t in batch))]
        if agent.failures:  # as a failed stage.ask does, the model's failure stops the task stage
            raise agent.failures[0]
        if any(found):
            break
    return found


def share(found: list[list[str]]) -> float:
    """g(D): the share of the attempts that ran which found a chain."""
    return round(sum(bool(c) for c in found) / len(found), 4) if found else 0.0


@dataclass
class LLMOracle:
    """A `Stage.feasibility`: g(D) from up to k attempts of an LLM agent where structure allows a
    chain, 0 without a request where it does not; `source` names the model."""

    env: Environment
    llm: LLM
    source: str
    k: int = K
    limits: Limits = field(default_factory=lambda: LIMITS)

    def __call__(self, g: nx.DiGraph, remaining: set[str], seed: int, state: State, item: str) -> float:
        if not remaining or structural_link(g, set(remaining) & set(self.env.tools)) is None:
            return 0.0  # decided by structure: no attempt could run a chain, so no model is asked
        return share(asyncio.run(aattempts(self.env, self.llm, g, remaining, seed, state, item, self.k, self.limits)))


def oracle_for(llm: LLM, env: Environment, k: int = K) -> LLMOracle | None:
    """The oracle for a task stage: the LLM agent when a model is configured, or when replaying a
    run that recorded one (its steps are in the transcript); otherwise None, and g(D) comes from
    expand.executed_feasibility, as it did when the bundled transcripts were recorded."""
    if llm.backend is not None:
        return LLMOracle(env, llm, llm.backend.model, k)
    models = [e.get("model") for key, e in llm.transcript.entries.items() if ORACLE_STEP.match(key)]
    return LLMOracle(env, llm, models[0] or "recorded", k) if models else None

