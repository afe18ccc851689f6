"""The sandbox worker: runs generated code in a confined process and reports raw outcomes.

Started by verification.sandbox through verification.confine as `python -I worker.py`, it is
a template: it imports what it needs and loads the DB layer, then reads requests framed by
verification/protocol.py on stdin/stdout and handles each in a forked child that locks itself
down (lockdown.lock_down: identity, Landlock, seccomp) before it touches the request, writes
its reply to a pipe and exits. The template never runs generated code. It never decides a
verdict: a procedural test gets only its inputs here, and the parent compares the
outcome (return value, exception, state changes) with what the test expects. The compiled DB
layer is loaded once and an empty database template kept in memory, so each test starts from
a copy of it. Every connection refuses SQL that reaches outside its database (ATTACH, VACUUM
INTO, extensions); the filesystem confinement stops it again if the tool lifts the authorizer.
"""

from __future__ import annotations

import builtins
import gc
import json
import os
import select
import signal
import sqlite3
import sys
import time
import traceback
import types

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # -I leaves the script's folder out
import guard  # noqa: E402
import lockdown  # noqa: E402
import protocol  # noqa: E402
import verdict  # noqa: E402

_PROTO_OUT = os.fdopen(os.dup(1), "wb")
os.dup2(2, 1)  # whatever the tool prints goes to the log, never into the protocol

from sqlalchemy import create_engine  # noqa: E402
from sqlmodel import Session  # noqa: E402
from swap_pool import SwapPool  # noqa: E402


class Timeout(BaseException):
    """Raised in the tool when its time is up; BaseException so `except Exception` cannot swallow it."""


def _on_alarm(_signum, _frame):
    raise Timeout()


signal.signal(signal.SIGALRM, _on_alarm)


def _block_network() -> None:
    import socket

    def refused(*_args, **_kwargs):
        raise PermissionError("network access is disabled in the sandbox")

    socket.socket = refused  # type: ignore[misc]
    socket.create_connection = refused  # type: ignore[assignment]
    socket.getaddrinfo = refused  # type: ignore[assignment]


_block_network()


def _guarded_import(name, globals=None, locals=None, fromlist=(), level=0):
    if level or name.split(".")[0] not in guard.ALLOWED_MODULES:
        raise ImportError(f"import of {name!r} is not allowed in the sandbox")
    return builtins.__import__(name, globals, locals, fromlist, level)


# SQLite actions that reach outside the connection's own database, and functions that load code.
_DENIED_ACTIONS = {sqlite3.SQLITE_ATTACH, sqlite3.SQLITE_DETACH}
_DENIED_FUNCTIONS = {"load_extension", "readfile", "writefile", "edit", "fts3_tokenizer"}


def _authorize(action, arg1, arg2, _db, _trigger):
    if action == sqlite3.SQLITE_ATTACH and arg1 == "x":  # how sqlite3_deserialize loads an image (reset)
        return sqlite3.SQLITE_OK
    if action in _DENIED_ACTIONS or (action == sqlite3.SQLITE_FUNCTION and (arg2 or "").lower() in _DENIED_FUNCTIONS):
        return sqlite3.SQLITE_DENY
    return sqlite3.SQLITE_OK


def connect() -> sqlite3.Connection:
    """An in-memory database whose SQL cannot attach, vacuum into, or load anything else."""
    conn = sqlite3.connect(":memory:", check_same_thread=False)
    conn.set_authorizer(_authorize)
    return conn


SAFE_BUILTINS = {k: v for k, v in vars(builtins).items() if k not in guard.FORBIDDEN_NAMES}
SAFE_BUILTINS["__import__"] = _guarded_import


class Worker:
    def __init__(self) -> None:
        self.pool = SwapPool()  # one engine for every database: its compiled SQL is kept
        self.engine = create_engine("sqlite://", pool=self.pool)
        self.db: types.ModuleType | None = None
        self.template: bytes = b""
        self.tools: dict[str, object] = {}
        # a fork's loaded test states: (initial_state, now) -> (database image, state dump) or setup error
        self.loaded: dict[str, tuple[bytes, dict] | str] = {}

    # -- setup ---------------------------------------------------------------------------
    def init(self, msg: dict) -> dict:
        module = types.ModuleType("db")
        module.__file__ = "db.py"
        sys.modules["db"] = module
        exec(compile(msg["db_source"], "db.py", "exec"), module.__dict__)
        self.db = module
        conn = connect()
        self.pool.current = conn
        module.create_all(self.engine)
        self.template = conn.serialize()
        session, conn = self.fresh_session(None)  # compile the DB layer's own SQL once, for every fork
        try:
            module.load_state(session, {})
            session.commit()
            module.dump_state(session)
        finally:
            session.close()
            conn.close()
        return {"ok": True}

    def define(self, msg: dict) -> dict:
        name, source = msg["tool"], msg["source"]
        try:
            guard.check_source(source)
            namespace = {"__builtins__": SAFE_BUILTINS, "__name__": f"tools.{name}"}
            exec(compile(source, f"<tool {name}>", "exec"), namespace)
        except Exception as error:
            return {"ok": False, "error": f"{type(error).__name__}: {error}"}
        fn = namespace.get(name)
        if not callable(fn):
            return {"ok": False, "error": f"the code does not define a function named {name!r}"}
        self.tools[name] = fn
        return {"ok": True}

    # -- databases -----------------------------------------------------------------------
    def fresh_session(self, now: str | None, image: bytes | None = None):
        conn = connect()
        conn.deserialize(image or self.template)
        conn.execute("PRAGMA foreign_keys=ON")
        self.pool.current = conn
        session = Session(self.engine)
        if now:
            session.info["now"] = now
        return session, conn

    # -- running -------------------------------------------------------------------------
    def call(self, session: Session, conn: sqlite3.Connection, tool: str, arguments: dict, timeout: float):
        """Run one tool call as one transaction: committed on success, rolled back on any failure."""
        fn = self.tools[tool]
        deadline = time.monotonic() + timeout
        conn.set_progress_handler(lambda: int(time.monotonic() > deadline), 10_000)
        signal.setitimer(signal.ITIMER_REAL, timeout)
        try:
            result = fn(session, **arguments)
            session.flush()
            json.dumps(result)  # the agent only ever sees JSON
            session.commit()
            return result, None
        except Timeout:
            session.rollback()
            return None, {"type": "Timeout", "message": f"the tool ran longer than {timeout:g} s"}
        except BaseException as error:  # generated code may raise anything
            session.rollback()
            if "OperationalError" in type(error).__name__ and "interrupted" in str(error):  # progress handler
                return None, {"type": "Timeout", "message": f"the tool ran longer than {timeout:g} s"}
            return None, {
                "type": type(error).__name__,
                "message": str(error)[:2000],
                "traceback": _tool_traceback(error),
            }
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            conn.set_progress_handler(None, 0)

    def define_and_test(self, msg: dict) -> dict:
        defined = self.define(msg)
        return self.run_tests(msg) if defined["ok"] else {**defined, "refused": True}

    def run_tests(self, msg: dict) -> dict:
        """Each test's raw outcome, in order; the parent judges them. With `stop_unless` (a
        verdict.signature per test, or None), the tests stop after the first outcome whose
        signature differs: the outcomes so far come back, a prefix of what all would be."""
        tool = msg["tool"]
        if tool not in self.tools:
            return {"ok": False, "error": f"tool {tool!r} is not defined"}
        stop_unless = msg.get("stop_unless") or [None] * len(msg["tests"])
        outcomes = []
        for test, expected in zip(msg["tests"], stop_unless):
            outcomes.append(self._run_test(tool, test, msg.get("timeout", 2.0)))
            if expected is not None and _signature(outcomes[-1]) != expected:
                break
        return {"ok": True, "outcomes": outcomes}

    def integrity(self, msg: dict) -> dict:
        """Load each case's state; report whether the DB layer accepted it."""
        results = []
        for case in msg["cases"]:
            session, conn = self.fresh_session(None)
            try:
                self.db.load_state(session, case["state"])
                session.commit()
                results.append(None)
            except Exception as error:
                results.append(f"{type(error).__name__}: {str(error).splitlines()[0][:300]}")
            finally:
                session.close()
                conn.close()
        return {"ok": True, "results": results}

    def _load(self, state: dict, now: str | None) -> tuple[bytes, dict] | str:
        """A test's initial state loaded once per fork: the database image and its dump, or why
        it does not load; the tests that share a state start from copies of that image."""
        key = json.dumps([state, now], sort_keys=True)
        if key not in self.loaded:
            session, conn = self.fresh_session(now)
            try:
                self.db.load_state(session, state)
                session.commit()
                self.loaded[key] = (conn.serialize(), self.db.dump_state(session))
            except Exception as error:
                self.loaded[key] = f"{type(error).__name__}: {error}"
            finally:
                session.close()
                conn.close()
        return self.loaded[key]

    def _run_test(self, tool: str, test: dict, timeout: float) -> dict:
        loaded = self._load(test.get("initial_state", {}), test.get("now"))
        if isinstance(loaded, str):
            return {"setup_error": loaded}
        image, before = loaded
        session, conn = self.fresh_session(test.get("now"), image)
        try:
            result, error = self.call(session, conn, tool, test.get("arguments", {}), timeout)
            after = self.db.dump_state(session)
            return {"returned": result, "error": error, "changes": diff_states(before, after, self.db.PRIMARY_KEY)}
        finally:
            session.close()
            conn.close()


def _signature(outcome: dict) -> str | None:
    try:
        return verdict.signature(outcome)
    except (TypeError, ValueError, RecursionError):  # a return value JSON cannot sort: stop, the parent judges
        return None


def diff_states(before: dict, after: dict, primary_key: dict) -> dict:
    """Changes from `before` to `after` in the procedural-test format, empty tables left out."""
    out = {}
    for table in sorted(set(before) | set(after)):
        pk = primary_key[table]
        old = {r[pk]: r for r in before.get(table, [])}
        new = {r[pk]: r for r in after.get(table, [])}
        inserted = [new[k] for k in sorted(new.keys() - old.keys())]
        deleted = sorted(old.keys() - new.keys())
        updated = {}
        for key in sorted(old.keys() & new.keys()):
            delta = {c: v for c, v in new[key].items() if old[key].get(c) != v}
            if delta:
                updated[key] = delta
        if inserted or deleted or updated:
            out[table] = {"inserted": inserted, "updated": updated, "deleted": deleted}
    return verdict.normal(out)


def _tool_traceback(error: BaseException) -> str:
    """The traceback frames inside generated code only: what the debug agent can act on."""
    frames = [f for f in traceback.extract_tb(error.__traceback__) if f.filename.startswith("<tool")]
    lines = traceback.format_list(frames) + traceback.format_exception_only(type(error), error)
    return "".join(lines)[-3000:]


def _serve_in_child(handler, message: dict, spec: dict, out: int) -> None:
    """In the forked child: confine, handle one request, write its JSON reply to `out`, exit."""
    lockdown.libc().prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG: never outlive the template
    for fd in (0, _PROTO_OUT.fileno()):  # only the reply pipe leads back
        os.close(fd)
    try:
        layers = lockdown.lock_down(spec)  # from here on nothing is trusted
        reply = {**handler(message), "layers": layers}
    except BaseException as error:
        reply = {"ok": False, "error": f"{type(error).__name__}: {error}"}
    try:
        data = json.dumps(reply).encode()
    except (TypeError, ValueError, RecursionError) as error:
        data = json.dumps({"ok": False, "error": f"the reply is not JSON: {error}"}).encode()
    view = memoryview(data)
    while view:
        view = view[os.write(out, view):]
    os._exit(0)


def in_child(handler, message: dict, spec: dict, budget: float, max_bytes: int,
             keep: frozenset[str] = frozenset()) -> bytes:
    """Run one request in a process forked from this template; its JSON reply, or an error."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read_end)
        try:
            _serve_in_child(handler, message, spec, write_end)
        finally:
            os._exit(3)
    os.close(write_end)
    chunks, size, problem = [], 0, None
    deadline = time.monotonic() + budget
    poller = select.poll()
    poller.register(read_end, select.POLLIN | select.POLLHUP)
    while True:
        wait_ms = int((deadline - time.monotonic()) * 1000)
        if wait_ms <= 0 or not poller.poll(wait_ms):
            problem = f"the sandbox worker was killed: no answer within {budget:g} s"
            break
        chunk = os.read(read_end, 1 << 20)
        if not chunk:
            break
        size += len(chunk)
        if size > max_bytes:
            problem = f"the sandbox worker was killed: its reply is over {max_bytes} bytes"
            break
        chunks.append(chunk)
    os.close(read_end)
    os.kill(pid, signal.SIGKILL)
    _, status = os.waitpid(pid, 0)
    for folder in spec.get("writable", [])[:1]:
        lockdown.clear_scratch(folder, keep)
    if problem is None and (not chunks or os.WIFSIGNALED(status)):
        problem = f"the sandbox worker was killed (status {status})"
    return json.dumps({"ok": False, "error": problem}).encode() if problem else b"".join(chunks)


def main() -> None:
    """The template: the DB layer loaded once, each request handled in a fresh confined fork.

    The template runs no generated code and locks nothing down itself; it keeps the
    confinement spec and every child applies it before it reads its request.
    """
    worker = Worker()
    # a fork starts with no tool defined, so a tool's tests run in the fork that defines it ("run")
    handlers = {"define": worker.define, "run": worker.define_and_test, "integrity": worker.integrity}
    spec = lockdown.take_spec()
    keep = frozenset(os.listdir(spec["writable"][0])) if spec.get("writable") else frozenset()
    lockdown.libc().prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE: a child cannot open the template's memory
    stdin = sys.stdin.buffer
    while True:
        request = protocol.read_request(stdin)
        if request is None:
            return
        request_id, message, _blob = request
        op = message.get("op")
        if op == "init":
            try:
                reply = worker.init(message)
                gc.freeze()  # children share the loaded pages instead of copying them
            except Exception as error:
                reply = {"ok": False, "error": f"{type(error).__name__}: {error}"}
            body = json.dumps(reply).encode()
        elif op in handlers:
            body = in_child(handlers[op], message, spec, message.get("budget", 60),
                            message.get("max_bytes", protocol.DEFAULT_MAX_BYTES), keep)
        else:
            body = json.dumps({"ok": False, "error": f"unknown op {op!r}"}).encode()
        protocol.write_reply(_PROTO_OUT, request_id, body)


if __name__ == "__main__":
    main()
