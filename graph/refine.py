"""LLM refinement of the matched graph along ScaleEnv's three dimensions.

The tools are split into a few chunks (one for a domain of up to CHUNK tools); each chunk is
one step, `graph/<item>/0`, where the item is "-" for a single chunk and otherwise the first
tool name of the chunk, so replay keys stay put while the tool set does. A step sees every
tool's signature, the details of its own tools, the candidate edges into them and the
tools they share tables with; it answers edges to add (data flow, condition or state) and
candidate edges to prune, each with a reason. Answers naming unknown tools or parameters,
pruning edges that were never candidates, or leaving a chunk's isolated tool unconnected
are sent back for correction.
"""

from __future__ import annotations

import math
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from typing import Literal

import networkx as nx
from pydantic import BaseModel, ConfigDict, Field, model_validator

from domains.spec import DomainSpec, ToolSchema
from graph import model
from graph.match import outputs
from llm import LLM, StepKey

CHUNK = 40

# The system prompt of every refinement step.
GRAPH_SYSTEM = """You refine a tool dependency graph. An edge producer -> consumer means the consumer
can or must run after the producer, along three dimensions: data flow (an output field of the
producer is passed as an input parameter of the consumer, e.g. an identifier returned by a search),
pre/post-conditions (the producer establishes what the consumer requires, e.g. a resume must be
uploaded before an application is submitted) and state dependencies (the producer writes a table
that the consumer reads or changes). Candidate data-flow edges come from embedding similarity of
parameter names and descriptions: prune the ones whose output is not the value the parameter
expects (a look-alike name of another entity), add the dependencies the similarity missed
(role-named identifiers, conditions, shared state) and connect every tool, parameter-less ones
included. Give a short, specific reason for each decision; a person audits them."""


class _Answer(BaseModel):
    model_config = ConfigDict(extra="forbid")


class EdgeAdd(_Answer):
    producer: str = Field(description="tool that runs first")
    consumer: str = Field(description="tool that runs after it")
    dimension: Literal["data_flow", "condition", "state"]
    output: str | None = Field(None, description="data_flow only: the producer's output field (dotted path)")
    parameter: str | None = Field(None, description="data_flow only: the consumer's input parameter")
    reason: str = Field(min_length=1)


class EdgePrune(_Answer):
    producer: str
    consumer: str
    output: str | None = Field(None, description="prune only this output's match; omit to prune every match")
    parameter: str | None = Field(None, description="prune only the match into this parameter")
    reason: str = Field(min_length=1)


class Refinement(_Answer):
    add: list[EdgeAdd] = []
    prune: list[EdgePrune] = []


def chunks(tool_names: list[str], size: int = CHUNK) -> list[tuple[str, list[str]]]:
    """(item, tools) per refinement step: balanced, sorted, named by their first tool."""
    names = sorted(tool_names)
    if len(names) <= size:
        return [("-", names)]
    count = math.ceil(len(names) / size)
    bounds = [round(i * len(names) / count) for i in range(count + 1)]
    return [(names[a], names[a:b]) for a, b in zip(bounds, bounds[1:])]


def _candidates(g: nx.DiGraph, consumers: list[str]) -> list[tuple[str, str, str, str, float]]:
    """Matched (producer, output, consumer, parameter, score) into the given tools."""
    rows = []
    for consumer in consumers:
        for param in model.inputs_of(g, consumer):
            for out in model.sources(g, param):
                o = g.nodes[out]
                rows.append((o["tool"], o["name"], consumer, g.nodes[param]["name"], g.edges[out, param]["score"]))
    return sorted(rows)


def _candidate_lines(candidates: list[tuple[str, str, str, str, float]]) -> str:
    """A line per producer output, parameter and score, naming every consumer it feeds: an id feeds
    dozens of tools, and a line per edge would repeat it as often."""
    grouped: dict[tuple[str, str, str, str], list[str]] = defaultdict(list)
    for p, o, c, i, s in candidates:
        grouped[p, o, i, f"{s:.2f}"].append(c)
    # producers whose output feeds the same consumers at the same score share a line: every tool
    # that returns application_id would otherwise repeat the same list of consumers
    producers: dict[tuple[str, tuple[str, ...], str], list[str]] = defaultdict(list)
    for (p, o, i, s), cs in sorted(grouped.items()):
        producers[i, tuple(cs), s].append(f"{p}.{o}")
    return "\n".join(f"- {', '.join(ps)} -> {i} of {', '.join(cs)} ({s})" for (i, cs, s), ps in producers.items())


def _isolated(g: nx.DiGraph, names: list[str]) -> list[str]:
    linked = {t for u, v, _ in model.tool_edges(g) for t in (u, v)}
    return [t for t in names if t not in linked]


def _signature(tool: ToolSchema) -> str:
    params = ", ".join(f"{p.name}{'' if p.required else '?'}: {p.type}" for p in tool.parameters)
    outs = ", ".join(s.path for s in outputs(tool))
    return f"{tool.name}({params}) -> {outs or 'nothing'}"


def _details(tool: ToolSchema, spec: DomainSpec, names: list[str]) -> str:
    tables = spec.tool_tables.get(tool.name, [])
    sharing = sorted(t for t in names if t != tool.name and set(spec.tool_tables.get(t, [])) & set(tables))
    lines = [f"### {tool.name} ({'writes' if tool.mutates else 'reads'})", tool.description]
    for p in tool.parameters:
        lines.append(f"- in {p.name}: {p.type}{'' if p.required else ', optional'} — {p.description}")
    for s in outputs(tool):
        lines.append(f"- out {s.path}: {s.type}" + (f" — {s.description}" if s.description else ""))
    if tool.preconditions:
        lines.append("- requires: " + "; ".join(tool.preconditions))
    if tool.postconditions:
        lines.append("- ensures: " + "; ".join(tool.postconditions))
    others = [t for t in names if t != tool.name and t not in sharing]
    if sharing and len(others) < len(sharing) / 2:  # whichever list is the shorter
        shared = "every other tool" + (f" but {', '.join(others)}" if others else "")
    else:
        shared = ", ".join(sharing) or "no tool"
    lines.append(f"- tables: {', '.join(tables) or 'none'}; shares them with: {shared}")
    return "\n".join(lines)


def prompt(g: nx.DiGraph, spec: DomainSpec, chunk: list[str]) -> str:
    names = model.tools(g)
    schemas = {t: spec.tool(t) for t in names}
    candidates = _candidates(g, chunk)
    isolated = _isolated(g, chunk)
    scope = "all tools" if len(chunk) == len(names) else "these tools: " + ", ".join(chunk)
    parts = [
        f"Domain: {spec.name}. {spec.description}",
        "All tools (name(parameters) -> outputs; ? marks an optional parameter):\n"
        + "\n".join(f"- {_signature(schemas[t])}" for t in names),
        f"Decide the dependencies that end in {scope}. Their details:",
        "\n\n".join(_details(schemas[t], spec, names) for t in chunk),
        "Candidate data-flow edges from embedding matching (producer.output, ... -> parameter of the consumers,"
        " score; each producer and consumer pair is one edge):\n" + (_candidate_lines(candidates) or "- none"),
    ]
    if isolated:
        parts.append("These tools have no candidate edge and must be connected (in or out) by an added edge: "
                     + ", ".join(isolated))
    parts.append(
        "Prune candidates whose output is not the value the parameter expects. Add missing edges that end "
        "in the tools above: data_flow (name the producer's output and the consumer's parameter), condition "
        "(the producer establishes a consumer's precondition) or state (the producer writes a table the "
        "consumer reads or changes). An edge to connect an isolated tool may also start from it. "
        "Leave correct candidates alone; answer empty lists when nothing needs to change.")
    return "\n\n".join(parts)


def answer_model(g: nx.DiGraph, chunk: list[str]) -> type[Refinement]:
    """The answer schema, with checks against this graph so that a wrong answer is re-asked."""
    names = set(model.tools(g))
    inside = set(chunk)
    must_link = set(_isolated(g, chunk))
    candidates = {(p, o, c, i) for p, o, c, i, _ in _candidates(g, chunk)}

    def problems(answer: Refinement) -> list[str]:
        found = []
        for a in answer.add:
            where = f"add {a.producer} -> {a.consumer}"
            if a.producer not in names or a.consumer not in names:
                found.append(f"{where}: unknown tool")
                continue
            if a.producer == a.consumer:
                found.append(f"{where}: a tool cannot depend on itself")
            if a.consumer not in inside and a.producer not in (inside & must_link):
                found.append(f"{where}: the consumer must be one of the tools being decided")
            if a.dimension == "data_flow":
                if not a.output or not g.has_node(model.param_id(a.producer, "out", a.output)):
                    found.append(f"{where}: {a.producer} has no output {a.output!r}")
                if not a.parameter or not g.has_node(model.param_id(a.consumer, "in", a.parameter)):
                    found.append(f"{where}: {a.consumer} has no parameter {a.parameter!r}")
        for p in answer.prune:
            hits = [c for c in candidates if c[0] == p.producer and c[2] == p.consumer
                    and p.output in (None, c[1]) and p.parameter in (None, c[3])]
            if not hits:
                found.append(f"prune {p.producer} -> {p.consumer}: not a candidate edge")
        touched = {t for a in answer.add for t in (a.producer, a.consumer)}
        for tool in sorted(must_link - touched):
            found.append(f"{tool} is left isolated: add an edge to or from it")
        return found

    class GraphRefinement(Refinement):
        @model_validator(mode="after")
        def _fits_graph(self) -> GraphRefinement:
            found = problems(self)
            if found:
                raise ValueError("; ".join(found))
            return self

    return GraphRefinement


def apply(g: nx.DiGraph, answers: list[Refinement]) -> None:
    """All prunes first, then all adds: a prune only ever removes a matched candidate, and an
    answer may replace a matched link by a condition on the same pair."""
    for answer in answers:
        for p in answer.prune:
            for e in model.remove_evidence(g, p.producer, p.consumer, p.output, p.parameter):
                g.graph["pruned"].append({"producer": p.producer, "consumer": p.consumer, "output": e["output"],
                                          "parameter": e["parameter"], "score": e["score"], "rule": "llm",
                                          "provenance": e["provenance"], "reason": p.reason})
    for answer in answers:
        for a in answer.add:
            data = a.dimension == "data_flow"
            model.add_evidence(g, a.producer, a.consumer, a.dimension, "llm", a.reason,
                               a.output if data else None, a.parameter if data else None)
    g.graph["pruned"].sort(key=lambda e: (e["producer"], e["consumer"], e["output"] or "", e["parameter"] or ""))


def refine(g: nx.DiGraph, spec: DomainSpec, llm: LLM) -> None:
    """Ask every chunk against the matched graph (in parallel), then apply the answers in order."""
    steps = [(item, prompt(g, spec, chunk), answer_model(g, chunk)) for item, chunk in chunks(model.tools(g))]

    def ask(step):
        item, text, schema = step
        return llm.structured(StepKey("graph", item, 0), GRAPH_SYSTEM, text, schema)

    with ThreadPoolExecutor(max_workers=4) as pool:
        answers = list(pool.map(ask, steps))
    apply(g, answers)
