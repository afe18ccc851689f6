"""Pruning of uninformative links: echoes and failure lists go, with their reasons kept."""

from __future__ import annotations

from domains.spec import ToolSchema
from graph import model
from graph.prune import prune_uninformative


def _tool(name, params, output, mutates=True):
    return ToolSchema(name=name, description=name, mutates=mutates,
                      parameters=[{"name": p, "type": t, "description": p, **({"items": "string"} if t == "array" else {})}
                                  for p, t in params], output=output)


ID = {"name": "application_id", "type": "string"}
TOOLS = [
    _tool("create_application", [("title", "string")], [ID]),
    _tool("submit_application", [("application_id", "string")], [ID, {"name": "status", "type": "string"}]),
    _tool("get_application", [("application_id", "string")],
          [{"name": "application", "type": "object", "fields": [ID, {"name": "offer_id", "type": "string"}]}], False),
    _tool("list_applications", [("application_id", "string")],  # e.g. "similar to this one"
          [{"name": "applications", "type": "array", "fields": [ID]}], False),
    _tool("batch_update", [("application_ids", "array")],
          [{"name": "updated_application_ids", "type": "array"},
           {"name": "failed_updates", "type": "array", "fields": [ID]}]),
    _tool("withdraw_application", [("application_id", "string")], [ID]),
]


def _graph():
    g = model.skeleton(TOOLS, {})
    links = [("create_application", "application_id"), ("submit_application", "application_id"),
             ("get_application", "application.application_id"), ("list_applications", "applications.application_id"),
             ("batch_update", "updated_application_ids"), ("batch_update", "failed_updates.application_id")]
    for producer, output in links:
        model.add_evidence(g, producer, "withdraw_application", "data_flow", "embedding", "", output, "application_id", 0.9)
    return g


def test_echoes_and_failure_lists_are_pruned_and_audited():
    g = _graph()
    assert prune_uninformative(g) == 4
    kept = sorted(u for u, v, d in model.tool_edges(g))
    # A fresh id and a listed row's id are information; the rest returned what the tool was given or what failed.
    assert kept == ["create_application", "list_applications"]
    audit = {(p["producer"], p["output"]): p["rule"] for p in g.graph["pruned"]}
    assert audit == {("submit_application", "application_id"): "echo",
                     ("get_application", "application.application_id"): "echo",
                     ("batch_update", "updated_application_ids"): "echo",
                     ("batch_update", "failed_updates.application_id"): "failure_list"}
    assert all(p["reason"] and p["provenance"] == "embedding" for p in g.graph["pruned"])


def test_an_edge_keeps_its_other_reasons_when_its_echo_goes():
    g = _graph()
    model.add_evidence(g, "submit_application", "withdraw_application", "condition", "llm", "only a submitted one")
    prune_uninformative(g)
    assert g.edges["submit_application", "withdraw_application"]["kinds"] == ["precondition"]


def test_tools_get_a_crud_role():
    g = _graph()
    roles = {t: g.nodes[t]["crud"] for t in model.tools(g)}
    assert roles["create_application"] == "create" and roles["get_application"] == "read"
    assert roles["submit_application"] == "update"
