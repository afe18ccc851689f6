"""Levels calibrated by a model's measured solve rate (tasks/calibrate.py): a scripted agent's eval
run re-levels the tasks it played and, with CodeGym's keep rule, drops those it solves too often;
the calibrated stage replays offline to the same bytes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from domains.registry import ROOT_ENV
from domains.task_model import Task
from llm import LLM, ScriptedBackend, Transcript
from rollouts import STOP
from rollouts.evaluate import EvalConfig, evaluate
from rollouts.record import record
from tasks.calibrate import Calibration, CalibrationError, calibrate, from_report, level_for, solve_rates
from tests.test_task_families import GATES, family

ROOT = Path(__file__).resolve().parent.parent
DOMAIN = ROOT / "domains" / "job_seeking"


def bundled(task_id: str) -> Task:
    return Task.model_validate_json((DOMAIN / "tasks" / f"{task_id}.json").read_text())


def test_a_solve_rate_sets_the_level_and_the_keep_rule_drops_what_is_solved_too_often():
    assert [level_for(r) for r in (1.0, 0.75, 0.5, 0.34, 0.25, 0.0)] == [1, 1, 2, 2, 3, 3]
    easy, hard, unplayed = bundled("task_003"), bundled("task_001"), bundled("task_002")
    rates = {easy.id: 0.75, hard.id: 0.25}
    dropped: dict[str, list[str]] = {}
    out = calibrate([easy, hard, unplayed], Calibration(run="r", rates=rates), dropped)
    assert [(t.id, t.metadata.complexity_level, t.metadata.solve_rate, t.metadata.structural_level) for t in out] == [
        (easy.id, 1, 0.75, easy.metadata.complexity_level), (hard.id, 3, 0.25, hard.metadata.complexity_level),
        (unplayed.id, unplayed.metadata.complexity_level, None, None)]
    assert dropped == {}
    kept = calibrate([easy, hard, unplayed], Calibration(run="r", rates=rates, keep_at_most=0.25), dropped)
    assert [t.id for t in kept] == [hard.id, unplayed.id] and dropped == {"calibration:solved": [easy.id]}


def test_a_report_that_is_not_an_eval_runs_is_a_clear_error(tmp_path):
    with pytest.raises(CalibrationError, match="per_task"):
        solve_rates({"tasks": 3})
    (tmp_path / "report.json").write_text("not json")
    with pytest.raises(CalibrationError, match="cannot read the run report"):
        from_report(tmp_path / "report.json")


def scripted(task: Task, solves: bool) -> dict:
    """A scripted agent's answers for one task: the reference calls then done, or giving up at once."""
    key = f"{task.id}@0"
    answers = {f"user/{key}/0": {"message": task.instruction}, f"user/{key}/1": {"message": STOP}}
    calls = task.reference_solution if solves else []
    for n, call in enumerate(calls):
        answers[f"agent/{key}/{n}"] = {"tool_calls": [{"name": call.tool, "arguments": call.arguments}]}
    answers[f"agent/{key}/{len(calls)}"] = {"content": "Done." if solves else "Sorry, I cannot do that."}
    return answers


@pytest.mark.slow
def test_an_eval_run_of_a_scripted_agent_calibrates_the_stage_which_replays_the_same(tmp_path, monkeypatch):
    import tasks.__main__ as stage_main
    out = tmp_path / "domains" / "job_seeking"
    shutil.copytree(DOMAIN, out, ignore=shutil.ignore_patterns("tasks", "tests", "rollouts"))
    monkeypatch.setenv(ROOT_ENV, str(out.parent))
    # g(D) by the executed search and no vocabulary, as when job_seeking was recorded
    monkeypatch.setattr(stage_main, "oracle_for", lambda llm, env: None)
    monkeypatch.setattr(stage_main, "recorded_or_asked", lambda llm, spec: None)
    path = out / "tasks" / "transcript.jsonl"
    path.parent.mkdir()
    recording = LLM(ScriptedBackend({**GATES, "tasks/fam_001.family/0": family()}), Transcript(path))
    stage_main.run_stage(out, recording, n=0, families=1, instances=3, log=lambda _m: None)
    recording.transcript.save()
    drawn = {p.stem: Task.model_validate_json(p.read_text()) for p in sorted((out / "tasks").glob("fam_*.json"))}
    assert sorted(drawn) == ["fam_001_1", "fam_001_2", "fam_001_3"]

    # the scripted agent solves the first instance every time and never the second; the third is not played
    record(out, {**scripted(drawn["fam_001_1"], True), **scripted(drawn["fam_001_2"], False)})
    run_dir, summary = evaluate(EvalConfig(domain=str(out), agent="replay", k=2, runs_dir=tmp_path / "runs"))
    assert {t: row["successes"] for t, row in summary["per_task"].items()} == {"fam_001_1": 2, "fam_001_2": 0}
    assert set(summary["by_level"]) == {str(drawn[t].metadata.complexity_level) for t in ("fam_001_1", "fam_001_2")}

    assert stage_main.main(["job_seeking", "--calibrate", str(run_dir / "report.json"), "--keep-at-most", "0.25"]) == 0
    index = json.loads((out / "tasks" / "index.json").read_text())
    assert [t["id"] for t in index["tasks"]] == ["fam_001_2", "fam_001_3"]  # solved in 100% > 25%: dropped
    assert index["dropped"] == {"calibration:solved": ["fam_001_1"]}
    hard = Task.model_validate_json((out / "tasks" / "fam_001_2.json").read_text())
    assert (hard.metadata.complexity_level, hard.metadata.solve_rate) == (3, 0.0)
    assert hard.metadata.structural_level == drawn["fam_001_2"].metadata.complexity_level != 3
    assert Task.model_validate_json((out / "tasks" / "fam_001_3.json").read_text()) == drawn["fam_001_3"]  # unplayed
    assert index["summary"]["calibration"] == {"run": run_dir.name, "keep_at_most": 0.25, "measured": 1,
                                               "relevelled": 1, "dropped": 1}
    assert index["summary"]["families"]["by_family"]["fam_001"]["instances"] == 2
    assert index["settings"]["calibration"]["rates"] == {"fam_001_1": 1.0, "fam_001_2": 0.0}
    assert f"levels calibrated by eval run `{run_dir.name}`" in (out / "tasks" / "README.md").read_text()

    # the replay is told nothing: the recorded rates calibrate it the same way, without the run folder
    written = {p.name: p.read_bytes() for p in sorted((out / "tasks").iterdir())}
    shutil.rmtree(tmp_path / "runs")
    assert stage_main.main(["job_seeking"]) == 0
    assert {p.name: p.read_bytes() for p in sorted((out / "tasks").iterdir())} == written
