"""`python -m tasks NAME --model M` run again after an interruption pays for nothing twice;
`--fresh` asks again, and `--oracle executed` decides g(D) without a request."""

from __future__ import annotations

import json
import shutil

import pytest

import tasks.__main__ as tasks_cli
from domains.registry import ROOT_ENV
from llm import ScriptedBackend
from tests.support.domain_copies import SOURCE, copy_domain
from tests.test_tasks_vocabulary import _answer

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]


class Counting(ScriptedBackend):
    def __init__(self, answers):
        super().__init__(answers)
        self.asked: list[str] = []

    def complete(self, key, turn, messages, **options):
        self.asked.append(f"{key}#{turn}")
        return super().complete(key, turn, messages, **options)


def _answers() -> dict:
    recorded = [json.loads(line) for line in (SOURCE / "tasks" / "transcript.jsonl").read_text().splitlines()]
    return {"tasks/vocabulary/0": _answer(),
            **{e["key"]: e["response"] for e in recorded if e["key"].startswith(("tasks/task_001.", "tasks/task_002."))}}


def _run(monkeypatch, *extra: str) -> Counting:
    backend = Counting(_answers())
    monkeypatch.setattr(tasks_cli, "backend_for", lambda _model: backend)
    assert tasks_cli.main(["jobs", "--model", "scripted", "--n", "2", "--oracle", "executed", *extra]) == 0
    return backend


def test_a_rerun_reuses_every_recorded_answer_and_fresh_asks_again(tmp_path, monkeypatch):
    folder = copy_domain(tmp_path, "jobs", tasks=0)
    shutil.copy(SOURCE / "graph.json", folder / "graph.json")
    monkeypatch.setenv(ROOT_ENV, str(tmp_path))

    first = _run(monkeypatch)
    assert first.asked[0] == "tasks/vocabulary/0#0"  # the domain's vocabulary, once, before any task
    assert not any(".oracle" in k for k in first.asked)  # g(D) by the executed search
    built = {p.name: p.read_bytes() for p in (folder / "tasks").glob("task_*.json")}
    assert built

    again = _run(monkeypatch)
    assert again.asked == []
    assert {p.name: p.read_bytes() for p in (folder / "tasks").glob("task_*.json")} == built

    fresh = _run(monkeypatch, "--fresh")
    assert fresh.asked == first.asked


def test_a_replay_runs_with_the_recorded_settings(tmp_path, monkeypatch):
    """A task stage recorded with --n 2 replays offline with no option given, to the same files."""
    folder = copy_domain(tmp_path, "jobs", tasks=0)
    shutil.copy(SOURCE / "graph.json", folder / "graph.json")
    monkeypatch.setenv(ROOT_ENV, str(tmp_path))
    _run(monkeypatch)
    built = {p.name: p.read_bytes() for p in (folder / "tasks").glob("*.json")}
    assert json.loads(built["index.json"])["settings"]["n"] == 2
    assert tasks_cli.main(["jobs"]) == 0  # no model: replayed, as `make universe` does
    assert {p.name: p.read_bytes() for p in (folder / "tasks").glob("*.json")} == built
