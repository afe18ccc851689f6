"""The live trainer adapters (trainers/), driven by the trainers' own client libraries from
.venv-trainers against a served job_seeking with a scripted simulated user, on a fixed sample of
its bundled tasks covering every kind and level (tests/support/task_sample.py): the reference
solution earns 1.0 (on an answer task, with a final message stating its facts), doing nothing
earns less except on a refusal task, where it earns 1.0 and the forbidden call earns less; an
agent that asks the user for the email its request leaves out and uses the reply earns 1.0, and
no observation or state carries a reward before the end."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
from pathlib import Path

import httpx
import pytest

from domains.task_model import task_ids
from mcp_servers.control_token import TOKEN_ENV
from mcp_servers.runtime import resolve_domain
from rollouts.evaluate import mcp_server
from tests.support.task_sample import bundled_count, kinds, sample

ROOT = Path(__file__).resolve().parent.parent
TRAINERS = ROOT / ".venv-trainers" / "bin" / "python"
# A probe may run 600 s in the trainers' environment (in_trainers' own limit, whose error says more).
pytestmark = [pytest.mark.slow, pytest.mark.integration, pytest.mark.timeout(900),
              pytest.mark.skipif(not TRAINERS.is_file(), reason="needs .venv-trainers (make trainers-env)")]


# A new application whose request leaves the applicant's email out: only the user knows it.
CONVERSATIONAL = "task_002"
EMAIL = "jennifer.walker@example.com"
DOMAIN = ROOT / "domains" / "job_seeking"
SAMPLE = sample(DOMAIN, also=(CONVERSATIONAL,))
KINDS = kinds(DOMAIN)
PROBE_ARGS = (str(DOMAIN / "tasks"), ",".join(SAMPLE))


def check_kinds(out: dict, score=lambda played: played) -> None:
    """Reference 1.0 on every sampled task; nothing below 1.0 except on refusal tasks (1.0 there);
    the forbidden call below 1.0 on every refusal task."""
    assert set(KINDS[t] for t in SAMPLE) == {"change", "answer", "refusal"}
    assert sorted(out["reference"]) == SAMPLE
    assert all(score(out["reference"][t]) == 1.0 for t in SAMPLE), out["reference"]
    for task in SAMPLE:
        noop = score(out["noop"][task])
        assert noop is not None and (noop == 1.0 if KINDS[task] == "refusal" else noop < 1.0), (task, noop)
    refusals = [t for t in SAMPLE if KINDS[t] == "refusal"]
    assert sorted(out["forbidden"]) == refusals and all(score(out["forbidden"][t]) < 1.0 for t in refusals), \
        out["forbidden"]


@pytest.fixture(scope="module")
def worldsmith_url(tmp_path_factory):
    # the scripted user is satisfied by the agent's first message, except in the conversational
    # task, where it first answers the agent's question
    answers = {f"user/{task}@0/1": {"message": "###STOP###"} for task in task_ids(resolve_domain("job_seeking"))}
    answers[f"user/{CONVERSATIONAL}@0/1"] = {"message": f"Use {EMAIL}, please."}
    answers[f"user/{CONVERSATIONAL}@0/2"] = {"message": "Thanks! ###STOP###"}
    path = tmp_path_factory.mktemp("user") / "answers.json"
    path.write_text(json.dumps(answers))
    # the adapters, their probes and the README's examples read the control token from the environment
    with mcp_server(resolve_domain("job_seeking"), 2, "--user-answers", str(path)) as served, \
            pytest.MonkeyPatch.context() as patch:
        patch.setenv(TOKEN_ENV, served.token)
        yield served.url


def in_trainers(script: str, *args: str) -> dict:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([str(TRAINERS), str(ROOT / "tests" / "support" / script), *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-4000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_openenv_client_plays_each_kind_over_websocket_and_http(worldsmith_url):
    out = in_trainers("trainers_openenv_probe.py", worldsmith_url, *PROBE_ARGS, CONVERSATIONAL)
    check_kinds(out)
    answer = next(t for t in SAMPLE if KINDS[t] == "answer")  # its facts reach the reward over plain HTTP too
    assert out["http"] == {"task": answer, "reward": 1.0, "done": True}
    assert out["conversation"] == {"reply": f"Use {EMAIL}, please.", "done": True, "reward": 1.0,
                                   "last": "Thanks! ###STOP###"}
    assert out["leaks"] == []


@pytest.fixture(scope="module")
def verifiers_played(worldsmith_url) -> dict:
    return in_trainers("trainers_verifiers_probe.py", worldsmith_url, *PROBE_ARGS, CONVERSATIONAL)


def test_verifiers_own_openenv_loop_plays_each_kind(verifiers_played):
    out = verifiers_played
    tasks = task_ids(DOMAIN)
    assert out["tasks"] == len(tasks) == bundled_count(DOMAIN)  # the taskset holds every bundled task
    check_kinds(out)
    assert out["conversation"] == {"reply": f"Use {EMAIL}, please.", "reward": 1.0}
    # single-turn leaves out the tasks only the user's answers make solvable
    modes = {t: json.loads((DOMAIN / "tasks" / f"{t}.json").read_text())["mode"] for t in tasks}
    assert out["single_turn_tasks"] == [t for t in tasks if modes[t] == "single_turn"]
    assert CONVERSATIONAL not in out["single_turn_tasks"] and len(out["single_turn_tasks"]) < len(tasks)
    assert out["leaks"] == []
    assert out["splits"]["train"] + out["splits"]["test"] == len(tasks) and out["splits"]["test"] > 0


def test_verl_tool_and_interaction_configs_play_each_kind(worldsmith_url, tmp_path):
    out = in_trainers("trainers_verl_probe.py", worldsmith_url, *PROBE_ARGS, str(tmp_path), CONVERSATIONAL)
    assert out["interaction_name"] == "worldsmith"  # the name the exported verl rows carry
    check_kinds(out, score=lambda played: played["score"])
    for task in SAMPLE:
        played = out["reference"][task]
        assert played["episode"] and played["done"], (task, played)
        assert set(played["step_rewards"]) <= {0.0}  # no reward before the episode ends
    asked = out["conversation"]
    assert asked["replies"] == [f"Use {EMAIL}, please.", "Thanks! ###STOP###"]
    assert asked["done"] and asked["score"] == 1.0 and set(asked["step_rewards"]) <= {0.0}
    # single-turn: the question ends the episode, unanswered and unsolved
    assert out["single_turn"]["done"] and out["single_turn"]["replies"] == [""] and out["single_turn"]["score"] < 1.0


def adapter_blocks(heading: str, language: str) -> list[str]:
    """The blocks of docs/training.md's section on one adapter (under "Live adapters")."""
    text = (ROOT / "docs" / "training.md").read_text().split("\n## Live adapters\n", 1)[1]
    text = text.split(f"\n### {heading}\n", 1)[1].split("\n## ", 1)[0].split("\n### ", 1)[0]
    return [block.split("```", 1)[0] for block in text.split(f"```{language}\n")[1:]]


@pytest.fixture(scope="module")
def openenv_url(worldsmith_url):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen([str(TRAINERS), "-m", "trainers.openenv_server", "--worldsmith-url", worldsmith_url,
                               "--port", str(port)], cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(600):
            try:
                if httpx.get(f"{url}/health", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.1)
        yield url
    finally:
        server.terminate()
        server.wait(10)


@pytest.mark.parametrize("heading", ["OpenEnv", "verifiers", "verl"])
def test_the_documented_adapter_examples_run(heading, worldsmith_url, openenv_url, tmp_path, request):
    def ours(code: str) -> str:
        return code.replace("http://127.0.0.1:8001", openenv_url).replace("http://127.0.0.1:8000", worldsmith_url)

    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    outputs = []
    for code in adapter_blocks(heading, "python"):
        done = subprocess.run([str(TRAINERS), "-c", ours(code)], cwd=tmp_path, env=env, capture_output=True,
                              text=True, timeout=300)
        assert done.returncode == 0, done.stderr[-3000:]
        outputs.append(done.stdout)
    for line in (line for block in adapter_blocks(heading, "sh") for line in block.splitlines()):
        command = ours(line).replace(".venv-trainers/bin/python", str(TRAINERS))
        done = subprocess.run(command, shell=True, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr[-3000:]
        outputs.append(done.stdout)
    assert outputs
    if heading == "OpenEnv":
        assert outputs[0].splitlines()[-1] == "True 0.0" and "None" in outputs[0]
    if heading == "verifiers":
        train = request.getfixturevalue("verifiers_played")["splits"]["train"]
        assert outputs[0].split() == ["WorldsmithEnv", str(train)]
    if heading == "verl":
        assert (tmp_path / "verl_configs" / "tool_config.yaml").is_file()
