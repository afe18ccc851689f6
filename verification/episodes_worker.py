"""Episode processes: a warm template that forks one confined process per episode.

Started by mcp_servers/pool.py as `python -I episodes_worker.py CONTROL_FD DATA_DIR`. The
template loads the compiled DB layer (trusted: compiled from the schema, not written by a
model) and compiles the tools' code without running it; generated code only ever runs in an
episode process, after that process has confined itself. The template answers on its control
socket (SOCK_SEQPACKET, file descriptors passed with SCM_RIGHTS):

  template {path}                  -> {}             templates/K.db from the rows in templates/K.json
  spawn    {dir, uid, now, memory_mb, ...} + [channel, template file] -> {pid} + [pidfd]

A spawned episode process keeps its database as `db` in its own directory (on the parent's
tmpfs), in WAL mode with an exclusive lock and no checkpoints: a commit appends the changed
pages, so a write costs the same at any database size, and committed state survives the
process being killed (the parent starts a new one on the same files). It serves the frames of
verification/protocol.py on its channel (request ids, sizes checked by the parent):

  call  {tool, arguments, timeout} -> {result} or {error}   one runtime-owned transaction
  reset {}                           -> {}                    back to the template
  dump  {}                           -> {state}
"""

from __future__ import annotations

import builtins
import ctypes
import gc
import json
import os
import resource
import signal
import socket
import sqlite3
import struct
import sys
import time
import traceback
import types

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # -I leaves the script's folder out
import guard  # noqa: E402
import lockdown  # noqa: E402
from protocol import read_request, write_reply  # noqa: E402
from swap_pool import SwapPool  # noqa: E402

from sqlalchemy import create_engine  # noqa: E402
from sqlmodel import Session  # noqa: E402


_libc = ctypes.CDLL(None, use_errno=True)
_sqlite = ctypes.CDLL(__import__("_sqlite3").__file__)
_DBCONFIG_NO_CKPT_ON_CLOSE, _DBCONFIG_DEFENSIVE = 1006, 1010


class Timeout(BaseException):
    """Raised in the tool when its time is up; BaseException so `except Exception` cannot swallow it."""


def _on_alarm(_signum, _frame):
    raise Timeout()


# -- the courtesy layer: the AST guard's allow-list again at run time (the OS is the boundary) --

def _guarded_import(name, globals=None, locals=None, fromlist=(), level=0):
    if level or name.split(".")[0] not in guard.ALLOWED_MODULES:
        raise ImportError(f"import of {name!r} is not allowed in the sandbox")
    return builtins.__import__(name, globals, locals, fromlist, level)


def _safe_builtins() -> dict:
    names = {k: v for k, v in vars(builtins).items() if k not in guard.FORBIDDEN_NAMES}
    names["__import__"] = _guarded_import
    return names


# -- confinement of one episode process ---------------------------------------------------

_PR_SET_PDEATHSIG, _PR_SET_NO_NEW_PRIVS, _PR_SET_DUMPABLE, _PR_SET_SECCOMP = 1, 38, 4, 22
# x86_64 system calls an episode never needs: new processes and programs, sockets, tracing,
# namespaces and mounts, other processes' memory, kernel keyrings, BPF, io_uring.
# SysV IPC and POSIX message queues too: episodes of one template share an IPC namespace.
_DENIED_SYSCALLS = (56, 57, 58, 59, 322, 435, 41, 42, 43, 49, 50, 53, 288, 101, 272, 308, 165, 166, 155, 161,
                    310, 311, 321, 248, 249, 250, 323, 298, 425, 426, 427, 135, 175, 313, 246, 303, 304, 133, 259,
                    424, 434, 438, 428, 429, 430, 431, 432, 433, 29, 64, 68, 240)
_AUDIT_ARCH_X86_64 = 0xC000003E


def _seccomp_deny(numbers: tuple[int, ...]) -> None:
    """Install a filter answering EPERM to `numbers` (and to any non-x86_64 entry)."""
    def op(code, k, jt=0, jf=0):
        return struct.pack("HBBI", code, jt, jf, k)
    errno = 0x00050000 | 1
    prog = [op(0x20, 4), op(0x15, _AUDIT_ARCH_X86_64, 1, 0), op(0x06, errno), op(0x20, 0),
            op(0x35, 0x40000000, 0, 1), op(0x06, errno)]  # x32 numbers
    for n in numbers:
        prog += [op(0x15, n, 0, 1), op(0x06, errno)]
    prog.append(op(0x06, 0x7FFF0000))
    code = b"".join(prog)
    buffer = ctypes.create_string_buffer(code)
    fprog = struct.pack("HxxxxxxQ", len(prog), ctypes.addressof(buffer))
    fbuf = ctypes.create_string_buffer(fprog)
    if _libc.prctl(_PR_SET_SECCOMP, 2, ctypes.c_void_p(ctypes.addressof(fbuf)), 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "seccomp filter refused")


def _landlock(own_dir: int, readable: list[str]) -> int:
    """A Landlock layer: read-only beneath `readable`, full access beneath `own_dir`, nothing else;
    no signals to and no abstract sockets of processes outside it; no TCP. Returns the ABI (0: none)."""
    abi = _libc.syscall(444, None, 0, 1)
    if abi <= 0:
        return 0
    fs_all = (1 << (16 if abi >= 5 else 15 if abi >= 3 else 14 if abi >= 2 else 13)) - 1
    read = 1 | 4 | 8  # execute, read file, read dir
    attr = struct.pack("QQQ", fs_all, 3 if abi >= 4 else 0, 3 if abi >= 6 else 0)
    size = 24 if abi >= 6 else 16 if abi >= 4 else 8
    ruleset = _libc.syscall(444, ctypes.c_char_p(attr[:size]), size, 0)
    if ruleset < 0:
        raise OSError(ctypes.get_errno(), "landlock_create_ruleset")
    try:
        rules = [(own_dir, fs_all)]
        opened = []
        for path in readable:
            try:
                opened.append(os.open(path, os.O_PATH | os.O_CLOEXEC))
                rules.append((opened[-1], read))
            except OSError:
                pass
        for fd, access in rules:
            rule = struct.pack("=Qi", access, fd)
            if _libc.syscall(445, ruleset, 1, ctypes.c_char_p(rule), 0) != 0:
                raise OSError(ctypes.get_errno(), "landlock_add_rule")
        for fd in opened:
            os.close(fd)
        if _libc.syscall(446, ruleset, 0) != 0:
            raise OSError(ctypes.get_errno(), "landlock_restrict_self")
    finally:
        os.close(ruleset)
    return abi


def confine_episode(own_path: str, memory_mb: int, file_mb: int, uid: int | None = None,
                    off: frozenset = frozenset()) -> list[str]:
    """Everything an episode process gives up before it runs generated code, ending in its own
    directory; returns the layers applied (the parent refuses a process missing one it expects).
    `off` is for tests only."""
    applied = []
    for limit, value in ((resource.RLIMIT_AS, memory_mb << 20), (resource.RLIMIT_FSIZE, file_mb << 20),
                         (resource.RLIMIT_CORE, 0), (resource.RLIMIT_NOFILE, 64)):
        resource.setrlimit(limit, (value, value))
    if uid is not None:  # its own uid: no signals, ptrace, /proc files or files of other episodes
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)  # every uid non-zero: the kernel clears all capabilities
        if os.getresuid() != (uid, uid, uid) or os.getresgid() != (uid, uid, uid) or _capabilities() != 0:
            raise OSError("the episode's uid switch did not take")
        lockdown._drop_capabilities()  # the inheritable set too, which the uid switch leaves
        resource.setrlimit(resource.RLIMIT_NPROC, (16, 16))  # this uid's tasks: its one process and its threads
        applied.append("identity")
    elif os.geteuid() == 0:  # root without a uid of its own: at least no capabilities left
        lockdown._drop_capabilities()
    # Opened by path here, as its own uid (the template may not enter it): a descriptor from the
    # server would name the host's mount, outside this namespace's root, and SQLite needs the path.
    own_dir = os.open(own_path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    os.fchdir(own_dir)
    _libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
    if "dumpable" not in off:
        _libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)  # no /proc/<pid>/mem or ptrace by a sibling, even of one uid
        applied.append("dumpable")
    readable = sorted({sys.prefix, sys.base_prefix, os.path.dirname(os.__file__), os.path.dirname(guard.__file__)})
    if "landlock" not in off and _landlock(own_dir, readable):
        applied.append("landlock")
    os.close(own_dir)
    if "seccomp" not in off:
        _seccomp_deny(_DENIED_SYSCALLS)
        applied.append("seccomp")
    return applied


def _capabilities() -> int:
    """Permitted, effective and ambient capabilities together (0: none)."""
    found = 0
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(("CapPrm:", "CapEff:", "CapAmb:")):
                found |= int(line.split()[1], 16)
    return found


# -- databases -----------------------------------------------------------------------------

def _db_config(conn: sqlite3.Connection, option: int) -> None:
    handle = ctypes.c_void_p.from_address(id(conn) + object.__basicsize__).value  # pysqlite_Connection.db
    _sqlite.sqlite3_db_config(ctypes.c_void_p(handle), ctypes.c_int(option), ctypes.c_int(1), ctypes.c_void_p(0))


_SAVEPOINTS: dict[str, str] = {}  # SQLAlchemy's savepoint names -> this call's (cleared per call)


def _direct_savepoints(dialect) -> None:
    """The tool's savepoint (one per call) straight to the DB-API connection: SQLAlchemy compiles
    a savepoint clause anew each time, which cost more than a whole small read. Its names count
    up on a kept connection; here they restart with each call (s1, s2, ... for nested ones), so
    the same few statements stay in the sqlite3 module's cache of prepared statements instead of
    pushing the tools' queries out. SQLite's authorizer still sees every statement."""
    def run(sql: str, new: bool = False):
        def do(connection, name):
            if new:
                _SAVEPOINTS[name] = f"s{len(_SAVEPOINTS) + 1}"
            connection.connection.dbapi_connection.execute(sql % _SAVEPOINTS[name])
        return do

    dialect.do_savepoint = run("SAVEPOINT %s", new=True)
    dialect.do_release_savepoint = run("RELEASE SAVEPOINT %s")
    dialect.do_rollback_to_savepoint = run("ROLLBACK TO SAVEPOINT %s")


# SQLite authorizer codes refused while a tool runs: the transaction is the runtime's, and no
# tool attaches other databases or changes how this one is stored.
_SQLITE_PRAGMA, _SQLITE_TRANSACTION, _SQLITE_ATTACH, _SQLITE_DETACH = 19, 22, 24, 25
_REFUSED_IN_TOOLS = {_SQLITE_PRAGMA, _SQLITE_TRANSACTION, _SQLITE_ATTACH, _SQLITE_DETACH}


class EpisodeDB:
    """One episode's database file, opened for WAL appends with runtime-owned transactions."""

    def __init__(self, db_module, engine, pool: SwapPool, template_fd: int, now: str | None):
        self.db, self.engine, self.pool, self.template_fd, self.now = db_module, engine, pool, template_fd, now
        self.in_tool = False
        self.conn: sqlite3.Connection | None = None
        self.connection = None  # the engine's Connection, kept across calls (a checkout per call costs more)
        self.open()
        self.identity = self._identity()

    def _authorize(self, action, *_args):
        if action in (_SQLITE_ATTACH, _SQLITE_DETACH) or (self.in_tool and action in _REFUSED_IN_TOOLS):
            return sqlite3.SQLITE_DENY
        return sqlite3.SQLITE_OK

    def open(self) -> None:
        conn = sqlite3.connect("db", isolation_level=None, check_same_thread=False)
        _db_config(conn, _DBCONFIG_NO_CKPT_ON_CLOSE)  # the main file keeps the template; the WAL holds the episode
        _db_config(conn, _DBCONFIG_DEFENSIVE)
        for pragma in ("locking_mode=EXCLUSIVE", "journal_mode=WAL", "synchronous=OFF", "wal_autocheckpoint=0",
                       "foreign_keys=ON", "cache_size=-2048"):
            conn.execute(f"PRAGMA {pragma}")
        conn.execute("SELECT count(*) FROM sqlite_schema").fetchone()
        conn.set_authorizer(self._authorize)
        self.conn = self.pool.current = conn
        self.connection = self.engine.connect()  # the connect events (foreign keys) run now, not inside a tool

    def _identity(self) -> tuple:
        st = os.stat("db")
        return st.st_ino, st.st_size, st.st_ctime_ns

    def close(self) -> None:
        if self.connection is not None:
            try:
                self.connection.close()
            except Exception:  # a connection a tool broke: the file handle below is what matters
                pass
            self.connection = None
        if self.conn is not None:
            self.conn.close()
            self.conn = None

    def reset(self) -> None:
        """Drop the WAL; the main file is the template unless a tool wrote it, then copy it back."""
        self.close()
        if os.path.exists("db-wal"):
            os.unlink("db-wal")
        if self._identity() != self.identity:
            with open("db", "wb") as out:
                out.write(os.pread(self.template_fd, os.fstat(self.template_fd).st_size, 0))
            self.identity = self._identity()
        self.open()

    def session(self) -> tuple[object, Session]:
        """(the runtime's transaction, a session joined to it through a savepoint)."""
        if self.connection.closed or self.connection.invalidated:  # a tool closed it during an earlier call
            self.close()
            self.open()
        transaction = self.connection.begin()
        _SAVEPOINTS.clear()
        session = Session(bind=self.connection, join_transaction_mode="create_savepoint")  # commit() only releases
        if self.now:
            session.info["now"] = self.now
        return transaction, session

    def dump(self) -> dict:
        transaction, session = self.session()
        try:
            return self.db.dump_state(session)
        finally:
            session.close()
            transaction.rollback()


# -- the episode process -------------------------------------------------------------------

def _tool_traceback(error: BaseException) -> str:
    frames = [f for f in traceback.extract_tb(error.__traceback__) if f.filename.startswith("<tool")]
    return "".join(traceback.format_list(frames) + traceback.format_exception_only(type(error), error))[-3000:]


class Episode:
    def __init__(self, sock: socket.socket, db: EpisodeDB, tools: dict, max_result_bytes: int, memory_mb: int):
        self.inp, self.out, self.db, self.tools = sock.makefile("rb"), sock.makefile("wb"), db, tools
        self.max_result_bytes, self.memory_mb = max_result_bytes, memory_mb

    def send(self, request_id: int, reply: dict | bytes) -> None:
        write_reply(self.out, request_id, reply)

    def serve(self) -> None:
        while True:
            request = read_request(self.inp)
            if request is None:
                return
            request_id, message, _blob = request
            op = message.get("op")
            if op == "call":
                reply = self.call(message["tool"], message.get("arguments") or {}, float(message["timeout"]))
            elif op == "reset":
                self.db.reset()
                reply = {}
            elif op == "dump":
                reply = {"state": self.db.dump()}
            else:
                reply = {"error": {"type": "ProtocolError", "message": f"unknown op {op!r}"}}
            self.send(request_id, reply)

    def call(self, tool: str, arguments: dict, timeout: float) -> dict | bytes:
        """One tool call in one transaction the runtime owns: committed after a clean return with
        a JSON result under the size limit, rolled back otherwise. A result comes back as the
        reply's encoded body (encoded once); an error as a message."""
        fn = self.tools.get(tool)
        if fn is None:
            return {"error": {"type": "UnknownTool", "message": f"tool {tool!r} is not defined"}}
        db = self.db
        deadline = time.monotonic() + timeout
        transaction, session = db.session()
        db.conn.set_progress_handler(lambda: int(time.monotonic() > deadline), 10_000)
        db.conn.execute("BEGIN IMMEDIATE")
        error = body = None
        try:
            db.in_tool = True
            signal.setitimer(signal.ITIMER_REAL, timeout)
            started = time.perf_counter()
            try:
                result = fn(session, **arguments)
                session.flush()
            finally:
                spent = time.perf_counter() - started
                signal.setitimer(signal.ITIMER_REAL, 0)
                db.in_tool = False
            encoded = json.dumps(result)  # encoded once, for the size limit and the reply; ASCII
            size = len(encoded)
            # the tool's own time goes back too: what a call costs beyond it is the runtime's
            body = f'{{"result": {encoded}, "tool_s": {spent:.7f}}}'
            if size > self.max_result_bytes:
                error = {"type": "ResultTooLarge", "message": f"the tool's result is {size:,} bytes; "
                                                              f"the limit is {self.max_result_bytes:,}"}
        except Timeout:
            error = {"type": "Timeout", "message": f"the tool ran longer than {timeout:g} s"}
        except MemoryError:
            error = {"type": "MemoryLimit", "message": f"the tool ran out of memory (limit {self.memory_mb} MB)"}
        except BaseException as failure:  # generated code may raise anything
            if time.monotonic() > deadline:  # the alarm or the progress handler, seen through SQLite's callbacks
                error = {"type": "Timeout", "message": f"the tool ran longer than {timeout:g} s"}
            else:
                error = {"type": type(failure).__name__, "message": str(failure)[:2000],
                         "traceback": _tool_traceback(failure)}
        try:
            db.conn.set_progress_handler(None, 0)
            # SQLite's transaction ends here, directly: COMMIT takes the tool's open savepoint with it
            # (flushed above). No session.commit() or close(): they would run the session's events,
            # which a tool can register, after its window (alarm, authorizer) has closed, and cost
            # more than a small read. SQLAlchemy's view may be one a tool changed (a refused
            # connection.commit() leaves it believing the transaction is over).
            if error is None:
                db.conn.execute("COMMIT")
            elif db.conn.in_transaction:
                db.conn.execute("ROLLBACK")
            transaction.rollback()  # SQLAlchemy's side, savepoint included; nothing is left to undo in SQLite
        except BaseException:  # a connection the tool (or its timeout) left unusable: reopen it
            db.close()
            db.open()
            if error is None:  # reopening rolled back what the commit did not take
                error = {"type": "CommitFailed", "message": "the tool's writes could not be committed; nothing "
                                                            "of this call was kept"}
        return body.encode() if error is None else {"error": error}


def _serve_episode(channel: int, template_fd: int, spec: dict, db_module, engine, pool, code,
                   template_pid: int) -> None:
    """In the forked child: confine, open the database, define the tools, serve."""
    os.setsid()
    _libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)  # no episode outlives the template (nor the server)
    if os.getppid() != template_pid:
        os._exit(3)
    signal.signal(signal.SIGALRM, _on_alarm)
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    keep = {channel, template_fd, null, 0, 1, 2}
    for fd in map(int, os.listdir("/proc/self/fd")):
        if fd not in keep:
            try:
                os.close(fd)
            except OSError:
                pass
    layers = []
    if spec.get("unconfined"):
        os.chdir(spec["dir"])
    else:  # it enters its directory as its own uid (the template may not)
        layers = confine_episode(spec["dir"], spec["memory_mb"], spec["file_mb"], spec.get("uid"),
                                 frozenset(spec.get("off") or ()))
    db = EpisodeDB(db_module, engine, pool, template_fd, spec.get("now"))
    tools = {}
    shared = _safe_builtins()
    for name, compiled in code.items():
        namespace = {"__builtins__": shared, "__name__": f"tools.{name}"}
        exec(compiled, namespace)
        tools[name] = namespace[name]
    episode = Episode(socket.socket(fileno=channel), db, tools, spec["max_result_bytes"], spec["memory_mb"])
    episode.send(0, {"ready": True, "layers": layers})
    episode.serve()


# -- the template --------------------------------------------------------------------------

class Template:
    def __init__(self, data_dir: str) -> None:
        self.data_dir = data_dir
        init = json.loads(open(os.path.join(data_dir, "init.json")).read())
        module = types.ModuleType("db")
        module.__file__ = "db.py"
        sys.modules["db"] = module
        exec(compile(init["db_source"], "db.py", "exec"), module.__dict__)
        self.db = module
        self.code = {name: compile(source, f"<tool {name}>", "exec") for name, source in init["tools"].items()}
        self.pool = SwapPool()
        self.engine = create_engine("sqlite://", pool=self.pool)
        _direct_savepoints(self.engine.dialect)
        self._warm_up()

    def _warm_up(self) -> None:
        """Import and compile now what the first call would: each child inherits it."""
        conn = sqlite3.connect(":memory:", isolation_level=None)
        self.pool.current = conn
        self.db.create_all(self.engine)
        with self.engine.connect() as connection:
            connection.begin()
            with Session(bind=connection, join_transaction_mode="create_savepoint") as session:
                self.db.dump_state(session)
                session.commit()
        json.dumps({"warm": [1.5, None]})
        traceback.format_exception_only(ValueError, ValueError("warm"))
        self.pool.current = None
        self.pool.dispose()
        conn.close()

    def template(self, message: dict) -> dict:
        """Build templates/<key>.db from templates/<key>.json; the state as stored goes back into the JSON file."""
        path = os.path.join(self.data_dir, message["path"])
        rows = os.path.splitext(path)[0] + ".json"
        with open(rows) as source:
            message["state"] = json.load(source)
        if os.path.exists(path):
            os.unlink(path)
        conn = sqlite3.connect(path, isolation_level=None)
        engine = create_engine("sqlite://", creator=lambda: conn)
        try:
            self.db.create_all(engine)
            with Session(engine) as session:
                self.db.load_state(session, message["state"])
                session.commit()
                state = self.db.dump_state(session)
        except Exception as error:
            first_line = (str(error).splitlines() or [""])[0][:500]
            return {"ok": False, "error": f"the state does not load: {type(error).__name__}: {first_line}"}
        finally:
            engine.dispose()
            conn.close()
        with open(rows, "w") as out:
            json.dump(state, out)
        return {"ok": True}

    def spawn(self, message: dict, fds: list[int]) -> tuple[dict, list[int]]:
        channel, template_fd = fds
        _reap()  # a replaced process of the same episode must not count against its uid's process limit
        template_pid = os.getpid()
        pid = os.fork()
        if pid == 0:
            code = 0
            try:
                _serve_episode(channel, template_fd, message, self.db, self.engine, self.pool, self.code,
                               template_pid)
            except BaseException:
                code = 3
            os._exit(code)
        for fd in fds:
            os.close(fd)
        return {"ok": True, "pid": pid}, [os.pidfd_open(pid)]


def _reap() -> None:
    """Collect exited episode processes (the parent learns of exits from their pidfds)."""
    try:
        while os.waitpid(-1, os.WNOHANG)[0]:
            pass
    except ChildProcessError:
        pass


def main() -> None:
    control = socket.socket(fileno=int(sys.argv[1]))
    template = Template(sys.argv[2])
    gc.freeze()  # objects made so far are never collected, so children leave their pages shared
    while True:
        _reap()
        data, fds, _flags, _addr = socket.recv_fds(control, 1 << 20, 8)
        if not data:
            return
        message = json.loads(data)
        reply_fds: list[int] = []
        try:
            if message["op"] == "template":
                reply = template.template(message)
            elif message["op"] == "spawn":
                reply, reply_fds = template.spawn(message, fds)
            else:
                reply = {"ok": False, "error": f"unknown op {message['op']!r}"}
        except Exception as error:
            reply = {"ok": False, "error": f"{type(error).__name__}: {error}"}
        socket.send_fds(control, [json.dumps(reply).encode()], reply_fds)
        for fd in reply_fds:
            os.close(fd)


if __name__ == "__main__":
    main()
