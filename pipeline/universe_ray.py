"""Domains as Ray tasks: what `python -m pipeline.universe NAMES --ray` starts instead of local processes.

Each domain's command (pipeline.universe.command_for: `python -m pipeline NAME`, the same process a
serial run starts, with its transcript, checkpoint and resume) runs inside a Ray task that asks
for one CPU, so Ray places the domains on the cluster's nodes and queues what does not fit. Ray is
local and embedded (`ray.init()`) unless RAY_ADDRESS names a cluster; on a cluster, every node must
see this checkout (the domains folder and the logs) at the same path, since the tasks write there.
The driver follows each domain through its log as for local processes. A domain's process dies
with the Ray worker running it (the worker killed, the run interrupted), so nothing keeps writing
after the run ends; what it recorded stays, and the same command resumes from there.
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
from pathlib import Path

import ray

from mcp_servers.ray_router import ROOT, init_ray

_PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:
    ctypes.CDLL(None).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


@ray.remote(num_cpus=1, max_retries=0)
def _run_domain(command: list[str], log: str, env: dict[str, str]) -> int:
    """One domain's process on whichever node Ray chose; its exit status."""
    with open(log, "ab") as out:
        return subprocess.run(command, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, cwd=ROOT,
                              env=env, preexec_fn=_die_with_parent).returncode


class RayProcess:
    """A domain's Ray task, with the part of subprocess.Popen that pipeline.universe.run_all uses."""

    def __init__(self, command: list[str], log: Path) -> None:
        log.write_bytes(b"")  # the task appends: a queued domain's log is there, empty, from the start
        self.log = log
        self.ref = _run_domain.remote(command, str(log.resolve()), dict(os.environ))
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None and ray.wait([self.ref], timeout=0)[0]:
            try:
                self.returncode = ray.get(self.ref)
            except ray.exceptions.RayError as error:  # its worker or node died: this domain failed, no other
                with self.log.open("a") as out:
                    out.write(f"\nerror: the Ray task running this domain failed: {type(error).__name__}: "
                              f"{str(error).splitlines()[0] if str(error) else ''}\n")
                self.returncode = -1
        return self.returncode

    def terminate(self) -> None:
        ray.cancel(self.ref, force=True)  # kills its worker, and with it the domain's process

    def wait(self) -> int | None:
        try:
            ray.wait([self.ref], timeout=30)
        except ray.exceptions.RayError:
            pass
        return self.poll()


def starter(address: str | None = None):
    """Connect to Ray, then a `start(command, log)` for pipeline.universe.run_all."""
    init_ray(address)
    return RayProcess
