"""The live trainer adapters (trainers/), driven by the trainers' own client libraries from
.venv-trainers against a served job_seeking: the reference solution earns 1.0 on every bundled
task, doing nothing earns less, and no observation or state carries a reward before the end."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from mcp_servers.runtime import resolve_domain
from rollouts.evaluate import mcp_server
from tasks.model import task_ids

ROOT = Path(__file__).resolve().parent.parent
TRAINERS = ROOT / ".venv-trainers" / "bin" / "python"
pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not TRAINERS.is_file(), reason="needs .venv-trainers (make trainers-env)")]


@pytest.fixture(scope="module")
def worldsmith_url():
    with mcp_server(resolve_domain("job_seeking"), workers=2) as url:
        yield url


def in_trainers(script: str, *args: str) -> dict:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([str(TRAINERS), str(ROOT / "tests" / script), *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-4000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_openenv_client_plays_every_task_over_websocket_and_http(worldsmith_url):
    out = in_trainers("trainers_openenv_probe.py", worldsmith_url, str(ROOT / "domains" / "job_seeking" / "tasks"))
    tasks = task_ids(resolve_domain("job_seeking"))
    assert sorted(out["reference"]) == tasks
    assert all(out["reference"][t] == 1.0 for t in tasks), out["reference"]
    assert all(out["noop"][t] is not None and out["noop"][t] < 1.0 for t in tasks), out["noop"]
    assert out["http"] == {"task": tasks[0], "reward": 1.0, "done": True}
    assert out["leaks"] == []


def test_verifiers_own_openenv_loop_plays_every_task(worldsmith_url):
    out = in_trainers("trainers_verifiers_probe.py", worldsmith_url, str(ROOT / "domains" / "job_seeking" / "tasks"))
    tasks = task_ids(resolve_domain("job_seeking"))
    assert out["tasks"] == len(tasks) and sorted(out["reference"]) == tasks
    assert all(out["reference"][t] == 1.0 for t in tasks), out["reference"]
    assert all(out["noop"][t] < 1.0 for t in tasks), out["noop"]
    assert out["leaks"] == []
    assert out["splits"]["train"] + out["splits"]["test"] == len(tasks) and out["splits"]["test"] > 0


def test_verl_tool_and_interaction_configs_play_every_task(worldsmith_url, tmp_path):
    out = in_trainers("trainers_verl_probe.py", worldsmith_url, str(ROOT / "domains" / "job_seeking" / "tasks"),
                      str(tmp_path))
    tasks = task_ids(resolve_domain("job_seeking"))
    assert out["interaction_name"] == "worldsmith"  # the name the exported verl rows carry
    assert sorted(out["reference"]) == tasks
    for task in tasks:
        played = out["reference"][task]
        assert played["episode"] and played["done"] and played["score"] == 1.0, (task, played)
        assert set(played["step_rewards"]) <= {0.0}  # no reward before the episode ends
        assert out["noop"][task]["score"] < 1.0
