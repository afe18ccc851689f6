"""LLM refinement from scripted answers, and parameter classification with orphan resolution.

The candidate graph is built by hand (as matching would leave it) so no embedding model loads.
"""

from __future__ import annotations

import re

import pytest

from domains.spec import DomainSpec, ToolSchema
from graph import model
from graph.build import write_graph
from graph.classify import classify
from graph.refine import CHUNK, chunks, prompt, refine
from graph.render import drawn
from graph.sampler import sampleable
from llm import LLM, LLMError, ScriptedBackend, Transcript


def tool(name, params=(), outs=(), mutates=False, **extra) -> ToolSchema:
    """params: (name, required) or (name, required, extra); outs: path strings, 'a.b' nests b in array a."""
    fields: dict = {}
    for path in outs:
        head, _, leaf = path.partition(".")
        if leaf:
            fields.setdefault(head, {"name": head, "type": "array", "fields": []})["fields"].append(
                {"name": leaf, "type": "string"})
        else:
            fields[head] = {"name": head, "type": "string"}
    parameters = [{"name": p[0], "type": "string", "description": p[0].replace("_", " "), "required": p[1],
                   **(p[2] if len(p) > 2 else {})} for p in params]
    return ToolSchema(name=name, description=f"{name.replace('_', ' ')}.", parameters=parameters,
                      output=list(fields.values()), mutates=mutates, **extra)


TOOLS = [
    tool("search_jobs", [("keywords", True), ("location", False)], ["jobs.job_id", "jobs.company_id"]),
    tool("get_job", [("job_id", True)], ["job_id", "title", "company_id"]),
    tool("get_company", [("company_id", True)], ["company_id", "name"]),
    tool("upload_resume", [("title", True), ("content", True)], ["resume_id"], mutates=True),
    tool("submit_application", [("job_id", True), ("resume_id", True), ("cover_letter", False)],
         ["application_id", "status"], mutates=True, preconditions=["the candidate has uploaded a resume"]),
    tool("list_applications", [("status", False, {"enum": ["submitted", "withdrawn"]})],
         ["applications.application_id", "applications.job_id"]),
    tool("withdraw_application", [("application_id", True)], ["application_id", "status"], mutates=True),
    tool("clear_search_history", [], [], mutates=True),
]
TABLES = {"search_jobs": ["jobs"], "get_job": ["jobs"], "get_company": ["companies"], "upload_resume": ["resumes"],
          "submit_application": ["applications", "resumes"], "list_applications": ["applications"],
          "withdraw_application": ["applications"], "clear_search_history": ["searches"]}
SPEC = DomainSpec(
    name="mini_jobs", description="Look for jobs and apply to them.", tools=TOOLS,
    db={"tables": [{"name": t, "id_prefix": t[:3].upper(),
                    "columns": [{"name": f"{t[:-1]}_id", "type": "string", "primary_key": True}]}
                   for t in ("jobs", "companies", "resumes", "applications", "searches")]},
    tool_tables=TABLES)
# What matching would find, including one look-alike (a company id is not a job id).
MATCHES = [
    ("search_jobs", "jobs.job_id", "get_job", "job_id", 0.95),
    ("search_jobs", "jobs.job_id", "submit_application", "job_id", 0.93),
    ("search_jobs", "jobs.company_id", "get_company", "company_id", 0.97),
    ("get_job", "job_id", "submit_application", "job_id", 0.96),
    ("get_job", "company_id", "get_company", "company_id", 0.98),
    ("get_company", "company_id", "get_job", "job_id", 0.81),
    ("upload_resume", "resume_id", "submit_application", "resume_id", 0.99),
    ("submit_application", "application_id", "withdraw_application", "application_id", 0.97),
    ("list_applications", "applications.application_id", "withdraw_application", "application_id", 0.95),
    ("list_applications", "applications.job_id", "get_job", "job_id", 0.9),
]
ANSWER = {
    "prune": [{"producer": "get_company", "consumer": "get_job", "parameter": "job_id",
               "reason": "a company id is not a job id"}],
    "add": [
        {"producer": "upload_resume", "consumer": "submit_application", "dimension": "condition",
         "reason": "an application needs an uploaded resume"},
        {"producer": "submit_application", "consumer": "list_applications", "dimension": "state",
         "reason": "submitting writes the applications that are listed"},
        {"producer": "search_jobs", "consumer": "clear_search_history", "dimension": "state",
         "reason": "searching records the history that is cleared"},
    ],
}


def matched(spec: DomainSpec = SPEC, matches=MATCHES):
    g = model.skeleton(spec.tools, spec.tool_tables)
    for producer, output, consumer, parameter, score in matches:
        model.add_evidence(g, producer, consumer, "data_flow", "embedding", "", output, parameter, score)
    return g


def llm_for(tmp_path, answers: dict) -> LLM:
    return LLM(ScriptedBackend(answers), Transcript(tmp_path / "transcript.jsonl"))


def test_refinement_adds_and_prunes_with_provenance(tmp_path):
    g = matched()
    refine(g, SPEC, llm_for(tmp_path, {"graph/-/0": ANSWER}))

    assert not g.has_edge("get_company", "get_job")
    assert not g.has_edge("get_company:out:company_id", "get_job:in:job_id")
    assert g.graph["pruned"] == [{"producer": "get_company", "consumer": "get_job", "output": "company_id",
                                  "parameter": "job_id", "score": 0.81, "rule": "llm", "provenance": "embedding",
                                  "reason": "a company id is not a job id"}]
    both = g.edges["upload_resume", "submit_application"]
    assert both["provenance"] == "embedding" and both["dimensions"] == ["data_flow", "condition"]
    assert both["score"] == 0.99 and both["reason"] == "an application needs an uploaded resume"
    added = g.edges["submit_application", "list_applications"]
    assert (added["provenance"], added["dimensions"], added["score"]) == ("llm", ["state"], None)
    assert g.edges["search_jobs", "clear_search_history"]["provenance"] == "llm"
    linked = {t for u, v, _ in model.tool_edges(g) for t in (u, v)}
    assert linked == set(model.tools(g))  # the parameter-less tool is connected


def test_refinement_data_flow_add_links_parameters(tmp_path):
    answer = {"prune": [], "add": ANSWER["add"] + [
        {"producer": "submit_application", "consumer": "get_job", "dimension": "data_flow",
         "output": "status", "parameter": "job_id", "reason": "made-up link, for the test"}]}
    g = matched()
    refine(g, SPEC, llm_for(tmp_path, {"graph/-/0": answer}))
    flow = g.edges["submit_application:out:status", "get_job:in:job_id"]
    assert flow == {"type": "flow", "provenance": "llm", "score": None, "reason": "made-up link, for the test"}
    assert model.producers(g, "get_job:in:job_id") == ["get_company", "list_applications", "search_jobs",
                                                        "submit_application"]


def test_invalid_answer_is_asked_again(tmp_path):
    wrong = {"prune": [{"producer": "get_job", "consumer": "search_jobs", "reason": "never matched"}],
             "add": [{"producer": "nope", "consumer": "get_job", "dimension": "state", "reason": "x"},
                     {"producer": "get_job", "consumer": "get_company", "dimension": "data_flow",
                      "output": "missing", "parameter": "company_id", "reason": "x"}]}
    llm = llm_for(tmp_path, {"graph/-/0": wrong, "graph/-/0#1": ANSWER})
    g = matched()
    refine(g, SPEC, llm)
    assert llm.reasks == ["graph/-/0#0"]
    assert not g.has_edge("get_company", "get_job")
    feedback = llm.transcript.get("graph/-/0#1")
    assert feedback is not None


def test_leaving_a_tool_isolated_is_rejected(tmp_path):
    lonely = {"prune": [], "add": ANSWER["add"][:2]}
    llm = llm_for(tmp_path, {"graph/-/0": lonely, "graph/-/0#1": lonely, "graph/-/0#2": lonely})
    with pytest.raises(LLMError):
        refine(matched(), SPEC, llm)
    text = prompt(matched(), SPEC, sorted(TABLES))
    assert "must be connected (in or out) by an added edge: clear_search_history" in text
    assert "- get_company.company_id -> job_id of get_job (0.81)" in text
    assert "- tables: applications, resumes; shares them with: list_applications, upload_resume, withdraw_application" in text


def test_chunks_are_few_stable_and_named_by_tools():
    assert chunks(["b", "a"]) == [("-", ["a", "b"])]
    names = [f"tool_{i:03d}" for i in range(60)]
    parts = chunks(names, size=25)
    assert [item for item, _ in parts] == ["tool_000", "tool_020", "tool_040"]
    assert sum((p for _, p in parts), []) == names
    assert chunks(list(reversed(names)), size=25) == parts


def test_large_domain_is_refined_chunk_by_chunk(tmp_path):
    tools = [tool(f"get_item_{i:02d}", [("item_id", True)], ["item_id"]) for i in range(CHUNK + 5)]
    tools.append(tool("list_items", [], ["items.item_id"]))
    spec = DomainSpec(name="items", description="Items.", tools=tools, tool_tables={},
                      db={"tables": [{"name": "items", "id_prefix": "IT",
                                      "columns": [{"name": "item_id", "type": "string", "primary_key": True}]}]})
    matches = [("list_items", "items.item_id", t.name, "item_id", 0.9) for t in tools[:-1]]
    g = matched(spec, matches)
    steps = chunks(model.tools(g))
    answers = {f"graph/{item}/0": {"add": [], "prune": []} for item, _ in steps}
    llm = llm_for(tmp_path, answers)
    refine(g, spec, llm)
    assert len(steps) == 2 and g.graph["pruned"] == []
    assert sorted(llm.transcript.entries) == sorted(answers)


def test_classification_and_orphans():
    extra = [
        tool("list_branches", [], ["branches.id", "branches.name"]),
        tool("place_hold", [("job_id", True), ("pickup_branch_id", True),
                            ("referral_code", True, {"description": "referral token returned by invite"}),
                            ("start_date", True, {"format": "YYYY-MM-DD"})], ["hold_id"], mutates=True),
        tool("rate_recruiter", [("recruiter_id", True)], ["rating_id"], mutates=True),
    ]
    spec = SPEC.model_copy(update={"tools": TOOLS + extra})
    g = matched(spec)
    classify(g, spec)
    roles = {n: (d["role"], d["resolution"]) for n, d in g.nodes(data=True) if d.get("direction") == "in"}
    assert roles["get_job:in:job_id"] == ("internal", None)
    assert roles["search_jobs:in:keywords"] == ("external", None)
    assert roles["list_applications:in:status"] == ("external", None)  # an enum
    assert roles["place_hold:in:start_date"] == ("external", None)     # a date
    assert roles["place_hold:in:referral_code"] == ("external", None)  # described as a token but produced by none
    # A role-named identifier with no match is linked to the list of that entity (`branches.id`).
    assert roles["place_hold:in:pickup_branch_id"] == ("internal", "linked")
    assert g.edges["list_branches", "place_hold"]["provenance"] == "rule"
    assert g.has_edge("list_branches:out:branches.id", "place_hold:in:pickup_branch_id")
    # An identifier nothing produces becomes something the user must give.
    assert roles["rate_recruiter:in:recruiter_id"] == ("external", "external")
    assert g.nodes["rate_recruiter:in:recruiter_id"]["orphan"] is True
    assert sampleable(g) == set(model.tools(g))


def test_dependency_cycles_are_broken_at_the_root_identifier():
    tools = [
        tool("list_orders", [("customer_id", True)], ["orders.order_id"]),
        tool("get_order", [("order_id", True)], ["order_id", "customer_id"]),
        tool("list_cards", [("customer_id", True)], ["cards.card_id"]),
        tool("pay", [("order_id", True), ("card_id", True)], ["payment_id"], mutates=True),
    ]
    spec = DomainSpec(name="shop", description="Shop.", tools=tools, tool_tables={},
                      db={"tables": [{"name": "orders", "id_prefix": "O",
                                      "columns": [{"name": "order_id", "type": "string", "primary_key": True}]}]})
    g = matched(spec, [("list_orders", "orders.order_id", "get_order", "order_id", 0.9),
                       ("list_orders", "orders.order_id", "pay", "order_id", 0.9),
                       ("get_order", "customer_id", "list_orders", "customer_id", 0.9),
                       ("get_order", "customer_id", "list_cards", "customer_id", 0.9),
                       ("list_cards", "cards.card_id", "pay", "card_id", 0.9)])
    classify(g, spec)
    assert g.nodes["list_orders:in:customer_id"]["resolution"] == "external"
    assert g.nodes["list_cards:in:customer_id"]["resolution"] == "external"
    assert g.nodes["get_order:in:order_id"]["role"] == "internal"
    assert sampleable(g) == set(model.tools(g))


def test_picture_and_report_are_readable(tmp_path):
    g = matched()
    refine(g, SPEC, llm_for(tmp_path, {"graph/-/0": ANSWER}))
    classify(g, SPEC)
    numbers = write_graph(g, tmp_path)
    picture = (tmp_path / "graph.svg").read_text()
    boxes = [tuple(map(float, b)) for b in re.findall(
        r'<g><title>[^<]*</title><rect x="([-\d.]+)" y="([-\d.]+)" width="([\d.]+)" height="([\d.]+)"', picture)]
    legend = tuple(map(float, re.search(
        r'<g id="legend"><rect x="([\d.]+)" y="([\d.]+)" width="([\d.]+)" height="([\d.]+)"', picture).groups()))
    width, height = map(float, re.search(r'<svg [^>]*width="([\d.]+)" height="([\d.]+)"', picture).groups())
    assert len(boxes) == len(model.tools(g))
    for i, a in enumerate(boxes + [legend]):
        assert a[0] >= 0 and a[1] >= 40 and a[0] + a[2] <= width and a[1] + a[3] <= height
        for b in (boxes + [legend])[i + 1:]:
            assert not (a[0] < b[0] + b[2] and b[0] < a[0] + a[2] and a[1] < b[1] + b[3] and b[1] < a[1] + a[3])
    for tool_name in model.tools(g):
        assert f'text-anchor="middle">{tool_name}</text>' in picture
    hubs, direct = drawn(g)
    arrows = sum(len({u for u, _ in p}) + len({v for _, v in p}) for p in hubs.values()) + len(direct)
    edges_group = picture.split('<g id="edges">')[1].split("</g>")[0]
    assert edges_group.count("<path") == arrows and direct  # only informative edges are drawn
    assert all(f'font-style="italic">{h}</text>' in picture for h in hubs)
    assert all(label in picture for label in ("passes an identifier", "establishes a precondition", "writes state"))
    assert 'stroke="#e6550d"' in picture and 'stroke-dasharray="7,4"' in picture
    xs = {t: float(re.search(rf'<text x="([\d.]+)" y="[\d.]+" text-anchor="middle">{t}</text>', picture).group(1))
          for t in model.tools(g)}
    hub_x = float(re.search(r'<ellipse cx="([\d.]+)"', picture).group(1))
    for t in model.tools(g):  # laid out by role: create and read left of the identifiers, the rest right
        assert (xs[t] < hub_x) == (g.nodes[t]["crud"] in ("create", "read"))
    page = (tmp_path / "graph.md").read_text()
    assert "![tool dependency graph](graph.svg)" in page
    assert "| upload_resume | submit_application | embedding | flow, precondition | 0.99 |" in page
    assert "| get_company.company_id | get_job.job_id | 0.81 | llm | a company id is not a job id |" in page
    assert numbers["isolated_tools"] == [] and numbers["components"] == 1 and numbers["pruned"]["total"] == 1
    assert numbers["edges"] == {"total": 11, "embedding": 9, "llm": 2, "rule": 0}
