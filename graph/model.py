"""The dependency graph's shape, and the helpers that keep it consistent.

Nodes (EnvFactory's fine-grained graph: tools and their parameters):
  tool    id = tool name; type "tool", description, mutates, crud (create/read/update/delete), tables
  param   id = "<tool>:in:<name>" or "<tool>:out:<dotted path>"; type "param", tool, direction
          ("in" or "out"), name, dtype, description; inputs also carry required and, once
          classified, role ("internal" or "external"), role_reason, orphan, resolution
Edges (attribute `type`):
  input    param(in) → tool
  output   tool → param(out)
  flow     param(out) → param(in), a value passed from producer to consumer: provenance,
           score (embedding cosine mix, or None), reason
  depends  tool → tool, producer → consumer: evidence (one entry per reason for the edge:
           dimension data_flow/condition/state, provenance, output, parameter, score, reason),
           summarised as provenance, dimensions, kinds (flow/precondition/state), score and reason
Provenance is "embedding" (semantic matching), "llm" (refinement) or "rule" (orphan
resolution); a tool edge takes the first of those its evidence has. Graph attributes: name,
embedding_model, threshold, and pruned (every candidate link removed, with its score, the
rule that removed it — "llm" for the refinement, "echo" or "failure_list" for graph.prune —
and the reason).
"""

from __future__ import annotations

import json

import networkx as nx

from domains.spec import ToolSchema
from graph.match import inputs, outputs

PROVENANCES = ("embedding", "llm", "rule")
DIMENSIONS = ("data_flow", "condition", "state")
# The kind of a tool edge, named for what it means to a chain: a value flows, a precondition
# is established, or shared state is written then read.
KINDS = {"data_flow": "flow", "condition": "precondition", "state": "state"}
CRUD = ("create", "read", "update", "delete")
_CREATE = {"create", "add", "record", "schedule", "register", "book", "new", "open", "log", "post", "insert"}
_DELETE = {"delete", "remove", "purge", "erase", "drop", "destroy"}


def crud_role(tool: ToolSchema) -> str:
    """create, read, update or delete: read when the tool does not write, else by its verb."""
    if not tool.mutates:
        return "read"
    verb = tool.name.split("_", 1)[0]
    if verb in _DELETE and tool.destructive:
        return "delete"
    return "create" if verb in _CREATE else "update"


def param_id(tool: str, direction: str, path: str) -> str:
    return f"{tool}:{direction}:{path}"


def skeleton(tools: list[ToolSchema], tool_tables: dict[str, list[str]]) -> nx.DiGraph:
    """Tool and parameter nodes with their input/output edges; no dependencies yet."""
    g = nx.DiGraph(pruned=[])
    for tool in sorted(tools, key=lambda t: t.name):
        g.add_node(tool.name, type="tool", description=tool.description, mutates=tool.mutates,
                   crud=crud_role(tool), tables=sorted(tool_tables.get(tool.name, [])))
    for tool in sorted(tools, key=lambda t: t.name):
        required = {p.name: p.required for p in tool.parameters}
        for slot in inputs(tool):
            node = param_id(tool.name, "in", slot.path)
            g.add_node(node, type="param", tool=tool.name, direction="in", name=slot.path,
                       dtype=slot.type, description=slot.description, required=required[slot.path])
            g.add_edge(node, tool.name, type="input")
        for slot in outputs(tool):
            node = param_id(tool.name, "out", slot.path)
            g.add_node(node, type="param", tool=tool.name, direction="out", name=slot.path,
                       dtype=slot.type, description=slot.description)
            g.add_edge(tool.name, node, type="output")
    return g


def tools(g: nx.DiGraph) -> list[str]:
    return sorted(n for n, d in g.nodes(data=True) if d["type"] == "tool")


def inputs_of(g: nx.DiGraph, tool: str) -> list[str]:
    return sorted(n for n in g.predecessors(tool) if g.edges[n, tool]["type"] == "input")


def sources(g: nx.DiGraph, param: str) -> list[str]:
    """Output nodes whose value flows into an input node."""
    return sorted(n for n in g.predecessors(param) if g.edges[n, param]["type"] == "flow")


def producers(g: nx.DiGraph, param: str) -> list[str]:
    """Tools with an output that flows into an input node."""
    return sorted({g.nodes[n]["tool"] for n in sources(g, param)})


def tool_edges(g: nx.DiGraph) -> list[tuple[str, str, dict]]:
    return sorted(((u, v, d) for u, v, d in g.edges(data=True) if d["type"] == "depends"),
                  key=lambda e: (e[0], e[1]))


def _summarise(edge: dict) -> None:
    evidence = edge["evidence"]
    edge["provenance"] = next(p for p in PROVENANCES if any(e["provenance"] == p for e in evidence))
    edge["dimensions"] = [d for d in DIMENSIONS if any(e["dimension"] == d for e in evidence)]
    edge["kinds"] = [KINDS[d] for d in edge["dimensions"]]
    scores = [e["score"] for e in evidence if e["score"] is not None]
    edge["score"] = max(scores) if scores else None
    edge["reason"] = "; ".join(dict.fromkeys(e["reason"] for e in evidence if e["reason"]))


def add_evidence(g: nx.DiGraph, producer: str, consumer: str, dimension: str, provenance: str,
                 reason: str = "", output: str | None = None, parameter: str | None = None,
                 score: float | None = None) -> None:
    """Record one reason for producer → consumer; a data-flow reason also links the two parameters."""
    entry = {"dimension": dimension, "provenance": provenance, "output": output,
             "parameter": parameter, "score": score, "reason": reason}
    if dimension == "data_flow":
        out, inp = param_id(producer, "out", output), param_id(consumer, "in", parameter)
        if not g.has_edge(out, inp):
            g.add_edge(out, inp, type="flow", provenance=provenance, score=score, reason=reason)
        elif reason and not g.edges[out, inp]["reason"]:
            g.edges[out, inp]["reason"] = reason
    if not g.has_edge(producer, consumer):
        g.add_edge(producer, consumer, type="depends", evidence=[])
    edge = g.edges[producer, consumer]
    if entry not in edge["evidence"]:
        edge["evidence"].append(entry)
    _summarise(edge)


def remove_evidence(g: nx.DiGraph, producer: str, consumer: str, output: str | None = None,
                    parameter: str | None = None) -> list[dict]:
    """Drop the data-flow reasons of producer → consumer (all, or those naming output/parameter).

    The edge itself goes when no reason is left. Returns the removed entries.
    """
    if not g.has_edge(producer, consumer):
        return []
    edge = g.edges[producer, consumer]

    def hit(e: dict) -> bool:
        return (e["dimension"] == "data_flow" and (output is None or e["output"] == output)
                and (parameter is None or e["parameter"] == parameter))

    removed = [e for e in edge["evidence"] if hit(e)]
    edge["evidence"] = [e for e in edge["evidence"] if not hit(e)]
    for e in removed:
        out, inp = param_id(producer, "out", e["output"]), param_id(consumer, "in", e["parameter"])
        if g.has_edge(out, inp):
            g.remove_edge(out, inp)
    if edge["evidence"]:
        _summarise(edge)
    else:
        g.remove_edge(producer, consumer)
    return removed


def to_json(g: nx.DiGraph) -> str:
    """networkx node-link JSON with nodes and edges in a stable order (byte-deterministic)."""
    data = nx.node_link_data(g, edges="edges")
    data["nodes"] = sorted(data["nodes"], key=lambda n: n["id"])
    data["edges"] = sorted(data["edges"], key=lambda e: (e["source"], e["target"]))
    return json.dumps(data, indent=1, sort_keys=True) + "\n"


def from_json(text: str) -> nx.DiGraph:
    return nx.node_link_graph(json.loads(text), directed=True, edges="edges")
