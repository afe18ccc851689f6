"""Internal/external classification of input parameters, and resolution of orphans.

External parameters are values a user can state (a city, a name, a date, a choice);
internal ones are system identifiers the agent must look up with another tool
(EnvFactory 3.3.2). The rules, first match wins:
  1. an identifier name (`id`, `*_id`, `*_ids`, `*_uuid`)              → internal
  2. a closed set of values (enum), a format (date, email) or a boolean → external
  3. described as an identifier or token and produced by some tool      → internal
  4. anything else                                                       → external
An internal parameter that no tool produces is an orphan, and would make its tool
unsampleable. It is resolved by linking it to the outputs that carry the same identifier
under the same or a role-prefixed name (`pickup_branch_id` ← `branch_id`, or `id` inside
`branches`; for a list parameter, only outputs that are list elements), else by
re-classifying it as external: the user must give it. Echo and failure-list outputs
(graph.prune) never resolve an orphan. Internal parameters caught in a
dependency cycle (every producer needs them first) are made external, choosing the
identifier that frees the most tools. Every decision keeps its reason on the node.
"""

from __future__ import annotations

import re

import networkx as nx

from domains.spec import DomainSpec
from graph import model
from graph.prune import uninformative
from graph.sampler import needs, sampleable

ID_NAME = re.compile(r"(^|_)(id|ids|uuid)$")
ID_WORDS = re.compile(r"\b(identifier|ID|IDs|token|key)\b")


def role(node: dict, spec_param, produced: bool) -> tuple[str, str]:
    """(role, reason) of one input parameter node; `spec_param` is its declared Param."""
    name = node["name"]
    if ID_NAME.search(name):
        return "internal", "identifier name: the agent looks it up"
    if spec_param.enum:
        return "external", "one of a fixed set of values the user chooses"
    if spec_param.format:
        return "external", f"a {spec_param.format} value the user states"
    if node["dtype"] == "boolean":
        return "external", "a yes/no choice of the user"
    if produced and ID_WORDS.search(node["description"]):
        return "internal", "described as an identifier that another tool returns"
    return "external", "a value the user can state"


def _singular(word: str) -> str:
    if word.endswith("ies"):
        return word[:-3] + "y"
    if word.endswith(("sses", "ches", "shes", "xes", "zes")):
        return word[:-2]
    return word[:-1] if word.endswith("s") and not word.endswith("ss") else word


def _carries(out: dict, name: str) -> bool:
    """Whether an output field holds the identifier a parameter of this name expects."""
    leaf = out["name"].rsplit(".", 1)[-1]
    if leaf == "id" and "." in out["name"]:
        leaf = _singular(out["name"].rsplit(".", 2)[-2]) + "_id"
    elif leaf == "id":
        leaf = f"{out['tool']}_id"  # never equal to a parameter name: a bare id names nothing
    singular = name[:-1] if name.endswith("_ids") else name
    return leaf in (name, singular) or (ID_NAME.search(leaf) and singular.endswith("_" + leaf))


def _listed(g: nx.DiGraph, out: str) -> bool:
    """Whether an output node is an element of a returned list."""
    d = g.nodes[out]
    parent = model.param_id(d["tool"], "out", d["name"].rsplit(".", 1)[0]) if "." in d["name"] else None
    return d["dtype"] == "array" or (parent is not None and g.nodes[parent]["dtype"] == "array")


def _resolve(g: nx.DiGraph, param: str, why: str) -> None:
    node = g.nodes[param]
    node["orphan"] = True
    links = [o for o in g.nodes if g.nodes[o]["type"] == "param" and g.nodes[o]["direction"] == "out"
             and g.nodes[o]["tool"] != node["tool"] and _carries(g.nodes[o], node["name"])
             and o not in model.sources(g, param) and uninformative(g, o) is None]
    if node["dtype"] == "array" and any(_listed(g, o) for o in links):
        links = [o for o in links if _listed(g, o)]  # a list of identifiers comes from tools that list
    if links and why == "no tool produces it":
        for out in sorted(links):
            o = g.nodes[out]
            model.add_evidence(g, o["tool"], node["tool"], "data_flow", "rule",
                               f"orphan {node['name']}: {o['tool']} returns the same identifier as {o['name']}",
                               o["name"], node["name"])
        node["resolution"] = "linked"
        return
    node["role"] = "external"
    node["role_reason"] = f"orphan identifier ({why}): the user must supply it"
    node["resolution"] = "external"


def classify(g: nx.DiGraph, spec: DomainSpec) -> None:
    """Set role, role_reason, orphan and resolution on every input parameter node."""
    for tool in model.tools(g):
        declared = {p.name: p for p in spec.tool(tool).parameters}
        for param in model.inputs_of(g, tool):
            node = g.nodes[param]
            node["role"], node["role_reason"] = role(node, declared[node["name"]], bool(model.producers(g, param)))
            node["orphan"], node["resolution"] = False, None
    for tool in model.tools(g):
        for param in needs(g, tool):
            if not set(model.producers(g, param)) - {tool}:
                _resolve(g, param, "no tool produces it")
    # Cycles: a tool is stuck when some internal input only has stuck producers. Break them
    # at the identifier whose externalisation frees the most tools (the domain's root entity,
    # such as the signed-in customer), one name at a time.
    while True:
        ok = sampleable(g)
        stuck = [p for t in model.tools(g) if t not in ok for p in needs(g, t)
                 if not (set(model.producers(g, p)) - {t}) & ok]
        if not stuck:
            return
        by_name: dict[str, list[str]] = {}
        for p in stuck:
            by_name.setdefault(g.nodes[p]["name"], []).append(p)
        best = max(sorted(by_name), key=lambda n: (_freed(g, by_name[n]), len(by_name[n])))
        for p in by_name[best]:
            _resolve(g, p, "its producers all need it first")


def _freed(g: nx.DiGraph, params: list[str]) -> int:
    """How many tools become sampleable if these parameters were external."""
    saved = [g.nodes[p]["role"] for p in params]
    for p in params:
        g.nodes[p]["role"] = "external"
    freed = len(sampleable(g))
    for p, r in zip(params, saved):
        g.nodes[p]["role"] = r
    return freed
