"""How a confined process tree starts: bubblewrap's namespaces, a cgroup, a fresh uid, the spec.

    from sandbox.launch import Confinement

    conf = Confinement(policy, readable=(...), writable=(data_dir,))
    proc = conf.popen(argv, stdin=..., stdout=..., env={...}, pass_fds=(...))   # a subprocess.Popen
    Confinement.kill(proc)   # SIGKILL the whole tree, reap it, remove its cgroup and scratch

The started process finds in the environment variable SPEC_ENV what its confined children apply
to themselves (sandbox.lockdown): the policy's parameters, a uid for the tree, what is readable
and the scratch. `popen` refuses (sandbox.probe.ConfinementUnavailable) where this machine gives
neither a filesystem boundary (namespaces or Landlock) nor the seccomp filter, unless the unsafe
flag is set.
"""

from __future__ import annotations

import ctypes
import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import tempfile
import threading

from sandbox import identity, probe
from sandbox.cgroup import Cgroup
from sandbox.policy import Policy

SPEC_ENV = "WORLDSMITH_CONFINE"


class Confinement:
    """How to start a confined tree under `policy`; one instance may start many.

    tree_memory_mb, tree_processes: the cgroup over the whole tree (default: the policy's own
    limits, plus room for the template). scratch_mb: the private /tmp. readable: more folders
    to bind read-only. writable: host folders bound read-write at the same path (the tree hands
    its children folders of it). scratch_mode: 0755 keeps /tmp to the tree's root.
    """

    def __init__(self, policy: Policy, tree_memory_mb: int | None = None, tree_processes: int | None = None,
                 scratch_mb: int = 64, readable: tuple[str, ...] = (), writable: tuple[str, ...] = (),
                 scratch_mode: str = "1777"):
        self.policy = policy
        self.tree_memory_mb = tree_memory_mb or policy.memory_mb + 256
        self.tree_processes = tree_processes or policy.processes
        self.scratch_mb, self.scratch_mode = scratch_mb, scratch_mode
        self.namespaces = "namespaces" not in policy.off
        self.writable = tuple(os.path.realpath(p) for p in writable)
        self.readable = sorted(set(policy.readable()) | {os.path.realpath(p) for p in readable})
        # an interpreter reached through a link (a virtual environment linked into a checkout):
        # the link too, or bubblewrap cannot start it
        self.links = sorted({(os.path.realpath(p), os.path.abspath(p)) for p in (sys.prefix, sys.base_prefix)
                             if os.path.realpath(p) != os.path.abspath(p)})

    def use_bwrap(self) -> bool:
        return self.namespaces and probe.layers(self.namespaces).get("namespaces", False)

    def command(self, argv: list[str]) -> list[str]:
        """argv wrapped in bubblewrap when namespaces work here, else argv itself."""
        if not self.use_bwrap():
            return list(argv)
        return bwrap_argv(self.readable, self.scratch_mb, self.writable, self.scratch_mode, self.links) + ["--", *argv]

    def spec(self, scratch: str, uid: int) -> dict:
        return {**self.policy.spec(), "uid": uid, "readable": [p for p in self.readable if os.path.exists(p)],
                "writable": [scratch, "/dev/null"]}

    def popen(self, argv: list[str], **kwargs) -> subprocess.Popen:
        """Start argv confined; kwargs go to subprocess.Popen (env, stdin, stdout, pass_fds, ...).

        Started by one long-lived thread, so dying with its parent (bubblewrap's --die-with-parent,
        PR_SET_PDEATHSIG) means dying with the orchestrator, not with whichever thread asked."""
        probe.require(self.namespaces)
        bwrap = self.use_bwrap()
        uid = identity.fresh_uid()  # fresh per tree: its own process count
        scratch = "/tmp" if bwrap else host_scratch(uid)
        env = dict(kwargs.pop("env", None) or {})
        env[SPEC_ENV] = json.dumps(self.spec(scratch, uid))
        cgroup = Cgroup.create(self.tree_memory_mb, self.tree_processes)
        if bwrap:
            kwargs.pop("cwd", None)
        else:
            kwargs.setdefault("cwd", scratch)

        def pre_exec() -> None:
            if cgroup:
                cgroup.enter()
            ctypes.CDLL(None).prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG

        try:
            proc = spawn(lambda: subprocess.Popen(self.command(argv), env=env, preexec_fn=pre_exec,
                                                  start_new_session=True, **kwargs))
        except BaseException:
            if cgroup:
                cgroup.remove()
            raise
        proc.confinement = {"cgroup": cgroup, "scratch": None if bwrap else scratch}
        return proc

    @staticmethod
    def kill(proc: subprocess.Popen) -> None:
        """SIGKILL the confined tree (bubblewrap's PID namespace, its session, its cgroup) and reap it."""
        state = getattr(proc, "confinement", None) or {}
        for kill in (lambda: os.killpg(proc.pid, signal.SIGKILL), proc.kill):
            try:
                kill()
            except (ProcessLookupError, PermissionError):
                pass
        proc.wait()
        if state.get("cgroup"):
            state["cgroup"].remove()
        if state.get("scratch"):
            shutil.rmtree(state["scratch"], ignore_errors=True)


def take_spec() -> dict:
    """What this process's confined children apply, taken out of the environment (once)."""
    return json.loads(os.environ.pop(SPEC_ENV, "{}") or "{}")


def host_scratch(uid: int) -> str:
    """Without a mount namespace the scratch is a host folder owned by the tree's uid."""
    path = tempfile.mkdtemp(prefix="worldsmith-scratch-")
    if os.geteuid() == 0:
        os.chown(path, uid, uid)
    return path


def bwrap_argv(readable: list[str], scratch_mb: int, writable: tuple[str, ...] = (), scratch_mode: str = "1777",
               links: list[tuple[str, str]] = ()) -> list[str]:
    args = ["bwrap", "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
            "--die-with-parent", "--new-session", "--hostname", "sandbox"]
    if os.geteuid() != 0:  # unprivileged: namespaces need a user namespace (root keeps its uid switch instead)
        args += ["--unshare-user", "--cap-drop", "ALL"]
    else:  # root keeps what switching to the sandbox uid takes, and what a template needs to kill its
        # forks and empty the scratch they wrote; the switch then clears all of them
        args += ["--cap-drop", "ALL"]
        for cap in ("CAP_SETUID", "CAP_SETGID", "CAP_KILL", "CAP_FOWNER", "CAP_DAC_OVERRIDE"):
            args += ["--cap-add", cap]
    dirs: set[str] = set()
    binds: list[str] = []
    for path in readable:
        if os.path.islink(path) and os.path.dirname(path) == "/":  # /lib -> usr/lib on merged-/usr systems
            binds += ["--symlink", os.readlink(path), path]
            continue
        if not os.path.exists(path):
            continue
        parent = os.path.dirname(path)
        while parent != "/":  # bwrap copies a 0700 /root; the sandbox uid must still get through
            dirs.add(parent)
            parent = os.path.dirname(parent)
        binds += ["--ro-bind", path, path]
    for target, path in links:
        parent = os.path.dirname(path)
        while parent != "/":
            dirs.add(parent)
            parent = os.path.dirname(parent)
        binds += ["--symlink", target, path]
    # /proc, /dev and the scratch /tmp first: mounted later they would hide the binds below them
    # (a checkout under /tmp lost its interpreter and fell back to no namespaces)
    args += ["--proc", "/proc", "--dev", "/dev", "--perms", scratch_mode, "--size", str(scratch_mb << 20),
             "--tmpfs", "/tmp", "--chdir", "/tmp"]
    for path in sorted(dirs - {"/tmp", "/dev", "/proc"}, key=lambda p: (p.count("/"), p)):
        args += ["--perms", "0755", "--dir", path]
    args += binds
    for path in writable:
        args += ["--bind", path, path]
    return args


_spawner: queue.Queue | None = None
_spawner_lock = threading.Lock()


def spawn(start):
    """Run `start` (a Popen) on the one long-lived spawning thread and return its result."""
    global _spawner
    with _spawner_lock:
        if _spawner is None:
            _spawner = queue.Queue()

            def serve(jobs: queue.Queue) -> None:
                while True:
                    job, box = jobs.get()
                    try:
                        box.put((True, job()))
                    except BaseException as error:  # handed back to the caller
                        box.put((False, error))

            threading.Thread(target=serve, args=(_spawner,), name="confine-spawner", daemon=True).start()
    box: queue.Queue = queue.Queue(1)
    _spawner.put((start, box))
    ok, value = box.get()
    if not ok:
        raise value
    return value
