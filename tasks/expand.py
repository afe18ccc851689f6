"""Controlled environment expansion (ScaleEnv 4.2.2): K(C), c(H), the gate's inputs, probes.

Pure functions of the tool graph, except `probe`, which executes tools on a state through the
runtime (interaction completeness: every tool of the subgraph must answer on the task's state).
"""

from __future__ import annotations

import random
from collections.abc import Callable

import networkx as nx

from domains.spec import State
from graph import model
from graph.execute import execute_chain
from graph.sampler import needs, sample_chain, sampleable
from mcp_servers.runtime import Environment

LAMBDA, SATURATION, MIN_TOOLS = 0.5, 50, 20

# g(D): the oracle's success rate at finding executable chains inside the remaining tools D,
# given the graph, D, a seed, the task's state and the step item its model calls are keyed by.
Feasibility = Callable[[nx.DiGraph, set[str], int, State, str], float]


def closure(g: nx.DiGraph, chain: list[str], hops: int = 1) -> set[str]:
    """K(C), dependency-aware BFS from the chain, `hops` levels deep: a neighbouring tool joins when
    every internal input it needs has a producer already inside the subgraph (no dependency dead-ends).

    One level keeps K(C) the chain's own neighbourhood; on a dense graph a full BFS would take
    every tool at once and leave nothing for the gated rounds."""
    h = set(chain)
    frontier = [(t, 0) for t in chain]
    while frontier:
        tool, depth = frontier.pop(0)
        if depth >= hops:
            continue
        neighbours = sorted(n for n in set(g.successors(tool)) | set(g.predecessors(tool))
                            if n not in h and g.nodes[n]["type"] == "tool")
        for v in neighbours:
            if all(set(model.producers(g, p)) & h for p in needs(g, v)):
                h.add(v)
                frontier.append((v, depth + 1))
    return h


def edges_within(g: nx.DiGraph, h: set[str]) -> list[list[str]]:
    return [[u, v] for u, v, _ in model.tool_edges(g) if u in h and v in h]


def complexity(g: nx.DiGraph, h: set[str]) -> float:
    """c(H) = (|V| + lambda |E|) / S_sat."""
    return round((len(h) + LAMBDA * len(edges_within(g, h))) / SATURATION, 4)


def restricted(g: nx.DiGraph, tools: set[str]) -> nx.DiGraph:
    """The graph of `tools` and their parameters only."""
    keep = [n for n, d in g.nodes(data=True) if (n if d["type"] == "tool" else d["tool"]) in tools]
    return g.subgraph(keep).copy()


def structural_link(g: nx.DiGraph, remaining: set[str]) -> tuple[str, str] | None:
    """A link some chain over D could run, as (producer, consumer), or None when there is none.

    Both are tools of D that get every internal input they need from D's own producers, down to
    tools that need none (listers and readers over the state, creators from what the user says),
    and an output of the producer flows into an input of the consumer: the two-tool chain the
    oracle is asked to find. None decides g(D) = 0 by structure: when the identifiers D's tools
    need come only from tools outside D, no search inside D can run a chain."""
    sub = restricted(g, remaining)
    runnable = sampleable(sub)
    for out, inp, d in sorted(sub.edges(data=True), key=lambda e: (e[0], e[1])):
        if d["type"] == "flow":
            producer, consumer = sub.nodes[out]["tool"], sub.nodes[inp]["tool"]
            if producer != consumer and producer in runnable and consumer in runnable:
                return producer, consumer
    return None


def executed_feasibility(env: Environment, g: nx.DiGraph, remaining: set[str], seed: int, state: State,
                         k: int = 16) -> float:
    """The default g(D), without a model: k chains sampled inside D, each executed on the task's
    state with every argument combination graph.execute tries (a best-of-k search per chain); the
    share that ran end to end. The LLM oracle agent (tasks/oracle.py) plugs in through `Stage.feasibility`."""
    if not remaining:
        return 0.0
    sub = restricted(g, remaining)
    chains = [sample_chain(sub, seed * 100 + i, max_len=5) for i in range(k)]
    with env.create_episode(state=state) as episode:
        reused = _Reused(env, episode)
        return round(sum(bool(c) and execute_chain(reused, sub, c, state).ok for c in chains) / k, 4)


class _Reused:
    """The environment as graph.execute sees it, with every new episode being one episode reset:
    an episode is a process, and k chains need k fresh states, not k processes."""

    def __init__(self, env: Environment, episode):
        self._env, self._episode = env, episode

    def __getattr__(self, name):
        return getattr(self._env, name)

    def create_episode(self, *_args, **_kwargs):
        self._episode.reset()
        return _Borrowed(self._episode)


class _Borrowed:
    def __init__(self, episode):
        self._episode = episode

    def __getattr__(self, name):
        return getattr(self._episode, name)

    def close(self) -> None:
        pass  # the next create_episode resets it, and the owner closes it


def auxiliary_chain(g: nx.DiGraph, remaining: set[str], seed: int) -> list[str]:
    return sample_chain(restricted(g, remaining), seed, max_len=4) if remaining else []


def probe_arguments(env: Environment, tool: str, state: State, rng: random.Random) -> dict:
    """Arguments drawn from the state: a parameter named like a column takes a value of that column,
    an enum its first value, other optional parameters are left out."""
    columns: dict[str, list] = {}
    for rows in state.values():
        for row in rows:
            for key, value in row.items():
                if value is not None:
                    columns.setdefault(key, []).append(value)
    arguments = {}
    for param in env.tools[tool].parameters:
        if param.name in columns:
            value = rng.choice(columns[param.name])
            arguments[param.name] = [value] if param.type == "array" else value
        elif param.enum:
            arguments[param.name] = param.enum[0]
        elif param.required:
            arguments[param.name] = {"integer": 1, "number": 1.0, "boolean": True, "array": []}.get(
                param.type, "2025-03-01" if "date" in param.name else "engineer")
    return arguments


def probe(env: Environment, tools: set[str], state: State, seed: int, tries: int = 3) -> dict[str, str]:
    """Execute each tool on a fresh episode of `state` with arguments drawn from it; 'ok', or the
    last error type after `tries` draws. A tool that only errs marks a gap in the environment."""
    rng = random.Random(seed)
    outcomes = {}
    with env.create_episode(state=state) as episode:
        changed = False  # a failed call leaves the state as it was: only a success needs a reset
        for tool in sorted(tools):
            if tool not in env.tools:
                outcomes[tool] = "unverified"
                continue
            for _ in range(tries):
                if changed:
                    episode.reset()
                out = episode.call(tool, probe_arguments(env, tool, state, rng))
                changed = out.ok
                outcomes[tool] = "ok" if out.ok else out.error_type
                if out.ok:
                    break
    return outcomes
