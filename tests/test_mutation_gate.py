"""The pipeline's mutation gate, driven by scripted answers: a surviving mutant that gets a killing
case, one argued equivalent, and one whose proposed case fails on the real code, so it is left
surviving and reported."""

from __future__ import annotations

import json

import pytest

from agents.build import Run, run_pipeline
from llm import LLM, ScriptedBackend, Transcript
from tests.support.scripted_domain import answers

pytestmark = pytest.mark.slow  # the module builds a domain through the pipeline with its gate

ONE_PAGE = {"name": "one_page_is_enough", "kind": "success", "arguments": {"title": "Leaflet", "author": "Anon", "pages": 1},
            "expect_return": {"book_id": "BK-0002"},
            "expect_changes": {"book": {"inserted": [{"book_id": "BK-0002", "title": "Leaflet", "author": "Anon", "pages": 1,
                                                      "status": "unread", "added_at": "2025-03-01T09:00:00"}]}}}
# Wrong: a limit of 1 is valid, so the real code fails this case and the parent refuses it (it would
# have "killed" both survivors).
WRONG = {"name": "limit_one_is_refused", "kind": "rejection", "arguments": {"limit": 1}, "expect_error": "InvalidInput"}

GATE = {
    "mutants/add_book/0": {"cases": [ONE_PAGE]},
    "mutants/mark_read/0": {"equivalent": [{"mutant": 2, "reason": "the row came from the session (get_or_raise), "
                                                             "so it is tracked and flushed without add"}]},
    "mutants/export_list/0": {"cases": [WRONG]},
    "mutants/export_list/1": {"cases": []},
}


@pytest.fixture(scope="module")
def gated(tmp_path_factory):
    out = tmp_path_factory.mktemp("gated")
    llm = LLM(ScriptedBackend({**answers(), **GATE}), Transcript(out / "transcript.jsonl"))
    run_pipeline(Run("reading_list", out, llm, test_timeout=0.5, mutation_rounds=2))
    return out, json.loads((out / "report.json").read_text())


def test_a_case_that_kills_survivors_joins_the_tool_tests(gated):
    out, report = gated
    add_book = report["mutation"]["tools"]["add_book"]
    assert add_book["score_before"] < 1.0 and add_book["score"] == 1.0
    assert add_book["added_cases"] == ["one_page_is_enough"]
    written = [t["name"] for t in json.loads((out / "tests" / "add_book.json").read_text())]
    assert "one_page_is_enough" in written


def test_an_argued_equivalent_mutant_is_recorded_with_its_reason_and_not_counted(gated):
    _, report = gated
    mark_read = report["mutation"]["tools"]["mark_read"]
    assert list(mark_read["equivalent"]) == ["2"] and "session" in mark_read["equivalent"]["2"]
    assert mark_read["score"] == 1.0 and mark_read["survived"] == []


def test_a_case_failing_on_the_real_code_is_refused_and_the_mutant_reported(gated):
    out, report = gated
    export = report["mutation"]["tools"]["export_list"]
    assert export["refused_cases"] == ["limit_one_is_refused"] and export["added_cases"] == []
    assert len(export["survived"]) == 2 and export["score"] < 1.0
    assert "limit_one_is_refused" not in [t["name"] for t in json.loads((out / "tests" / "export_list.json").read_text())]


def test_the_domain_score_counts_every_tool_and_the_gate_shows_in_tokens(gated):
    _, report = gated
    mutation = report["mutation"]
    assert set(mutation["tools"]) == set(report["tools"]["verified"])
    assert mutation["equivalent"] == 1
    assert mutation["killed"] == sum(t["killed"] for t in mutation["tools"].values())
    assert 0 < mutation["score"] < 1
    assert report["tokens"]["stages"]["mutants"]["completion"] > 0
