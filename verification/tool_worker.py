"""The procedural tests' confined side: a template with the DB layer loaded, one fork per request.

Served by sandbox.template for verification.sandbox. The template loads the compiled DB layer once
(`init`, trusted: compiled from the schema, not written by a model) and keeps an empty database
image in memory. Each request (define a tool, run its tests, integrity checks) is handled by a
fresh fork that has locked itself down (sandbox.child) before it reads the request from its
socket; it writes one reply frame and exits. It never decides a verdict: a procedural test gets
only its inputs here, and the parent compares the outcome (return value, exception, state
changes) with what the test expects. Each test starts from a copy of a database image, in
memory, behind the policy's SQLite authorizer.
"""

from __future__ import annotations

import json
import os
import sqlite3
import sys
import types

from sqlalchemy import create_engine
from sqlmodel import Session

from sandbox import database, generated, protocol, timeout
from sandbox.template import Service as TemplateService
from verification import verdict


class Service(TemplateService):
    def __init__(self, args: list[str], policy) -> None:
        super().__init__(args, policy)
        self.pool = database.SwapPool()  # one engine for every database: its compiled SQL is kept
        self.engine = create_engine("sqlite://", pool=self.pool)
        self.db: types.ModuleType | None = None
        self.template: bytes = b""
        self.tools: dict[str, object] = {}
        # a fork's loaded test states: (initial_state, now) -> (database image, state dump) or setup error
        self.loaded: dict[str, tuple[bytes, dict] | str] = {}
        self.ops = {"init": self.init}
        timeout.install()

    # -- in the template -----------------------------------------------------------------
    def init(self, _message: dict, fds: list[int]) -> dict:
        """Load the DB layer (its source in the descriptor passed) and compile its SQL once."""
        with os.fdopen(os.dup(fds[0]), "rb") as source:
            db_source = source.read().decode()
        try:
            module = types.ModuleType("db")
            module.__file__ = "db.py"
            sys.modules["db"] = module
            exec(compile(db_source, "db.py", "exec"), module.__dict__)
            self.db = module
            conn = self.connect()
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
        except Exception as error:
            return {"ok": False, "error": f"{type(error).__name__}: {error}"}
        return {"ok": True}

    # -- in the confined fork ------------------------------------------------------------
    def child(self, message: dict, fds: list[int], layers: list[str]) -> None:
        reader, writer = os.fdopen(fds[0], "rb"), os.fdopen(os.dup(fds[0]), "wb")  # buffered: whole frames
        request = protocol.read_request(reader)
        if request is None:
            return
        request_id, message, _blob = request
        handlers = {"define": self.define, "run": self.define_and_test, "integrity": self.integrity}
        try:
            handler = handlers[message.get("op")]
            reply = {**handler(message), "layers": layers}
        except BaseException as error:  # generated code may raise anything
            reply = {"ok": False, "error": f"{type(error).__name__}: {error}"}
        try:
            body = json.dumps(reply).encode()
        except (TypeError, ValueError, RecursionError) as error:
            body = json.dumps({"ok": False, "error": f"the reply is not JSON: {error}"}).encode()
        protocol.write_reply(writer, request_id, body)

    def connect(self) -> sqlite3.Connection:
        return database.memory(self.policy)

    def define(self, msg: dict) -> dict:
        name, source = msg["tool"], msg["source"]
        try:
            namespace = generated.run(compile(source, f"<tool {name}>", "exec"), f"tools.{name}", {}, self.where)
        except Exception as error:
            return {"ok": False, "error": f"{type(error).__name__}: {error}"}
        fn = namespace.get(name)
        if not callable(fn):
            return {"ok": False, "error": f"the code does not define a function named {name!r}"}
        self.tools[name] = fn
        return {"ok": True}

    def fresh_session(self, now: str | None, image: bytes | None = None):
        conn = self.connect()
        conn.deserialize(image or self.template)
        conn.execute("PRAGMA foreign_keys=ON")
        self.pool.current = conn
        session = Session(self.engine)
        if now:
            session.info["now"] = now
        return session, conn

    def call(self, session: Session, conn: sqlite3.Connection, tool: str, arguments: dict, seconds: float):
        """Run one tool call as one transaction: committed on success, rolled back on any failure."""
        fn = self.tools[tool]
        late = {"type": "Timeout", "message": f"the tool ran longer than {seconds:g} s"}
        try:
            with timeout.deadline(seconds, conn) as end:
                result = fn(session, **arguments)
                session.flush()
                json.dumps(result)  # the agent only ever sees JSON
                session.commit()
            return result, None
        except BaseException as error:  # generated code may raise anything
            session.rollback()
            if timeout.interrupted(error, end):
                return None, late
            return None, {"type": type(error).__name__, "message": str(error)[:2000],
                          "traceback": generated.tool_traceback(error)}

    def define_and_test(self, msg: dict) -> dict:
        defined = self.define(msg)
        return self.run_tests(msg) if defined["ok"] else {**defined, "refused": True}

    def run_tests(self, msg: dict) -> dict:
        """Each test's raw outcome, in order; the parent judges them. With `stop_unless` (a
        verdict.signature per test, or None), the tests stop after the first outcome whose
        signature differs: the outcomes so far come back, a prefix of what all would be."""
        tool = msg["tool"]
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

    def _run_test(self, tool: str, test: dict, seconds: float) -> dict:
        loaded = self._load(test.get("initial_state", {}), test.get("now"))
        if isinstance(loaded, str):
            return {"setup_error": loaded}
        image, before = loaded
        session, conn = self.fresh_session(test.get("now"), image)
        try:
            result, error = self.call(session, conn, tool, test.get("arguments", {}), seconds)
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
