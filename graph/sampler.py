"""Topology-aware sampling of tool chains (EnvFactory 3.3.2), and the validator of any chain.

    from graph.sampler import sample_chain, sample_chains, validate_chain
    chain = sample_chain(g, seed=3)             # e.g. ['create_job_application', 'upload_resume', ...]
    assert validate_chain(g, chain) == []       # what is wrong with any chain, hand-written ones too
    # graph.execute.execute_chain runs one on a real database state

The rules, shared by both:
  data    every required input parameter of a step is external (the user can state it), or
          internal and produced by a tool at an earlier step (a flow edge from one of its
          outputs); optional parameters need nothing.
  order   a precondition producer that is in the chain comes before its consumer.
  prior   a step acting on an entity created earlier in the chain (its identifier comes from
          a create tool) has before it every precondition producer that concerns that entity
          (`owed`): a fresh draft is submitted before an interview is scheduled for it. An
          entity the step takes from the initial state (through a lister or a reader) meets
          its preconditions there, whatever else the same call names.
  delete  after a delete tool, no step touches the tables it deletes from: no use after delete.
The sampler starts at a random tool, resolves each unsatisfied internal input recursively
along inverse flow edges (putting a producer, and its own prerequisites, before the tool),
and grows the chain by branching to 1..k random successors of each tool it adds along
informative edges (a flow into an internal parameter, a precondition or a state edge), so
chains are trees rather than paths, up to a length drawn in [2, max_len]. Everything is a
pure function of the graph and the seed.
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


def informative(g: nx.DiGraph, producer: str, consumer: str) -> bool:
    """Whether a tool edge tells a sampler something: a precondition or state edge, or a flow
    into an internal parameter (a flow into a value the user can state is only a convenience)."""
    d = g.edges[producer, consumer]
    if "precondition" in d.get("kinds", ()) or "state" in d.get("kinds", ()):
        return True
    return any(e["dimension"] == "data_flow"
               and g.nodes[model.param_id(consumer, "in", e["parameter"])].get("role") == "internal"
               for e in d["evidence"])


def _successors(g: nx.DiGraph, tool: str) -> list[str]:
    return sorted(v for v in g.successors(tool) if g.edges[tool, v]["type"] == "depends" and informative(g, tool, v))


def preconditions(g: nx.DiGraph, tool: str) -> list[str]:
    """Tools whose precondition edge ends in `tool`."""
    return sorted(u for u in g.predecessors(tool) if g.edges[u, tool]["type"] == "depends"
                  and "precondition" in g.edges[u, tool].get("kinds", ()))


def _crud(g: nx.DiGraph, tool: str) -> str:
    return g.nodes[tool].get("crud", "read")


def _created(g: nx.DiGraph, chain: list[str], tool: str) -> list[tuple[int, str]]:
    """(step, output node) for each internal input of `tool`, placed after `chain`, whose value
    comes from a create step of the chain: the entities created in the chain that `tool` acts on.
    An input fed by a lister or a reader acts on an entity of the initial state, which needs no step."""
    created = []
    for param in needs(g, tool):
        earlier = [(j, out) for out in model.sources(g, param) for j, t in enumerate(chain) if t == g.nodes[out]["tool"]]
        if earlier:
            last = max(j for j, _ in earlier)
            if _crud(g, chain[last]) == "create":
                created += [(j, out) for j, out in earlier if j == last]
    return created


def owed(g: nx.DiGraph, chain: list[str], tool: str) -> list[str]:
    """The precondition producers of `tool`, placed after `chain`, that the chain must hold: those
    that establish something of an entity the chain created and `tool` acts on. A producer concerns
    that entity when it is the step that created it, or when the created identifier flows into one
    of its inputs (`submit_application` takes the `application_id` a fresh draft got). A precondition
    of another entity is met by the initial state: a pet that exists needs no `register_pet`, even
    when the visit the same call names was created in the chain."""
    concerned = set()
    for j, out in _created(g, chain, tool):
        concerned.add(chain[j])
        concerned |= {g.nodes[inp]["tool"] for inp in g.successors(out) if g.edges[out, inp]["type"] == "flow"}
    return [p for p in preconditions(g, tool) if p in concerned]


def order_problems(g: nx.DiGraph, chain: list[str]) -> list[str]:
    """Violations of the order, prior and delete rules (see the module docstring)."""
    problems = []
    where = {t: i for i, t in enumerate(chain)}
    for i, tool in enumerate(chain):
        if not g.has_node(tool) or g.nodes[tool]["type"] != "tool":
            continue
        for p in preconditions(g, tool):
            if p in where and where[p] > i:
                problems.append(f"step {i + 1}: {tool} comes before {p}, which establishes its precondition")
        missing = [p for p in owed(g, chain[:i], tool) if p not in where]
        if missing:
            problems.append(f"step {i + 1}: {tool} acts on an entity created in the chain, whose precondition "
                            f"{', '.join(missing)} never establishes")
        if _crud(g, tool) == "delete":
            gone = set(g.nodes[tool]["tables"])
            for j in range(i + 1, len(chain)):
                if set(g.nodes[chain[j]].get("tables", ())) & gone:
                    problems.append(f"step {j + 1}: {chain[j]} uses tables that {tool} deleted from at step {i + 1}")
    return problems


class _Budget:
    """Steps one prerequisite search may take. The search backtracks over every producer of every
    input; on a dense graph (a 50-tool domain whose inputs each have several producers) that is
    exponential, so a search past its budget gives up (None) and the sampler tries the next start.
    Searches that finish within it are untouched, so the chains sampled for them stay the same."""

    STEPS = 20_000

    def __init__(self):
        self.left = self.STEPS

    def spend(self) -> bool:
        self.left -= 1
        return self.left >= 0


def _resolve(g: nx.DiGraph, tool: str, chain: list[str], ok: set[str], rng: random.Random,
             max_len: int, detour: float, visiting: frozenset[str], budget: _Budget | None = None) -> list[str] | None:
    """`chain` extended by the prerequisites of `tool` and then `tool`; None when that cannot fit."""
    budget = budget or _Budget()
    if not budget.spend():
        return None
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
            extended = _resolve(g, producer, chain, ok, rng, max_len, detour, visiting, budget)
            if extended is not None:
                chain = extended
                break
        else:
            if mandatory:
                return None
    for producer in owed(g, chain, tool):
        if producer in chain:
            continue
        if producer not in ok or producer in visiting:
            return None
        chain = _resolve(g, producer, chain, ok, rng, max_len, detour, visiting, budget)
        if chain is None:
            return None
    if len(chain) >= max_len:
        return None
    extended = chain + [tool]
    return extended if not order_problems(g, extended) else None


def sample_chain(g: nx.DiGraph, seed: int, max_len: int = 6, branching: int = 2,
                 detour: float = 0.1) -> list[str]:
    """A chain of distinct tools, at most `max_len` long, that `validate_chain` accepts.

    Empty only when no tool's prerequisites fit in `max_len` steps.
    """
    rng = random.Random(seed)
    max_len = rng.randint(min(2, max_len), max_len)
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


def sample_chains(g: nx.DiGraph, n: int, seed: int = 0, **options) -> list[list[str]]:
    """`n` chains from seeds seed, seed+1, ...; distinct seeds may give equal chains."""
    return [sample_chain(g, seed + i, **options) for i in range(n)]


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
    return problems + order_problems(g, chain)
