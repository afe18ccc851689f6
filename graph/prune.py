"""Rules that drop data-flow links which carry nothing a chain can use, kept for audit.

Two kinds of output are never a useful source of a value:
  echo          the output returns an input of the same tool: `update_application_status`
                gives back the `application_id` it was called with, so a chain that has the
                tool already had the value. An output echoes an input when its field name
                is the input's name, or ends with it (`updated_application_ids` echoes
                `application_ids`), and it is not an element of a returned list (a list
                holds other rows' values, such as `interviews.application_id` of a search).
                A field nested in a single returned object (`application.application_id`)
                echoes like a top-level one.
  failure list  the output lists what the tool could not do (`failed_updates.application_id`):
                feeding a failed id forward makes the next step fail too.
A link of either kind is removed whatever proposed it (embeddings, the LLM, the orphan
rule); each removal is appended to the graph's `pruned` list with its rule and reason.
"""

from __future__ import annotations

import re

import networkx as nx

from graph import model

FAILURE = re.compile(r"(^|_)(failed|failures?|errors?|skipped|rejected|invalid|unknown|not_found|missing)(_|$)")


def _singular(name: str) -> str:
    return name[:-1] if name.endswith("_ids") else name


def _in_list(g: nx.DiGraph, out: str) -> bool:
    """Whether an output node lies inside a returned array (its own value is another row's)."""
    d = g.nodes[out]
    parts = d["name"].split(".")
    for i in range(1, len(parts)):
        parent = model.param_id(d["tool"], "out", ".".join(parts[:i]))
        if g.has_node(parent) and g.nodes[parent]["dtype"] == "array":
            return True
    return False


def echo(g: nx.DiGraph, out: str) -> str | None:
    """Why an output node echoes an input of its own tool, or None."""
    d = g.nodes[out]
    if _in_list(g, out):
        return None
    leaf = d["name"].rsplit(".", 1)[-1]
    for param in model.inputs_of(g, d["tool"]):
        name = g.nodes[param]["name"]
        if leaf == name or _singular(leaf) == _singular(name) or leaf.endswith("_" + name):
            return f"echo: {d['tool']}.{d['name']} returns its own input {name!r}"
    return None


def failure(g: nx.DiGraph, out: str) -> str | None:
    """Why an output node lists failures, or None."""
    d = g.nodes[out]
    hit = next((part for part in d["name"].split(".") if FAILURE.search(part)), None)
    return f"failure list: {d['tool']}.{d['name']} lists what the tool could not do" if hit else None


def uninformative(g: nx.DiGraph, out: str) -> tuple[str, str] | None:
    """(rule, reason) when a link from this output node carries nothing usable, else None."""
    for rule, check in (("failure_list", failure), ("echo", echo)):
        reason = check(g, out)
        if reason:
            return rule, reason
    return None


def prune_uninformative(g: nx.DiGraph) -> int:
    """Remove every flow link out of an echo or failure-list output; returns how many went."""
    flows = sorted((u, v) for u, v, d in g.edges(data=True) if d["type"] == "flow")
    removed = 0
    for out, inp in flows:
        verdict = uninformative(g, out)
        if verdict is None:
            continue
        rule, reason = verdict
        o, i = g.nodes[out], g.nodes[inp]
        for e in model.remove_evidence(g, o["tool"], i["tool"], o["name"], i["name"]):
            g.graph["pruned"].append({"producer": o["tool"], "consumer": i["tool"], "output": e["output"],
                                      "parameter": e["parameter"], "score": e["score"], "rule": rule,
                                      "provenance": e["provenance"], "reason": reason})
            removed += 1
    g.graph["pruned"].sort(key=lambda e: (e["producer"], e["consumer"], e["output"] or "", e["parameter"] or ""))
    return removed
