"""The sandbox worker: runs generated tool code in a separate, limited process.

Started by verification.sandbox as `python -I worker.py` with a scrubbed environment, a
temporary working directory and resource limits. It speaks length-prefixed JSON frames on
stdin/stdout (never pickle: the parent must not deserialize objects from untrusted code).
The compiled DB layer is loaded once and an empty database template is kept in memory, so
each procedural test starts from a copy of it instead of a fresh interpreter.
"""

from __future__ import annotations

import builtins
import json
import os
import signal
import sqlite3
import struct
import sys
import time
import traceback
import types

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # -I leaves the script's folder out
import guard  # noqa: E402

_PROTO_OUT = os.fdopen(os.dup(1), "wb")
os.dup2(2, 1)  # whatever the tool prints goes to the log, never into the protocol

from sqlalchemy import create_engine  # noqa: E402
from sqlalchemy.pool import StaticPool  # noqa: E402
from sqlmodel import Session  # noqa: E402


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


SAFE_BUILTINS = {k: v for k, v in vars(builtins).items() if k not in guard.FORBIDDEN_NAMES}
SAFE_BUILTINS["__import__"] = _guarded_import


class Worker:
    def __init__(self) -> None:
        self.db: types.ModuleType | None = None
        self.template: bytes = b""
        self.tools: dict[str, object] = {}

    # -- setup ---------------------------------------------------------------------------
    def init(self, msg: dict) -> dict:
        module = types.ModuleType("db")
        module.__file__ = "db.py"
        sys.modules["db"] = module
        exec(compile(msg["db_source"], "db.py", "exec"), module.__dict__)
        self.db = module
        conn = sqlite3.connect(":memory:", check_same_thread=False)
        engine = self._engine(conn)
        module.create_all(engine)
        self.template = conn.serialize()
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
    @staticmethod
    def _engine(conn: sqlite3.Connection):
        return create_engine("sqlite://", creator=lambda: conn, poolclass=StaticPool)

    def fresh_session(self, now: str | None):
        conn = sqlite3.connect(":memory:", check_same_thread=False)
        conn.deserialize(self.template)
        conn.execute("PRAGMA foreign_keys=ON")
        session = Session(self._engine(conn))
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

    def run_tests(self, msg: dict) -> dict:
        tool, results = msg["tool"], []
        if tool not in self.tools:
            return {"ok": False, "error": f"tool {tool!r} is not defined"}
        for test in msg["tests"]:
            results.append(self._run_test(tool, test, msg.get("timeout", 2.0)))
        return {"ok": True, "results": results}

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

    def _run_test(self, tool: str, test: dict, timeout: float) -> dict:
        session, conn = self.fresh_session(test.get("now"))
        outcome = {"name": test["name"], "kind": test["kind"], "passed": False, "problems": []}
        try:
            try:
                self.db.load_state(session, test.get("initial_state", {}))
                session.commit()
            except Exception as error:
                outcome["problems"].append(f"the test's initial_state is invalid: {type(error).__name__}: {error}")
                return outcome
            before = self.db.dump_state(session)
            result, error = self.call(session, conn, tool, test.get("arguments", {}), timeout)
            after = self.db.dump_state(session)
            changes = diff_states(before, after, self.db.PRIMARY_KEY)
            outcome.update(returned=result, error=error, changes=changes)
            problems = outcome["problems"]
            if test["kind"] == "success":
                if error:
                    problems.append(f"unexpected {error['type']}: {error['message']}")
                else:
                    if _normal(result) != _normal(test.get("expect_return")):
                        problems.append(
                            f"return value differs:\n  expected {json.dumps(test.get('expect_return'), sort_keys=True)}"
                            f"\n  actual   {json.dumps(result, sort_keys=True)}")
                    expected = normal_changes(test.get("expect_changes", {}))
                    if expected != changes:
                        problems.append(
                            f"state change differs:\n  expected {json.dumps(expected, sort_keys=True)}"
                            f"\n  actual   {json.dumps(changes, sort_keys=True)}")
            else:
                if error is None:
                    problems.append(f"expected {test.get('expect_error')} but the call succeeded, returning "
                                    f"{json.dumps(result, sort_keys=True)[:500]}")
                elif error["type"] != test.get("expect_error"):
                    problems.append(f"expected {test.get('expect_error')} but got {error['type']}: {error['message']}")
                if changes:
                    problems.append(f"a rejected call changed the state: {json.dumps(changes, sort_keys=True)}")
            outcome["passed"] = not problems
            return outcome
        finally:
            session.close()
            conn.close()


def _normal(value):
    """JSON round trip, so tuples equal lists and keys are strings."""
    return json.loads(json.dumps(value, sort_keys=True))


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
    return _normal(out)


def normal_changes(changes: dict) -> dict:
    out = {}
    for table, change in sorted(changes.items()):
        entry = {"inserted": change.get("inserted", []), "updated": change.get("updated", {}),
                 "deleted": sorted(change.get("deleted", []))}
        if entry["inserted"] or entry["updated"] or entry["deleted"]:
            out[table] = entry
    return _normal(out)


def _tool_traceback(error: BaseException) -> str:
    """The traceback frames inside generated code only: what the debug agent can act on."""
    frames = [f for f in traceback.extract_tb(error.__traceback__) if f.filename.startswith("<tool")]
    lines = traceback.format_list(frames) + traceback.format_exception_only(type(error), error)
    return "".join(lines)[-3000:]


def _read_frame(stream) -> dict | None:
    header = stream.read(4)
    if len(header) < 4:
        return None
    (size,) = struct.unpack(">I", header)
    return json.loads(stream.read(size))


def _write_frame(message: dict) -> None:
    # Raw bytes (a database snapshot) follow the frame instead of riding in it as base64 text.
    attachment = message.pop("_attachment", None)
    if attachment is not None:
        message["attachment"] = len(attachment)
    data = json.dumps(message, default=str).encode()
    _PROTO_OUT.write(struct.pack(">I", len(data)) + data + (attachment or b""))
    _PROTO_OUT.flush()


def main() -> None:
    worker = Worker()
    handlers = {"init": worker.init, "define": worker.define, "test": worker.run_tests,
                "integrity": worker.integrity}
    extra = os.environ.get("WORLDSMITH_WORKER_EXTENSION")
    if extra:  # e.g. the episode runtime adds its own operations
        module = __import__(extra)
        handlers.update(module.handlers(worker))
    stdin = sys.stdin.buffer
    while True:
        message = _read_frame(stdin)
        if message is None:
            return
        op = message.get("op")
        try:
            reply = handlers[op](message) if op in handlers else {"ok": False, "error": f"unknown op {op!r}"}
        except Exception as error:
            reply = {"ok": False, "error": f"{type(error).__name__}: {error}"}
        _write_frame(reply)


if __name__ == "__main__":
    main()
