"""OS confinement for every process that runs generated code: how it is started.

Parent side (the orchestrator)::

    from verification.confine import Confinement, ConfinementUnavailable, layers, describe

    conf = Confinement(memory_mb=1536, processes=16, scratch_mb=64, readable=(extra_dir,))
    proc = conf.popen([sys.executable, "-I", "worker.py"], stdin=PIPE, stdout=PIPE, stderr=log,
                      env={...}, pass_fds=(...))   # a subprocess.Popen
    ...
    conf.kill(proc)        # SIGKILL the whole confined tree, reap it, remove its cgroup

    layers()    -> {"namespaces": True, "identity": True, ...}   what a probe child really got here
    describe()  -> one line naming the active and missing layers

Child side, before the first byte of generated code is read: verification/lockdown.py (stdlib
only, imported by path) applies the layers the process must set on itself::

    import lockdown
    active = lockdown.lock_down()   # identity, rlimits, Landlock, seccomp; returns those applied

`popen` refuses (ConfinementUnavailable) when this kernel gives neither a filesystem boundary
(namespaces or Landlock) nor the seccomp filter, unless WORLDSMITH_UNSAFE_NO_CONFINEMENT=1
is set; then it warns on stderr and applies whatever layers do work.

Layers, each checked on this kernel by a probe child before it is relied on:
- namespaces: bubblewrap with new mount, PID, IPC, UTS and network namespaces (and a user
  namespace when not started by root): only the interpreter, its site-packages, the worker
  folder and shared libraries are visible, read-only; /tmp is a private size-limited tmpfs;
  the tree dies with its parent and runs in its own session.
- identity: a random unused uid/gid, no supplementary groups, no capabilities (root only).
- landlock: reads only below the readable paths, writes only in the scratch, no TCP bind or
  connect, no signals or abstract Unix sockets outside the sandbox.
- seccomp: no fork/exec (threads only), no socket(), no ptrace or process_vm_*, no
  namespace or mount calls, no kill of any other process, no io_uring/bpf/keyctl.
- cgroup: a memory and a process-count limit over the whole tree (cgroup v2, else v1).
- rlimits: address space, file size, open files, processes of the sandbox's uid, no core.
"""

from __future__ import annotations

import ctypes
import json
import os
import queue
import secrets
import shutil
import signal
import subprocess
import sys
import threading
import time

UNSAFE_FLAG = "WORLDSMITH_UNSAFE_NO_CONFINEMENT"
SPEC_ENV = "WORLDSMITH_CONFINE"
HERE = os.path.dirname(os.path.abspath(__file__))
LOCKDOWN = os.path.join(HERE, "lockdown.py")
INNER_LAYERS = ("identity", "landlock", "seccomp")


class ConfinementUnavailable(RuntimeError):
    """This machine cannot confine generated code and the unsafe flag is not set."""


# ---------------------------------------------------------------------------------------
# parent side
# ---------------------------------------------------------------------------------------

def _system_readable() -> list[str]:
    """What any Python process needs besides its prefixes: shared libraries and time zones."""
    return ["/usr/lib", "/usr/lib64", "/lib", "/lib64", "/etc/ld.so.cache", "/etc/localtime",
            "/usr/share/zoneinfo"]


class Confinement:
    """How to start a confined process; one instance may start many."""

    def __init__(self, memory_mb: int = 1536, processes: int = 16, scratch_mb: int = 64, file_mb: int = 8,
                 open_files: int = 256, readable: tuple[str, ...] = (), namespaces: bool = True,
                 writable: tuple[str, ...] = (), scratch_mode: str = "1777"):
        self.memory_mb, self.processes, self.scratch_mb = memory_mb, processes, scratch_mb
        self.file_mb, self.open_files = file_mb, open_files
        self.namespaces = namespaces  # False: Landlock/seccomp/identity only (as where namespaces are refused)
        # writable: host folders bound read-write at the same path (a tree that forks its own confined
        # children and hands each a folder of it); scratch_mode: 0755 keeps /tmp to the tree's root
        self.writable = tuple(os.path.realpath(p) for p in writable)
        self.scratch_mode = scratch_mode
        roots = [sys.base_prefix, sys.prefix, HERE, *readable]
        self.readable = sorted({os.path.realpath(p) for p in roots} | set(_system_readable()))

    # -- what starts -----------------------------------------------------------------------
    def _use_bwrap(self) -> bool:
        return self.namespaces and _probe(self.namespaces).get("namespaces", False)

    def command(self, argv: list[str]) -> list[str]:
        """argv wrapped in bubblewrap when namespaces work here, else argv itself."""
        if not self._use_bwrap():
            return list(argv)
        return _bwrap_argv(self.readable, self.scratch_mb, self.writable, self.scratch_mode) + ["--", *argv]

    def _spec(self, scratch: str, uid: int) -> dict:
        return {"uid": uid, "gid": uid, "readable": [p for p in self.readable if os.path.exists(p)],
                "writable": [scratch, "/dev/null"], "memory_mb": self.memory_mb, "processes": self.processes,
                "file_mb": self.file_mb, "open_files": self.open_files}

    def popen(self, argv: list[str], **kwargs) -> subprocess.Popen:
        """Start argv confined; kwargs go to subprocess.Popen (env, stdin, stdout, pass_fds, ...).

        The child must call lock_down() itself before it runs untrusted code. The process is
        started by one long-lived thread, so dying with its parent (bubblewrap's
        --die-with-parent, PR_SET_PDEATHSIG) means dying with the orchestrator, not with
        whichever short-lived thread asked for it.
        """
        _require(self.namespaces)
        bwrap = self._use_bwrap()
        uid = 0x10000 + secrets.randbelow(0x7FFF0000 - 0x10000)  # fresh per tree: its own process count
        scratch = "/tmp" if bwrap else _host_scratch(uid)
        env = dict(kwargs.pop("env", None) or {})
        env[SPEC_ENV] = json.dumps(self._spec(scratch, uid))
        cgroup = _Cgroup.create(self.memory_mb + 256, self.processes)
        if bwrap:
            kwargs.pop("cwd", None)
        else:
            kwargs.setdefault("cwd", scratch)

        def pre_exec() -> None:
            if cgroup:
                cgroup.enter()
            ctypes.CDLL(None).prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG

        try:
            proc = _spawn(lambda: subprocess.Popen(self.command(argv), env=env, preexec_fn=pre_exec,
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
        state = getattr(proc, "confinement", {})
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


def _host_scratch(uid: int) -> str:
    """Without a mount namespace the scratch is a host folder owned by the sandbox uid."""
    import tempfile

    path = tempfile.mkdtemp(prefix="worldsmith-scratch-")
    if os.geteuid() == 0:
        os.chown(path, uid, uid)
    return path


def _bwrap_argv(readable: list[str], scratch_mb: int, writable: tuple[str, ...] = (),
                scratch_mode: str = "1777") -> list[str]:
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


class _Cgroup:
    """Memory and process limits over one confined tree, in cgroup v2 or v1, where writable."""

    ROOT = "/sys/fs/cgroup"

    def __init__(self, dirs: list[str]) -> None:
        self.dirs = dirs

    @classmethod
    def create(cls, memory_mb: int, processes: int) -> _Cgroup | None:
        name = f"worldsmith-{os.getpid()}-{secrets.token_hex(4)}"
        settings = cls._v2(name, memory_mb, processes) or cls._v1(name, memory_mb, processes)
        if not settings:
            return None
        dirs = []
        try:
            for path, values in settings:
                os.makedirs(path)
                dirs.append(path)
                for file, value in values.items():
                    if os.path.exists(os.path.join(path, file)):
                        with open(os.path.join(path, file), "w") as f:
                            f.write(str(value))
        except OSError:
            cls(dirs).remove()
            return None
        return cls(dirs)

    @classmethod
    def _v2(cls, name: str, memory_mb: int, processes: int):
        try:
            with open(os.path.join(cls.ROOT, "cgroup.controllers")) as f:
                controllers = f.read().split()
        except OSError:
            return None
        if not {"memory", "pids"} <= set(controllers) or not os.access(cls.ROOT, os.W_OK):
            return None
        base = os.path.join(cls.ROOT, "worldsmith")
        try:
            os.makedirs(base, exist_ok=True)
            with open(os.path.join(cls.ROOT, "cgroup.subtree_control"), "w") as f:
                f.write("+memory +pids")
            with open(os.path.join(base, "cgroup.subtree_control"), "w") as f:
                f.write("+memory +pids")
        except OSError:
            return None
        return [(os.path.join(base, name), {"memory.max": memory_mb << 20, "memory.swap.max": 0,
                                            "pids.max": processes})]

    @classmethod
    def _v1(cls, name: str, memory_mb: int, processes: int):
        memory, pids = os.path.join(cls.ROOT, "memory"), os.path.join(cls.ROOT, "pids")
        if not (os.access(memory, os.W_OK) and os.access(pids, os.W_OK)):
            return None
        return [(os.path.join(memory, "worldsmith", name),
                 {"memory.limit_in_bytes": memory_mb << 20, "memory.memsw.limit_in_bytes": memory_mb << 20}),
                (os.path.join(pids, "worldsmith", name), {"pids.max": processes})]

    def enter(self) -> None:
        """Move the calling (just forked) process in; its descendants follow."""
        for path in self.dirs:
            fd = os.open(os.path.join(path, "cgroup.procs"), os.O_WRONLY)
            os.write(fd, str(os.getpid()).encode())
            os.close(fd)

    def remove(self) -> None:
        for path in self.dirs:
            for _ in range(100):
                try:
                    with open(os.path.join(path, "cgroup.procs")) as f:
                        pids = [int(p) for p in f.read().split()]
                except OSError:
                    break
                for pid in pids:
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
                try:
                    os.rmdir(path)
                    break
                except OSError:
                    time.sleep(0.01)


_spawner: queue.Queue | None = None
_spawner_lock = threading.Lock()


def _spawn(start):
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


_probes: dict[bool, dict] = {}
_warned = False


def _probe(namespaces: bool) -> dict:
    """Start a child through every layer and record what it really got (cached per process)."""
    if namespaces in _probes:
        return _probes[namespaces]
    found = {"namespaces": False}
    inner = None
    if namespaces and shutil.which("bwrap"):
        inner = _run_probe(_bwrap_argv(Confinement().readable, 8) + ["--"])
        found["namespaces"] = inner is not None
    if inner is None:
        inner = _run_probe([])
    for layer in INNER_LAYERS:
        found[layer] = bool(inner and inner.get(layer))
    cgroup = _Cgroup.create(64, 4)
    found["cgroup"] = cgroup is not None
    if cgroup:
        cgroup.remove()
    found["rlimits"] = True
    _probes[namespaces] = found
    return found


def _run_probe(prefix: list[str]) -> dict | None:
    conf = Confinement()
    uid = 0x10000 + secrets.randbelow(0x7FFF0000 - 0x10000)
    scratch = "/tmp" if prefix else _host_scratch(uid)
    env = {"PATH": "/usr/bin:/bin", SPEC_ENV: json.dumps(conf._spec(scratch, uid))}
    try:
        done = _spawn(lambda: subprocess.run(prefix + [sys.executable, "-I", LOCKDOWN, "--probe"],
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


def layers(namespaces: bool = True) -> dict[str, bool]:
    """Which layers a confined process really gets on this machine."""
    return dict(_probe(namespaces))


def describe(namespaces: bool = True) -> str:
    found = layers(namespaces)
    on = [name for name, ok in found.items() if ok]
    off = [name for name, ok in found.items() if not ok]
    return "confinement: " + ", ".join(on) + (f" (missing: {', '.join(off)})" if off else "")


def _require(namespaces: bool) -> None:
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
