"""Task families with scripted model answers on the bundled job_seeking domain: one generator,
several verified instances; repairs and dropped instances; misbehaving generators; replay."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from domains.spec import DomainSpec
from graph.model import from_json
from llm import LLM, ScriptedBackend, Transcript
from mcp_servers.runtime import Environment
from tasks import family as families
from tasks.build import Dropped, Stage
from tasks.execute import run_generator
from tasks.family import build_family

ROOT = Path(__file__).resolve().parent.parent
DOMAIN = ROOT / "domains" / "job_seeking"
SPEC = DomainSpec.model_validate_json((DOMAIN / "spec.json").read_text())
GRAPH = from_json((DOMAIN / "graph.json").read_text())

# A level-n instance asks for the priority of n applications of one person.
GENERATOR = '''
NAMES = ["Ana Ruiz", "Tom Becker", "Mei Lin", "Kwame Mensah", "Sofia Rossi", "Ravi Iyer", "Lena Novak", "Omar Haddad"]
COMPANIES = ["Lumen Analytics", "Orbit Labs", "Quill Health", "Nimbus Freight", "Vela Robotics", "Tessellate",
             "Harbor Bank", "Cinder Games"]
TITLES = ["Data Engineer", "Product Designer", "Backend Developer", "QA Analyst", "UX Researcher", "Site Reliability Engineer"]

def instance(rng, level):
    name = rng.choice(NAMES)
    email = name.lower().replace(" ", ".") + "@example.com"
    companies = rng.sample(COMPANIES, level)
    title = rng.choice(TITLES)
    priority = rng.randint(1, 5)
    rows = [{"application_id": f"APP-{i + 1:04d}", "applicant_name": name, "email": email, "job_title": TITLE_OF(title, level),
             "company_name": company, "status": "submitted", "created_at": "2025-02-10T10:00:00"}
            for i, company in enumerate(companies)]
    where = " and ".join(companies)
    instruction = rng.choice([f"Please set my {title} applications at {where} to priority {priority}.",
                              f"Bump {where} ({title}) to priority {priority} for me.",
                              f"I'm {name}: my {title} applications at {where} should be priority {priority}."])
    return {"rows": {"job_application": rows}, "params": {"companies": companies, "title": title, "priority": priority},
            "instruction": instruction,
            "user_profile": {"name": name, "persona": "a focused job seeker", "known_info": [email, *companies],
                             "unknown_info": ["application ids"]}}
'''
SOUND = GENERATOR.replace("TITLE_OF(title, level)", "title")
# At level 2 the rows hold another title than the request: the program finds no application to change.
FLAWED = GENERATOR.replace("TITLE_OF(title, level)", '(title + " II" if level == 2 else title)')
PROGRAM = '''for company in params["companies"]:
    apps = call("search_apps_by_keyword", keyword=company)["applications"]
    app = [a for a in apps if a["job_title"] == params["title"]][0]
    call("set_application_priority", application_id=app["application_id"], priority_level=params["priority"])
'''
GATES = {f"tasks/fam_001.gate/{n}": {"p": 0.2, "reason": "saturated"} for n in range(3)}


def family(generator: str = SOUND, program: str = PROGRAM) -> dict:
    return {"goal": "set the priority of one's applications", "generator": generator, "program": program}


class _Seen(ScriptedBackend):
    """Answers from the script and keeps every prompt it was sent."""

    def __init__(self, answers):
        super().__init__(answers)
        self.prompts: dict[str, str] = {}

    def complete(self, key, turn, messages, schema=None, tools=None):
        self.prompts[str(key)] = messages[-1]["content"]
        return super().complete(key, turn, messages, schema, tools)


@pytest.fixture(scope="module")
def env():
    with Environment(DOMAIN, workers=1) as environment:
        yield environment


def stage(env, answers: dict, attempts: int = 3) -> Stage:
    llm = LLM(_Seen({**GATES, **answers}), Transcript(Path("/dev/null")), max_reasks=0)
    return Stage(SPEC, GRAPH, llm, env, log=lambda _m: None, attempts=attempts)


def test_one_family_yields_verified_instances_whose_instructions_and_states_differ(env):
    s = stage(env, {"tasks/fam_001.family/0": family()})
    built = build_family(s, "fam_001", 0, 1, 3)
    tasks = built.tasks
    assert [t.id for t in tasks] == ["fam_001_1", "fam_001_2", "fam_001_3"] and built.dropped == {}
    assert [t.metadata.complexity_level for t in tasks] == [1, 2, 3]
    # the level sets how much there is to do: one priority per application the instance holds
    assert [len(t.reference_solution) for t in tasks] == [2, 4, 6]
    assert len({t.instruction for t in tasks}) == 3
    assert len({json.dumps(t.initial_state, sort_keys=True) for t in tasks}) == 3
    assert all(t.metadata.family == "fam_001" and t.metadata.reward_before < 1.0 for t in tasks)
    assert all("APP-" not in t.instruction for t in tasks)
    # the gate is asked once for the family, and its tokens are shared among the instances
    assert [k for k in s.llm.transcript.entries if ".gate" in k] == ["tasks/fam_001.gate/0"]
    assert {t.metadata.tokens for t in tasks} == {round(built.tokens / 3)} and built.tokens > 0


def test_a_family_whose_first_instance_fails_execution_is_fed_the_failure_and_repaired(env):
    misspelt = PROGRAM.replace('"set_application_priority"', '"set_priority"')
    s = stage(env, {"tasks/fam_001.family/0": family(program=misspelt), "tasks/fam_001.family/1": family()})
    built = build_family(s, "fam_001", 0, 1, 2)
    assert len(built.tasks) == 2
    assert "chain" in built.repairs[0] and "set_priority" in built.repairs[0]
    assert built.tasks[0].metadata.repairs == built.repairs
    second = s.llm.backend.prompts["tasks/fam_001.family/1"]
    assert "The previous family failed" in second and "set_priority" in second


def test_an_instance_that_fails_on_the_last_attempt_is_dropped_and_counted(env):
    s = stage(env, {"tasks/fam_001.family/0": family(FLAWED)}, attempts=1)
    built = build_family(s, "fam_001", 0, 1, 3)
    assert [t.id for t in built.tasks] == ["fam_001_1", "fam_001_3"]
    assert built.dropped == {"chain": ["fam_001_2"]}


MISBEHAVING = {
    "raises": ("def instance(rng, level):\n    raise KeyError('no such company')\n", "KeyError: 'no such company'"),
    "loops": ("def instance(rng, level):\n    while True:\n        pass\n", "ran longer than 1 s"),
    # the static check does not follow `j`: the generator reaches os and writes to the parent's pipe
    "writes garbage where the parent reads": (
        "import json\nj = json\nos = j.codecs.sys.modules['os']\n"
        "def instance(rng, level):\n    os.write(3, b'not json\\n')\n    return {}\n", "broke the protocol"),
    "returns a list": ("def instance(rng, level):\n    return [1, 2]\n", "returned list, not a dict"),
    "returns a dict without an instruction": (
        "def instance(rng, level):\n    return {'rows': {}, 'params': {}, 'user_profile': {}}\n",
        "malformed dict: instruction"),
    "returns what JSON cannot hold": ("def instance(rng, level):\n    return {'rows': {1, 2}}\n", "not JSON serializable"),
}


@pytest.mark.parametrize("case", sorted(MISBEHAVING))
def test_a_misbehaving_generator_is_a_clear_failure_not_a_crash(env, monkeypatch, case):
    source, said = MISBEHAVING[case]
    monkeypatch.setattr(families, "GENERATOR_TIMEOUT_S", 1.0)
    with pytest.raises(Dropped) as dropped:
        build_family(stage(env, {"tasks/fam_001.family/0": family(source)}, attempts=1), "fam_001", 0, 1, 1)
    assert dropped.value.reason == "generator" and said in dropped.value.detail


def test_what_a_generator_prints_does_not_disturb_its_answer():
    noisy = "def instance(rng, level):\n    print('drawing' * 1000)\n    return {'level': level, 'n': rng.randint(1, 9)}\n"
    quiet = noisy.replace("    print('drawing' * 1000)\n", "")
    assert run_generator(noisy, 7, 2) == run_generator(quiet, 7, 2)
    assert run_generator(noisy, 7, 2)[0]["level"] == 2


def test_a_recorded_family_run_replays_offline_byte_identically(tmp_path, monkeypatch):
    import tasks.__main__ as stage_main
    out = tmp_path / "job_seeking"
    shutil.copytree(DOMAIN, out, ignore=shutil.ignore_patterns("tasks", "tests", "rollouts"))
    # g(D) by the executed search and no vocabulary, as when job_seeking was recorded
    monkeypatch.setattr(stage_main, "oracle_for", lambda llm, env: None)
    monkeypatch.setattr(stage_main, "recorded_or_asked", lambda llm, spec: None)
    path = out / "tasks" / "transcript.jsonl"
    path.parent.mkdir()
    recording = LLM(ScriptedBackend({**GATES, "tasks/fam_001.family/0": family(FLAWED)}), Transcript(path))
    first = stage_main.run_stage(out, recording, n=0, families=1, instances=3, log=lambda _m: None)
    recording.transcript.save()
    written = {p.name: p.read_bytes() for p in sorted((out / "tasks").iterdir())}
    assert first["built"] == 2 and first["dropped_by_reason"] == {"instance:chain": 1}
    counts = first["families"]
    assert counts["by_family"]["fam_001"]["instances"] == 2 and counts["by_family"]["fam_001"]["dropped"] == 1
    assert counts["tokens_per_instance"] == first["tokens_per_task"] > 0
    # the replay is told nothing: it takes what the recording built from index.json's settings
    settings = stage_main.recorded_settings(out)
    assert settings["families"] == 1 and settings["instances"] == 3 and settings["n"] == 0
    replayed = stage_main.run_stage(out, LLM(None, Transcript(path)), log=lambda _m: None, **settings)
    assert replayed["built"] == 2
    assert {p.name: p.read_bytes() for p in sorted((out / "tasks").iterdir())} == written
    assert {"fam_001_1.json", "fam_001_3.json", "index.json", "README.md"} <= set(written)
    assert "fam_001_2.json" not in written  # the dropped instance


ASKING = '''
COMPANIES = ["Lumen Analytics", "Orbit Labs", "Quill Health", "Nimbus Freight", "Vela Robotics", "Tessellate"]
TITLES = ["Data Engineer", "Product Designer", "Backend Developer", "QA Analyst", "UX Researcher"]

def instance(rng, level):
    company, title = rng.choice(COMPANIES), rng.choice(TITLES)
    status, priority = rng.choice(["submitted", "under_review", "interviewing"]), rng.randint(1, 5)
    row = {"application_id": "APP-0001", "applicant_name": "Mei Lin", "email": "mei.lin@example.com",
           "job_title": title, "company_name": company, "status": status, "priority_level": priority,
           "created_at": "2025-02-10T10:00:00"}
    return {"rows": {"job_application": [row]}, "params": {"company": company, "title": title},
            "instruction": rng.choice([f"Where does my {title} application at {company} stand, and what priority did I give it?",
                                       f"Quick check on {company} ({title}): its status and my priority for it?"]),
            "user_profile": {"name": "Mei Lin", "known_info": [company, title], "unknown_info": ["status", "priority"]},
            "facts": FACTS}
'''
READ = '''apps = call("search_apps_by_keyword", keyword=params["company"])["applications"]
app = [a for a in apps if a["job_title"] == params["title"]][0]
call("get_application_details", application_id=app["application_id"])
'''


def test_an_answer_family_yields_answer_instances_whose_facts_are_what_the_tools_returned(env):
    source = ASKING.replace("FACTS", '{"status": status, "priority": priority}')
    built = build_family(stage(env, {"tasks/fam_001.family/0": family(source, READ)}), "fam_001", 0, 1, 2)
    assert len(built.tasks) == 2
    task = built.tasks[0]
    row = task.initial_state["job_application"][0]
    assert task.kind == "answer" and {f.label: f.value for f in task.facts} == {
        "status": row["status"], "priority": row["priority_level"]}
    assert all(f.source.startswith(("1.search_apps_by_keyword", "2.get_application_details")) for f in task.facts)
    assert task.metadata.reward_before < 1.0  # an episode that states nothing


def test_an_answer_instance_whose_fact_no_tool_returned_is_dropped(env):
    source = ASKING.replace("FACTS", '{"status": "on hold"}')
    with pytest.raises(Dropped) as dropped:
        build_family(stage(env, {"tasks/fam_001.family/0": family(source, READ)}, attempts=1), "fam_001", 0, 1, 1)
    assert dropped.value.reason == "facts" and "'on hold'" in dropped.value.detail
