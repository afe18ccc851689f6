"""Commands over many domains: each domain a process of its own, progress as it goes, a summary of
what passed and failed, and no failure stopping another domain."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline.universe import run_all, summary
from tests.support.domain_copies import root_env

ROOT = Path(__file__).resolve().parent.parent

SCRIPTS = {  # what each fake domain's process prints, and how it exits
    "broken": "print('schema: 3 tools proposed', flush=True); print('graph: ValueError: the error that stopped it'); "
              "print('worldsmith: cleaning up'); raise SystemExit(3)",
    "fine": "import time; print('schema: 3 tools proposed', flush=True); time.sleep(1.2); print('graph: 9 edges')",
}


@pytest.mark.integration  # processes of their own
@pytest.mark.parametrize("jobs", [1, 2])
def test_a_failing_domain_neither_stops_nor_hides_another(tmp_path, jobs):
    said = []
    done = run_all(["broken", "fine"], lambda name: [sys.executable, "-c", SCRIPTS[name]], jobs, tmp_path / "logs",
                   say=said.append)
    assert [(job.name, job.code) for job in done] == [("broken", 3), ("fine", 0)]
    assert (tmp_path / "logs" / "fine.log").read_text() == "schema: 3 tools proposed\ngraph: 9 edges\n"
    progress = "\n".join(said)
    assert "fine: graph (" in progress and "fine: passed in" in progress and "broken: FAILED (exit 3)" in progress
    table = summary(done)
    failed = next(line for line in table.splitlines() if line.startswith("broken"))
    assert str(tmp_path / "logs" / "broken.log") in failed and failed.endswith("graph: ValueError: the error that stopped it")
    assert table.splitlines()[-1] == "1 of 2 domains passed"


@pytest.mark.integration
def test_the_command_reports_each_unbuilt_domain_and_exits_non_zero(tmp_path):
    env = {**os.environ, **root_env(tmp_path / "empty")}
    done = subprocess.run([sys.executable, "-m", "pipeline.universe", "wedding_planning,pet_care", "--jobs", "2",
                           "--logs", str(tmp_path / "logs")], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 1
    rows = {line.split()[0]: line for line in done.stderr.splitlines() if line.startswith(("wedding_planning ", "pet_care "))}
    assert set(rows) == {"wedding_planning", "pet_care"}
    assert all("FAILED (2)" in row and "no model is configured" in row for row in rows.values())
    bad = subprocess.run([sys.executable, "-m", "pipeline.universe", "Not-A-Name"], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "not a domain name" in bad.stderr
