"""`python -m pipeline.universe --ray`: each domain a Ray task on an embedded local Ray, with the
progress, the failure isolation and the summary of the local run; an offline rebuild on Ray is
byte-identical to the bundled domains (the serial run's output), also after the run is killed
halfway and started again."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

ray = pytest.importorskip("ray")

from domains.registry import ROOT_ENV  # noqa: E402
from pipeline.universe import run_all, stage_of, summary  # noqa: E402
from tests.test_pipeline_universe import SCRIPTS  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
REBUILT = ["pet_care"]  # one of the smallest bundled domains (two at once: the failing-domain test)
KEPT = ("transcript.jsonl", "index.json", "README.md")  # what a rebuild reads (index.json: the task
# stage's recorded settings, rewritten by it), or does not write


@pytest.mark.integration
def test_a_failing_domain_task_neither_stops_nor_hides_another(tmp_path):
    from pipeline.universe_ray import starter

    start = starter()
    try:
        said = []
        done = run_all(["broken", "fine"], lambda name: [sys.executable, "-c", SCRIPTS[name]], 2, tmp_path / "logs",
                       say=said.append, start=start)
    finally:
        ray.shutdown()
    assert [(job.name, job.code) for job in done] == [("broken", 3), ("fine", 0)]
    assert (tmp_path / "logs" / "fine.log").read_text() == "schema: 3 tools proposed\ngraph: 9 edges\n"
    progress = "\n".join(said)
    assert "fine: graph (" in progress and "fine: passed in" in progress and "broken: FAILED (exit 3)" in progress
    assert summary(done).splitlines()[-1] == "1 of 2 domains passed"


def _inputs_only(target: Path) -> dict[str, bytes]:
    """Copies of the rebuilt domains under `target` holding only what a rebuild reads; returns every
    tracked file of theirs, as bundled, by its path under the domains root."""
    listed = subprocess.run(["git", "ls-files", "-z", *(f"domains/{name}" for name in REBUILT)], cwd=ROOT,
                            capture_output=True, check=True).stdout.decode().split("\0")
    bundled = {path.removeprefix("domains/"): (ROOT / path).read_bytes() for path in listed if path}
    for relative, content in bundled.items():
        if Path(relative).name in KEPT:
            (target / relative).parent.mkdir(parents=True, exist_ok=True)
            (target / relative).write_bytes(content)
    return bundled


def _universe(root: Path, logs: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "pipeline.universe", ",".join(REBUILT), "--ray", "--logs",
                             str(logs)], cwd=ROOT, env={**os.environ, ROOT_ENV: str(root)}, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)


def _stages(log: Path) -> set[str]:
    return set(filter(None, map(stage_of, log.read_text(errors="replace").splitlines()))) if log.exists() else set()


def _domain_processes(root: Path) -> list[int]:
    """The domains' own processes (python -m pipeline NAME) of a run whose registry points at `root`."""
    marker = f"{ROOT_ENV}={root}".encode()
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            command = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            if command[1:3] == [b"-m", b"pipeline"] and marker in Path(f"/proc/{pid}/environ").read_bytes().split(b"\0"):
                found.append(int(pid))
        except (OSError, IndexError):
            pass
    return found


@pytest.mark.slow
@pytest.mark.integration
@pytest.mark.timeout(2400)
def test_an_offline_rebuild_on_ray_is_byte_identical_even_after_a_kill(tmp_path):
    root = tmp_path / "domains"
    bundled = _inputs_only(root)

    first = _universe(root, tmp_path / "logs-1")  # killed once the domain is building its tools
    deadline = time.monotonic() + 900
    while not all(_stages(tmp_path / "logs-1" / f"{name}.log") & {"tools"} for name in REBUILT):
        assert first.poll() is None, first.stderr.read()
        assert time.monotonic() < deadline, "the domains did not start building their tools"
        time.sleep(1)
    first.kill()  # the driver alone, as a crash takes it: Ray's processes and the domains' follow
    first.wait()
    deadline = time.monotonic() + 300  # the domains' processes die with Ray's workers, once Ray sees the driver gone
    while _domain_processes(root) and time.monotonic() < deadline:
        time.sleep(1)
    assert not _domain_processes(root), "a domain's process outlived the killed run"

    second = _universe(root, tmp_path / "logs-2")
    _out, err = second.communicate(timeout=2000)
    assert second.returncode == 0, err[-3000:]
    assert f"{len(REBUILT)} of {len(REBUILT)} domains passed" in err
    for name in REBUILT:
        log = (tmp_path / "logs-2" / f"{name}.log").read_text()
        assert "replay stopped" not in log and "MissingStep" not in log, log[-2000:]
    differ = [path for path, content in bundled.items()
              if not (root / path).is_file() or (root / path).read_bytes() != content]
    assert not differ, f"rebuilt on Ray, these differ from the bundled files: {differ[:10]}"
