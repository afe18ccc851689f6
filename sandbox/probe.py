"""What confinement this machine really gives, checked once per process by a probe child.

    layers()    -> {"namespaces": True, "identity": True, "landlock": ..., "seccomp": ..., ...}
    describe()  -> one line naming the active and missing layers
    require()   -> raises ConfinementUnavailable where generated code cannot be confined, unless
                   UNSAFE_FLAG=1 is set (then it warns once on stderr)

The probe child is started like any confined tree (bubblewrap where it works), applies
sandbox.lockdown, and checks that each layer bites: its uid is not root, /proc cannot be listed,
socket() is refused.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

from sandbox import identity, launch
from sandbox.cgroup import Cgroup
from sandbox.policy import ROOT, TOOL_TESTS

UNSAFE_FLAG = "WORLDSMITH_UNSAFE_NO_CONFINEMENT"
INNER_LAYERS = ("identity", "landlock", "seccomp")
_CHILD = f"import sys; sys.path.insert(0, {ROOT!r}); from sandbox.probe import child; child()"


class ConfinementUnavailable(RuntimeError):
    """This machine cannot confine generated code and the unsafe flag is not set."""


_probes: dict[bool, dict] = {}
_warned = False


def _probe(namespaces: bool) -> dict:
    if namespaces in _probes:
        return _probes[namespaces]
    found = {"namespaces": False}
    inner = None
    conf = launch.Confinement(TOOL_TESTS)
    if namespaces and shutil.which("bwrap"):
        inner = _run_probe(conf, launch.bwrap_argv(conf.readable, 8, links=conf.links) + ["--"])
        found["namespaces"] = inner is not None
    if inner is None:
        inner = _run_probe(conf, [])
    for layer in INNER_LAYERS:
        found[layer] = bool(inner and inner.get(layer))
    cgroup = Cgroup.create(64, 4)
    found["cgroup"] = cgroup is not None
    if cgroup:
        cgroup.remove()
    found["rlimits"] = True
    _probes[namespaces] = found
    return found


def _run_probe(conf: launch.Confinement, prefix: list[str]) -> dict | None:
    uid = identity.fresh_uid()
    scratch = "/tmp" if prefix else launch.host_scratch(uid)
    env = {"PATH": "/usr/bin:/bin", launch.SPEC_ENV: json.dumps(conf.spec(scratch, uid))}
    try:
        done = launch.spawn(lambda: subprocess.run(prefix + [sys.executable, "-I", "-c", _CHILD],
                                                   env=env, capture_output=True, timeout=30, cwd=scratch))
    except (OSError, subprocess.SubprocessError):
        return None
    finally:
        if not prefix:
            shutil.rmtree(scratch, ignore_errors=True)
    if done.returncode != 0:
        return None
    try:
        return json.loads(done.stdout.decode().strip().splitlines()[-1])
    except (ValueError, IndexError):
        return None


def child() -> None:
    """In the probe child: lock down, then check that each layer bites."""
    import errno
    import socket

    from sandbox.lockdown import lock_down

    applied = set(lock_down(launch.take_spec()))
    found = {"identity": "identity" in applied and os.geteuid() != 0}
    try:
        os.listdir("/proc")
        found["landlock"] = False
    except PermissionError:
        found["landlock"] = "landlock" in applied
    try:
        socket.socket(socket.AF_UNIX).close()
        found["seccomp"] = False
    except OSError as error:
        found["seccomp"] = "seccomp" in applied and error.errno == errno.EPERM
    print(json.dumps(found))


def layers(namespaces: bool = True) -> dict[str, bool]:
    """Which layers a confined process really gets on this machine."""
    return dict(_probe(namespaces))


def describe(namespaces: bool = True) -> str:
    found = layers(namespaces)
    on = [name for name, ok in found.items() if ok]
    off = [name for name, ok in found.items() if not ok]
    return "confinement: " + ", ".join(on) + (f" (missing: {', '.join(off)})" if off else "")


def require(namespaces: bool = True) -> None:
    global _warned
    found = _probe(namespaces)
    if (found["namespaces"] or found["landlock"]) and found["seccomp"]:
        return
    if os.environ.get(UNSAFE_FLAG) == "1":
        if not _warned:
            print(f"WARNING: {UNSAFE_FLAG}=1: generated code runs WITHOUT full OS confinement "
                  f"({describe(namespaces)}). It can read, write and run anything this user can.",
                  file=sys.stderr, flush=True)
            _warned = True
        return
    raise ConfinementUnavailable(
        f"refusing to run generated code: this machine gives no OS confinement ({describe(namespaces)}); "
        f"it needs bubblewrap or Landlock, and seccomp. Install bubblewrap (make env does where it can) "
        f"or set {UNSAFE_FLAG}=1 to run it unconfined at your own risk.")
