"""Prompts carry what the model must stay consistent with: what earlier answers wrote, the episode
clock, the policy's initial values, what argument validation already guarantees."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from agents import schema_agent
from agents.case_writer import kinds_needed, write_tests
from agents.code_agent import write_tools
from agents.database_agent import design_database
from agents.drift import drift_conflicts
from agents.prompts import TESTS_FORMAT
from domains.db_runtime import DEFAULT_NOW
from domains.spec import DBSchema, DomainSpec, Param, ToolSchema
from domains.tool_schemas import ArgumentError, ArgumentValidator
from llm import LLM, ScriptedBackend, StepKey, Transcript
from tests.support.scripted_domain import BOOK, DATABASE, EXPORT_OK, POLICY, TOOLS
from verification.verdict import judge

JOB_SEEKING = Path(__file__).resolve().parent.parent / "domains" / "job_seeking"


class Recording(ScriptedBackend):
    """Answers as scripted and keeps each step's messages (system and user) as first asked."""

    def __init__(self, answers: dict):
        super().__init__(answers)
        self.asked: dict[str, list[dict]] = {}

    def complete(self, key, turn, messages, **kwargs):
        self.asked.setdefault(f"{key}#{turn}" if turn else str(key), messages)
        return super().complete(key, turn, messages)


@pytest.fixture
def schema_prompts(tmp_path, monkeypatch) -> dict[str, list[dict]]:
    monkeypatch.setattr(schema_agent, "BATCH", 2)  # three batches of the five tools
    backend = Recording({
        "schema/-/0": {"description": "A reading list.", "tools": [{"name": t["name"], "summary": "s"} for t in TOOLS]},
        "schema/add_book..get_book/0": {"tools": TOOLS[:2]},
        "schema/mark_read..count_books/0": {"tools": TOOLS[2:4]},
        "schema/export_list/0": {"tools": TOOLS[4:]},
    })
    _, tools = schema_agent.propose_tools(LLM(backend, Transcript(tmp_path / "t.jsonl")), "reading_list")
    assert [t.name for t in tools] == [t["name"] for t in TOOLS]
    return backend.asked


def test_a_schema_batch_sees_the_signatures_of_every_schema_written_before_it(schema_prompts):
    first = schema_prompts["schema/add_book..get_book/0"][-1]["content"]
    last = schema_prompts["schema/export_list/0"][-1]["content"]
    assert "Schemas already written" not in first
    # parameters with their types and optionality, returned fields, errors: of both earlier batches
    assert "- add_book(title: string, author: string, pages?: integer) -> {book_id: string} writes raises InvalidInput" in last
    assert "- get_book(book_id: string) -> {book_id: string, title: string} raises NotFound" in last
    assert "- mark_read(book_id: string) -> {book_id: string, status: string} writes raises NotFound" in last
    assert "- count_books() -> {count: integer}" in last
    assert "export_list(" not in last.split("Schemas already written")[1].split("Write the full schemas")[0]


def test_the_clock_rule_is_stated_from_the_first_schema_prompt(schema_prompts):
    for step in ("schema/-/0", "schema/add_book..get_book/0"):
        system = " ".join(schema_prompts[step][0]["content"].split())
        assert "episode clock" in system and DEFAULT_NOW in system
        assert "never give a tool a parameter for today's date" in system


def _spec(policy: dict | None = None) -> DomainSpec:
    return DomainSpec.model_validate({"name": "reading_list", "description": "A reading list.", "tools": TOOLS,
                                      "db": {"tables": DATABASE["tables"]}, "tool_tables": DATABASE["tool_tables"],
                                      **({"policy": policy} if policy else {})})


def test_a_tool_that_declares_no_error_is_not_re_asked_for_a_rejection_case(tmp_path):
    spec = _spec()
    count = {"name": "counts", "kind": "success", "expect_return": {"count": 1}}
    backend = Recording({"tests/count_books/0": {"fixture": {"book": [BOOK]}, "cases": [count], "done": True}})
    fixture, cases = write_tests(LLM(backend, Transcript(tmp_path / "t.jsonl")), spec, spec.tool("count_books"))
    assert [c.name for c in cases] == ["counts"] and list(backend.asked) == ["tests/count_books/0"]
    assert "success cases only" in backend.asked["tests/count_books/0"][-1]["content"]


def test_a_tool_that_declares_an_error_is_still_asked_for_its_rejection_case(tmp_path):
    spec = _spec()
    found = {"name": "found", "kind": "success", "arguments": {"book_id": "BK-0001"},
             "expect_return": {"book_id": "BK-0001", "title": "Dune"}}
    missing = {"name": "missing", "kind": "rejection", "arguments": {"book_id": "BK-0009"}, "expect_error": "NotFound"}
    backend = Recording({"tests/get_book/0": {"fixture": {"book": [BOOK]}, "cases": [found], "done": True},
                         "tests/get_book/1": {"cases": [missing], "done": True}})
    _, cases = write_tests(LLM(backend, Transcript(tmp_path / "t.jsonl")), spec, spec.tool("get_book"))
    assert [c.kind for c in cases] == ["success", "rejection"]
    assert "still need a rejection case" in backend.asked["tests/get_book/1"][-1]["content"]
    # a rule of the policy with an error is a refusal the tool makes itself, declared or not
    ruled = _spec({**POLICY, "preconditions": {"count_books": [{"rule": "The list is open.",
                                                                 "error": "PreconditionFailed"}]}})
    assert kinds_needed(ruled, ruled.tool("count_books")) == {"success", "rejection"}
    assert kinds_needed(spec, spec.tool("count_books")) == {"success"}


def test_the_code_prompt_says_what_argument_validation_guarantees_and_it_does(tmp_path):
    spec = _spec()
    backend = Recording({str(StepKey.batch("code", ["export_list"])): {"tools": [{"name": "export_list",
                                                                                 "code": EXPORT_OK}]}})
    write_tools(LLM(backend, Transcript(tmp_path / "t.jsonl")), spec, ["export_list"])
    system = " ".join(next(iter(backend.asked.values()))[0]["content"].split())
    assert "Do not check these again: no call reaches such a check." in system
    claims = {"every required parameter is given": {"author": "A"},
              "no unknown one": {"title": "T", "author": "A", "isbn": "x"},
              "never a bool, float or str": {"title": "T", "author": "A", "pages": True}}
    validator = ArgumentValidator(spec.tool("add_book"))
    for claim, arguments in claims.items():
        assert claim in system
        with pytest.raises(ArgumentError):
            validator.validate(arguments)
    for wrong in (2.5, "300"):
        with pytest.raises(ArgumentError):
            validator.validate({"title": "T", "author": "A", "pages": wrong})
    enum = ArgumentValidator(DomainSpec.model_validate(json.loads((JOB_SEEKING / "spec.json").read_text()))
                             .tool("upload_resume"))
    assert "a parameter with an enum holds one of its values" in system
    with pytest.raises(ArgumentError, match="must be one of"):
        enum.validate({"application_id": "APP-0001", "resume_content": "x", "resume_format": "odt"})
    # what the prompt leaves to the tool is not checked before it runs
    assert "empty or blank strings, numeric bounds" in system
    assert validator.validate({"title": " ", "author": "A", "pages": 0}) == {"title": " ", "author": "A", "pages": 0}


def _judged(expected_row: dict, actual_row: dict) -> bool:
    test = {"name": "adds", "kind": "success", "expect_return": {"book_id": "BK-0002"},
            "expect_changes": {"book": {"inserted": [expected_row]}}}
    outcome = {"returned": {"book_id": "BK-0002"}, "error": None,
               "changes": {"book": {"inserted": [actual_row], "updated": {}, "deleted": []}}}
    return judge(test, outcome)["passed"]


def test_expected_rows_are_compared_as_the_test_prompt_says_they_are_written():
    said = " ".join(TESTS_FORMAT.split())
    assert "An expected inserted row may leave out a column whose value is null (an omitted column is null" in said
    assert "text holding JSON is compared as parsed JSON" in said
    row = {"book_id": "BK-0002", "title": "Emma", "author": "Austen", "pages": None, "status": "unread",
           "tags": '{"genre": "novel", "years": [1815]}'}
    assert _judged({c: v for c, v in row.items() if c != "pages"}, row)  # a null column left out
    assert _judged({**row, "tags": '{"years":[1815],"genre":"novel"}'}, row)  # same JSON, other spelling
    assert not _judged({**row, "tags": '{"genre": "novel", "years": [1816]}'}, row)  # other JSON
    assert not _judged({c: v for c, v in row.items() if c != "title"}, row)  # a column with a value left out
    assert not _judged(row, {**row, "pages": 300})  # written null, but the code set it
    assert not _judged(row, {**row, "tags": "{not json"})
    broken = {"name": "adds", "kind": "success", "expect_changes": {}}
    assert not judge(broken, {"returned": None, "error": None, "changes": {"book": ["not a change"]}})["passed"]


def _drifting_tools() -> list[ToolSchema]:
    tools = [ToolSchema.model_validate(t) for t in TOOLS]
    tools[2].postconditions = ["status = 'read', read_at = now."]  # mark_read: a column the database lacks
    tools[4].parameters.append(Param(name="status", type="string", description="filter", required=False,
                                     enum=["all", "unread", "read", "lent"]))  # export_list: a value it lacks
    return tools


def test_conflicts_between_the_tools_and_the_database_are_put_to_the_model_once(tmp_path):
    fixed = copy.deepcopy(DATABASE)
    columns = fixed["tables"][0]["columns"]
    columns.append({"name": "read_at", "type": "datetime"})
    next(c for c in columns if c["name"] == "status")["choices"] += ["lent"]
    backend = Recording({"database/-/0": DATABASE, "database/-/0#1": fixed})
    llm = LLM(backend, Transcript(tmp_path / "t.jsonl"))
    db, mapping = design_database(llm, "reading_list", _drifting_tools())
    reask = backend.asked["database/-/0#1"][-1]["content"]
    assert "mark_read: a postcondition sets 'read_at', which no table of the tool has (book)" in reask
    assert "export_list: parameter status allows 'lent', which status does not" in reask
    assert "'all'" not in reask  # a filter's "all" is no status value
    assert "read_at" in {c.name for c in db.table("book").columns} and drift_conflicts(_drifting_tools(), db, mapping) == []


def test_conflicts_the_model_leaves_are_reported_not_fought_over(tmp_path):
    backend = Recording({"database/-/0": DATABASE, "database/-/0#1": DATABASE})
    llm = LLM(backend, Transcript(tmp_path / "t.jsonl"))
    db, mapping = design_database(llm, "reading_list", _drifting_tools())
    assert list(backend.asked) == ["database/-/0", "database/-/0#1"] and llm.reasks == ["database/-/0#0"]
    assert len(drift_conflicts(_drifting_tools(), db, mapping)) == 2
    clean = [ToolSchema.model_validate(t) for t in TOOLS]
    assert drift_conflicts(clean, db, mapping) == []


def test_a_column_name_two_tables_share_allows_the_values_of_either():
    db = DBSchema.model_validate({"tables": [
        {"name": "wedding", "id_prefix": "WED", "columns": [
            {"name": "wedding_id", "type": "string", "primary_key": True},
            {"name": "status", "type": "string", "choices": ["planning", "confirmed"]}]},
        {"name": "task", "id_prefix": "TSK", "columns": [
            {"name": "task_id", "type": "string", "primary_key": True},
            {"name": "status", "type": "string", "choices": ["open", "done"]}]}]})
    def tool(enum):
        return ToolSchema.model_validate({
            "name": "list_tasks", "description": "List a wedding's tasks.", "mutates": False,
            "parameters": [{"name": "status", "type": "string", "description": "filter", "required": False,
                            "enum": enum}],
            "output": []})
    mapping = {"list_tasks": ["wedding", "task"]}
    assert drift_conflicts([tool(["open", "done", "planning"])], db, mapping) == []
    assert drift_conflicts([tool(["open", "blocked"])], db, mapping) == [
        "list_tasks: parameter status allows 'blocked', which status does not (its values: planning, confirmed, "
        "open, done)"]
