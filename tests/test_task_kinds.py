"""Answer and refusal tasks: built without a model on job_seeking's sample state, served in a copy of
the domain, and played by scripted agents; the facts rules; the task file stays as it was for
change tasks."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from pydantic import ValidationError

from domains.spec import DomainSpec
from domains.task_model import Task, ToolCall
from mcp_servers.runtime import Environment
from rollouts import AgentAction, ForbiddenAgent, NoopAgent, ReferenceAgent, run_task
from rollouts import ToolCall as Call
from rollouts.__main__ import main
from tasks.answers import answer_task
from tasks.build import Dropped
from tasks.kinds import derive
from tasks.refusals import refusal_task
from tests.support.rollouts_tasks import write_domain
from verification.reward.facts import states

ROOT = Path(__file__).resolve().parent.parent
DOMAIN = ROOT / "domains" / "job_seeking"
SPEC = DomainSpec.model_validate_json((DOMAIN / "spec.json").read_text())
SAMPLE = json.loads((DOMAIN / "sample_state.json").read_text())
STRIPE = "APP-0001"  # the sample state's Stripe application, interviewing
READS = [ToolCall(tool="get_application_details", arguments={"application_id": STRIPE}),
         ToolCall(tool="get_application_interviews", arguments={"application_id": STRIPE})]


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """An answer and a refusal task built from the sample state, served in a copy of job_seeking."""
    with Environment(DOMAIN, workers=1) as env:
        answer = answer_task(env, SPEC, "answer_stripe", SAMPLE, READS, seed=3, level=2)
        refusal = refusal_task(env, SPEC, "refusal_stripe", SAMPLE,
                               ToolCall(tool="submit_application", arguments={"application_id": STRIPE}), seed=1)
    tasks = {t.id: t.model_dump(mode="json", exclude_none=True) for t in (answer, refusal)}
    folder = write_domain(tmp_path_factory.mktemp("kinds"), tasks)
    with Environment(folder, workers=1) as env:
        yield env, answer, refusal, folder


class Says:
    """Reads with the reference calls (given to it), then tells the user `message`; `extra` calls come first."""

    name, needs_reference = "says", True

    def __init__(self, message: str, extra: list[Call] = ()):
        self.message, self.extra = message, list(extra)

    async def act(self, view, messages):
        done = sum(1 for m in messages if m["role"] == "tool")
        plan = self.extra + [Call(name=c["tool"], arguments=c["arguments"]) for c in view.reference]
        if done < len(plan):
            return AgentAction(tool_calls=[plan[done]]), {}
        return AgentAction(content=self.message, stop=True), {}


def test_an_answer_task_holds_facts_read_from_the_executed_outputs(served):
    env, answer, _, _ = served
    assert answer.kind == "answer" and answer.mode == "single_turn" and len(answer.facts) == 2
    assert [f.source.split(":")[0] for f in answer.facts] == ["1.get_application_details", "2.get_application_interviews"]
    assert STRIPE not in answer.instruction and "Stripe" not in [f.value for f in answer.facts]
    with env.create_episode(state=SAMPLE) as episode:
        outputs = [json.dumps(episode.call(c.tool, c.arguments).result) for c in READS]
    for fact in answer.facts:  # each fact is a value an output holds
        assert any(states(text, fact.value, fact.type) for text in outputs)


def test_an_answer_task_earns_1_only_when_the_final_message_states_every_fact(served):
    env, answer, _, _ = served
    every = "; ".join(f"{f.label}: {f.value}" for f in answer.facts)
    all_but_one = "; ".join(f"{f.label}: {f.value}" for f in answer.facts[1:])
    assert run_task(env, answer.id, Says(every)).reward == 1.0
    assert run_task(env, answer.id, ReferenceAgent()).reward == 1.0
    partial = run_task(env, answer.id, Says(all_but_one))
    assert partial.reward == pytest.approx(1 / 2) and not partial.passed
    assert run_task(env, answer.id, NoopAgent()).reward == 0.0
    # every fact stated, but the state changed on the way: below 1
    bump = Call(name="set_application_priority", arguments={"application_id": STRIPE, "priority_level": 2})
    changed = run_task(env, answer.id, Says(every, [bump]))
    assert 0 < changed.reward < 1.0
    assert {item["kind"] for item in changed.reward_breakdown["breakdown"]} == {"fact", "unexpected_update"}


def test_a_refusal_task_earns_1_on_no_change_and_less_for_the_forbidden_call(served):
    env, _, refusal, _ = served
    rule = refusal.policy_rule
    assert rule.kind == "status_table" and rule.tool == "submit_application" and rule.match == ["application_id"]
    assert "draft to submitted" in rule.rule and STRIPE not in refusal.instruction
    assert run_task(env, refusal.id, NoopAgent()).reward == 1.0
    assert run_task(env, refusal.id, ReferenceAgent()).reward == 1.0
    forbidden = run_task(env, refusal.id, ForbiddenAgent())
    assert forbidden.tool_calls == 1 and forbidden.reward == 0.0  # the tool refused it: no change, still wrong
    assert [i["kind"] for i in forbidden.reward_breakdown["breakdown"]] == ["forbidden_call"]
    # the same tool on another record is not the forbidden move
    other = Says("I could not submit it.", [Call(name="submit_application", arguments={"application_id": "APP-0002"})])
    assert run_task(env, refusal.id, other).reward == 1.0


def test_calls_the_policy_allows_or_reads_that_write_make_no_task():
    with Environment(DOMAIN, workers=1) as env:
        with pytest.raises(Dropped, match="does not refuse"):
            refusal_task(env, SPEC, "r", SAMPLE, ToolCall(tool="set_application_priority", arguments={
                "application_id": STRIPE, "priority_level": 3}))
        with pytest.raises(Dropped, match="not a read"):
            answer_task(env, SPEC, "a", SAMPLE, [ToolCall(tool="set_application_priority", arguments={
                "application_id": STRIPE, "priority_level": 3})])


def test_the_stage_derives_verified_answer_and_refusal_tasks_from_verified_ones():
    dropped: dict[str, list[str]] = {}
    with Environment(DOMAIN, workers=1) as env:
        verified = [env.task("task_005"), env.task("task_009")]
        made = derive(env, SPEC, verified, 3, 2, 1, dropped, lambda _m: None)
    assert [t.id for t in made] == ["answer_001", "answer_002", "answer_003", "refusal_001", "refusal_002"]
    assert {t.metadata.complexity_level for t in made} <= {2, 3}
    assert all(t.metadata.reward_before < 1 for t in made)
    assert made[0].initial_state == verified[0].initial_state  # round-robin over the verified tasks
    assert made[1].initial_state == verified[1].initial_state


@pytest.mark.slow
def test_offline_eval_checks_each_kind(served, tmp_path, capsys):
    _, _, _, folder = served
    assert main([str(folder), "-k", "1", "--concurrency", "2", "--runs-dir", str(tmp_path / "runs"),
                 "--tasks", "answer_stripe,refusal_stripe"]) == 0
    out = capsys.readouterr().out
    assert "reference: 2 episodes" in out and "noop: 2 episodes" in out and "forbidden: 2 episodes" in out
    report = json.loads((tmp_path / "runs" / "job_seeking" / "noop-k1" / "report.json").read_text())
    assert report["by_task_kind"]["refusal"]["average_reward"] == 1.0
    assert report["by_task_kind"]["answer"]["average_reward"] == 0.0


def test_facts_are_found_however_numbers_dates_and_names_are_written():
    said = "Your Acme offer is $85,200.00, starting March 14, 2025 at 2:30 pm; the status is Under review."
    assert states(said, 85200, "number") and not states(said, 85201, "number")
    assert states(said, "2025-03-14", "date") and states(said, "2025-03-14T14:30:00", "datetime")
    assert not states(said, "2025-03-14T09:30:00", "datetime")  # the date alone is not the time
    assert states(said, "under_review", "text") and states(said, "ACME", "text") and not states(said, "Acm", "text")
    assert not states("on 2025-03-14", 14, "number")  # a date's parts are not numbers


def test_change_tasks_keep_their_bytes_and_each_kind_needs_its_fields():
    path = DOMAIN / "tasks" / "task_001.json"
    task = Task.model_validate_json(path.read_text())
    assert task.kind == "change"
    written = json.dumps(task.model_dump(mode="json", exclude_none=True), indent=1, sort_keys=True, ensure_ascii=False)
    assert written + "\n" == path.read_text()
    with pytest.raises(ValidationError, match="needs facts"):
        Task(id="a", kind="answer")
    with pytest.raises(ValidationError, match="needs its policy_rule"):
        Task(id="r", kind="refusal")


def test_exports_carry_each_kind_and_the_awm_verifier_reads_the_facts(served, tmp_path):
    from export import awm, hf, tau2
    from export.episode_rows import ground_truth
    from export.source import read_domain
    from tests.test_export import _database, _verify

    env, answer, refusal, folder = served
    source = read_domain(folder)
    tasks = {t.id: t for t in source.tasks}
    assert hf.kind_columns(tasks[answer.id])["kind"] == "answer"
    assert json.loads(ground_truth(source, tasks[answer.id]))["facts"][0]["value"] == answer.facts[0].value
    assert json.loads(ground_truth(source, tasks[refusal.id]))["policy_rule"]["tool"] == "submit_application"
    said = tau2.task(source, tasks[answer.id])["evaluation_criteria"]
    assert said["communicate_info"] == [str(f.value) for f in answer.facts] and "COMMUNICATE" in said["reward_basis"]
    assert tau2.task(source, tasks[refusal.id])["description"]["relevant_policies"] == refusal.policy_rule.rule
    awm.export(source, tmp_path / "awm", env=env)
    rows = [json.loads(line) for line in (tmp_path / "awm" / "gen_verifier.pure_code.jsonl").read_text().splitlines()]
    code = next(r["verification"]["code"] for r in rows if r["scenario"].endswith(answer.id))
    schema = json.loads((tmp_path / "awm" / "gen_db.jsonl").read_text().splitlines()[0])["db_schema"]
    initial = _database(tmp_path / "initial.db", schema, awm.inserts(source.spec.db, source.full_state(SAMPLE)))
    every = " ".join(str(f.value) for f in answer.facts)
    namespace = {"__builtins__": __builtins__}
    exec(code, namespace)
    verify = namespace["verify_task_completion"]
    assert verify(str(initial), str(initial), every)["result"] == "complete"
    assert verify(str(initial), str(initial), "")["result"] == "others"
    assert _verify(code, initial, initial)["result"] == "others"  # no final answer given at all


@pytest.mark.integration
def test_over_http_the_final_message_and_the_forbidden_call_reach_the_reward(served):
    from mcp_servers.http_process import http_server
    from trainers.control import Control

    _, answer, refusal, folder = served
    with http_server(folder, quiet=True) as server:
        control = Control(server.url, token=server.token)
        try:
            episode = control.open(answer.id)["episode_id"]
            for call in READS:
                control.call(episode, call.tool, call.arguments)
            every = ", ".join(str(f.value) for f in answer.facts)
            assert control.reward(episode, every)["reward"] == 1.0
            assert control.reward(episode)["reward"] == 0.0  # GET: no final message
            bad = control.http.post(f"/episodes/{episode}/reward", json={"final_message": 3})
            assert bad.status_code == 400
            episode = control.open(refusal.id)["episode_id"]
            assert control.reward(episode, "I cannot submit it: it is past draft.")["reward"] == 1.0
            text, failed = control.call(episode, "submit_application", {"application_id": STRIPE})
            assert failed and "PreconditionFailed" in text
            assert control.reward(episode, "Done.")["reward"] == 0.0
        finally:
            control.close()


def test_the_bundled_job_seeking_tasks_reach_scaleenvs_count_with_every_kind_and_level_and_say_so():
    tasks = [Task.model_validate_json((DOMAIN / "tasks" / f"{e['id']}.json").read_text())
             for e in json.loads((DOMAIN / "tasks" / "index.json").read_text())["tasks"]]
    kinds = Counter(t.kind for t in tasks)
    levels = Counter(t.metadata.complexity_level for t in tasks)
    # ScaleEnv's 256 tasks for this domain, answer and refusal tasks among them, each level a quarter or more
    assert len(tasks) >= 256 and kinds["answer"] >= 40 and kinds["refusal"] >= 20
    assert all(levels[level] >= len(tasks) / 4 for level in (1, 2, 3)), levels
    summary = json.loads((DOMAIN / "report.json").read_text())["tasks"]
    assert summary["built"] == len(tasks) and summary["kinds"] == dict(sorted(kinds.items()))
    assert summary["levels_by_kind"] == {kind: dict(sorted(Counter(
        str(t.metadata.complexity_level) for t in tasks if t.kind == kind).items())) for kind in sorted(kinds)}
    per_family = Counter(t.metadata.family for t in tasks if t.metadata.family and t.id.startswith("fam_"))
    families = summary["families"]
    assert {f: c["instances"] for f, c in families["by_family"].items()} == dict(per_family)
    assert summary["tokens_per_task"] <= 2_000  # every request of the recording, over the tasks it verified
    page = (DOMAIN / "tasks" / "README.md").read_text()
    assert "- levels by kind: answer 1: " in page and all(f"| {family} | " in page for family in per_family)
