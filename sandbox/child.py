"""The one child skeleton: what every fork of a template does before it serves anything.

It leaves the template's session and dies with it, keeps only the descriptors the parent passed
for it (standard streams go to /dev/null: nothing it prints reaches a protocol), stubs the
network, locks itself down (sandbox.lockdown) and only then hands over to the service, which
reads its first untrusted byte after that. It never returns into the template's loop.
"""

from __future__ import annotations

import ctypes
import os
import signal

from sandbox import generated
from sandbox.lockdown import lock_down

_PR_SET_PDEATHSIG = 1


def close_all_but(keep: set[int]) -> None:
    for fd in sorted(map(int, os.listdir("/proc/self/fd")), reverse=True):
        if fd not in keep:
            try:
                os.close(fd)
            except OSError:  # the listing's own descriptor, gone already
                pass


def run(service, message: dict, fds: list[int], spec: dict, template_pid: int) -> None:
    """In the fork: `spec` is what lock_down applies (its `unconfined` set only where the template
    was started unconfined on request, to measure what confinement costs)."""
    code = 3
    try:
        os.setsid()
        ctypes.CDLL(None).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)  # never outlive the template
        if os.getppid() != template_pid:
            os._exit(3)
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        close_all_but({0, 1, 2, *fds})
        generated.block_network(service.where)
        if spec.get("unconfined"):
            layers = []
            os.chdir(spec["writable"][0])
        else:
            layers = lock_down(spec)  # from here on nothing is trusted
        service.child(message, fds, layers)
        code = 0
    finally:
        os._exit(code)
