"""One process per episode, forked from a warm template process; the parent owns every database file.

Each episode has a directory on a tmpfs the parent owns (`db`, and `db-wal` once it has
written). The template (verification/episodes_worker.py) forks the episode's process, which
confines itself before any generated code runs and then sees that directory and nothing of
any other episode's. A commit appends to the WAL, so when the process dies (killed, timed
out, out of memory, a malformed frame), the parent starts a new one on the same files and
the episode continues from its last commit. A monitor thread notices deaths of idle
processes and replaces them at once; callers notice deaths during their own call.

The template is started through verification/confine.py (refused where this machine cannot
confine generated code; a cgroup limits memory and processes over the whole tree), inside
bubblewrap's mount, PID, IPC, UTS and network namespaces where they work: it sees the
interpreter, the worker and this pool's data folder (bound read-write), and keeps no capability
but switching uids. Each episode process runs as a uid of its own, from a range this pool holds
(WORLDSMITH_EPISODE_UID_BASE, else a random one), and its directory is that uid's alone (0700):
episodes cannot signal, trace, read the /proc files of, or open the files of one another, even
without Landlock and seccomp. Where bubblewrap or root is missing, the layer is left out and said
so on stderr; the process's own layers (Landlock, seccomp, limits) apply either way. Frames with
an episode are verification/protocol.py's (random request ids, size caps); a reply that is late,
too large, malformed, for another request, or not asked for costs that episode its process
(and only that episode's), never its committed state.
"""

from __future__ import annotations

import ctypes
import json
import os
import resource
import secrets
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import weakref
from dataclasses import dataclass, field
from pathlib import Path

from verification.confine import Confinement
from verification.guard import UnsafeCode, check_source
from verification.protocol import Channel, ProtocolError, WorkerGone, WorkerTimeout

WORKER = Path(__file__).resolve().parent.parent / "verification" / "episodes_worker.py"
KILL_GRACE_S = 1.0  # past its own timeout a call may take this long before the parent kills the process
DUMP_REPLY_BYTES = 64 << 20
SPAWN_TIMEOUT_S = 10.0
UID_BASE_ENV = "WORLDSMITH_EPISODE_UID_BASE"
EPISODE_LAYERS = ("namespaces", "identity", "quota", "dumpable", "landlock", "seccomp")
# Layers to leave off, for tests that show what each layer alone stops; never set in service.
_LAYERS_OFF: frozenset[str] = frozenset()
_told: set[str] = set()


class PoolError(RuntimeError):
    """An episode operation the runtime could not perform (not a tool error: those are results)."""


def _shm_root() -> str | None:
    return "/dev/shm" if os.access("/dev/shm", os.W_OK) else None


def start_template(data_dir: str, control_fd: int, processes: int, unconfined: bool, namespaces: bool = True):
    """Start the template process through the confinement layer (refused where this machine cannot
    confine; a cgroup holds the tree's memory and process limits), inside bubblewrap's namespaces
    where they work, with `data_dir` bound read-write; each episode process adds its own layers
    after the fork (episodes_worker.confine_episode). Returns (process, namespaces used)."""
    env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "PYTHONHASHSEED": "0", "PYTHONDONTWRITEBYTECODE": "1"}
    argv = [sys.executable, "-I", str(WORKER), str(control_fd), data_dir]
    log = open(os.path.join(data_dir, "template.log"), "ab")
    os.fchmod(log.fileno(), 0o600)
    try:
        if unconfined:
            print("WARNING: episode processes run WITHOUT confinement (unsafe_unconfined=True): generated code can "
                  "read, write and run anything this user can.", file=sys.stderr, flush=True)
            proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=log, env=env,
                                    pass_fds=[control_fd], start_new_session=True)
            return proc, False
        tree_mb = max(2048, (os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") >> 20) * 3 // 4)
        conf = Confinement(memory_mb=tree_mb, processes=processes, scratch_mb=16, namespaces=namespaces,
                           writable=(data_dir,), scratch_mode="0755")
        used = conf._use_bwrap()
        if namespaces and not used:
            _tell("namespaces", "episode processes run without bubblewrap's namespaces (it is not installed or "
                  "does not work here: `bwrap` on PATH, and user namespaces when not root); they still see the "
                  "host's other files and processes by path, and rely on Landlock, seccomp and their own uid")
        proc = conf.popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=log, env=env, pass_fds=[control_fd])
        return proc, used
    finally:
        log.close()


def _tell(layer: str, message: str) -> None:
    """Say once per process which layer episode processes go without, and why."""
    if layer not in _told:
        _told.add(layer)
        print(f"worldsmith: {message}.", file=sys.stderr, flush=True)


class _Uids:
    """A distinct unprivileged uid (used as the gid too) per live episode, from a contiguous range."""

    def __init__(self, count: int) -> None:
        configured = os.environ.get(UID_BASE_ENV)
        base = int(configured, 0) if configured else 0x10000 * (1 + secrets.randbelow(0x7FEF))
        if not 1000 <= base or base + count >= 0x7FFFFFFF:
            raise PoolError(f"{UID_BASE_ENV}={configured}: episode uids must lie in 1000..2**31-2 "
                            f"({count} from the base)")
        self.base, self.count = base, count
        self._free = list(range(count - 1, -1, -1))
        self._lock = threading.Lock()

    def take(self) -> int:
        with self._lock:
            if not self._free:
                raise PoolError(f"all {self.count} episode uids are in use")
            return self.base + self._free.pop()

    def give(self, uid: int) -> None:
        with self._lock:
            self._free.append(uid - self.base)


def _reachable_by_others(paths: list[str]) -> bool:
    for path in paths:
        parent = os.path.dirname(os.path.realpath(path))
        while parent != "/":
            if not os.stat(parent).st_mode & 0o001:
                return False
            parent = os.path.dirname(parent)
    return True


def _landlock_abi() -> int:
    return max(0, ctypes.CDLL(None).syscall(444, None, 0, 1))


_MS_NOSUID, _MS_NODEV, _MS_NOEXEC, _MS_BIND, _MS_SHARED, _MNT_DETACH = 2, 4, 8, 4096, 1 << 20, 2


def _mount(source: str, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.mount(source.encode(), target.encode(), fstype.encode() if fstype else None, ctypes.c_ulong(flags),
                  data.encode() if data else None) != 0:
        error = ctypes.get_errno()
        raise OSError(error, f"mount {target}: {os.strerror(error)}")


def _unmount(target: str) -> None:
    ctypes.CDLL(None).umount2(target.encode(), _MNT_DETACH)


def _remove_root(root: str, mounted: bool) -> None:
    if mounted:  # the root's bind and every episode's tmpfs below it, at once
        _unmount(root)
    shutil.rmtree(root, ignore_errors=True)


def _readable(fd: int, timeout_ms: int = 0) -> bool:
    poller = select.poll()  # not select(): a server with many episodes has descriptors past 1024
    poller.register(fd, select.POLLIN)
    return bool(poller.poll(timeout_ms))


def _any_readable(*fds: int) -> bool:
    poller = select.poll()  # one system call for both: the process's exit and its socket
    for fd in fds:
        poller.register(fd, select.POLLIN)
    return bool(poller.poll(0))


def _alive(pidfd: int) -> bool:
    return not _readable(pidfd)


def _host_pid(pidfd: int) -> int | None:
    try:
        for line in Path(f"/proc/self/fdinfo/{pidfd}").read_text().splitlines():
            if line.startswith("Pid:"):
                return int(line.split()[1])
    except OSError:
        pass
    return None


@dataclass
class _Proc:
    """One episode's process and files; `lock` serializes its requests."""

    episode_id: str
    dir: str
    key: str
    now: str | None
    sock: socket.socket | None = None
    channel: Channel | None = None
    pidfd: int = -1
    closed: bool = False
    restoring: bool = False
    uid: int | None = None  # its own unprivileged uid, where the pool has them
    mounted: bool = False  # its directory is a tmpfs of its own
    lost: bool = False  # its files were beyond repair and it was restarted from its template
    lock: threading.Lock = field(default_factory=threading.Lock)


class EpisodeProcesses:
    """The template process, the episode processes it forks, and their files."""

    def __init__(self, db_source: str, tool_sources: dict[str, str], *, memory_mb: int = 1024, file_mb: int = 256,
                 disk_mb: int | None = None, max_result_bytes: int = 1 << 20, max_episodes: int = 4096,
                 unsafe_unconfined: bool = False):
        for name, source in sorted(tool_sources.items()):
            try:
                check_source(source)  # a courtesy to the model: the boundary is the episode process's confinement
            except UnsafeCode as error:
                raise PoolError(f"tool {name} does not load in the sandbox: refused by the sandbox: {error}") from None
        self.memory_mb, self.file_mb, self.max_result_bytes = memory_mb, file_mb, max_result_bytes
        self.disk_mb = disk_mb or 2 * file_mb + 16  # the database and its WAL at their size limit
        self.unconfined, self.max_episodes = unsafe_unconfined, max_episodes
        self.off = frozenset(_LAYERS_OFF)
        if self.off:
            print(f"WARNING: episode layers left off for a test: {', '.join(sorted(self.off))}", file=sys.stderr)
        self.root = tempfile.mkdtemp(prefix="worldsmith-episodes-", dir=_shm_root())
        # Episode uids may pass through the root and episodes/ to their own 0700 directory, never list
        # them nor read the template's files (the tools' and the DB layer's code, template databases).
        os.chmod(self.root, 0o711)
        os.makedirs(os.path.join(self.root, "templates"), mode=0o700)
        os.makedirs(os.path.join(self.root, "episodes"), mode=0o711)
        os.chmod(os.path.join(self.root, "episodes"), 0o711)
        # Each episode's directory is a tmpfs of its own (disk_mb, a few files): one episode cannot fill the
        # memory the others' files live in. Mounted on the host below a shared bind of the root, so that
        # the mounts reach the template's mount namespace, made before it starts.
        self.quota = False
        if not unsafe_unconfined and "quota" not in self.off:
            if os.geteuid() == 0:
                try:
                    _mount(self.root, self.root, None, _MS_BIND)
                    try:
                        _mount("none", self.root, None, _MS_SHARED)
                    except OSError:
                        _unmount(self.root)
                        raise
                    self.quota = True
                except OSError as error:
                    _tell("quota", f"episode directories share one file system without a size limit each ({error})")
            else:
                _tell("quota", "episode directories share one file system without a size limit each (a tmpfs "
                      "per episode needs a server run as root)")
        self._cleanup = weakref.finalize(self, _remove_root, self.root, self.quota)  # even when close() is never called
        init = Path(self.root, "init.json")
        init.touch(mode=0o600)
        init.write_text(json.dumps({"db_source": db_source, "tools": tool_sources}))
        self.uids: _Uids | None = None
        if not unsafe_unconfined and "identity" not in self.off:
            if os.geteuid() == 0:
                self.uids = _Uids(max_episodes + 64)
            else:
                _tell("identity", "episode processes share this server's uid (a uid per episode needs the "
                      "server to run as root); Landlock, seccomp and non-dumpable processes keep them apart")
        self.layers: dict[str, bool] = {}
        self.restarts = 0  # episode processes replaced after a death
        self._control_lock = threading.Lock()
        self._book = threading.Lock()
        self._procs: dict[str, _Proc] = {}
        self._templates: dict[str, str] = {}
        self._counter = 0
        self._closing = False
        self._template: subprocess.Popen | None = None
        self._control: socket.socket | None = None
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)  # two descriptors per live episode
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        self._epoll = select.epoll()
        self._watched: dict[int, _Proc] = {}
        self._start_template()
        if self.uids is not None and not self.layers["namespaces"] and not _reachable_by_others(
                [sys.prefix, sys.base_prefix, str(WORKER.parent)]):
            self.uids = None  # without a mount namespace to reopen them, other uids cannot reach the interpreter
            self.layers["identity"] = False
            _tell("identity", "episode processes share this server's uid: without bubblewrap, another uid cannot "
                  f"reach the interpreter ({sys.base_prefix} lies below a folder closed to others)")
        self._monitor = threading.Thread(target=self._watch, name="worldsmith-episode-monitor", daemon=True)
        self._monitor.start()

    # -- the template --------------------------------------------------------------------
    def _start_template(self) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            self._template, namespaces = start_template(self.root, theirs.fileno(), self.max_episodes + 64,
                                                        self.unconfined, "namespaces" not in self.off)
        finally:
            theirs.close()
        self._control = ours
        confined = not self.unconfined
        self.layers = {"namespaces": namespaces, "identity": self.uids is not None, "quota": self.quota,
                       "dumpable": confined and "dumpable" not in self.off,
                       "landlock": confined and "landlock" not in self.off and _landlock_abi() > 0,
                       "seccomp": confined and "seccomp" not in self.off and os.uname().machine == "x86_64"}

    def _stop_template(self) -> None:
        if getattr(self._template, "confinement", None) is not None:
            Confinement.kill(self._template)  # the whole tree and its cgroup
        else:
            if self._template.poll() is None:
                self._template.kill()
            self._template.wait()

    def _ask_template(self, message: dict, fds: list[int] = (), timeout: float = 60) -> tuple[dict, list[int]]:
        with self._control_lock:
            for attempt in (1, 2):
                try:
                    socket.send_fds(self._control, [json.dumps(message).encode()], list(fds))
                    self._control.settimeout(timeout)
                    data, got, _flags, _addr = socket.recv_fds(self._control, 1 << 16, 4)
                    if not data:
                        raise OSError("the template process closed its socket")
                    return json.loads(data), got
                except OSError:
                    if attempt == 2 or self._closing:
                        raise PoolError("the episode template process is not answering") from None
                    self._restart_template()

    def _restart_template(self) -> None:
        self._control.close()
        self._stop_template()
        self._start_template()

    def template_alive(self) -> bool:
        return self._template is not None and self._template.poll() is None

    # -- templates -----------------------------------------------------------------------
    def add_template(self, key: str, state: dict) -> dict:
        """A template database from rows; returns the state as the database holds it."""
        name = f"templates/t{len(self._templates)}"
        rows = Path(self.root, name + ".json")
        rows.write_text(json.dumps(state))
        reply, _ = self._ask_template({"op": "template", "path": name + ".db"})
        if not reply.get("ok"):
            raise PoolError(reply.get("error", "the template process refused the state"))
        self._templates[key] = os.path.join(self.root, name + ".db")
        stored = json.loads(rows.read_text())
        rows.unlink()
        return stored

    def has_template(self, key: str) -> bool:
        return key in self._templates

    # -- episode processes ---------------------------------------------------------------
    def _spawn(self, proc: _Proc) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        template_fd = os.open(self._templates[proc.key], os.O_RDONLY)
        try:
            reply, fds = self._ask_template(
                {"op": "spawn", "now": proc.now, "memory_mb": self.memory_mb, "file_mb": self.file_mb,
                 "max_result_bytes": self.max_result_bytes, "unconfined": self.unconfined, "uid": proc.uid, "dir": proc.dir,
                 "off": sorted(self.off)},
                [theirs.fileno(), template_fd])
        finally:
            theirs.close()
            os.close(template_fd)
        if not reply.get("ok") or len(fds) != 1:
            ours.close()
            for fd in fds:
                os.close(fd)
            raise PoolError(f"the episode process did not start: {reply.get('error', 'no process handle')}")
        channel = Channel(ours.makefile("wb"), ours.fileno(), max_bytes=4096)
        try:  # ready: confined, database open, tools defined
            ready, _ = channel.receive(0, SPAWN_TIMEOUT_S)
        except (WorkerGone, WorkerTimeout, ProtocolError):
            ready = None
        missing = ""
        if ready and ready.get("ready") is True:  # every layer this machine gives, or the process is refused
            got = ready.get("layers") if isinstance(ready.get("layers"), list) else []
            missing = ", ".join(name for name in ("identity", "dumpable", "landlock", "seccomp")
                                if self.layers.get(name) and name not in got)
        if not ready or ready.get("ready") is not True or missing:
            ours.close()
            signal.pidfd_send_signal(fds[0], signal.SIGKILL) if _alive(fds[0]) else None
            os.close(fds[0])
            if missing:
                raise PoolError(f"the episode process did not get every confinement layer (missing: {missing})")
            raise PoolError("the episode process did not start (it died or did not answer while confining itself)")
        proc.sock, proc.channel, proc.pidfd = ours, channel, fds[0]
        with self._book:
            self._watched[proc.pidfd] = proc
        self._epoll.register(proc.pidfd, select.EPOLLIN)

    def _kill(self, proc: _Proc) -> None:
        if proc.pidfd >= 0:
            try:
                signal.pidfd_send_signal(proc.pidfd, signal.SIGKILL)
            except ProcessLookupError:
                pass
            _readable(proc.pidfd, 5000)  # gone before another process opens its files
            with self._book:
                self._watched.pop(proc.pidfd, None)
            self._epoll.unregister(proc.pidfd)
            os.close(proc.pidfd)
            proc.pidfd = -1
        if proc.sock is not None:
            proc.channel.writer.close()
            proc.sock.close()
            proc.sock, proc.channel = None, None

    def _restore(self, proc: _Proc) -> None:
        """Replace the episode's process; it reopens the files at their last commit. Holds proc.lock.

        Files its own code wrecked (it can write them, as SQLite does) cannot be reopened: then
        the episode starts again from its template, and `proc.lost` says so."""
        proc.restoring = True
        try:
            self._kill(proc)
            if proc.closed:
                return
            try:
                self._spawn(proc)
            except PoolError:
                self._put_template(proc)
                self._spawn(proc)
                proc.lost = True
            self.restarts += 1
        finally:
            proc.restoring = False

    def _put_template(self, proc: _Proc) -> None:
        for name in ("db-wal", "db-shm"):
            Path(proc.dir, name).unlink(missing_ok=True)
        db = os.path.join(proc.dir, "db")
        shutil.copyfile(self._templates[proc.key], db)
        os.chmod(db, 0o600)
        if proc.uid is not None:
            os.chown(db, proc.uid, proc.uid)

    def create(self, episode_id: str, key: str, now: str | None = None) -> None:
        with self._book:
            if episode_id in self._procs:
                raise PoolError(f"episode {episode_id!r} already exists")
            self._counter += 1
            proc = _Proc(episode_id, os.path.join(self.root, "episodes", f"e{self._counter}"), key, now)
            self._procs[episode_id] = proc
        try:
            if self.uids is not None:
                proc.uid = self.uids.take()
            os.mkdir(proc.dir, 0o700)
            if self.quota:
                owner = f",uid={proc.uid},gid={proc.uid}" if proc.uid is not None else ""
                _mount("worldsmith-episode", proc.dir, "tmpfs", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC,
                       f"size={self.disk_mb}m,nr_inodes=16,mode=0700{owner}")
                proc.mounted = True
            if proc.uid is not None:  # its files are its uid's alone
                os.chown(proc.dir, proc.uid, proc.uid)
            self._put_template(proc)
            with proc.lock:
                self._spawn(proc)
        except BaseException:
            self._forget(proc)
            raise

    def _request(self, episode_id: str, message: dict, timeout: float, max_bytes: int) -> tuple[dict | None, str]:
        """(reply, "") or (None, why): "timeout", "busy", "died" or the protocol violation. The
        timeout covers waiting for the episode's previous call."""
        deadline = time.monotonic() + timeout
        proc = self._proc(episode_id)
        if not proc.lock.acquire(timeout=max(0.0, timeout)):
            return None, "busy"
        try:
            if proc.closed:
                raise PoolError(f"episode {episode_id!r} is not open")
            # dead, or it sent something it was not asked for (the reply stream is not to be trusted): replace it
            if proc.sock is None or _any_readable(proc.pidfd, proc.sock.fileno()):
                self._restore(proc)
            proc.channel.max_bytes = max_bytes
            try:
                reply, _blob = proc.channel.request(message, max(0.0, deadline - time.monotonic()) + KILL_GRACE_S)
            except ProtocolError as violation:
                self._restore(proc)
                return None, str(violation)
            except WorkerTimeout:
                self._restore(proc)
                return None, "timeout"
            except WorkerGone:
                self._restore(proc)
                return None, "died"
            return reply, ""
        finally:
            proc.lock.release()

    def call(self, episode_id: str, tool: str, arguments: dict,
             timeout: float) -> tuple[object, dict | None, float | None]:
        """One tool call as one transaction: (result, None, the tool's own seconds) or
        (None, {type, message}, None)."""
        started = time.monotonic()
        reply, why = self._request(episode_id, {"op": "call", "tool": tool, "arguments": arguments, "timeout": timeout},
                                   timeout, self.max_result_bytes + 4096)
        if reply is not None:
            if "error" in reply:
                error = reply["error"]
                if not isinstance(error, dict) or not isinstance(error.get("type"), str):
                    return None, {"type": "ProtocolError", "message": "the episode process answered nonsense; "
                                  "it was replaced and the episode's state is as of its last successful call"}, None
                return None, {"type": error["type"], "message": str(error.get("message") or "")}, None
            spent = reply.get("tool_s")
            return reply.get("result"), None, spent if isinstance(spent, float) else None
        proc = self._proc(episode_id)
        unchanged = "the episode's state is as of its last successful call"
        if proc.lost:
            proc.lost = False
            unchanged = ("the episode's database files were damaged from inside its process, so the episode "
                         "was restarted from its initial state")
        if why == "busy":
            return None, {"type": "Timeout", "message": f"the episode was busy with another call for the whole "
                                                        f"{timeout:g} s timeout; this call did not run"}, None
        if why == "timeout":
            return None, {"type": "Timeout", "message": f"the tool did not finish within {timeout:g} s and was "
                                                        f"stopped; {unchanged}"}, None
        if why == "died":
            spent = time.monotonic() - started
            return None, {"type": "WorkerCrashed", "message": f"the tool's process died after {spent:.2f} s (out of "
                                                              f"memory, or killed); {unchanged}"}, None
        return None, {"type": "ProtocolError", "message": f"the episode process broke the protocol ({why}); it was "
                                                          f"replaced and {unchanged}"}, None

    def _checked(self, episode_id: str, message: dict, timeout: float, max_bytes: int) -> dict:
        reply, why = self._request(episode_id, message, timeout, max_bytes)
        if reply is None:  # the process was replaced: one more try on the new one
            reply, why = self._request(episode_id, message, timeout, max_bytes)
        if reply is None or "error" in reply:
            raise PoolError(f"episode {episode_id!r}: {message['op']} failed ({why or reply['error']})")
        return reply

    def reset(self, episode_id: str) -> None:
        try:
            self._checked(episode_id, {"op": "reset"}, 30, 4096)
        except PoolError:  # the parent owns the files: put the template back itself
            proc = self._proc(episode_id)
            with proc.lock:
                self._kill(proc)
                self._put_template(proc)
                self._restore(proc)
                proc.lost = False

    def dump(self, episode_id: str) -> dict:
        state = self._checked(episode_id, {"op": "dump"}, 60, DUMP_REPLY_BYTES).get("state")
        if not isinstance(state, dict):
            raise PoolError(f"episode {episode_id!r}: the process answered a state that is not an object")
        return state

    def close_episode(self, episode_id: str) -> None:
        with self._book:
            proc = self._procs.get(episode_id)
        if proc is None:
            return
        with proc.lock:
            proc.closed = True
            self._kill(proc)
        self._forget(proc)

    def _forget(self, proc: _Proc) -> None:
        with self._book:
            if self._procs.get(proc.episode_id) is proc:
                del self._procs[proc.episode_id]
        if proc.mounted:
            _unmount(proc.dir)
            proc.mounted = False
        shutil.rmtree(proc.dir, ignore_errors=True)
        if proc.uid is not None and proc.pidfd < 0:  # its process is gone: the uid may serve another episode
            self.uids.give(proc.uid)
            proc.uid = None

    def _proc(self, episode_id: str) -> _Proc:
        with self._book:
            proc = self._procs.get(episode_id)
        if proc is None:
            raise PoolError(f"episode {episode_id!r} is not open")
        return proc

    # -- what tests, benchmarks and /health look at --------------------------------------
    def pid(self, episode_id: str) -> int | None:
        """The episode process's pid (in this process's PID namespace)."""
        proc = self._proc(episode_id)
        return _host_pid(proc.pidfd) if proc.pidfd >= 0 else None

    def signal(self, episode_id: str, signum: int = signal.SIGKILL) -> None:
        """Send the episode's process a signal, as the OOM killer or an operator would."""
        signal.pidfd_send_signal(self._proc(episode_id).pidfd, signum)

    def restoring(self) -> int:
        with self._book:
            procs = list(self._procs.values())
        return sum(1 for p in procs if p.restoring or (p.pidfd >= 0 and not _alive(p.pidfd)))

    # -- the monitor ---------------------------------------------------------------------
    def _watch(self) -> None:
        """Replace idle episode processes that died; a busy one is replaced by its caller."""
        while not self._closing:
            if not self.template_alive():  # its episodes died with it: they are replaced below
                with self._control_lock:
                    if not self._closing and not self.template_alive():
                        self._restart_template()
            busy = False
            for fd, _events in self._epoll.poll(0.2):
                with self._book:
                    proc = self._watched.get(fd)
                if proc is None or not proc.lock.acquire(blocking=False):
                    busy = True
                    continue
                try:
                    if not proc.closed and proc.pidfd == fd and not _alive(fd):
                        self._restore(proc)
                except PoolError:
                    pass  # the next call on it tries again and reports
                finally:
                    proc.lock.release()
            if busy:  # a death its caller is handling stays readable until then
                time.sleep(0.01)

    def close(self) -> None:
        self._closing = True
        with self._book:
            procs = list(self._procs.values())
        for proc in procs:
            proc.closed = True
            self._kill(proc)
        self._monitor.join(timeout=5)
        if self._control is not None:
            self._control.close()
        if self._template is not None:
            self._stop_template()
        self._epoll.close()
        self._cleanup()
