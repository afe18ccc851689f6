"""Exports of job_seeking, each read back by the library that consumes it.

Every row of every format is checked against its task file; what needs the domain's runtime (the
AWM verifier against the state a reference solution leaves) runs on a fixed sample of the bundled
tasks covering every kind and level (tests/support/task_sample.py).

Trainer libraries live in .venv-trainers (`make trainers-env`), never in the core: checks that
need them run there in a subprocess and print JSON, which is compared here with the task files.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any, Literal

import pytest
from pydantic import BaseModel, ConfigDict
from starlette.testclient import TestClient

from export.awm import inserts
from export.source import read_domain
from mcp_servers.control_token import bearer
from mcp_servers.http_app import create_app
from mcp_servers.runtime import Environment
from tests.support.task_sample import bundled_count, final_message, sample

ROOT = Path(__file__).resolve().parent.parent
DOMAIN = ROOT / "domains" / "job_seeking"
BUNDLED = bundled_count(DOMAIN)  # what the domain's index counts
TRAINERS = ROOT / ".venv-trainers" / "bin" / "python"
BASE_URL = "http://10.1.2.3:8765"
TOKEN = "export-test-token-0123"  # the trainer's control token
needs_trainers = pytest.mark.skipif(not TRAINERS.is_file(), reason="needs .venv-trainers (make trainers-env)")
# The exports are written by `python -m export` (parquet through the trainers' environment) and read
# back with the trainers' own libraries.
pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def source():
    return read_domain("job_seeking")


@pytest.fixture(scope="module")
def exported(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("exports") / "job_seeking"
    done = subprocess.run([sys.executable, "-m", "export", "job_seeking", "--format", "all", "--out", str(out),
                           "--base-url", BASE_URL], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return out


def in_trainers(code: str, cwd: Path) -> Any:
    """Run `code` under the trainers' interpreter; it prints one JSON value as its last line."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "HF_DATASETS_CACHE": str(cwd / ".hf-cache")}
    done = subprocess.run([str(TRAINERS), "-c", textwrap.dedent(code)], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-4000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def reference(task) -> list[dict]:
    return [call.model_dump() for call in task.reference_solution]


# -- Hugging Face datasets ----------------------------------------------------------------
@needs_trainers
def test_hf_dataset_loads_with_datasets(exported, source, tmp_path):
    rows = in_trainers(f"""
        import json
        from datasets import load_dataset
        parquet = load_dataset({str(exported / "hf")!r}, split="train")
        lines = load_dataset("json", data_files={str(exported / "hf/data/train.jsonl")!r}, split="train")
        assert parquet.to_list() == lines.to_list(), "parquet and JSONL differ"
        print(json.dumps(parquet.to_list()))
    """, tmp_path)
    tasks = {t.id: t for t in source.tasks}
    assert [r["id"] for r in rows] == sorted(tasks) and len(rows) == BUNDLED
    with Environment("job_seeking") as env:
        served = env.openai_tools()
    for row in rows:
        task = tasks[row["id"]]
        assert json.loads(row["tools"]) == served  # what the MCP server shows the agent
        assert row["prompt"][-1] == {"role": "user", "content": task.instruction}
        assert json.loads(row["reference_solution"]) == reference(task)
        assert json.loads(row["reward_spec"]) == task.reward_spec
        assert json.loads(row["initial_state"]) == source.full_state(task.initial_state)
        assert json.loads(row["user_profile"]) == task.user_profile
        assert row["policy"] == source.policy


# -- verl -----------------------------------------------------------------------------------
class _Message(BaseModel):
    model_config = ConfigDict(extra="forbid")
    role: Literal["system", "user", "assistant", "tool"]
    content: str


class _ToolKwargs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    create_kwargs: dict[str, Any]  # passed to BaseTool.create; execute/calc_reward/release kwargs are optional


class _Interaction(BaseModel):
    model_config = ConfigDict(extra="allow")
    name: str  # verl's tool agent loop refuses interaction_kwargs without the interaction's name


class _VerlExtra(BaseModel):
    model_config = ConfigDict(extra="allow")
    index: int
    need_tools_kwargs: bool
    tools_kwargs: dict[str, _ToolKwargs]
    interaction_kwargs: _Interaction


class _RewardModel(BaseModel):
    model_config = ConfigDict(extra="forbid")
    style: str
    ground_truth: str


class VerlRow(BaseModel):
    """verl's multi-turn (agent loop) dataset row, as its docs and gsm8k_multiturn_w_tool example state it."""

    model_config = ConfigDict(extra="forbid")
    data_source: str
    agent_name: Literal["tool_agent"]
    prompt: list[_Message]
    ability: str
    reward_model: _RewardModel
    extra_info: _VerlExtra


@needs_trainers
def test_verl_rows_follow_verls_multi_turn_schema(exported, source, tmp_path):
    rows = in_trainers(f"""
        import json
        from datasets import load_dataset
        rows = load_dataset("parquet", data_files={str(exported / "verl/data/train.parquet")!r}, split="train")
        print(json.dumps(rows.to_list()))
    """, tmp_path)
    tasks = {t.id: t for t in source.tasks}
    names = {tool["function"]["name"] for tool in source.tools}
    assert len(rows) == BUNDLED
    for index, raw in enumerate(rows):
        row = VerlRow.model_validate(raw)
        task = tasks[raw["extra_info"]["task_id"]]
        assert row.extra_info.index == index and row.data_source == "worldsmith/job_seeking"
        assert set(row.extra_info.tools_kwargs) == names  # every tool the model may call is bound
        binding = {"base_url": BASE_URL, "domain": "job_seeking", "task_id": task.id}
        assert all(kw.create_kwargs == binding for kw in row.extra_info.tools_kwargs.values())
        assert row.extra_info.interaction_kwargs.model_dump() == {"name": "worldsmith", **binding}
        assert [m.role for m in row.prompt] == ["system", "user"] and row.prompt[1].content == task.instruction
        truth = json.loads(row.reward_model.ground_truth)
        assert truth["task_id"] == task.id and truth["reference_solution"] == reference(task)


def test_verl_kwargs_open_a_served_episode_of_the_row_task(exported):
    """The documented mapping, on the HTTP control API: request id -> episode of the row's task."""
    rows = jsonl(exported / "verl/data/train.jsonl")
    with Environment("job_seeking", max_episodes=8) as env:
        client = TestClient(create_app(env, token=TOKEN), headers=bearer(TOKEN))
        for row in (rows[0], rows[len(rows) // 2], rows[-1]):
            kwargs = row["extra_info"]["interaction_kwargs"]
            request_id = f"req-{row['extra_info']['index']}"
            created = client.post("/episodes", json={"task_id": kwargs["task_id"], "episode_id": request_id})
            assert created.status_code == 201, created.text
            assert created.json()["instruction"] == row["prompt"][1]["content"]
            assert created.json()["mcp_url"].endswith(f"/episodes/{request_id}/mcp")
            again = client.post("/episodes", json={"task_id": kwargs["task_id"], "episode_id": request_id})
            assert again.status_code == 409  # a tool that comes second finds the episode open
            assert client.get(f"/episodes/{request_id}").json()["task_id"] == row["extra_info"]["task_id"]
            assert client.delete(f"/episodes/{request_id}").status_code in (200, 204)


# -- SkyRL ----------------------------------------------------------------------------------
@needs_trainers
def test_skyrl_rows_make_skyrl_gym_environments(exported, source, tmp_path):
    (tmp_path / "probe_env.py").write_text(textwrap.dedent("""
        from skyrl_gym.envs.base_text_env import BaseTextEnv

        class Probe(BaseTextEnv):
            '''Keeps what SkyRL hands an environment: the row's extras.'''
            def __init__(self, env_config, extras):
                super().__init__()
                assert "ground_truth" in extras["reward_spec"]
                self.extras = extras
    """))
    seen = in_trainers(f"""
        import json, sys
        sys.path.insert(0, ".")
        import skyrl_gym
        from datasets import load_dataset
        rows = load_dataset("parquet", data_files={str(exported / "skyrl/data/train.parquet")!r}, split="train")
        skyrl_gym.register(id=rows[0]["env_class"], entry_point="probe_env:Probe")
        seen = []
        for row in rows:
            extras = {{k: v for k, v in row.items() if k not in ("prompt", "env_class")}}
            env = skyrl_gym.make(row["env_class"], env_config={{}}, extras=extras)
            prompt, _ = env.init(row["prompt"])
            seen.append({{"env_class": row["env_class"], "prompt": prompt, "extras": env.extras}})
            env.close()
        print(json.dumps(seen))
    """, tmp_path)
    tasks = {t.id: t for t in source.tasks}
    assert len(seen) == BUNDLED
    for item in seen:
        task = tasks[item["extras"]["extra_info"]["task_id"]]
        assert item["env_class"] == "worldsmith"
        assert item["prompt"] == source.prompt(task)
        assert item["extras"]["extra_info"]["base_url"] == BASE_URL
        assert item["extras"]["reward_spec"]["method"] == "rule"
        assert json.loads(item["extras"]["reward_spec"]["ground_truth"])["reference_solution"] == reference(task)


# -- tau2-bench -----------------------------------------------------------------------------
@needs_trainers
def test_tau2_folder_loads_with_tau2_bench_loaders(exported, source, tmp_path):
    tables = [t.name for t in source.spec.db.tables]
    loaded = in_trainers(f"""
        import json
        from pydantic import create_model
        from tau2.data_model.tasks import Task
        from tau2.environment.db import DB
        from tau2.utils import load_file
        from tau2.utils.pydantic_utils import update_pydantic_model_with_dict
        folder = {str(exported / "tau2")!r}
        tasks = [Task.model_validate(t) for t in load_file(folder + "/tasks.json")]
        Schema = create_model("ExportedDB", __base__=DB, **{{t: (list[dict], ...) for t in {tables!r}}})
        db = Schema.load(folder + "/db.json")
        out = []
        for task in tasks:
            start = update_pydantic_model_with_dict(db, task.initial_state.initialization_data.agent_data)
            out.append({{"id": task.id, "start": start.model_dump(), "reason": task.user_scenario.instructions.reason_for_call,
                        "actions": [[a.name, a.arguments, a.requestor] for a in task.evaluation_criteria.actions],
                        "basis": [b.value for b in task.evaluation_criteria.reward_basis],
                        "communicate": task.evaluation_criteria.communicate_info,
                        "policies": task.description.relevant_policies}})
        print(json.dumps({{"policy": load_file(folder + "/policy.md"), "db": db.model_dump(), "tasks": out}}))
    """, tmp_path)
    tasks = {t.id: t for t in source.tasks}
    assert loaded["db"] == source.full_state(source.sample_state)
    assert loaded["policy"] == source.policy if source.policy else "# job_seeking agent policy" in loaded["policy"]
    assert len(loaded["tasks"]) == BUNDLED
    for item in loaded["tasks"]:
        task = tasks[item["id"]]
        assert item["start"] == source.full_state(task.initial_state)  # the task's tables replace the sample's
        assert item["reason"] == task.instruction
        assert item["actions"] == [[c.tool, c.arguments, "assistant"] for c in task.reference_solution]
        # an answer task is also graded on what the agent tells the user; a refusal task names its rule
        assert item["basis"] == (["DB", "COMMUNICATE"] if task.kind == "answer" else ["DB"])
        assert item["communicate"] == ([str(f.value) for f in task.facts] if task.kind == "answer" else [])
        assert item["policies"] == (task.policy_rule.rule if task.kind == "refusal" else None)
    assert {t.kind for t in source.tasks} == {"change", "answer", "refusal"}


# -- Agent World Model -----------------------------------------------------------------------
def _awm_files(folder: Path) -> dict[str, dict]:
    """The files keyed by normalised scenario name, as OpenEnv's AWM data loader reads them."""
    def norm(name: str) -> str:
        return re.sub(r"_+", "_", re.sub(r"[^a-z0-9_]", "_", name.lower())).strip("_")

    files = {}
    for name, key in [("gen_scenario", "name"), ("gen_tasks", "scenario"), ("gen_db", "scenario"),
                      ("gen_sample", "scenario"), ("gen_verifier.pure_code", "scenario"), ("gen_verifier", "scenario")]:
        files[name] = {norm(entry[key]): entry for entry in jsonl(folder / f"{name}.jsonl")}
    return files


def _database(path: Path, db_schema: dict, tables: list[dict]) -> Path:
    connection = sqlite3.connect(path)
    for table in db_schema["tables"]:
        connection.execute(table["ddl"])  # AWM only logs a failing statement: here any failure fails
    for table in tables:
        for statement in table["insert_statements"]:
            connection.execute(statement)
    connection.commit()
    connection.close()
    return path


def _verify(code: str, initial: Path, final: Path, answer: str = "") -> dict:
    namespace = {"__builtins__": __builtins__}  # AWM's sandbox adds only sqlite3, json and re
    exec(code, namespace)  # our own exported verifier
    return namespace["verify_task_completion"](initial_db_path=str(initial), final_db_path=str(final),
                                               final_answer=answer)


def _rows(path: Path) -> dict[str, list[dict]]:
    connection = sqlite3.connect(path)
    connection.row_factory = sqlite3.Row
    names = [r[0] for r in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    out = {n: [dict(r) for r in connection.execute(f'SELECT * FROM "{n}"')] for n in names}
    connection.close()
    return out


# AWM's verdicts by kind: a refusal task's reference outcome is the untouched state (the forbidden
# call, refused by the tool, leaves no trace in the database: worldsmith's reward checks it).
AWM_VERDICTS = {"change": {"reference": "complete", "untouched": "others"},
                "answer": {"reference": "complete", "untouched": "others", "reference without the facts": "others"},
                "refusal": {"reference": "complete", "untouched": "complete"}}


def test_awm_files_build_the_task_databases_and_verify_the_reference_outcome(exported, source, tmp_path):
    files = _awm_files(exported / "awm")
    assert all(len(entries) == BUNDLED for entries in files.values())
    tasks = {t.id: t for t in source.tasks}
    verdicts = {}
    with Environment("job_seeking") as env:
        for task in (tasks[task_id] for task_id in sample(DOMAIN)):
            scenario = f"job_seeking_{task.id}"
            assert files["gen_tasks"][scenario]["tasks"] == [task.instruction]
            schema = files["gen_db"][scenario]["db_schema"]
            initial = _database(tmp_path / f"{task.id}.initial.db", schema,
                                files["gen_sample"][scenario]["sample_data"]["tables"])
            want = source.full_state(task.initial_state)
            got = _rows(initial)
            pks = {t.name: t.primary_key.name for t in source.spec.db.tables}
            assert {n: sorted(r, key=lambda row: row[pks[n]]) for n, r in got.items()} == \
                   {n: sorted(r, key=lambda row: row[pks[n]]) for n, r in want.items()}
            final = _database(tmp_path / f"{task.id}.final.db", schema, inserts(source.spec.db, env.expected_state(task.id)))
            entry = files["gen_verifier.pure_code"][scenario]
            assert entry["task_idx"] == 0 and files["gen_verifier"][scenario] == entry
            code, answer = entry["verification"]["code"], final_message(task.model_dump(mode="json"))
            got = {"reference": _verify(code, initial, final, answer)["result"],
                   "untouched": _verify(code, initial, initial)["result"]}
            if task.kind == "answer":
                got["reference without the facts"] = _verify(code, initial, final, "Done.")["result"]
            verdicts.setdefault(task.kind, []).append(got)
    assert set(verdicts) == set(AWM_VERDICTS)  # the sample holds every kind
    assert verdicts == {kind: [AWM_VERDICTS[kind]] * len(got) for kind, got in verdicts.items()}


def test_awm_verifier_follows_generated_ids_and_catches_wrong_values(exported, source, tmp_path):
    files = _awm_files(exported / "awm")
    tasks = {t.id: t for t in source.tasks}
    # task_002 creates an application and then works on it: its inserts carry a generated id
    task = tasks["task_002"]
    scenario = f"job_seeking_{task.id}"
    schema = files["gen_db"][scenario]["db_schema"]
    code = files["gen_verifier.pure_code"][scenario]["verification"]["code"]
    initial = _database(tmp_path / "initial.db", schema, files["gen_sample"][scenario]["sample_data"]["tables"])
    with Environment("job_seeking") as env:
        expected = env.expected_state(task.id)
    before = {r["application_id"] for r in task.initial_state["job_application"]}
    new = [r for r in expected["job_application"] if r["application_id"] not in before]
    assert len(new) == 1
    renamed = json.loads(json.dumps(expected).replace(new[0]["application_id"], "APP-9999"))
    verdict = _verify(code, initial, _database(tmp_path / "renamed.db", schema, inserts(source.spec.db, renamed)))
    assert verdict["result"] == "complete"
    wrong = json.loads(json.dumps(expected))
    row = next(r for r in wrong["job_application"] if r["application_id"] == new[0]["application_id"])
    row["company_name"] += " Ltd"
    verdict = _verify(code, initial, _database(tmp_path / "wrong.db", schema, inserts(source.spec.db, wrong)))
    assert verdict["result"] == "others" and verdict["failed"]
    extra = json.loads(json.dumps(expected))
    touched = extra["job_application"][0]  # a distractor row the task does not ask to change
    touched["priority_level"] = 2 if touched["priority_level"] == 1 else 1
    assert _verify(code, initial, _database(tmp_path / "extra.db", schema, inserts(source.spec.db, extra)))["result"] == "others"


# -- what the agent sees ----------------------------------------------------------------------
def _strings(value) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def test_agent_channel_carries_no_answers(exported, source):
    """Values of a reference solution the user's request does not state (record ids, looked-up
    values) and an answer task's facts appear in no prompt, tool schema or tool/interaction argument
    of any format."""
    tasks = {t.id: t for t in source.tasks}
    rows = [(r["extra_info"]["task_id"], [r["prompt"], r["extra_info"]["tools_kwargs"], r["extra_info"]["interaction_kwargs"]])
            for r in jsonl(exported / "verl/data/train.jsonl")]
    rows += [(r["extra_info"]["task_id"], [r["prompt"], r["extra_info"]]) for r in jsonl(exported / "skyrl/data/train.jsonl")]
    rows += [(r["id"], [r["prompt"], r["tools"], r["policy"]]) for r in jsonl(exported / "hf/data/train.jsonl")]
    schemas = json.dumps(source.tools, ensure_ascii=False)  # enum values are the agent's to see
    checked = 0
    for task_id, agent_side in rows:
        task = tasks[task_id]
        visible = json.dumps(agent_side, ensure_ascii=False)
        said = [s for call in task.reference_solution for s in _strings(call.arguments)]
        said += [str(fact.value) for fact in task.facts or []]  # an answer task's facts are the agent's to find
        hidden = {s for s in said if len(s) > 3 and s not in task.instruction and s not in schemas}
        for secret in hidden:
            assert secret not in visible, f"{task_id}: {secret!r} reaches the agent"
        checked += len(hidden)
    assert checked >= len(source.tasks)  # the check has something to find: ids the agent must look up


# -- the command line -------------------------------------------------------------------------
def test_bad_input_is_refused_and_keeps_earlier_exports(tmp_path, exported):
    def run(*args):
        return subprocess.run([sys.executable, "-m", "export", *args], cwd=ROOT, capture_output=True, text=True,
                              timeout=120)

    missing = run("no_such_domain", "--out", str(tmp_path))
    assert missing.returncode == 2 and "no domain 'no_such_domain'" in missing.stderr
    broken = tmp_path / "broken"
    for name in ("spec.json", "report.json", "db.py", "tools.py"):
        (broken / name).parent.mkdir(parents=True, exist_ok=True)
        (broken / name).write_text((ROOT / "domains/job_seeking" / name).read_text())
    (broken / "tasks").mkdir()
    none = run(str(broken), "--out", str(tmp_path / "out"))
    assert none.returncode == 2 and "has no tasks" in none.stderr
    (broken / "tasks" / "task_001.json").write_text('{"id": "task_001", "reference_solution": "not a list"}')
    out = tmp_path / "out"
    (out / "hf").mkdir(parents=True)
    (out / "hf" / "keep.txt").write_text("earlier export")
    bad = run(str(broken), "--format", "hf", "--out", str(out))
    assert bad.returncode == 2 and "task_001.json is not a valid task" in bad.stderr
    assert (out / "hf" / "keep.txt").read_text() == "earlier export"
    (broken / "tasks" / "task_001.json").write_text((ROOT / "domains/job_seeking/tasks/task_002.json").read_text())
    renamed = run(str(broken), "--format", "hf", "--out", str(out))
    assert renamed.returncode == 2 and "holds task 'task_002'" in renamed.stderr
    url = run("job_seeking", "--format", "verl", "--base-url", "ftp://x", "--out", str(out))
    assert url.returncode == 2 and "--base-url" in url.stderr


def test_a_failing_writer_leaves_the_previous_export(tmp_path, monkeypatch):
    import export.__main__ as cli

    def fails(source, out, **_):
        (out / "data").mkdir(parents=True)
        (out / "data" / "half.jsonl").write_text("{}\n")
        raise RuntimeError("disk full")

    (tmp_path / "hf").mkdir()
    (tmp_path / "hf" / "train.parquet").write_text("earlier export")
    monkeypatch.setitem(cli.WRITERS, "hf", fails)
    with pytest.raises(RuntimeError, match="disk full"):
        cli.run("job_seeking", ["hf"], tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["hf"]  # no partial folder left behind
    assert (tmp_path / "hf" / "train.parquet").read_text() == "earlier export"


def test_single_turn_exports_leave_out_the_tasks_that_need_the_user(tmp_path):
    from export.__main__ import run

    conversational = {t.id for t in read_domain("job_seeking").tasks if t.mode == "conversational"}
    written = run("job_seeking", ["hf"], tmp_path, single_turn=True)
    jsonl = next(p for p in written["hf"] if p.suffix == ".jsonl")
    exported = {json.loads(line)["id"] for line in jsonl.read_text().splitlines()}
    assert conversational and exported and not exported & conversational
    assert len(exported) == len(read_domain("job_seeking").tasks) - len(conversational)
