"""Run a tool chain on a real database state: the test that a sampled chain is a chain.

    from mcp_servers.runtime import Environment
    from graph.build import load_graph
    from graph.execute import execute_chain
    from graph.sampler import sample_chain

    with Environment("job_seeking") as env:
        g = load_graph(env.dir / "graph.json")
        run = execute_chain(env, g, sample_chain(g, seed=3))
        print(run.ok, [(s.tool, s.arguments) for s in run.steps])

Arguments are resolved, never invented:
  internal  from the output of the step the graph binds the parameter to (`bindings`); a
            list output offers each of its elements. The value a chain is working on comes
            first: the one an earlier step passed or created under the same parameter name.
  external  from the tool's own success tests (their arguments were checked against the
            episode clock the sample state uses), test by test.
Each step tries the combinations in that order until one succeeds, at most `attempts`
calls; a failed call leaves the state as it was, so a refused candidate costs nothing but
the call. A step with no success is where the chain fails, with the last error. The
episode starts from the given state (by default the domain's sample state) and is closed
afterwards, so a run changes nothing outside itself. `accepted_chains` samples and keeps
the chains that ran: a chain is accepted only when it executed.
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass, field
from typing import Any

import networkx as nx

from domains.db_runtime import DEFAULT_NOW
from graph import model
from graph.sampler import sample_chain, validate_chain

CANDIDATES = 8  # values tried per internal parameter


@dataclass
class Step:
    tool: str
    arguments: dict = field(default_factory=dict)
    ok: bool = False
    result: Any = None
    error: str | None = None
    attempts: int = 0


@dataclass
class ChainRun:
    chain: list[str]
    steps: list[Step] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems and len(self.steps) == len(self.chain) and all(s.ok for s in self.steps)

    @property
    def failure(self) -> str | None:
        if self.problems:
            return "; ".join(self.problems)
        bad = next((s for s in self.steps if not s.ok), None)
        return None if bad is None else f"{bad.tool}: {bad.error}"


def values_at(value: Any, path: str) -> list:
    """Every value under a dotted output path; lists along the way are walked element by element."""
    found = [value]
    for part in path.split("."):
        nxt = []
        for v in found:
            items = v if isinstance(v, list) else [v]
            nxt += [i[part] for i in items if isinstance(i, dict) and part in i]
        found = nxt
    flat = []
    for v in found:
        flat += v if isinstance(v, list) else [v]
    return [v for v in flat if v is not None]


def example_arguments(domain_dir, tool: str) -> list[dict]:
    """The arguments of a tool's success tests that ran on the default episode clock, deduplicated."""
    path = domain_dir / "tests" / f"{tool}.json"
    if not path.is_file():
        return [{}]
    seen, out = set(), []
    for raw in json.loads(path.read_text()):
        if raw.get("kind") == "success" and raw.get("now", DEFAULT_NOW) == DEFAULT_NOW:
            key = json.dumps(raw.get("arguments", {}), sort_keys=True)
            if key not in seen:
                seen.add(key)
                out.append(raw.get("arguments", {}))
    return out or [{}]


def _sources(g: nx.DiGraph, chain: list[str], i: int) -> dict[str, tuple[int, str]]:
    """Internal parameter → (earlier step, output path) it is bound to, as `bindings` decides."""
    found = {}
    for param in model.inputs_of(g, chain[i]):
        node = g.nodes[param]
        if node.get("role") != "internal":
            continue
        earlier = [(j, g.nodes[out]["name"]) for out in model.sources(g, param)
                   for j in range(i) if chain[j] == g.nodes[out]["tool"]]
        if earlier:
            found[node["name"]] = max(earlier)
    return found


def _ranked(values: list, focus: Any) -> list:
    unique = list(dict.fromkeys(json.dumps(v, sort_keys=True) for v in values))
    ranked = [json.loads(v) for v in unique]
    if focus in ranked:
        ranked.remove(focus)
        ranked.insert(0, focus)
    return ranked[:CANDIDATES]


def execute_chain(env, g: nx.DiGraph, chain: list[str], state: dict | None = None, attempts: int = 24) -> ChainRun:
    """Run `chain` on a fresh episode of `env` (an mcp_servers.runtime.Environment)."""
    run = ChainRun(list(chain), problems=validate_chain(g, chain))
    if run.problems:
        return run
    focus: dict[str, Any] = {}  # parameter name → the value the chain is working on
    episode = env.create_episode(state=state) if state is not None else env.create_episode()
    try:
        for i, tool in enumerate(chain):
            step = Step(tool)
            run.steps.append(step)
            internal = {n for n in (g.nodes[p]["name"] for p in model.inputs_of(g, tool))
                        if g.nodes[model.param_id(tool, "in", n)].get("role") == "internal"}
            options = []
            for name, (j, path) in sorted(_sources(g, chain, i).items()):
                values = values_at(run.steps[j].result, path)
                scalar = values
                if g.nodes[model.param_id(tool, "in", name)]["dtype"] == "array":
                    scalar = [[v] for v in values]
                options.append([(name, v) for v in _ranked(scalar, focus.get(name))])
            empty = [name for name, values in zip(sorted(_sources(g, chain, i)), options) if not values]
            if empty:
                step.error = f"step {i + 1} has no value for {', '.join(empty)}: the step it is bound to returned none"
                break
            examples = [{k: v for k, v in a.items() if k not in internal} for a in example_arguments(env.dir, tool)]
            combos = itertools.islice(itertools.product(*options, examples), attempts)
            for *bound, example in combos:
                arguments = {**example, **dict(bound)}
                out = episode.call(tool, arguments)
                step.attempts += 1
                step.arguments = arguments
                if out.ok:
                    step.ok, step.result, step.error = True, out.result, None
                    break
                step.error = f"{out.error_type}: {out.error}"
            if not step.ok:
                break
            for name in internal:
                if name in step.arguments:
                    focus[name] = step.arguments[name]
            # What a step creates is what the chain works on next.
            if g.nodes[tool].get("crud") == "create":
                for out in (o for o in g.successors(tool) if g.edges[tool, o]["type"] == "output"):
                    leaf = g.nodes[out]["name"]
                    if "." not in leaf and leaf in step.result:
                        focus[leaf] = step.result[leaf]
    finally:
        episode.close()
    return run


def accepted_chains(env, g: nx.DiGraph, n: int, seed: int = 0, state: dict | None = None,
                    tries: int | None = None, **options) -> tuple[list[ChainRun], list[ChainRun]]:
    """(accepted, rejected): distinct sampled chains that executed end to end, `n` at most, from
    seeds seed, seed+1, ... (at most `tries` of them, 10 n by default), and those that did not.

    A chain is accepted only when it ran; a rejected run says at which step and why."""
    accepted, rejected, seen = [], [], set()
    for s in range(seed, seed + (tries or 10 * n)):
        if len(accepted) == n:
            break
        chain = sample_chain(g, s, **options)
        if not chain or tuple(chain) in seen:
            continue
        seen.add(tuple(chain))
        run = execute_chain(env, g, chain, state)
        (accepted if run.ok else rejected).append(run)
    return accepted, rejected
