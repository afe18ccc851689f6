"""One process per episode, forked from a warm template process; the parent owns every database file.

Each episode has a folder the parent owns (mcp_servers.episode_files). The template
(mcp_servers.episode_process, served by sandbox.template) forks the episode's process, which
locks itself down under the EPISODES policy before any generated code runs and then sees that
folder and nothing of any other episode's. A commit appends to the WAL, so when the process dies
(killed, timed out, out of memory, a malformed frame), the parent starts a new one on the same
files and the episode continues from its last commit. The monitor (mcp_servers.monitor) notices
deaths of idle processes and replaces them at once; callers notice deaths during their own call.
With `max_processes`, the least recently used idle episodes past that many give up their process the
same way, on purpose (parked), and their next request starts one on their files.

The template is started through sandbox.forkserver (refused where this machine cannot confine
generated code; a cgroup limits memory and processes over the whole tree), inside bubblewrap's
mount, PID, IPC, UTS and network namespaces where they work: it sees the interpreter, the sandbox
and this pool's data folder (bound read-write), and keeps no capability but switching uids. Each
episode process runs as a uid of its own, from a range this pool holds (sandbox.identity.UidRange),
and its folder is that uid's alone (0700): episodes cannot signal, trace, read the /proc files of,
or open the files of one another, even without Landlock and seccomp. Where bubblewrap or root is
missing, the layer is left out and said so on stderr; the process's own layers apply either way.
Frames with an episode are sandbox.protocol's (random request ids, size caps); a reply that is
late, too large, malformed, for another request, or not asked for costs that episode its process
(and only that episode's), never its committed state.
"""

from __future__ import annotations

import dataclasses
import json
import os
import resource
import select
import signal
import socket
import sys
import threading
import time
from dataclasses import dataclass, field

from mcp_servers import call_outcome
from mcp_servers.episode_files import EpisodeFiles
from mcp_servers.monitor import Monitor
from sandbox import landlock
from sandbox.forkserver import ForkServer, ForkServerError, alive, any_readable, check_layers, host_pid, readable
from sandbox.guard import UnsafeCode, check_source
from sandbox.identity import IdentityError, UidRange, reachable_by_others
from sandbox.launch import Confinement
from sandbox.policy import EPISODES, HERE
from sandbox.protocol import Channel, ProtocolError, WorkerGone, WorkerTimeout

SERVICE = "mcp_servers.episode_process"
KILL_GRACE_S = 1.0  # past its own timeout a call may take this long before the parent kills the process
DUMP_REPLY_BYTES = 64 << 20
SPAWN_TIMEOUT_S = 10.0
EPISODE_LAYERS = ("namespaces", "identity", "quota", "dumpable", "landlock", "seccomp")
# The policy episode processes get; tests replace it by one with layers left off (POLICY.without(...)).
POLICY = EPISODES
_told: set[str] = set()


class PoolError(RuntimeError):
    """An episode operation the runtime could not perform (not a tool error: those are results)."""


def _tell(layer: str, message: str) -> None:
    """Say once per process which layer episode processes go without, and why."""
    if layer not in _told:
        _told.add(layer)
        print(f"worldsmith: {message}.", file=sys.stderr, flush=True)


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
    parked: bool = False  # its process was stopped to keep under max_processes; its next request starts one
    used: float = 0.0  # when its last request began (the least recently used are parked first)
    lock: threading.Lock = field(default_factory=threading.Lock)


class EpisodeProcesses:
    """The template process, the episode processes it forks, and their files."""

    def __init__(self, db_source: str, tool_sources: dict[str, str], *, memory_mb: int = 1024, file_mb: int = 256,
                 disk_mb: int | None = None, max_result_bytes: int = 1 << 20, max_episodes: int = 4096,
                 max_processes: int | None = None, unsafe_unconfined: bool = False):
        for name, source in sorted(tool_sources.items()):
            try:
                check_source(source)  # a courtesy to the model: the boundary is the episode process's confinement
            except UnsafeCode as error:
                raise PoolError(f"tool {name} does not load in the sandbox: refused by the sandbox: {error}") from None
        self.policy = dataclasses.replace(POLICY, memory_mb=memory_mb, file_mb=file_mb)
        self.max_result_bytes, self.unconfined, self.max_episodes = max_result_bytes, unsafe_unconfined, max_episodes
        self.max_processes = max_processes
        off = self.policy.off
        self.files = EpisodeFiles(db_source, tool_sources, disk_mb or 2 * file_mb + 16,
                                  not unsafe_unconfined and "quota" not in off, _tell)
        self.root = self.files.root
        self.uids: UidRange | None = None
        if not unsafe_unconfined and "identity" not in off:
            if os.geteuid() == 0:
                try:
                    self.uids = UidRange(max_episodes + 64)
                except IdentityError as error:
                    raise PoolError(str(error)) from None
            else:
                _tell("identity", "episode processes share this server's uid (a uid per episode needs the "
                      "server to run as root); Landlock, seccomp and non-dumpable processes keep them apart")
        self.restarts = 0  # episode processes replaced after a death
        self.closing = False
        self._book = threading.Lock()
        self._procs: dict[str, _Proc] = {}
        self._watched: dict[int, _Proc] = {}
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)  # two descriptors per live episode
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        self.epoll = select.epoll()
        self.server = self._server()
        self.layers = self._layers()
        if self.uids is not None and not self.layers["namespaces"] and not reachable_by_others(
                [sys.prefix, sys.base_prefix, HERE]):
            self.uids = None  # without a mount namespace to reopen them, other uids cannot reach the interpreter
            self.layers["identity"] = False
            _tell("identity", "episode processes share this server's uid: without bubblewrap, another uid cannot "
                  f"reach the interpreter ({sys.base_prefix} lies below a folder closed to others)")
        self._monitor = Monitor(self)

    # -- the template --------------------------------------------------------------------
    def _server(self) -> ForkServer:
        tree_mb = max(2048, (os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") >> 20) * 3 // 4)
        conf = Confinement(self.policy, tree_memory_mb=tree_mb, tree_processes=self.max_episodes + 64, scratch_mb=16,
                           writable=(self.root,), scratch_mode="0755")
        server = ForkServer(SERVICE, self.policy, args=(self.root,), confinement=conf, unconfined=self.unconfined,
                            log=os.path.join(self.root, "template.log"))
        if self.unconfined:
            print("WARNING: episode processes run WITHOUT confinement (unsafe_unconfined=True): generated code can "
                  "read, write and run anything this user can.", file=sys.stderr, flush=True)
        elif "namespaces" not in self.policy.off and not conf.use_bwrap():
            _tell("namespaces", "episode processes run without bubblewrap's namespaces (it is not installed or "
                  "does not work here: `bwrap` on PATH, and user namespaces when not root); they still see the "
                  "host's other files and processes by path, and rely on Landlock, seccomp and their own uid")
        server.start()
        return server

    def _layers(self) -> dict[str, bool]:
        confined, off = not self.unconfined, self.policy.off
        return {"namespaces": confined and self.server.confinement.use_bwrap(), "identity": self.uids is not None,
                "quota": self.files.quota, "dumpable": confined and "dumpable" not in off,
                "landlock": confined and "landlock" not in off and landlock.abi() > 0,
                "seccomp": confined and "seccomp" not in off and os.uname().machine == "x86_64"}

    @property
    def _template(self):
        """The template's process (a subprocess.Popen)."""
        return self.server.proc

    def template_alive(self) -> bool:
        return self.server.alive()

    def revive_template(self) -> None:
        if not self.closing:
            try:
                self.server.revive()
            except Exception:  # noqa: BLE001 (the next request tries again and reports)
                pass

    def _ask(self, message: dict, fds: list[int] = (), timeout: float = 60) -> dict:
        try:
            return self.server.ask(message, fds, timeout)[0]
        except ForkServerError as error:
            raise PoolError(str(error)) from None

    def add_template(self, key: str, state: dict) -> dict:
        """A template database from rows; returns the state as the database holds it."""
        name, rows = self.files.template_rows()
        rows.write_text(json.dumps(state))
        self._ask({"op": "template", "path": name + ".db"})
        self.files.templates[key] = os.path.join(self.root, name + ".db")
        stored = json.loads(rows.read_text())
        rows.unlink()
        return stored

    def has_template(self, key: str) -> bool:
        return key in self.files.templates

    # -- episode processes ---------------------------------------------------------------
    def _spawn(self, proc: _Proc) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        template_fd = os.open(self.files.templates[proc.key], os.O_RDONLY)
        try:
            _pid, pidfd = self.server.spawn({"now": proc.now, "max_result_bytes": self.max_result_bytes},
                                            [theirs.fileno(), template_fd], uid=proc.uid, writable=proc.dir)
        except ForkServerError as error:
            ours.close()
            raise PoolError(f"the episode process did not start: {error}") from None
        finally:
            theirs.close()
            os.close(template_fd)
        channel = Channel(ours.makefile("wb"), ours.fileno(), max_bytes=4096)
        try:  # ready: confined, database open, tools defined
            ready, _ = channel.receive(0, SPAWN_TIMEOUT_S)
        except (WorkerGone, WorkerTimeout, ProtocolError):
            ready = None
        missing = ""
        if ready and ready.get("ready") is True:  # every layer this machine gives, or the process is refused
            expected = {name for name in ("identity", "dumpable", "landlock", "seccomp") if self.layers.get(name)}
            missing = check_layers(ready.get("layers"), expected)
        if not ready or ready.get("ready") is not True or missing:
            ours.close()
            signal.pidfd_send_signal(pidfd, signal.SIGKILL) if alive(pidfd) else None
            os.close(pidfd)
            if missing:
                raise PoolError(f"the episode process did not get every confinement layer (missing: {missing})")
            raise PoolError("the episode process did not start (it died or did not answer while confining itself)")
        proc.sock, proc.channel, proc.pidfd = ours, channel, pidfd
        with self._book:
            self._watched[proc.pidfd] = proc
        self.epoll.register(proc.pidfd, select.EPOLLIN)

    def watched(self, pidfd: int) -> _Proc | None:
        with self._book:
            return self._watched.get(pidfd)

    def _kill(self, proc: _Proc) -> None:
        if proc.pidfd >= 0:
            try:
                signal.pidfd_send_signal(proc.pidfd, signal.SIGKILL)
            except ProcessLookupError:
                pass
            readable(proc.pidfd, 5000)  # gone before another process opens its files
            with self._book:
                self._watched.pop(proc.pidfd, None)
            self.epoll.unregister(proc.pidfd)
            os.close(proc.pidfd)
            proc.pidfd = -1
        if proc.sock is not None:
            proc.channel.writer.close()
            proc.sock.close()
            proc.sock, proc.channel = None, None

    def restore(self, proc: _Proc) -> None:
        """Replace the episode's process; it reopens the files at their last commit. Holds proc.lock.

        Files its own code wrecked (it can write them, as SQLite does) cannot be reopened: then
        the episode starts again from its template, and `proc.lost` says so."""
        proc.restoring = True
        parked, proc.parked = proc.parked, False
        try:
            self._kill(proc)
            if proc.closed:
                return
            try:
                self._spawn(proc)
            except PoolError:
                self.files.put_template(proc.dir, proc.key, proc.uid)
                self._spawn(proc)
                proc.lost = True
            self.restarts += not parked  # a parked episode's new process replaces none that died
        finally:
            proc.restoring = False

    def create(self, episode_id: str, key: str, now: str | None = None, files: str | None = None) -> None:
        """A new episode's process on a copy of its template, or with `files` (another pool's episode
        folder, whose process is gone) on a copy of that episode's files, at their last commit."""
        with self._book:
            if episode_id in self._procs:
                raise PoolError(f"episode {episode_id!r} already exists")
            proc = _Proc(episode_id, self.files.new_folder(), key, now)
            self._procs[episode_id] = proc
        try:
            if self.uids is not None:
                try:
                    proc.uid = self.uids.take()
                except IdentityError as error:
                    raise PoolError(f"episode {episode_id!r} cannot start: {error}") from None
            proc.mounted = self.files.make_folder(proc.dir, proc.uid)
            if files is None:
                self.files.put_template(proc.dir, proc.key, proc.uid)
            else:
                try:
                    self.files.put_copy(proc.dir, files, proc.uid)
                except OSError as error:
                    raise PoolError(f"episode {episode_id!r}: its files cannot be read ({error})") from None
            with proc.lock:
                self._spawn(proc)
                proc.used = time.monotonic()
        except BaseException:
            self._forget(proc)
            raise
        self._park_idle()

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
            if proc.sock is None or any_readable(proc.pidfd, proc.sock.fileno()):
                self.restore(proc)
            proc.used = time.monotonic()
            proc.channel.max_bytes = max_bytes
            try:
                reply, _blob = proc.channel.request(message, max(0.0, deadline - time.monotonic()) + KILL_GRACE_S)
            except ProtocolError as violation:
                self.restore(proc)
                return None, str(violation)
            except WorkerTimeout:
                self.restore(proc)
                return None, "timeout"
            except WorkerGone:
                self.restore(proc)
                return None, "died"
            return reply, ""
        finally:
            proc.lock.release()
            self._park_idle()

    def _park_idle(self) -> None:
        """Past max_processes running, stop the least recently used idle ones: their files hold what
        they committed, and their next request starts a process on them (mcp_servers.pool.restore)."""
        if self.max_processes is None:
            return
        with self._book:
            running = sorted((p for p in self._procs.values() if p.sock is not None), key=lambda p: p.used)
        for proc in running[:max(0, len(running) - self.max_processes)]:
            if proc.lock.acquire(blocking=False):  # busy ones are not idle: the next request parks another
                try:
                    if proc.sock is not None and not proc.closed:
                        self._kill(proc)
                        proc.parked = True
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
            return call_outcome.from_reply(reply)
        proc = self._proc(episode_id)
        lost, proc.lost = proc.lost, False
        return None, call_outcome.without_reply(why, timeout, time.monotonic() - started, lost), None

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
                self.files.put_template(proc.dir, proc.key, proc.uid)
                self.restore(proc)
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
        self.files.remove_folder(proc.dir, proc.mounted)
        proc.mounted = False
        if proc.uid is not None and proc.pidfd < 0:  # its process is gone: the uid may serve another episode
            self.uids.give(proc.uid)
            proc.uid = None

    def _proc(self, episode_id: str) -> _Proc:
        with self._book:
            proc = self._procs.get(episode_id)
        if proc is None:
            raise PoolError(f"episode {episode_id!r} is not open")
        return proc

    def folder(self, episode_id: str) -> str:
        """The episode's folder: its database file and WAL, committed state included."""
        return self._proc(episode_id).dir

    def pid(self, episode_id: str) -> int | None:
        """The episode process's pid (in this process's PID namespace)."""
        proc = self._proc(episode_id)
        return host_pid(proc.pidfd) if proc.pidfd >= 0 else None

    def signal(self, episode_id: str, signum: int = signal.SIGKILL) -> None:
        """Send the episode's process a signal, as the OOM killer or an operator would."""
        signal.pidfd_send_signal(self._proc(episode_id).pidfd, signum)

    def restoring(self) -> int:
        with self._book:
            procs = list(self._procs.values())
        return sum(1 for p in procs if p.restoring or (p.pidfd >= 0 and not alive(p.pidfd)))

    def close(self) -> None:
        self.closing = True
        with self._book:
            procs = list(self._procs.values())
        for proc in procs:
            proc.closed = True
            self._kill(proc)
        self._monitor.join(timeout=5)
        self.server.close()
        self.epoll.close()
        self.files.close()
