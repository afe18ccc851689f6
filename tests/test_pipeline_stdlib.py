"""A model's tool code that formats and parses dates with the standard library (datetime.strftime
and strptime, which import `time` and `_strptime` lazily) verifies through the whole pipeline on
its first run: no debug round is spent on what the sandbox allows."""

from __future__ import annotations

import copy
import json

import pytest

from agents.build import Run, run_pipeline
from domains.db_runtime import DEFAULT_NOW
from llm import LLM, ScriptedBackend, StepKey, Transcript
from tests.support.scripted_domain import DATABASE, GET_BOOK, TOOLS, _page, _tests

ADD_BOOK = '''from datetime import datetime

from db import Book, InvalidInput, next_id, now


def add_book(session, title: str, author: str, pages: int | None = None) -> dict:
    if not title.strip():
        raise InvalidInput("title must not be empty")
    if pages is not None and pages < 1:
        raise InvalidInput("pages must be at least 1")
    moment = now(session)
    book = Book(book_id=next_id(session, Book), title=title, author=author, pages=pages, added_at=moment)
    session.add(book)
    session.flush()
    week = datetime.strptime(moment.strftime("%Y-%m-%d"), "%Y-%m-%d").strftime("%G-W%V")
    return {"book_id": book.book_id, "added_on": moment.strftime("%A %d %B %Y, %H:%M"), "week": week}
'''


def _answers() -> dict:
    tools = copy.deepcopy(TOOLS[:2])
    tools[0]["output"] += [{"name": "added_on", "type": "string"}, {"name": "week", "type": "string"}]
    names = [t["name"] for t in tools]
    cases = _tests()
    for case in cases["add_book"]:
        if case["kind"] == "success":  # the default clock, 2025-03-01T09:00:00, a Saturday
            case["expect_return"] = {**case["expect_return"], "added_on": "Saturday 01 March 2025, 09:00",
                                     "week": "2025-W09"}
    return {
        "schema/-/0": {"description": "A reading list.", "tools": [{"name": n, "summary": "s"} for n in names]},
        str(StepKey.batch("schema", names)): {"tools": tools},
        "database/-/0": {**copy.deepcopy(DATABASE), "tool_tables": {n: ["book"] for n in names}},
        str(StepKey.batch("code", names)): {"tools": [{"name": "add_book", "code": ADD_BOOK},
                                                      {"name": "get_book", "code": GET_BOOK}]},
        "tests/add_book/0": _page(cases["add_book"]),
        "tests/get_book/0": _page(cases["get_book"]),
    }


@pytest.mark.slow
def test_tool_code_that_uses_strftime_and_strptime_verifies_without_a_debug_round(tmp_path):
    assert DEFAULT_NOW == "2025-03-01T09:00:00"
    asked: list[str] = []

    class Counting(ScriptedBackend):
        def complete(self, key, turn, messages, **kwargs):
            asked.append(str(key))
            return super().complete(key, turn, messages)

    llm = LLM(Counting(_answers()), Transcript(tmp_path / "transcript.jsonl"))
    run_pipeline(Run("reading_list", tmp_path, llm, test_timeout=2.0))
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["tools"]["verified"] == ["add_book", "get_book"]
    assert report["debug"] == {"repaired": [], "attempts": 0}
    assert not [key for key in asked if key.startswith("debug/")]
    assert "strftime" in (tmp_path / "tools.py").read_text()
