"""The foundation pipeline driven by scripted model answers: every agent and every failure path."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agents.answers import ToolCode
from agents.build import Run, run_pipeline
from agents.code_agent import code_groups
from llm import LLM, LLMError, MissingStep, ScriptedBackend, StepKey, Transcript
from tests.support.scripted_domain import answers, reading_list
from verification.procedural import check_integrity, check_tool, open_domain, tool_names

ROOT = Path(__file__).resolve().parent.parent


def build(out: Path, llm: LLM, **kwargs) -> dict:
    run_pipeline(Run("reading_list", out, llm, test_timeout=0.5, **kwargs))
    return json.loads((out / "report.json").read_text())


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    out = tmp_path_factory.mktemp("recorded")
    llm = LLM(ScriptedBackend(answers()), Transcript(out / "transcript.jsonl"))
    report = build(out, llm)
    llm.transcript.save()
    return out, report


@pytest.mark.slow
def test_tools_that_pass_are_verified_and_repairs_are_reported(recorded):
    _, report = recorded
    assert report["tools"]["verified"] == ["add_book", "export_list", "get_book", "mark_read"]
    assert report["debug"]["repaired"] == ["add_book", "export_list", "mark_read"]
    # add_book 1 + mark_read 1 + export_list 2 + count_books 3 (budget exhausted)
    assert report["debug"]["attempts"] == 7


@pytest.mark.slow
def test_a_hanging_tool_is_timed_out_and_dropped_after_its_debug_budget(recorded):
    _, report = recorded
    assert report["tools"]["dropped"] == ["count_books"]
    assert "Timeout" in report["dropped_reasons"]["count_books"]


@pytest.mark.slow
def test_malformed_and_schema_invalid_answers_are_re_asked(recorded):
    _, report = recorded
    assert report["validation_reasks"] == ["database/-/0#0", "schema/-/0#0", "tests/export_list/0#0"]


@pytest.mark.slow
def test_database_agent_output_is_filtered_to_tables_tools_use(recorded):
    out, report = recorded
    spec = json.loads((out / "spec.json").read_text())
    assert [t["name"] for t in spec["db"]["tables"]] == ["book"]
    assert report["tables"] == 1


@pytest.mark.slow
def test_tokens_are_counted_per_stage(recorded):
    _, report = recorded
    stages = report["tokens"]["stages"]
    assert set(stages) == {"schema", "database", "code", "tests", "debug"}
    assert all(v["prompt"] > 0 and v["completion"] > 0 for v in stages.values())
    assert report["tokens"]["total"]["total"] == sum(v["prompt"] + v["completion"] for v in stages.values())


@pytest.mark.slow
def test_written_domain_passes_its_own_procedural_tests(recorded):
    out, _ = recorded
    assert tool_names(out) == ["add_book", "export_list", "get_book", "mark_read"]
    with open_domain(out) as box:
        check_integrity(box, out)
        for tool in tool_names(out):
            check_tool(box, out, tool)


@pytest.mark.slow
def test_replay_regenerates_the_same_bytes(recorded, tmp_path):
    out, _ = recorded
    (tmp_path / "transcript.jsonl").write_bytes((out / "transcript.jsonl").read_bytes())
    llm = LLM(None, Transcript(tmp_path / "transcript.jsonl"))
    build(tmp_path, llm)
    assert llm.changed_prompts == []
    for path in sorted(p for p in out.rglob("*") if p.is_file() and "timings" not in p.name):
        assert (tmp_path / path.relative_to(out)).read_bytes() == path.read_bytes(), path.name


@pytest.mark.slow
def test_an_interrupted_run_resumes_without_redoing_finished_tools(tmp_path):
    calls: list[str] = []

    class Counting(ScriptedBackend):
        def complete(self, key, turn, messages):
            calls.append(str(key))
            return super().complete(key, turn, messages)

    class Crashing(Run):
        def build_tools(self, task):
            if "mark_read" in task["tools"] and not getattr(self, "crashed", False):
                self.crashed = True
                raise KeyboardInterrupt  # the process is stopped mid-run
            return super().build_tools(task)

    backend = Counting(answers())
    transcript = Transcript(tmp_path / "transcript.jsonl")
    with pytest.raises(KeyboardInterrupt):
        run_pipeline(Crashing("reading_list", tmp_path, LLM(backend, transcript),
                              concurrency=1, test_timeout=0.5))
    first = list(calls)
    assert "schema/-/0" in first
    calls.clear()
    report = build(tmp_path, LLM(backend, transcript), concurrency=1)
    assert "schema/-/0" not in calls and "database/-/0" not in calls  # earlier stages come from the checkpoint
    group = next(names for names in code_groups(reading_list()) if "mark_read" in names)
    assert str(StepKey.batch("code", group)) in calls  # the group the crash stopped is asked again
    rebuilt = {c.split("/")[1] for c in calls if c.startswith(("code/", "tests/"))}
    finished_before = {c.split("/")[1] for c in first if c.startswith("tests/")}
    assert not rebuilt & finished_before  # tools built before the crash are not built again
    assert "mark_read" in report["tools"]["verified"]


def test_structured_output_is_re_asked_until_the_budget_then_fails(tmp_path):
    llm = LLM(ScriptedBackend({"code/x/0": "nope", "code/x/0#1": {"code": "def x(:"}, "code/x/0#2": {"code": "pass"}}),
              Transcript(tmp_path / "t.jsonl"))
    assert llm.structured(StepKey("code", "x"), "sys", "prompt", ToolCode).code == "pass"
    assert llm.reasks == ["code/x/0#0", "code/x/0#1"]
    stubborn = LLM(ScriptedBackend({f"code/y/0#{i}" if i else "code/y/0": "nope" for i in range(3)}),
                   Transcript(tmp_path / "u.jsonl"))
    with pytest.raises(LLMError, match="no valid answer"):
        stubborn.structured(StepKey("code", "y"), "sys", "prompt", ToolCode)


def test_replay_is_keyed_by_step_and_reports_changed_prompts(tmp_path):
    path = tmp_path / "t.jsonl"
    recorder = LLM(ScriptedBackend({"code/x/0": {"code": "pass"}}), Transcript(path))
    recorder.structured(StepKey("code", "x"), "sys", "original wording", ToolCode)
    recorder.transcript.save()
    replay = LLM(None, Transcript(path))
    assert replay.structured(StepKey("code", "x"), "sys", "reworded prompt", ToolCode).code == "pass"
    assert replay.changed_prompts == ["code/x/0"]
    with pytest.raises(MissingStep):
        replay.structured(StepKey("code", "other"), "sys", "p", ToolCode)


def _cli(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    env.pop("MODEL", None)
    return subprocess.run([sys.executable, "-m", "pipeline", *args], cwd=ROOT, env=env, capture_output=True, text=True)


@pytest.mark.parametrize("name", ["../x", "a b", "", "Job", "x/y"])
def test_cli_refuses_names_that_are_not_identifiers(name):
    before = sorted(p.name for p in (ROOT / "domains").iterdir())
    result = _cli(name)
    assert result.returncode == 2
    assert "not a valid domain name" in result.stderr
    assert sorted(p.name for p in (ROOT / "domains").iterdir()) == before


def test_cli_unknown_domain_without_model_exits_2_and_says_how_to_configure():
    result = _cli("restaurant_booking")  # a keyword no bundled domain has
    assert result.returncode == 2
    assert "MODEL" in result.stderr and "API_BASE" in result.stderr
    assert not (ROOT / "domains" / "restaurant_booking").exists()


def test_a_real_model_is_called_through_litellm_with_retries_and_recorded(tmp_path, monkeypatch):
    import litellm

    from llm import backends, roles

    calls = []

    def completion(**kwargs):
        calls.append(kwargs)
        if len(calls) == 1:
            raise litellm.exceptions.RateLimitError("slow down", llm_provider="openai", model=kwargs["model"])
        return litellm.ModelResponse(choices=[{"message": {"role": "assistant", "content": '{"code": "pass"}'}}],
                                     usage={"prompt_tokens": 11, "completion_tokens": 3, "total_tokens": 14})

    monkeypatch.setattr(litellm, "completion", completion)
    monkeypatch.setattr(backends.time, "sleep", lambda _s: None)
    llm = LLM(roles.backend_for("openai/gpt-4.1"), Transcript(tmp_path / "t.jsonl"))
    assert llm.structured(StepKey("code", "x"), "sys", "prompt", ToolCode).code == "pass"
    assert len(calls) == 2 and calls[1]["model"] == "openai/gpt-4.1"
    entry = llm.transcript.get("code/x/0")
    assert entry["model"] == "openai/gpt-4.1" and entry["usage"] == {"prompt_tokens": 11, "completion_tokens": 3}
    assert llm.transcript.tokens()["stages"]["code"] == {"prompt": 11, "completion": 3}


def test_a_tool_table_map_naming_an_unknown_table_is_re_asked_with_the_error(tmp_path):
    from agents.database_agent import design_database
    from domains.spec import ToolSchema
    from tests.support.scripted_domain import DATABASE, TOOLS

    slip = {**DATABASE, "tool_tables": {**DATABASE["tool_tables"], "get_book": ["books"]}}
    asked: list[str] = []

    class Recording(ScriptedBackend):
        def complete(self, key, turn, messages, **kwargs):
            asked.append(messages[-1]["content"])
            return super().complete(key, turn, messages)

    llm = LLM(Recording({"database/-/0": slip, "database/-/0#1": DATABASE}), Transcript(tmp_path / "t.jsonl"))
    db, mapping = design_database(llm, "reading_list", [ToolSchema.model_validate(t) for t in TOOLS])
    assert mapping["get_book"] == ["book"] and llm.reasks == ["database/-/0#0"]
    assert "unknown table 'books'" in asked[1]


def test_a_transcript_line_cut_short_by_a_kill_is_dropped_and_asked_again(tmp_path, capsys):
    path = tmp_path / "transcript.jsonl"
    whole = json.dumps({"key": "schema/-/0", "stage": "schema", "response": "{}"})
    path.write_text(whole + "\n" + whole.replace("schema/-/0", "database/-/0")[:25])
    transcript = Transcript(path)
    assert list(transcript.entries) == ["schema/-/0"]
    assert "cut short" in capsys.readouterr().err
    transcript.put({"key": "database/-/0", "stage": "database", "response": "{}"})
    assert sorted(Transcript(path).entries) == ["database/-/0", "schema/-/0"]  # appended after a whole line
    path.write_text("{not json\n" + whole + "\n")
    with pytest.raises(LLMError, match="damaged"):
        Transcript(path)
