"""Topology-aware sampling of tool chains (EnvFactory 3.3.2), and the validator of any chain.

The rule, shared by both: every required input parameter of a step is external (the user
can state it), or internal and produced by a tool at an earlier step (a flow edge from
one of its outputs); optional parameters need nothing. The sampler starts at a random
tool, resolves each unsatisfied internal input recursively along inverse flow edges
(putting a producer, and its own prerequisites, before the tool), and grows the chain by
branching to 1..k random successors of each tool it adds, so chains are trees rather
than paths. Everything is a pure function of the graph and the seed.
"""

from __future__ import annotations

import random
from collections import deque

import networkx as nx

from graph import model


def needs(g: nx.DiGraph, tool: str) -> list[str]:
    """The input nodes of a tool that an earlier step must produce."""
    return [p for p in model.inputs_of(g, tool)
            if g.nodes[p]["required"] and g.nodes[p].get("role") == "internal"]


def sampleable(g: nx.DiGraph) -> set[str]:
    """Tools whose internal inputs can all be produced by a chain of other tools (least fixed point)."""
    ok: set[str] = set()
    changed = True
    while changed:
        changed = False
        for tool in model.tools(g):
            if tool not in ok and all((set(model.producers(g, p)) - {tool}) & ok for p in needs(g, tool)):
                ok.add(tool)
                changed = True
    return ok


def _successors(g: nx.DiGraph, tool: str) -> list[str]:
    return sorted(v for v in g.successors(tool) if g.edges[tool, v]["type"] == "depends")


def _resolve(g: nx.DiGraph, tool: str, chain: list[str], ok: set[str], rng: random.Random,
             max_len: int, detour: float, visiting: frozenset[str]) -> list[str] | None:
    """`chain` extended by the prerequisites of `tool` and then `tool`; None when that cannot fit."""
    chain = list(chain)
    visiting = visiting | {tool}
    for param in model.inputs_of(g, tool):
        node = g.nodes[param]
        if not node["required"]:
            continue
        makers = model.producers(g, param)
        if set(makers) & set(chain):
            continue
        producers = [u for u in makers if u in ok and u not in visiting]
        if node.get("role") == "internal":
            mandatory = True
        elif producers and rng.random() < detour:
            mandatory = False  # the user could say it, but sometimes a tool looks it up first
        else:
            continue
        rng.shuffle(producers)
        for producer in producers:
            extended = _resolve(g, producer, chain, ok, rng, max_len, detour, visiting)
            if extended is not None:
                chain = extended
                break
        else:
            if mandatory:
                return None
    if len(chain) >= max_len:
        return None
    return chain + [tool]


def sample_chain(g: nx.DiGraph, seed: int, max_len: int = 6, branching: int = 2,
                 detour: float = 0.1) -> list[str]:
    """A chain of distinct tools, at most `max_len` long, that `validate_chain` accepts.

    Empty only when no tool's prerequisites fit in `max_len` steps.
    """
    rng = random.Random(seed)
    ok = sampleable(g)
    starts = sorted(ok)
    rng.shuffle(starts)
    chain: list[str] = []
    for start in starts:
        chain = _resolve(g, start, [], ok, rng, max_len, detour, frozenset()) or []
        if chain:
            break
    frontier = deque(chain[-1:])
    while frontier and len(chain) < max_len:
        tool = frontier.popleft()
        options = [v for v in _successors(g, tool) if v in ok and v not in chain]
        if not options:
            continue
        for nxt in rng.sample(options, min(rng.randint(1, branching), len(options))):
            if nxt in chain:  # a prerequisite of an earlier pick
                continue
            extended = _resolve(g, nxt, chain, ok, rng, max_len, detour, frozenset())
            if extended is not None:
                chain = extended
                frontier.append(nxt)
    return chain


def bindings(g: nx.DiGraph, chain: list[str]) -> list[dict[str, str]]:
    """How each step's parameters are satisfied: 'optional', 'external', 'step N: tool.output', or 'missing'."""
    steps = []
    for i, tool in enumerate(chain):
        found = {}
        if g.has_node(tool) and g.nodes[tool]["type"] == "tool":
            for param in model.inputs_of(g, tool):
                node = g.nodes[param]
                if not node["required"]:
                    found[node["name"]] = "optional"
                elif node.get("role") != "internal":
                    found[node["name"]] = "external"
                else:
                    earlier = [(j, g.nodes[out]) for out in model.sources(g, param)
                               for j in range(i) if chain[j] == g.nodes[out]["tool"]]
                    j, out = max(earlier, key=lambda e: e[0]) if earlier else (None, None)
                    found[node["name"]] = f"step {j + 1}: {out['tool']}.{out['name']}" if out else "missing"
        steps.append(found)
    return steps


def validate_chain(g: nx.DiGraph, chain: list[str]) -> list[str]:
    """Problems of a chain (sampled or written by hand or by a model); empty when it is sound."""
    if not chain:
        return ["the chain is empty"]
    problems = []
    for i, (tool, found) in enumerate(zip(chain, bindings(g, chain))):
        if not g.has_node(tool) or g.nodes[tool]["type"] != "tool":
            problems.append(f"step {i + 1}: {tool!r} is not a tool of this domain")
            continue
        for name, how in found.items():
            if how == "missing":
                param = model.param_id(tool, "in", name)
                makers = ", ".join(model.producers(g, param)) or "no tool"
                problems.append(f"step {i + 1}: {tool} needs internal parameter {name!r}, which no earlier "
                                f"step produces (produced by: {makers})")
    return problems
