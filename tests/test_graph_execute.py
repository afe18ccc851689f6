"""Sampled chains run on a real state: the bundled job_seeking graph, the sample state, the sandbox."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from graph import model
from graph.build import load_graph
from graph.execute import accepted_chains, execute_chain, values_at
from graph.prune import uninformative
from graph.sampler import validate_chain
from mcp_servers.runtime import Environment

DOMAIN = Path(__file__).resolve().parent.parent / "domains" / "job_seeking"


@pytest.fixture(scope="module")
def env():
    with Environment(DOMAIN, workers=1) as environment:
        yield environment


@pytest.fixture(scope="module")
def graph():
    return load_graph(DOMAIN / "graph.json")


def _seen(value, earlier: list) -> bool:
    text = json.dumps(value)
    return any(text in json.dumps(r) for r in earlier)


def test_thirty_sampled_chains_execute_end_to_end_on_the_sample_state(env, graph):
    accepted, _ = accepted_chains(env, graph, 30, seed=0)
    assert len(accepted) == 30
    assert len({tuple(r.chain) for r in accepted}) == 30
    for run in accepted:
        assert validate_chain(graph, run.chain) == []
        again = execute_chain(env, graph, run.chain)
        assert again.ok, again.failure  # the acceptance is reproducible, not a lucky draw
        # Internal arguments come from earlier results, never from thin air.
        for i, step in enumerate(again.steps):
            for p in model.inputs_of(graph, step.tool):
                node = graph.nodes[p]
                if node.get("role") == "internal" and node["required"]:
                    value = step.arguments[node["name"]]
                    value = value[0] if isinstance(value, list) else value
                    assert _seen(value, [s.result for s in again.steps[:i]]), (run.chain, i, node["name"])


def test_a_chain_that_cannot_run_is_rejected_with_its_step(env, graph):
    # Interviews listed as upcoming are in the future: none can be completed yet.
    run = execute_chain(env, graph, ["list_upcoming_interviews", "complete_interview"])
    assert not run.ok and run.steps[-1].tool == "complete_interview"
    assert "PreconditionFailed" in run.failure
    assert env.episodes() == []  # the episode was closed


def test_use_after_delete_and_misordered_preconditions_are_refused(graph):
    problems = validate_chain(graph, ["list_applications", "delete_job_application", "get_application_details"])
    assert any("deleted from" in p for p in problems)
    problems = validate_chain(graph, ["create_job_application", "submit_application"])
    assert any("upload_resume" in p for p in problems)  # a fresh draft needs its resume first
    assert validate_chain(graph, ["create_job_application", "upload_resume", "submit_application"]) == []


def test_the_bundled_graph_keeps_no_echo_or_failure_link_and_audits_each_removal(graph):
    flows = [(u, v) for u, v, d in graph.edges(data=True) if d["type"] == "flow"]
    assert flows and all(uninformative(graph, u) is None for u, _ in flows)
    rules = {p["rule"] for p in graph.graph["pruned"]}
    assert {"echo", "failure_list", "llm"} <= rules
    assert all(p["reason"] for p in graph.graph["pruned"])
    report = json.loads((DOMAIN / "report.json").read_text())["graph"]
    assert report["pruned"]["echo"] == sum(p["rule"] == "echo" for p in graph.graph["pruned"])
    assert set(report["kinds"]) == {"flow", "precondition", "state"}


def test_values_at_walks_nested_lists():
    result = {"items": [{"id": "A", "tags": ["x"]}, {"id": "B", "tags": ["y", "z"]}], "one": {"id": "C"}}
    assert values_at(result, "items.id") == ["A", "B"]
    assert values_at(result, "items.tags") == ["x", "y", "z"]
    assert values_at(result, "one.id") == ["C"]
    assert values_at(result, "missing") == []
