"""A confined process's own layers, applied by itself before it reads anything untrusted.

    applied = lock_down(spec)   # ["identity", "dumpable", "landlock", "seccomp"] where each took

`spec` is `Policy.spec()` and what the launch and the fork added: `uid` (None: keep the uid,
give up capabilities), `readable` and `writable` paths (the first writable one becomes the
working folder). The rules themselves come from this process's own `RULES`, never from the spec.
Call once, single-threaded; it is irreversible. The parent compares `applied` with what this
machine gives (sandbox.probe) and refuses a process that lacks a layer.
"""

from __future__ import annotations

import ctypes
import os
import resource

from sandbox import identity, landlock, seccomp
from sandbox.policy import RULES, Policy

_PR_SET_DUMPABLE, _PR_SET_NO_NEW_PRIVS = 4, 38


def set_limits(policy: Policy) -> None:
    for limit, value in ((resource.RLIMIT_AS, policy.memory_mb << 20), (resource.RLIMIT_FSIZE, policy.file_mb << 20),
                         (resource.RLIMIT_NOFILE, policy.open_files), (resource.RLIMIT_CORE, 0),
                         (resource.RLIMIT_NPROC, policy.processes)):
        resource.setrlimit(limit, (value, value))


def lock_down(spec: dict) -> list[str]:
    """Apply every layer `spec` asks for; returns the names of those applied."""
    policy = Policy.from_spec(spec)
    libc = ctypes.CDLL(None)
    applied = []
    readable, writable = list(spec.get("readable") or ()), list(spec.get("writable") or ())
    if writable:
        os.chdir(writable[0])  # while it may still enter a folder another uid owns
    uid = spec.get("uid") if "identity" not in policy.off else None
    if uid is not None and os.geteuid() == 0 and not identity.reachable_by_others(readable):
        uid = None  # that uid could not reach the interpreter (a 0700 home and no mount namespace)
    if identity.switch(uid):
        applied.append("identity")
    set_limits(policy)
    libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)  # nothing regains privileges through exec
    if "dumpable" not in policy.off:
        libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)  # no /proc/<pid>/mem, no ptrace, even by its own uid
        applied.append("dumpable")
    if "landlock" not in policy.off and landlock.restrict(RULES, readable, writable):
        applied.append("landlock")
    if "seccomp" not in policy.off and seccomp.install(RULES):
        applied.append("seccomp")
    return applied
