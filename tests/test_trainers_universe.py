"""The trainer adapters in front of one server of two domains: verifiers' taskset over both with
one held out, and the OpenEnv adapter playing a task of each to 1.0 with its reference solution."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from domains.registry import ROOT_ENV
from domains.task_model import Task
from mcp_servers.control_token import TOKEN_ENV
from mcp_servers.http_process import http_server
from tests.support.domain_copies import domains_root

ROOT = Path(__file__).resolve().parent.parent
TRAINERS = ROOT / ".venv-trainers" / "bin" / "python"
pytestmark = [pytest.mark.slow, pytest.mark.integration, pytest.mark.timeout(900),
              pytest.mark.skipif(not TRAINERS.is_file(), reason="needs .venv-trainers (make trainers-env)")]


def test_adapters_serve_two_domains_from_one_server(tmp_path, fixture_domain, monkeypatch):
    root = domains_root(tmp_path / "domains", ["job_seeking"], tasks=1)
    shutil.copytree(fixture_domain, root / "reading_list")
    solutions = {domain: {task: [c.model_dump() for c in Task.model_validate_json(
        (root / domain / "tasks" / f"{task}.json").read_text()).reference_solution]}
        for domain, task in (("job_seeking", "task_001"), ("reading_list", "finish_dune"))}
    (tmp_path / "solutions.json").write_text(json.dumps(solutions))
    monkeypatch.setenv(ROOT_ENV, str(root))
    with http_server("job_seeking,reading_list", startup_s=120) as served:
        env = {**os.environ, "PYTHONPATH": str(ROOT), TOKEN_ENV: served.token}
        done = subprocess.run([str(TRAINERS), str(ROOT / "tests" / "support" / "trainers_universe_probe.py"),
                               served.url, str(tmp_path / "solutions.json")], cwd=ROOT, env=env,
                              capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-4000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["splits"] == {
        "train": [["job_seeking/task_001", {"task_id": "task_001", "domain": "job_seeking"}]],
        "test": [[f"reading_list/{t}", {"task_id": t, "domain": "reading_list"}]
                 for t in ("broken_reference", "finish_dune")]}
    assert {d: p["reward"] for d, p in out["played"].items()} == {"job_seeking": 1.0, "reading_list": 1.0}
    assert "mark_read" in out["played"]["reading_list"]["tools"]
    assert "mark_read" not in out["played"]["job_seeking"]["tools"]
