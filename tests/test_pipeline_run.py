"""The orchestrator (pipeline/run.py): the stages in order, and a build stopped at the graph
resumed there without building a tool again."""

from __future__ import annotations

import json

import pytest

from agents.build import Run, checkpoint_path
from llm import LLM, ScriptedBackend, Transcript
from pipeline.run import build_domain
from tests.support.scripted_domain import answers

# Every tool of the scripted domain connected, so the refinement is accepted as it stands.
GRAPH_ANSWER = {"add": [{"producer": "add_book", "consumer": other, "dimension": "state",
                         "reason": f"{other} reads the book add_book writes"}
                        for other in ("export_list", "get_book", "mark_read")]}


class Counting(ScriptedBackend):
    def __init__(self, answers: dict, calls: list[str]):
        super().__init__(answers)
        self.calls = calls

    def complete(self, key, turn, messages):
        self.calls.append(str(key))
        return super().complete(key, turn, messages)


@pytest.mark.slow
def test_a_build_stopped_at_the_graph_resumes_there_without_building_a_tool_again(tmp_path):
    script, calls = answers(), []
    transcript = Transcript(tmp_path / "transcript.jsonl")
    stopped = build_domain(Run("reading_list", tmp_path, LLM(Counting(script, calls), transcript), test_timeout=0.5))
    assert stopped == 1  # no answer for the graph step
    assert checkpoint_path(tmp_path).exists() and not (tmp_path / "graph.json").exists()
    assert any(c.startswith("code/") for c in calls)

    calls.clear()
    script["graph/-/0"] = GRAPH_ANSWER
    code = build_domain(Run("reading_list", tmp_path, LLM(Counting(script, calls), transcript), test_timeout=0.5))
    assert code == 0 and calls == ["graph/-/0"]
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["graph"]["tools"] == 4 and report["graph"]["edges"]["llm"] >= 1
    assert report["tokens"]["stages"]["graph"]["prompt"] > 0  # the graph's requests are counted with the rest
    assert (tmp_path / "graph.json").exists() and (tmp_path / "report.md").exists()
    assert not checkpoint_path(tmp_path).exists()
    timings = json.loads((tmp_path / "timings.json").read_text())
    assert {"schema", "database", "graph"} <= set(timings["stages"])
