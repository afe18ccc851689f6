"""Realistic distractors: the domain's vocabulary, its checks, and look-alikes proven orthogonal."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from domains.spec import DomainSpec
from graph.model import from_json
from llm import LLM, ScriptedBackend, Transcript
from mcp_servers.runtime import Environment
from tasks.build import Stage, build_task
from tasks.state import LOOKALIKES, check_state, distractors, lookalike_rows, merge
from tasks.vocabulary import Vocabulary, check_vocabulary, number_columns, text_columns, vocabulary_prompt

ROOT = Path(__file__).resolve().parent.parent
DOMAIN = ROOT / "domains" / "job_seeking"
SPEC = DomainSpec.model_validate_json((DOMAIN / "spec.json").read_text())
APP = {"application_id": "APP-0001", "applicant_name": "Ana Ruiz", "email": "ana@example.com", "job_title": "Data Engineer",
       "company_name": "Lumen", "status": "submitted", "created_at": "2025-02-10T10:00:00"}


def _answer() -> dict:
    """A complete answer: a provider for people's names and emails, four values elsewhere."""
    texts, ranges = {}, {}
    for table in SPEC.db.tables:
        for col in text_columns(table):
            key = f"{table.name}.{col.name}"
            if col.name.endswith("email"):
                texts[key] = {"provider": "email"}
            elif col.name == "applicant_name":
                texts[key] = {"provider": "name"}
            else:
                texts[key] = {"values": [f"{col.name} {n}"[: col.max_length or None] for n in "ABCD"]}
        for col in number_columns(table):
            low = col.minimum if col.minimum is not None else 1
            high = col.maximum if col.maximum is not None else low + 10
            ranges[f"{table.name}.{col.name}"] = [low, min(high, low + 10)]
    return {"texts": texts, "ranges": ranges}


def test_the_prompt_lists_every_free_form_and_numeric_column():
    prompt = vocabulary_prompt(SPEC)
    assert "- job_application.job_title: string" in prompt and "- job_application.priority_level: integer" in prompt
    assert "job_application.status" not in prompt  # a status has its allowed values already


def test_a_vocabulary_is_refused_for_a_missing_column_a_long_value_or_an_unknown_provider():
    good = _answer()
    check_vocabulary(SPEC, Vocabulary.model_validate(good))
    missing = {**good, "texts": {k: v for k, v in good["texts"].items() if k != "job_application.job_title"}}
    with pytest.raises(ValueError, match="job_application.job_title: missing"):
        check_vocabulary(SPEC, Vocabulary.model_validate(missing))
    key = next(k for k in good["texts"] if k.startswith("job_application.") and "values" in good["texts"][k])
    limit = next(c.max_length for c in SPEC.db.table("job_application").columns if c.name == key.split(".")[1])
    long = {**good, "texts": {**good["texts"], key: {"values": ["x" * (limit + 1), "a", "b", "c"]}}}
    with pytest.raises(ValueError, match="longer than"):
        check_vocabulary(SPEC, Vocabulary.model_validate(long))
    wrong = {**good, "texts": {**good["texts"], "job_application.applicant_name": {"provider": "lorem"}}}
    with pytest.raises(ValueError, match="provider 'lorem'"):
        check_vocabulary(SPEC, Vocabulary.model_validate(wrong))


def test_distractors_draw_from_the_vocabulary_and_stay_schema_valid():
    vocabulary = Vocabulary.model_validate(_answer())
    core = {"job_application": [APP]}
    groups = distractors(SPEC.db, core, 1, 7, date(2025, 3, 1), vocabulary=vocabulary)
    assert check_state(SPEC.db, merge(core, *groups)) == []
    titles = {r.get("job_title") for g in groups for r in g.get("job_application", [])}
    assert titles - {None} <= set(vocabulary.texts["job_application.job_title"].values)
    priorities = {r.get("priority_level") for g in groups for r in g.get("job_application", [])} - {None}
    low, high = vocabulary.ranges["job_application.priority_level"]
    assert priorities and all(low <= p <= high for p in priorities)
    assert lookalike_rows(SPEC.db, core, groups) == 0  # none at level 1


def test_higher_levels_add_look_alikes_of_the_tasks_own_rows():
    vocabulary = Vocabulary.model_validate(_answer())
    core = {"job_application": [APP]}
    groups = distractors(SPEC.db, core, 3, 7, date(2025, 3, 1), vocabulary=vocabulary)
    assert check_state(SPEC.db, merge(core, *groups)) == []
    same_name = [r for g in groups for r in g.get("job_application", []) if r["applicant_name"] == "Ana Ruiz"]
    assert LOOKALIKES[3] <= len(same_name) == lookalike_rows(SPEC.db, core, groups)
    assert all(r["application_id"] != "APP-0001" for r in same_name)


@pytest.mark.slow
def test_a_look_alike_that_is_kept_is_proven_orthogonal_by_execution():
    """Level 3: look-alikes share the applicant's name; the ones kept leave the program's effect as
    it was, and the task still replays to reward 1 and scores below 1 untouched."""
    priority = ('app = call("search_apps_by_keyword", keyword="Lumen")["applications"][0]\n'
                'call("set_application_priority", application_id=app["application_id"], priority_level=4)\n')
    answers = {"tasks/t.chain/0": {"goal": "priority", "code": priority},
               "tasks/t.state/0": {"rows": {"job_application": [APP]}},
               "tasks/t.instruction/0": {"draft": "Set my Lumen application to priority 4.",
                                         "instruction": "Make my Lumen data engineer application a priority 4.",
                                         "user_profile": {"name": "Ana Ruiz", "known_info": ["Lumen", "4"]}},
               **{f"tasks/t.gate/{n}": {"p": 0.2, "reason": "saturated"} for n in range(3)}}
    seen: dict[str, str] = {}

    class Seen(ScriptedBackend):
        def complete(self, key, turn, messages, **options):
            seen[str(key)] = messages[-1]["content"]
            return super().complete(key, turn, messages, **options)

    llm = LLM(Seen(answers), Transcript(Path("/dev/null")), max_reasks=0)
    graph = from_json((DOMAIN / "graph.json").read_text())
    with Environment(DOMAIN, workers=1) as env:
        stage = Stage(SPEC, graph, llm, env, log=lambda _m: None, vocabulary=Vocabulary.model_validate(_answer()))
        task = build_task(stage, "t", 2, 1)
    assert task.metadata.complexity_level == 3 and task.metadata.lookalike_rows > 0
    assert task.metadata.reward_before < 1.0
    rows = task.initial_state["job_application"]
    assert sum(r["applicant_name"] == "Ana Ruiz" for r in rows) > 1
    # the instruction's writer is shown them, to say what tells the user's own apart
    shown = seen["tasks/t.instruction/0"].split("Other records share a name or title")[1]
    assert shown.count('"applicant_name": "Ana Ruiz"') == min(task.metadata.lookalike_rows, 8)


def test_a_unique_column_takes_each_vocabulary_value_once_and_never_the_tasks_own():
    from domains.spec import Column, DBSchema, Table
    schema = DBSchema(tables=[Table(name="clinic", id_prefix="CLN", columns=[
        Column(name="clinic_id", type="string", primary_key=True, nullable=False),
        Column(name="name", type="string", unique=True, nullable=False, max_length=80)])])
    names = ["All Creatures Pet Hospital", "Northside Emergency Vets", "Maple Street Animal Clinic", "Harbor Vet"]
    vocabulary = Vocabulary(texts={"clinic.name": {"values": names}}, ranges={})
    core = {"clinic": [{"clinic_id": "CLN-0001", "name": names[0]}]}
    groups = distractors(schema, core, 3, 7, date(2025, 3, 1), vocabulary=vocabulary)
    state = merge(core, *groups)
    assert check_state(schema, state) == [] and len(state["clinic"]) == 11
    drawn = [r["name"] for r in state["clinic"][1:]]
    assert names[0] not in drawn and set(names[1:]) <= set(drawn)
