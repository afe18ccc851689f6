"""The task stage, step by step, with scripted model answers on the bundled job_seeking domain."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import jsonschema
import pytest

from domains.spec import DomainSpec
from domains.task_model import SCHEMA_PATH, json_schema, task_ids
from graph.model import from_json
from llm import LLM, ScriptedBackend, Transcript
from mcp_servers.runtime import CallResult, Environment
from tasks import execute, expand
from tasks.build import Dropped, Stage, _execute, _orthogonal, build_task, effect
from tasks.execute import run_chain
from tasks.state import check_state, distractors, merge
from tests.support.tool_graph import JOBS

ROOT = Path(__file__).resolve().parent.parent
DOMAIN = ROOT / "domains" / "job_seeking"
SPEC = DomainSpec.model_validate_json((DOMAIN / "spec.json").read_text())
GRAPH = from_json((DOMAIN / "graph.json").read_text())

APP = {"application_id": "APP-0001", "applicant_name": "Ana Ruiz", "email": "ana@example.com", "job_title": "Data Engineer",
       "company_name": "Lumen", "status": "submitted", "created_at": "2025-02-10T10:00:00"}
FIND = 'app = call("search_apps_by_keyword", keyword="Lumen")["applications"][0]\n'
PRIORITY = FIND + 'call("set_application_priority", application_id=app["application_id"], priority_level=4)\n'
APPLY = ('app = call("create_job_application", applicant_name="Ana Ruiz", email="ana@example.com", '
         'job_title="Analyst", company_name="Orbit")\n'
         'call("upload_resume", application_id=app["application_id"], resume_content="Ana Ruiz, analyst", resume_format="pdf")\n'
         'call("submit_application", application_id=app["application_id"])\n')
SAID = {"draft": "Set the priority of my Data Engineer application at Lumen to 4.",
        "instruction": "Make my Lumen data engineer application a priority 4.",
        "user_profile": {"name": "Ana Ruiz", "known_info": ["Lumen", "Data Engineer", "4"]}}


@pytest.fixture(scope="module")
def env():
    with Environment(DOMAIN, workers=1) as environment:
        yield environment


def stage(env, answers: dict) -> Stage:
    gates = {f"tasks/t.gate/{n}": {"p": 0.2, "reason": "saturated"} for n in range(3)}
    llm = LLM(ScriptedBackend({**gates, **answers}), Transcript(Path("/dev/null")), max_reasks=0)
    return Stage(SPEC, GRAPH, llm, env, log=lambda _m: None)


def test_a_chain_that_fails_execution_is_fed_back_and_repaired(env):
    broken = APPLY.replace('call("upload_resume"', 'call("submit_application", application_id=app["application_id"])\n'
                                                   'call("upload_resume"')
    task = build_task(stage(env, {
        "tasks/t.chain/0": {"goal": "apply", "code": broken}, "tasks/t.state/0": {"rows": {}},
        "tasks/t.chain/1": {"goal": "apply", "code": APPLY}, "tasks/t.state/1": {"rows": {}},
        "tasks/t.instruction/0": {**SAID, "instruction": "Apply to Orbit as an analyst with my resume."},
    }), "t", 1, 1)
    assert "PreconditionFailed" in task.metadata.repairs[0]
    assert [c.tool for c in task.reference_solution] == ["create_job_application", "upload_resume", "submit_application"]
    assert task.metadata.distractor_rows > 0 and task.metadata.reward_before < 1.0


def test_a_dangling_foreign_key_is_caught_and_repaired(env):
    note = {"note_id": "NOTE-0001", "application_id": "APP-0009", "note_content": "called", "note_type": "general",
            "created_at": "2025-02-11T10:00:00"}
    assert any("APP-0009" in p and "does not resolve" in p
               for p in check_state(SPEC.db, {"job_application": [APP], "application_note": [note]}))
    task = build_task(stage(env, {
        "tasks/t.chain/0": {"goal": "priority", "code": PRIORITY},
        "tasks/t.state/0": {"rows": {"job_application": [APP], "application_note": [note]}},
        "tasks/t.chain/1": {"goal": "priority", "code": PRIORITY},
        "tasks/t.state/1": {"rows": {"job_application": [APP]}},
        "tasks/t.instruction/0": SAID,
    }), "t", 0, 1)
    assert "inconsistent" in task.metadata.repairs[0]
    assert task.initial_state["job_application"][0]["application_id"] == "APP-0001"


def test_a_distractor_that_would_change_the_outcome_is_rejected(env):
    # The program raises the priority of every submitted application: a submitted distractor changes its effect.
    code = ('for a in call("list_applications", status="submitted")["applications"]:\n'
            '    call("set_application_priority", application_id=a["application_id"], priority_level=5)\n')
    core = {"job_application": [APP]}
    s = stage(env, {})
    _, _, loaded, after = _execute(s, core, code)
    target = effect(SPEC.db, loaded, after)
    harmless = {"job_application": [{**APP, "application_id": "APP-0002", "company_name": "Quill", "status": "rejected"}]}
    harmful = {"job_application": [{**APP, "application_id": "APP-0003", "company_name": "Nimbus"}]}
    kept, rejected = _orthogonal(s, core, code, target, [harmless, harmful])
    assert kept == [harmless] and rejected == 1


def test_generated_distractors_are_schema_valid_and_scale_with_complexity():
    from datetime import date
    counts = []
    for level in (1, 2, 3):
        groups = distractors(SPEC.db, {"job_application": [APP]}, level, 7, date(2025, 3, 1))
        state = merge({"job_application": [APP]}, *groups)
        assert check_state(SPEC.db, state) == []
        counts.append(len(state["job_application"]))
    assert counts[0] < counts[1] < counts[2]


def test_distractors_keep_the_domain_policy_invariants():
    """Random statuses break job_seeking's invariants (an offer on a draft application, feedback on
    an interview not held); kept to the policy, no group breaks one, and the groups still carry
    rows of every kind."""
    from datetime import date

    from verification.invariants import check_invariants
    core = {"job_application": [{**APP, "status": "draft"}]}  # the task's own rows keep the rules
    raw = merge(core, *distractors(SPEC.db, core, 3, 7, date(2025, 3, 1)))
    assert check_invariants(SPEC.policy, SPEC.db, raw), "the unconstrained rows should break some invariant"
    kept = distractors(SPEC.db, core, 3, 7, date(2025, 3, 1), SPEC.policy)
    state = merge(core, *kept)
    assert check_invariants(SPEC.policy, SPEC.db, state) == []
    assert check_state(SPEC.db, state) == []
    assert {"job_offer", "interview_schedule", "interview_feedback"} <= set(state)
    statuses = {row["status"] for row in state["job_application"]}
    assert len(statuses) > 2  # statuses were set back only where they broke a rule


def test_keep_invariants_resets_a_status_or_drops_a_row_with_what_refers_to_it():
    from verification.invariants import keep_invariants
    policy = SPEC.policy
    app = {**APP, "application_id": "APP-0100", "company_name": "Orbit", "status": "offer_received"}  # no offer
    offer = {"offer_id": "OFR-0100", "application_id": "APP-0101", "offer_status": "pending",
             "received_date": "2025-02-01", "base_salary": 100000.0, "salary_currency": "USD"}
    other = {**APP, "application_id": "APP-0101", "company_name": "Vela", "status": "under_review"}
    core = {"job_application": [{**APP, "status": "draft"}]}
    group = keep_invariants(policy, SPEC.db, {"job_application": [app, other], "job_offer": [offer]}, core=core,
                            reset=True)
    from verification.invariants import check_invariants
    assert check_invariants(policy, SPEC.db, merge(core, group)) == []
    rows = {r["application_id"]: r for r in group["job_application"]}
    assert rows["APP-0100"]["status"] == policy.machines[0].initial[0]  # back to draft
    assert "job_offer" not in group  # an offer on an application in no offer state: dropped


def test_a_task_whose_initial_state_already_satisfies_the_goal_is_dropped(env):
    with pytest.raises(Dropped) as dropped:
        build_task(stage(env, {
            "tasks/t.chain/0": {"goal": "look", "code": FIND + 'call("get_application_details", '
                                                              'application_id=app["application_id"])\n'},
            "tasks/t.state/0": {"rows": {"job_application": [APP]}},
        }), "t", 0, 1)
    assert dropped.value.reason == "satisfied"


def test_an_instruction_that_leaks_an_internal_identifier_is_rejected(env):
    leaky = {**SAID, "instruction": "Set APP-0001 to priority 4."}
    base = {"tasks/t.chain/0": {"goal": "priority", "code": PRIORITY},
            "tasks/t.state/0": {"rows": {"job_application": [APP]}}}
    task = build_task(stage(env, {**base, "tasks/t.instruction/0": leaky, "tasks/t.instruction/1": SAID}), "t", 0, 1)
    assert "APP-0001" in task.metadata.repairs[-1] and "APP-" not in task.instruction
    with pytest.raises(Dropped) as dropped:
        build_task(stage(env, {**base, **{f"tasks/t.instruction/{n}": leaky for n in range(3)}}), "t", 0, 1)
    assert dropped.value.reason == "instruction"


def test_chain_programs_run_confined(env):
    episode = env.create_episode(state={})
    try:
        assert "not allowed" in run_chain(episode, "import os\nos.system('true')").error
        assert "longer than" in run_chain(episode, "while True:\n    pass\n", timeout=1.0).error
        out = run_chain(episode, "open('/etc/passwd')")
        assert out.error and not out.calls
    finally:
        episode.close()


class _Echo:
    """An episode stand-in whose every tool answers with its arguments."""

    def __init__(self, on_call=None):
        self.on_call = on_call

    def call(self, tool, arguments):
        if self.on_call:
            self.on_call()
        return CallResult(True, result=arguments)


def test_a_chain_program_cannot_see_what_an_earlier_one_left_in_its_process():
    assert run_chain(_Echo(), "import json\njson.left = 1\ncall('t', seen=hasattr(json, 'left'))").results == [{"seen": True}]
    assert run_chain(_Echo(), "import json\ncall('t', seen=hasattr(json, 'left'))").results == [{"seen": False}]


def test_a_program_that_exhausts_memory_or_hangs_leaves_the_next_program_unaffected():
    hog = "rows = []\nwhile True:\n    rows.append(' ' * 10_000_000)\n"
    assert run_chain(_Echo(), hog).error
    assert "longer than" in run_chain(_Echo(), "call('t')\nwhile True:\n    pass\n", timeout=1.0).error
    out = run_chain(_Echo(), "a = call('t', n=1)\ncall('t', n=a['n'] + 1)\n")
    assert out.error is None and out.results == [{"n": 1}, {"n": 2}]
    assert "more than 2 tool calls" in run_chain(_Echo(), "for n in range(5):\n    call('t', n=n)\n", max_calls=2).error


# The static check is not the boundary: it refuses `json.codecs.sys`, but not the same walk from
# a name it cannot follow, so these programs reach os and meet the OS layers.
OS = "import json\nj = json\nos = j.codecs.sys.modules['os']\n"


def test_a_program_that_kills_its_own_process_or_leaves_files_does_not_touch_the_next():
    assert run_chain(_Echo(), OS + "os.kill(os.getpid(), 9)\n").error == "the program's process died (exit 137)"
    assert "Operation not permitted" in run_chain(_Echo(), OS + "os.kill(os.getppid(), 9)\n").error
    wrote = run_chain(_Echo(), OS + "f = j.codecs.open('left.txt', 'w')\nf.write('x')\nf.close()\n"
                                    "call('t', here=os.path.exists('left.txt'))\n")
    assert wrote.results == [{"here": True}]
    assert run_chain(_Echo(), OS + "call('t', here=os.path.exists('left.txt'))\n").results == [{"here": False}]


def test_a_program_that_writes_half_a_line_or_reads_no_reply_still_times_out():
    half = OS + "os.write(3, b'{')\nwhile True:\n    pass\n"
    deaf = OS + "os.write(3, json.dumps({'call': 't', 'arguments': {'x': 'y' * 1_000_000}}).encode() + b'\\n')\n" \
                "while True:\n    pass\n"
    for program in (half, deaf):
        assert run_chain(_Echo(), program, timeout=1.0).error == "the program ran longer than 1 s"


def test_a_program_that_writes_lines_outside_the_protocol_gets_an_error_not_a_crash():
    for line in ("[1]", '"call"', '{"call": "t", "arguments": [1]}'):
        run = run_chain(_Echo(), OS + f"os.write(3, {line!r}.encode() + b'\\n')\nwhile True:\n    pass\n", timeout=5.0)
        assert run.error.startswith("the program's process broke the protocol"), run.error
        assert run.calls == []


def test_a_chain_template_that_dies_mid_program_is_replaced_for_the_next():
    assert run_chain(_Echo(), "call('t')").error is None
    template = execute.template_for(512)
    starts = template.starts
    kill = _Echo(on_call=lambda: os.kill(template._proc.pid, signal.SIGKILL))
    out = run_chain(kill, "call('t')\nwhile True:\n    pass\n", timeout=10.0)  # its fork dies with it
    assert out.error.startswith(("the program's process died", "the program's process broke the protocol"))
    out = run_chain(_Echo(), "call('t', n=1)")
    assert out.error is None and out.results == [{"n": 1}] and template.starts == starts + 1


def test_dependency_aware_expansion_only_adds_tools_whose_inputs_are_produced_inside():
    # Worked by hand on the job board graph (tests/support/tool_graph.py). K(C) takes the chain's
    # neighbours whose internal inputs a tool already inside produces: get_job (job_id from
    # search_jobs), get_company (company_id from search_jobs), clear_history and
    # list_applications (no internal input); not submit_application, whose resume_id only
    # upload_resume or list_resumes produce, both outside.
    h = expand.closure(JOBS, ["search_jobs", "withdraw_application"])
    assert h == {"search_jobs", "withdraw_application", "get_job", "get_company", "clear_history",
                 "list_applications"}
    assert sorted(map(tuple, expand.edges_within(JOBS, h))) == [
        ("get_job", "get_company"), ("list_applications", "get_job"), ("list_applications", "withdraw_application"),
        ("search_jobs", "clear_history"), ("search_jobs", "get_company"), ("search_jobs", "get_job")]
    # ScaleEnv's c(H) = (|V_H| + lambda |E_H|) / S_sat with lambda = 0.5, S_sat = 50: (6 + 3) / 50.
    assert expand.complexity(JOBS, h) == 0.18


def test_the_published_schema_is_current_and_every_bundled_task_follows_it():
    assert SCHEMA_PATH.read_text() == json_schema()
    schema = json.loads(SCHEMA_PATH.read_text())
    files = [DOMAIN / "tasks" / f"{task_id}.json" for task_id in task_ids(DOMAIN)]
    levels = set()
    for path in files:
        task = json.loads(path.read_text())
        jsonschema.validate(task, schema)
        assert task["metadata"]["distractor_rows"] > 0
        levels.add(task["metadata"]["complexity_level"])
    assert len(files) >= 40 and len(levels) >= 3
    report = json.loads((DOMAIN / "report.json").read_text())
    assert report["tasks"]["built"] == len(files)


def test_a_key_that_is_a_plain_word_may_be_said_and_ids_match_only_whole():
    from tasks.build import internal_ids, leaks
    ids = internal_ids(SPEC, {"job_application": [{"application_id": "archive"}, {"application_id": "APP-0001"},
                                                  {"application_id": "Q7"}]})
    assert ids == {"APP-0001", "Q7"}
    assert leaks(SPEC, "Move my old applications to the archive.", ids) == []
    assert leaks(SPEC, "Set APP-0001 to priority 4.", ids) == ["APP-0001"]
    assert leaks(SPEC, "My Q77 form and the Q7X draft.", ids) == []
    assert leaks(SPEC, "The one in Q7, please.", ids) == ["Q7"]
