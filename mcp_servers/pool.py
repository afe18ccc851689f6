"""One process per episode, forked from a warm template process; the parent owns every database file.

Each episode has a directory on a tmpfs the parent owns (`db`, and `db-wal` once it has
written). The template (verification/episodes_worker.py) forks the episode's process, which
confines itself before any generated code runs and then sees that directory and nothing of
any other episode's. A commit appends to the WAL, so when the process dies (killed, timed
out, out of memory, a malformed frame), the parent starts a new one on the same files and
the episode continues from its last commit. A monitor thread notices deaths of idle
processes and replaces them at once; callers notice deaths during their own call.

The frames with the episode are length-prefixed JSON with a request id; a reply that is
late, too large, malformed, for another request, or not asked for costs that episode its
process (and only that episode's), never its committed state.
"""

from __future__ import annotations

import json
import os
import resource
import select
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from verification.guard import UnsafeCode, check_source

WORKER = Path(__file__).resolve().parent.parent / "verification" / "episodes_worker.py"
HEADER = struct.Struct(">IQ")  # body length, request id
KILL_GRACE_S = 1.0  # past its own timeout a call may take this long before the parent kills the process
DUMP_REPLY_BYTES = 64 << 20
SPAWN_TIMEOUT_S = 10.0


class PoolError(RuntimeError):
    """An episode operation the runtime could not perform (not a tool error: those are results)."""


class ProtocolViolation(PoolError):
    """The episode process sent something it was not asked for."""


def _shm_root() -> str | None:
    return "/dev/shm" if os.access("/dev/shm", os.W_OK) else None


def start_template(data_dir: str, control_fd: int) -> subprocess.Popen:
    """Start the template process. The swap point for the confinement layer's process start."""
    env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "PYTHONHASHSEED": "0", "PYTHONDONTWRITEBYTECODE": "1"}
    log = open(os.path.join(data_dir, "template.log"), "ab")

    def child() -> None:
        import ctypes
        ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG: no template outlives the server
        os.setsid()

    try:
        return subprocess.Popen([sys.executable, "-I", str(WORKER), str(control_fd), data_dir], stdin=subprocess.DEVNULL,
                                stdout=log, stderr=log, cwd=data_dir, env=env, pass_fds=[control_fd],
                                preexec_fn=child)
    finally:
        log.close()


# -- frames (the swap point for verification.protocol) -------------------------------------

def send_frame(sock: socket.socket, request_id: int, message: dict) -> None:
    body = json.dumps(message).encode()
    sock.sendall(HEADER.pack(len(body), request_id) + body)


def read_frame(sock: socket.socket, pidfd: int, request_id: int, deadline: float, max_bytes: int) -> dict | None:
    """The reply to `request_id`; None when the deadline passed. Raises PoolError when the process
    died and ProtocolViolation for anything malformed, oversized or for another request."""
    header = _read_exactly(sock, pidfd, HEADER.size, deadline)
    if header is None:
        return None
    size, got_id = HEADER.unpack(header)
    if got_id != request_id:
        raise ProtocolViolation(f"a reply to request {got_id} arrived while {request_id} was awaited")
    if size > max_bytes:
        raise ProtocolViolation(f"a reply of {size:,} bytes; the limit is {max_bytes:,}")
    body = _read_exactly(sock, pidfd, size, deadline)
    if body is None:
        return None
    try:
        reply = json.loads(body)
    except ValueError:
        raise ProtocolViolation("a reply that is not JSON") from None
    if not isinstance(reply, dict):
        raise ProtocolViolation("a reply that is not a JSON object")
    return reply


def _read_exactly(sock: socket.socket, pidfd: int, size: int, deadline: float) -> bytes | None:
    poller = select.poll()
    poller.register(sock.fileno(), select.POLLIN | select.POLLHUP)
    data = bytearray()
    while len(data) < size:
        wait_ms = max(0, int((deadline - time.monotonic()) * 1000) + 1)
        if not poller.poll(wait_ms):
            return None
        try:
            chunk = sock.recv(min(size - len(data), 1 << 20))
        except OSError:
            chunk = b""
        if not chunk:
            raise PoolError("the episode process died")
        data += chunk
        if time.monotonic() > deadline and len(data) < size:
            return None
    return bytes(data)


def _readable(fd: int, timeout_ms: int = 0) -> bool:
    poller = select.poll()  # not select(): a server with many episodes has descriptors past 1024
    poller.register(fd, select.POLLIN)
    return bool(poller.poll(timeout_ms))


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
    pidfd: int = -1
    requests: int = 0
    closed: bool = False
    restoring: bool = False
    lock: threading.Lock = field(default_factory=threading.Lock)


class EpisodeProcesses:
    """The template process, the episode processes it forks, and their files."""

    def __init__(self, db_source: str, tool_sources: dict[str, str], *, memory_mb: int = 1024, file_mb: int = 256,
                 max_result_bytes: int = 1 << 20, confined: bool = True):
        for name, source in sorted(tool_sources.items()):
            try:
                check_source(source)  # a courtesy to the model: the boundary is the episode process's confinement
            except UnsafeCode as error:
                raise PoolError(f"tool {name} does not load in the sandbox: refused by the sandbox: {error}") from None
        self.memory_mb, self.file_mb, self.max_result_bytes, self.confined = memory_mb, file_mb, max_result_bytes, confined
        self.root = tempfile.mkdtemp(prefix="worldsmith-episodes-", dir=_shm_root())
        os.makedirs(os.path.join(self.root, "templates"))
        os.makedirs(os.path.join(self.root, "episodes"))
        Path(self.root, "init.json").write_text(json.dumps({"db_source": db_source, "tools": tool_sources}))
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
        self._monitor = threading.Thread(target=self._watch, name="worldsmith-episode-monitor", daemon=True)
        self._monitor.start()

    # -- the template --------------------------------------------------------------------
    def _start_template(self) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            self._template = start_template(self.root, theirs.fileno())
        finally:
            theirs.close()
        self._control = ours

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
        if self._template.poll() is None:
            self._template.kill()
        self._template.wait()
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
        own_dir = os.open(proc.dir, os.O_RDONLY | os.O_DIRECTORY)
        template_fd = os.open(self._templates[proc.key], os.O_RDONLY)
        try:
            reply, fds = self._ask_template(
                {"op": "spawn", "now": proc.now, "memory_mb": self.memory_mb, "file_mb": self.file_mb,
                 "max_result_bytes": self.max_result_bytes, "unconfined": not self.confined},
                [theirs.fileno(), own_dir, template_fd])
        finally:
            theirs.close()
            os.close(own_dir)
            os.close(template_fd)
        if not reply.get("ok") or len(fds) != 1:
            ours.close()
            for fd in fds:
                os.close(fd)
            raise PoolError(f"the episode process did not start: {reply.get('error', 'no process handle')}")
        try:  # ready: confined, database open, tools defined
            ready = read_frame(ours, fds[0], 0, time.monotonic() + SPAWN_TIMEOUT_S, 4096)
        except PoolError:
            ready = None
        if not ready or ready.get("ready") is not True:
            ours.close()
            signal.pidfd_send_signal(fds[0], signal.SIGKILL) if _alive(fds[0]) else None
            os.close(fds[0])
            raise PoolError("the episode process did not start (it died or did not answer while confining itself)")
        proc.sock, proc.pidfd = ours, fds[0]
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
            proc.sock.close()
            proc.sock = None

    def _restore(self, proc: _Proc) -> None:
        """Replace the episode's process; it reopens the files at their last commit. Holds proc.lock."""
        proc.restoring = True
        try:
            self._kill(proc)
            if not proc.closed:
                self._spawn(proc)
                self.restarts += 1
        finally:
            proc.restoring = False

    def create(self, episode_id: str, key: str, now: str | None = None) -> None:
        with self._book:
            if episode_id in self._procs:
                raise PoolError(f"episode {episode_id!r} already exists")
            self._counter += 1
            proc = _Proc(episode_id, os.path.join(self.root, "episodes", f"e{self._counter}"), key, now)
            self._procs[episode_id] = proc
        try:
            os.mkdir(proc.dir)
            shutil.copyfile(self._templates[key], os.path.join(proc.dir, "db"))
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
            if proc.sock is None or not _alive(proc.pidfd):
                self._restore(proc)
            if _readable(proc.sock.fileno()):  # something it was not asked for: the reply stream is not to be trusted
                self._restore(proc)
            proc.requests += 1
            try:
                send_frame(proc.sock, proc.requests, message)
                reply = read_frame(proc.sock, proc.pidfd, proc.requests, deadline + KILL_GRACE_S, max_bytes)
            except ProtocolViolation as violation:
                self._restore(proc)
                return None, str(violation)
            except (PoolError, OSError):
                self._restore(proc)
                return None, "died"
            if reply is None:
                self._restore(proc)
                return None, "timeout"
            return reply, ""
        finally:
            proc.lock.release()

    def call(self, episode_id: str, tool: str, arguments: dict, timeout: float) -> tuple[object, dict | None]:
        """One tool call as one transaction: (result, None) or (None, {type, message})."""
        started = time.monotonic()
        reply, why = self._request(episode_id, {"op": "call", "tool": tool, "arguments": arguments, "timeout": timeout},
                                   timeout, self.max_result_bytes + 4096)
        if reply is not None:
            if "error" in reply:
                error = reply["error"]
                if not isinstance(error, dict) or not isinstance(error.get("type"), str):
                    return None, {"type": "ProtocolError", "message": "the episode process answered nonsense; "
                                  "it was replaced and the episode's state is as of its last successful call"}
                return None, {"type": error["type"], "message": str(error.get("message") or "")}
            return reply.get("result"), None
        unchanged = "the episode's state is as of its last successful call"
        if why == "busy":
            return None, {"type": "Timeout", "message": f"the episode was busy with another call for the whole "
                                                        f"{timeout:g} s timeout; this call did not run"}
        if why == "timeout":
            return None, {"type": "Timeout", "message": f"the tool did not finish within {timeout:g} s and was "
                                                        f"stopped; {unchanged}"}
        if why == "died":
            spent = time.monotonic() - started
            return None, {"type": "WorkerCrashed", "message": f"the tool's process died after {spent:.2f} s (out of "
                                                              f"memory, or killed); {unchanged}"}
        return None, {"type": "ProtocolError", "message": f"the episode process broke the protocol ({why}); it was "
                                                          f"replaced and {unchanged}"}

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
                for name in ("db-wal", "db-shm"):
                    Path(proc.dir, name).unlink(missing_ok=True)
                shutil.copyfile(self._templates[proc.key], os.path.join(proc.dir, "db"))
                self._restore(proc)

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
        shutil.rmtree(proc.dir, ignore_errors=True)

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
            if self._template.poll() is None:
                self._template.kill()
            self._template.wait()
        self._epoll.close()
        shutil.rmtree(self.root, ignore_errors=True)
