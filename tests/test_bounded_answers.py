"""Bounded answers: schema batches and test requests that are cut off at the output limit are
split rather than repeated, and the compact test format loses nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agents.answers import DebugFix
from agents.case_format import TestCase as Case  # aliased: a Test* name would be collected
from agents.case_format import encode, expand
from agents.case_writer import PER_REQUEST, write_tests
from agents.debug_agent import apply_fix
from agents.schema_agent import propose_tools
from domains.spec import DBSchema, DomainSpec, ToolTest
from llm import LLM, AnswerTruncated, LLMError, ScriptedBackend, Transcript
from tests.support.scripted_domain import DATABASE, TOOLS, _page, _tests

ROOT = Path(__file__).resolve().parent.parent
JOB_SEEKING = ROOT / "domains" / "job_seeking"


class CutOff(ScriptedBackend):
    """Answers as scripted, but the steps named in `cut` stop at the output limit."""

    def __init__(self, answers: dict, cut: set[str]):
        super().__init__(answers)
        self.cut, self.asked = cut, []

    def complete(self, key, turn, messages, schema=None):
        name = f"{key}#{turn}" if turn else str(key)
        self.asked.append((name, messages[-1]["content"]))
        if name in self.cut:
            raise AnswerTruncated(f"{name}: cut off", '{"tools": [{"name": "add_bo', {"prompt_tokens": 1, "completion_tokens": 1})
        return super().complete(key, turn, messages)


def _sorted_state(state: dict) -> dict:
    return {t: sorted(rows, key=lambda r: json.dumps(r, sort_keys=True)) for t, rows in state.items() if rows}


def test_the_compact_format_re_expands_to_every_recorded_test_of_job_seeking():
    spec = DomainSpec.model_validate(json.loads((JOB_SEEKING / "spec.json").read_text()))
    cases = 0
    for path in sorted((JOB_SEEKING / "tests").glob("*.json")):
        if path.name == "integrity.json":
            continue
        tests = [ToolTest.model_validate(t) for t in json.loads(path.read_text())]
        fixture, compact = encode(tests, spec.db)
        again = expand(fixture, compact, spec.db)
        assert [t.name for t in again] == [t.name for t in tests]
        for before, after in zip(tests, again):
            assert _sorted_state(after.initial_state) == _sorted_state(before.initial_state), (path.name, before.name)
            assert after.model_dump(exclude={"initial_state"}) == before.model_dump(exclude={"initial_state"})
        cases += len(tests)
    assert cases > 100


def test_a_setup_that_does_not_fit_the_fixture_is_refused():
    db = DBSchema.model_validate({"tables": DATABASE["tables"]})
    case = Case(name="x", kind="rejection", setup={"book": {"deleted": ["BK-0404"]}}, expect_error="NotFound")
    with pytest.raises(ValueError, match="BK-0404"):
        expand({"book": [{"book_id": "BK-0001", "title": "t", "author": "a", "added_at": "2025-01-01T00:00:00"}]},
               [case], db)


def test_a_cut_off_schema_batch_is_split_in_two_not_repeated(tmp_path):
    answers = {
        "schema/-/0": {"description": "A reading list.", "tools": [{"name": t["name"], "summary": "s"} for t in TOOLS]},
        "schema/add_book..get_book/0": {"tools": TOOLS[:2]},
        "schema/mark_read..export_list/0": {"tools": TOOLS[2:]},
    }
    backend = CutOff(answers, cut={"schema/add_book..export_list/0"})
    description, tools = propose_tools(LLM(backend, Transcript(tmp_path / "t.jsonl")), "reading_list")
    assert [t.name for t in tools] == [t["name"] for t in TOOLS]
    assert [name for name, _ in backend.asked] == [
        "schema/-/0", "schema/add_book..export_list/0", "schema/add_book..get_book/0",
        "schema/mark_read..export_list/0"]


def test_a_batch_answering_other_tools_is_re_asked_with_the_names_it_must_give(tmp_path):
    answers = {
        "schema/-/0": {"description": "A reading list.", "tools": [{"name": t["name"], "summary": "s"} for t in TOOLS[:2]]},
        "schema/add_book..get_book/0": {"tools": TOOLS[:1]},
        "schema/add_book..get_book/0#1": {"tools": TOOLS[:2]},
    }
    backend = CutOff(answers, cut=set())
    _, tools = propose_tools(LLM(backend, Transcript(tmp_path / "t.jsonl")), "reading_list")
    assert len(tools) == 2
    assert "['add_book', 'get_book']" in backend.asked[-1][1]


def _spec() -> DomainSpec:
    return DomainSpec(name="reading_list", description="d", tools=TOOLS, db={"tables": DATABASE["tables"][:1]},
                      tool_tables={t["name"]: ["book"] for t in TOOLS})


def test_a_cut_off_test_request_asks_for_half_as_many_cases_and_continues(tmp_path):
    spec = _spec()
    page = _page(_tests()["add_book"])  # one success, two rejections
    answers = {
        "tests/add_book/1": {"fixture": page["fixture"], "cases": page["cases"][:1], "done": False},
        "tests/add_book/2": {"cases": page["cases"][1:], "done": True},
    }
    backend = CutOff(answers, cut={"tests/add_book/0"})
    fixture, cases = write_tests(LLM(backend, Transcript(tmp_path / "t.jsonl")), spec, spec.tool("add_book"))
    assert fixture == page["fixture"] and [c.name for c in cases] == ["adds", "empty_title", "zero_pages"]
    asked = [prompt for _, prompt in backend.asked]
    half = f"at most {PER_REQUEST // 2} cases"
    assert f"at most {PER_REQUEST} cases" in asked[0] and half in asked[1] and "more cases" in asked[2]
    assert half in asked[2]  # the smaller pages go on once one was cut off
    assert "adds (success)" in asked[2]  # later requests list what is already written


def test_tests_without_a_rejection_case_are_asked_for_one(tmp_path):
    spec = _spec()
    page = _page(_tests()["add_book"])
    answers = {
        "tests/add_book/0": {"fixture": page["fixture"], "cases": page["cases"][:1], "done": True},
        "tests/add_book/1": {"cases": page["cases"][1:2], "done": True},
    }
    backend = CutOff(answers, cut=set())
    _, cases = write_tests(LLM(backend, Transcript(tmp_path / "t.jsonl")), spec, spec.tool("add_book"))
    assert [c.kind for c in cases] == ["success", "rejection"]
    assert "still need a rejection case" in backend.asked[1][1]


def test_tests_that_never_complete_fail_the_tool_not_the_run(tmp_path):
    spec = _spec()
    page = _page(_tests()["add_book"])
    answers = {"tests/add_book/0": {"fixture": page["fixture"], "cases": page["cases"][:1], "done": False}}
    answers |= {f"tests/add_book/{i}": {"cases": [{**page["cases"][0], "name": f"again_{i}"}], "done": False}
                for i in range(1, 8)}
    with pytest.raises(LLMError, match="not complete"):
        write_tests(LLM(CutOff(answers, cut=set()), Transcript(tmp_path / "t.jsonl")), spec, spec.tool("add_book"))


def test_a_debug_fix_patches_only_the_cases_it_names():
    cases = [Case(name="a", kind="success", arguments={"x": 1}), Case(name="b", kind="rejection",
                                                                              expect_error="NotFound")]
    fix = DebugFix(diagnosis="b expects the wrong error", fix="tests",
                   cases=[Case(name="b", kind="rejection", expect_error="InvalidInput"),
                          Case(name="c", kind="rejection", expect_error="Conflict")])
    fixture, patched = apply_fix(fix, {"book": []}, cases)
    assert fixture == {"book": []}
    assert [(c.name, c.expect_error) for c in patched] == [("a", None), ("b", "InvalidInput"), ("c", "Conflict")]


_BOOK = {"book_id": "BK-0001", "title": "Dune", "author": "Frank Herbert", "pages": 412, "status": "unread",
         "added_at": "2025-01-01T00:00:00"}


def _expand_one(setup: dict, **fields):
    db = DBSchema.model_validate({"tables": DATABASE["tables"]})
    case = Case(name="x", kind="rejection", setup=setup, expect_error="Conflict", **fields)
    return expand({"book": [dict(_BOOK)]}, [case], db)[0]


def test_a_setup_row_like_a_fixture_row_is_that_row_with_its_own_columns():
    test = _expand_one({"book": {"inserted": [
        {"like": "BK-0001", "book_id": "BK-0002", "status": "read", "pages": None},
        {"like": "BK-0002", "book_id": "BK-0003", "title": "Children of Dune"}]}})
    assert test.initial_state["book"] == [
        _BOOK,
        {**_BOOK, "book_id": "BK-0002", "status": "read", "pages": None},
        {**_BOOK, "book_id": "BK-0003", "status": "read", "pages": None, "title": "Children of Dune"}]


def test_a_fixture_row_like_an_earlier_one_is_that_row_with_its_own_columns():
    db = DBSchema.model_validate({"tables": DATABASE["tables"]})
    fixture = {"book": [dict(_BOOK), {"like": "BK-0001", "book_id": "BK-0002", "title": "Emma", "pages": None}]}
    case = Case(name="x", kind="rejection", expect_error="Conflict")
    assert expand(fixture, [case], db)[0].initial_state["book"] == [
        _BOOK, {**_BOOK, "book_id": "BK-0002", "title": "Emma", "pages": None}]
    later = {"book": [{"like": "BK-0002", "book_id": "BK-0003"}, dict(_BOOK, book_id="BK-0002")]}
    with pytest.raises(ValueError, match=r"the fixture has a book row like 'BK-0002', but no book row 'BK-0002' "
                                         r"before it \(the book keys before it: none\)"):
        expand(later, [case], db)


def test_a_like_that_names_no_row_is_refused_with_the_keys_there_are():
    with pytest.raises(ValueError, match=r"case 'x': .*like 'BK-0009'.*has a book row 'BK-0009' \(their book keys: "
                                         r"'BK-0001'\)"):
        _expand_one({"book": {"inserted": [{"like": "BK-0009", "book_id": "BK-0002"}]}})
    with pytest.raises(ValueError, match="written before it"):  # a row inserted after it does not count
        _expand_one({"book": {"inserted": [{"like": "BK-0003", "book_id": "BK-0002"},
                                           {"like": "BK-0001", "book_id": "BK-0003"}]}})
    with pytest.raises(ValueError, match="takes the primary key"):
        _expand_one({"book": {"inserted": [{"like": {"book_id": "BK-0001"}, "book_id": "BK-0002"}]}})


def test_a_like_row_must_give_its_own_key_and_like_is_for_setup_only():
    with pytest.raises(ValueError, match="without its own book_id"):
        _expand_one({"book": {"inserted": [{"like": "BK-0001", "status": "read"}]}})
    with pytest.raises(ValueError, match="fixture and setups only"):
        _expand_one({}, expect_changes={"book": {"inserted": [{"like": "BK-0001", "book_id": "BK-0002"}]}})


def test_a_bad_like_in_a_test_answer_is_re_asked_with_the_error(tmp_path):
    spec = DomainSpec.model_validate({
        "name": "reading_list", "description": "A reading list.", "tools": TOOLS, "db": {"tables": DATABASE["tables"]},
        "tool_tables": DATABASE["tool_tables"]})
    tool = spec.tool("mark_read")
    bad = {"fixture": {"book": [_BOOK]}, "done": True, "cases": [
        {"name": "already_read", "kind": "rejection", "arguments": {"book_id": "BK-0002"}, "expect_error": "Conflict",
         "setup": {"book": {"inserted": [{"like": "BK-0007", "book_id": "BK-0002", "status": "read"}]}}},
        {"name": "marks_read", "kind": "success", "arguments": {"book_id": "BK-0001"},
         "expect_return": {"book_id": "BK-0001", "status": "read"},
         "expect_changes": {"book": {"updated": {"BK-0001": {"status": "read"}}}}}]}
    good = json.loads(json.dumps(bad))
    good["cases"][0]["setup"]["book"]["inserted"][0]["like"] = "BK-0001"
    backend = CutOff({"tests/mark_read/0": bad, "tests/mark_read/0#1": good}, cut=set())
    fixture, cases = write_tests(LLM(backend, Transcript(tmp_path / "t.jsonl")), spec, tool)
    assert [name for name, _ in backend.asked] == ["tests/mark_read/0", "tests/mark_read/0#1"]
    assert "has a book row 'BK-0007'" in backend.asked[1][1]
    state = expand(fixture, cases, spec.db)[0].initial_state
    assert state["book"][1] == {**_BOOK, "book_id": "BK-0002", "status": "read"}
