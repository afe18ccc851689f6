"""The domain policy: its data model and cross-reference checks, the invariant checker, the
policy step of the pipeline, and where the agent sees it (policy.md, MCP instructions with the
episode's date, "Requires:" in tool descriptions)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import httpx
import pytest
from fastmcp import Client as FastMCPClient

from agents.build import Run, run_pipeline
from agents.policy_agent import policy_report, state_policy
from domains.db_runtime import DEFAULT_NOW
from domains.policy import (
    Check,
    Policy,
    cross_references,
    described,
    episode_instructions,
    prompt_section,
    render,
)
from domains.spec import DBSchema, DomainSpec, ToolSchema, ToolTest
from llm import LLM, STAGE_ORDER, ScriptedBackend, Transcript
from mcp_servers.runtime import Environment
from mcp_servers.server import build_server
from rollouts.sessions import InProcessSession, episode_policy
from tests.support.fixture_domain import http_server as start_http_server
from tests.support.scripted_domain import DATABASE, POLICY, TOOLS, answers
from verification.invariants import check_invariants, keep_invariants, status_moves
from verification.procedural import check_policy

# -- a small schema for the checker: applications with a status, their offers ------------------

DB = DBSchema.model_validate({"tables": [
    {"name": "application", "id_prefix": "APP", "columns": [
        {"name": "application_id", "type": "string", "primary_key": True, "nullable": False},
        {"name": "company", "type": "string", "nullable": False},
        {"name": "status", "type": "string", "nullable": False, "choices": ["draft", "submitted", "offered", "closed"]},
        {"name": "resume", "type": "text"},
    ]},
    {"name": "offer", "id_prefix": "OFR", "columns": [
        {"name": "offer_id", "type": "string", "primary_key": True, "nullable": False},
        {"name": "application_id", "type": "string", "nullable": False, "foreign_key": "application.application_id"},
        {"name": "offer_status", "type": "string", "nullable": False, "choices": ["pending", "accepted"]},
    ]},
]})

INVARIANTS = Policy.model_validate({"invariants": [
    {"statement": "status is allowed", "check": {"kind": "allowed_values", "table": "application", "column": "status"}},
    {"statement": "one open application per company", "check": {"kind": "at_most", "table": "application",
                                                                "group_by": ["company"], "max": 1,
                                                                "where": {"status": ["draft", "submitted"]}}},
    {"statement": "an offered application has an offer", "check": {
        "kind": "requires_related", "table": "application", "where": {"status": ["offered"]}, "related": "offer",
        "on": {"application_id": "application_id"}}},
    {"statement": "an accepted offer's application is offered", "check": {
        "kind": "requires_related", "table": "offer", "where": {"offer_status": ["accepted"]},
        "related": "application", "on": {"application_id": "application_id"}, "related_where": {"status": ["offered"]}}},
    {"statement": "a submitted application has a resume", "check": {
        "kind": "not_null", "table": "application", "where": {"status": ["submitted", "offered"]}, "columns": ["resume"]}},
    {"statement": "at most one accepted offer", "check": {"kind": "at_most", "table": "offer", "group_by": [], "max": 1,
                                                          "where": {"offer_status": ["accepted"]}}},
    {"statement": "the user is polite"},
]})


def _app(key: str, company: str, status: str, resume: str | None = "cv") -> dict:
    return {"application_id": key, "company": company, "status": status, "resume": resume}


GOOD = {"application": [_app("APP-1", "Acme", "submitted"), _app("APP-2", "Beta", "offered"), _app("APP-3", "Acme", "closed")],
        "offer": [{"offer_id": "OFR-1", "application_id": "APP-2", "offer_status": "accepted"}]}


def test_a_consistent_state_has_no_violations():
    assert check_invariants(INVARIANTS, DB, GOOD) == []
    assert check_invariants(Policy(), DB, GOOD) == []


def test_each_kind_of_check_finds_its_violations():
    bad = copy.deepcopy(GOOD)
    bad["application"] += [_app("APP-4", "Acme", "draft"), _app("APP-5", "Gamma", "hired"),
                           _app("APP-6", "Delta", "offered", resume=None)]
    bad["offer"] += [{"offer_id": "OFR-2", "application_id": "APP-1", "offer_status": "accepted"}]
    found = {(v.invariant, v.key): v for v in check_invariants(INVARIANTS, DB, bad)}
    assert set(found) == {(0, "APP-5"), (1, "company='Acme'"), (2, "APP-6"), (3, "OFR-2"), (4, "APP-6"),
                          (5, "the whole table")}
    assert "'hired', not one of" in found[0, "APP-5"].problem
    assert found[1, "company='Acme'"].rows == ("APP-4",)  # the first `max` rows of the group are kept
    assert "no offer row where offer.application_id = 'APP-6'" in found[2, "APP-6"].problem
    assert "status in ['offered']" in found[3, "OFR-2"].problem
    assert found[4, "APP-6"].problem == "resume is null"
    assert found[5, "the whole table"].rows == ("OFR-2",)


def test_nulls_do_not_group_and_a_nullable_column_may_be_null():
    policy = Policy.model_validate({"invariants": [
        {"statement": "s", "check": {"kind": "at_most", "table": "offer", "group_by": ["application_id"], "max": 1}},
        {"statement": "r", "check": {"kind": "allowed_values", "table": "application", "column": "resume",
                                     "values": ["cv"]}}]})
    state = {"offer": [{"offer_id": "O1", "application_id": None}, {"offer_id": "O2", "application_id": None}],
             "application": [_app("A1", "x", "draft", resume=None)]}
    assert check_invariants(policy, DB, state) == []


def test_a_check_needs_the_fields_of_its_kind():
    with pytest.raises(ValueError, match="at_most check needs max"):
        Check(kind="at_most", table="offer")
    with pytest.raises(ValueError, match="requires_related check needs related, on"):
        Check(kind="requires_related", table="offer")


def test_status_moves_are_judged_against_the_transition_table():
    policy = Policy.model_validate({"machines": [{"table": "application", "column": "status", "initial": ["draft"],
                                                  "terminal": ["closed"], "transitions": [
                                                      {"from": "draft", "to": ["submitted"], "tools": ["submit"]},
                                                      {"from": "submitted", "to": ["offered", "closed"]}]}]})
    before = {"application": [_app("A1", "x", "draft"), _app("A2", "y", "submitted"), _app("A3", "z", "closed")]}
    after = {"application": [_app("A1", "x", "submitted"), _app("A2", "y", "closed"), _app("A3", "z", "draft"),
                             _app("A4", "w", "draft"), _app("A5", "v", "offered")]}
    moves = {m.key: (m.before, m.after, m.allowed, m.listed) for m in status_moves(policy, DB, "update", before, after)}
    assert moves == {"A1": ("draft", "submitted", True, False),  # allowed, but the table names submit for it
                     "A2": ("submitted", "closed", True, True),   # no tool named: any tool may
                     "A3": ("closed", "draft", False, False),     # out of a terminal value
                     "A4": (None, "draft", True, True),           # inserted in an initial value
                     "A5": (None, "offered", False, True)}        # inserted in another


def test_the_sample_state_drops_rows_that_break_invariants_and_what_then_dangles():
    spec = DomainSpec(name="jobs", description="d", tools=[], db=DB, tool_tables={}, policy=INVARIANTS)
    state = copy.deepcopy(GOOD)
    state["application"].append(_app("APP-9", "Acme", "submitted"))  # a second open Acme application
    state["offer"].append({"offer_id": "OFR-9", "application_id": "APP-9", "offer_status": "pending"})
    kept = keep_invariants(spec.policy, spec.db, state)
    assert [a["application_id"] for a in kept["application"]] == ["APP-1", "APP-2", "APP-3"]
    assert [o["offer_id"] for o in kept["offer"]] == ["OFR-1"]  # its application was dropped
    assert check_invariants(INVARIANTS, DB, kept) == []


def test_the_report_counts_violations_before_and_after_a_call_and_moves_outside_the_table():
    policy = INVARIANTS.model_copy(update={"machines": Policy.model_validate({"machines": [
        {"table": "application", "column": "status", "initial": ["draft"], "terminal": ["closed"], "transitions": [
            {"from": "draft", "to": ["submitted"], "tools": ["submit"]}, {"from": "submitted", "to": ["offered"]},
            {"from": "offered", "to": ["closed"]}]}]}).machines})
    spec = DomainSpec(name="jobs", description="d", tools=[], db=DB, tool_tables={}, policy=policy)
    start = {"application": [_app("APP-1", "Acme", "submitted"), _app("APP-7", "Zeta", "offered")]}  # APP-7: no offer
    tests = {"reopen": [
        ToolTest(name="reopens", kind="success", initial_state=start,
                 expect_changes={"application": {"updated": {"APP-1": {"status": "offered"}}}}),
        ToolTest(name="refused", kind="rejection", initial_state=GOOD, expect_error="PreconditionFailed")]}
    merged = {**GOOD, "application": GOOD["application"] + [_app("APP-8", "Beta", "offered")]}
    sample = keep_invariants(spec.policy, spec.db, merged)
    report = policy_report(spec, tests, sample, merged)
    assert report["sample_state"]["violations"] == 0 and report["sample_state"]["merged_violations"] == 1
    assert report["sample_state"]["rows_dropped"] == {"application": ["APP-8"]}
    assert report["test_states"] == {"checked": 2, "violating": 1,
                                     "by_invariant": {"2: an offered application has an offer": 1}}
    assert report["success_calls"]["by_tool"] == {"reopen": ["reopens"]}  # APP-1 offered without an offer
    assert report["status_moves"]["outside_table"] == 0 and report["status_moves"]["checked"] == 1


# -- cross-references ------------------------------------------------------------------------

SPEC_TOOLS = [ToolSchema.model_validate(t) for t in TOOLS]
SPEC_DB = DBSchema.model_validate({"tables": DATABASE["tables"][:1]})
TOOL_TABLES = {t["name"]: ["book"] for t in TOOLS}


def _slip(path: str, value) -> dict:
    policy = copy.deepcopy(POLICY)
    target = policy
    *parents, last = path.split(".")
    for part in parents:
        target = target[int(part)] if part.isdigit() else target[part]
    target[int(last) if last.isdigit() else last] = value
    return policy


def test_the_scripted_policy_names_only_what_exists():
    cross_references(Policy.model_validate(POLICY), SPEC_TOOLS, SPEC_DB, TOOL_TABLES)


@pytest.mark.parametrize("path, value, message", [
    ("machines.0.table", "books", "unknown table 'books'"),
    ("machines.0.column", "state", "table book has no column 'state'"),
    ("machines.0.terminal", ["done"], "book.status has no value 'done'"),
    ("machines.0.transitions", [{"from": "unread", "to": ["read"], "tools": ["finish_book"]}], "unknown tool 'finish_book'"),
    ("machines.0.transitions", [{"from": "unread", "to": ["read"], "tools": ["get_book"]}],
     "tool 'get_book' does not write table book"),
    ("machines.0.transitions", [{"from": "unread", "to": ["read"]}, {"from": "read", "to": ["unread"]}],
     "'read' is terminal but has transitions out of it"),
    ("machines.0.transitions", [{"from": "unread", "to": ["read"]}, {"from": "unread", "to": ["read"]}],
     "the move 'unread' -> 'read' is given twice"),
    ("preconditions", {"shelve_book": [{"rule": "r"}]}, "preconditions: unknown tool 'shelve_book'"),
    ("clock.tools", ["now"], "clock.tools: unknown tool 'now'"),
    ("invariants.0.check.column", "colour", "table book has no column 'colour'"),
    ("invariants.1.check.where", {"status": ["lost"]}, "book.status has no value 'lost'"),
    ("invariants.1.check", {"kind": "requires_related", "table": "book", "related": "shelf", "on": {"book_id": "book_id"}},
     "unknown table 'shelf'"),
])
def test_a_name_that_does_not_exist_is_a_cross_reference_error(path, value, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        cross_references(Policy.model_validate(_slip(path, value)), SPEC_TOOLS, SPEC_DB, TOOL_TABLES)


def test_a_tool_that_raises_conflict_needs_preconditions():
    tools = [ToolSchema.model_validate({**t, "raises": [*t["raises"], {"error": "Conflict", "when": "already read"}]})
             if t["name"] == "mark_read" else ToolSchema.model_validate(t) for t in TOOLS]
    with pytest.raises(ValueError, match="'mark_read' raises Conflict but has no rules"):
        cross_references(Policy.model_validate(POLICY), tools, SPEC_DB, TOOL_TABLES)


def test_a_slip_in_the_policy_answer_is_re_asked_with_the_error(tmp_path):
    asked: list[str] = []

    class Recording(ScriptedBackend):
        def complete(self, key, turn, messages, **kwargs):
            asked.append(messages[-1]["content"])
            return super().complete(key, turn, messages)

    spec = DomainSpec(name="reading_list", description="A reading list.", tools=SPEC_TOOLS, db=SPEC_DB,
                      tool_tables=TOOL_TABLES)
    llm = LLM(Recording({"policy/-/0": _slip("machines.0.table", "books"), "policy/-/0#1": POLICY}),
              Transcript(tmp_path / "t.jsonl"))
    policy = state_policy(llm, spec)
    assert policy == Policy.model_validate(POLICY) and llm.reasks == ["policy/-/0#0"]
    assert "unknown table 'books'" in asked[1]
    assert "- mark_read (writes book): Mark a book as read." in asked[0] and "status: string" in asked[0]
    assert STAGE_ORDER["database"] < STAGE_ORDER["policy"] < STAGE_ORDER["code"]


# -- the data model --------------------------------------------------------------------------

def test_specs_without_a_policy_load_and_are_written_as_before():
    spec = DomainSpec(name="reading_list", description="d", tools=SPEC_TOOLS, db=SPEC_DB, tool_tables=TOOL_TABLES)
    assert spec.policy.empty() and "policy" not in spec.model_dump(exclude_defaults=True)
    assert spec.requirements("add_book") == []  # neither the policy nor the schema states any


def test_transitions_are_written_with_from_and_to():
    dumped = Policy.model_validate(POLICY).model_dump(exclude_defaults=True)
    assert dumped["machines"][0]["transitions"] == [{"from": "unread", "to": ["read"], "tools": ["mark_read"]}]


def test_policy_md_states_the_date_rule_the_table_the_preconditions_and_the_invariants():
    text = render("reading_list", "A reading list.", Policy.model_validate(POLICY))
    assert text.startswith("# reading_list policy\n\nA reading list.")
    for part in ["## Today's date", "compare dates with the clock or answer relative to it: `add_book`",
                 "### book.status", "New rows start as unread. Terminal (no move out): read.",
                 "| unread | read | mark_read |", "### `add_book`", "- pages, when given, is at least 1 (else InvalidInput)",
                 "- The list holds a title by an author once.", "- Books are added by hand, one at a time."]:
        assert part in text, part
    assert "add_book" not in render("reading_list", "d", Policy.model_validate(POLICY), tools=["mark_read"]).split(
        "## Status")[1]


def test_the_episode_date_ends_the_instructions():
    text = episode_instructions("# p\n", "2025-06-02T14:30:00")
    assert text.endswith("## Now\n\nThe episode clock reads 2025-06-02T14:30:00: today is Monday 2 June 2025, "
                         "and the time is 14:30.\n")
    assert DEFAULT_NOW in episode_instructions("x", None)
    assert episode_policy("", "2025-06-02T14:30:00") == ""  # a domain without policy.md keeps the agent's default
    assert described("Do it.", ["a (else Conflict)", "b"]) == "Do it. Requires: a (else Conflict); b."
    assert described("Do it.", []) == "Do it."


def test_prompts_show_a_tool_its_rules_and_the_moves_of_its_tables():
    policy = Policy.model_validate(POLICY)
    writer = prompt_section(policy, "mark_read", ["book"], True)
    assert "allows this tool (book.status: new rows start as unread" in writer and "- unread -> read" in writer
    assert "by " not in writer.split("book.status:\n")[-1]  # only its own moves, not the whole table
    adder = prompt_section(policy, "add_book", ["book"], True)
    assert "- pages, when given, is at least 1 (else InvalidInput)" in adder
    assert "names no move of book.status by this tool" in adder and "episode clock" in adder
    # a creator is told where its rows start, not that it leaves the status as it is
    assert "a book row it creates starts as unread (the lifecycle's initial value)" in adder
    assert "leaves the status as it is" not in adder
    assert prompt_section(policy, "get_book", ["book"], False) == ""
    assert prompt_section(Policy(), "mark_read", ["book"], True) == ""


# -- the pipeline with a policy step ---------------------------------------------------------

class Asking(ScriptedBackend):
    def __init__(self, answers):
        super().__init__(answers)
        self.prompts: dict[str, str] = {}

    def complete(self, key, turn, messages, **kwargs):
        self.prompts.setdefault(str(key), messages[-1]["content"])
        return super().complete(key, turn, messages)


TASK = {"id": "late_read", "instruction": "Mark Dune as read.", "user_profile": "", "now": "2025-06-02T14:30:00",
        "initial_state": {"book": [{"book_id": "BK-0001", "title": "Dune", "author": "Herbert", "pages": 412,
                                    "status": "unread", "added_at": "2025-01-02T10:00:00"}]},
        "reference_solution": [{"tool": "mark_read", "arguments": {"book_id": "BK-0001"}}], "reward_spec": {}}


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    out = tmp_path_factory.mktemp("policy") / "reading_list"
    backend = Asking(answers())
    llm = LLM(backend, Transcript(out / "transcript.jsonl"))
    run_pipeline(Run("reading_list", out, llm, test_timeout=0.5, with_policy=True))
    llm.transcript.save()
    (out / "tasks").mkdir()
    (out / "tasks" / "late_read.json").write_text(json.dumps(TASK))
    return out, backend.prompts


@pytest.mark.slow
def test_the_policy_is_recorded_in_the_spec_and_written_as_policy_md(built):
    out, _ = built
    spec = DomainSpec.model_validate_json((out / "spec.json").read_text())
    assert spec.policy == Policy.model_validate(POLICY)
    assert (out / "policy.md").read_text() == render("reading_list", spec.description, spec.policy,
                                                     tools=["add_book", "export_list", "get_book", "mark_read"])
    assert "policy/-/0" in Transcript(out / "transcript.jsonl").entries


def _code_section(prompts: dict, tool: str) -> str:
    """The part of a code request's prompt about `tool` (a request implements a few tools)."""
    prompt = next(p for key, p in prompts.items() if key.startswith("code/") and f"### {tool}\n" in p)
    return prompt.split(f"### {tool}\n", 1)[1].split("\n### ", 1)[0].split("The db module's classes", 1)[0]


@pytest.mark.slow
def test_code_and_test_prompts_show_the_tools_rules(built):
    _, prompts = built
    assert "- pages, when given, is at least 1 (else InvalidInput)" in _code_section(prompts, "add_book")
    assert "- pages, when given, is at least 1 (else InvalidInput)" in prompts["tests/add_book/0"]
    assert "moves the policy allows this tool" in _code_section(prompts, "mark_read")
    assert "- unread -> read" in _code_section(prompts, "mark_read")
    assert "moves the policy allows" not in _code_section(prompts, "get_book")


@pytest.mark.slow
def test_the_report_counts_the_policy_and_its_violations(built):
    out, _ = built
    report = json.loads((out / "report.json").read_text())["policy"]
    assert (report["machines"], report["transitions"], report["preconditions"], report["invariants"],
            report["checkable_invariants"]) == (1, 1, 1, 4, 3)
    assert report["clock"]["default"] == DEFAULT_NOW and report["clock"]["tools"] == ["add_book"]
    assert report["sample_state"]["violations"] == 0 and report["test_states"]["violating"] == 0
    assert report["test_states"]["checked"] == 9 and report["success_calls"]["checked"] == 4
    assert report["status_moves"] == {"checked": 2, "outside_table": 0, "by_a_tool_not_listed": 0,
                                      "outside_examples": {}, "unlisted_examples": {}}
    assert "policy" in json.loads((out / "report.json").read_text())["tokens"]["stages"]


@pytest.mark.slow
def test_the_generated_test_module_checks_the_sample_state(built, tmp_path):
    out, _ = built
    assert "def test_sample_state_keeps_the_policy_invariants():\n    check_policy(DOMAIN)" in \
        (out / "tests" / "test_domain.py").read_text()
    check_policy(out)
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "spec.json").write_text((out / "spec.json").read_text())
    book = TASK["initial_state"]["book"][0]
    (broken / "sample_state.json").write_text(json.dumps({"book": [book, {**book, "book_id": "BK-0002"}]}))
    with pytest.raises(AssertionError, match="The list holds a title by an author once. book title='Dune'"):
        check_policy(broken)


@pytest.mark.slow
def test_replay_with_the_policy_step_gives_the_same_bytes(built, tmp_path):
    out, _ = built
    (tmp_path / "transcript.jsonl").write_bytes((out / "transcript.jsonl").read_bytes())
    llm = LLM(None, Transcript(tmp_path / "transcript.jsonl"))
    run_pipeline(Run("reading_list", tmp_path, llm, test_timeout=0.5, with_policy=True))
    assert llm.changed_prompts == []
    for path in sorted(p for p in out.rglob("*") if p.is_file() and "timings" not in p.name and "tasks" not in p.parts):
        assert (tmp_path / path.relative_to(out)).read_bytes() == path.read_bytes(), path.name


# -- what the agent sees -----------------------------------------------------------------------

@pytest.mark.slow
def test_served_descriptions_end_with_their_preconditions(built):
    out, _ = built
    with Environment(out) as env:
        tools = {t["function"]["name"]: t["function"]["description"] for t in env.openai_tools()}
        assert tools["add_book"] == "Add a book to the reading list. Requires: pages, when given, is at least 1 " \
                                    "(else InvalidInput)."
        assert tools["mark_read"] == "Mark a book as read."
        assert env.instructions == (out / "policy.md").read_text()


@pytest.mark.slow
async def test_the_mcp_instructions_are_the_policy_and_the_episodes_date(built):
    out, _ = built
    with Environment(out) as env:
        for task, now in [(None, DEFAULT_NOW), ("late_read", "2025-06-02T14:30:00")]:
            episode = env.create_episode(task)
            assert episode.now == now and episode.info()["now"] == now
            async with FastMCPClient(build_server(env, lambda: episode)) as client:
                assert client.instructions == episode_instructions((out / "policy.md").read_text(), now)
                listed = {t.name: t.description for t in await client.list_tools()}
                assert listed["add_book"].endswith("Requires: pages, when given, is at least 1 (else InvalidInput).")
            if task is not None:  # what `make eval`'s agents read: the same policy and date
                assert InProcessSession(env, episode, env.openai_tools()).policy == \
                    episode_instructions(env.policy, now)
            episode.close()


@pytest.mark.slow
@pytest.mark.integration
def test_each_http_episode_is_told_its_own_date(built):
    out, _ = built
    with start_http_server(out) as served:
        created = [httpx.post(f"{served.url}/episodes", json=body, headers=served.headers).json()
                   for body in ({}, {"task_id": "late_read"})]
        assert [c["now"] for c in created] == [DEFAULT_NOW, "2025-06-02T14:30:00"]

        async def instructions(url: str) -> str:
            async with FastMCPClient(url) as client:
                return client.instructions

        import asyncio

        for episode in created:
            text = asyncio.run(instructions(episode["mcp_url"]))
            assert text == episode_instructions((out / "policy.md").read_text(), episode["now"])


def test_test_states_fill_the_tables_the_invariants_tie_to_a_tools_tables():
    """A tool that never reads offers still gets the offer table in its test prompt: an application in an
    offer state must have its offer for the state to keep the domain's invariants."""
    from agents.case_writer import state_tables, table_columns

    domain = Path(__file__).resolve().parent.parent / "domains" / "job_seeking"
    spec = DomainSpec.model_validate_json((domain / "spec.json").read_text())
    assert spec.tables_of("set_application_priority") == ["job_application"]
    assert state_tables(spec, "set_application_priority") == ["job_application", "job_offer"]
    assert "offer_status" in table_columns(spec, "set_application_priority")
    assert state_tables(spec, "create_user_profile") == ["user_profile"]
