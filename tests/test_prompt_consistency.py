"""Prompts carry what the model must stay consistent with: what earlier answers wrote, the episode
clock, the policy's initial values, what argument validation already guarantees."""

from __future__ import annotations

import pytest

from agents import schema_agent
from domains.db_runtime import DEFAULT_NOW
from llm import LLM, ScriptedBackend, Transcript
from tests.support.scripted_domain import TOOLS


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
