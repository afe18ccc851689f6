"""Episode processes, the confined side: a template with the DB layer and the tools' code loaded,
and one forked process per episode serving that episode's calls.

Served by sandbox.template for mcp_servers.pool, with the EPISODES policy. The template loads
the compiled DB layer (trusted: compiled from the schema, not written by a model) and compiles
the tools' code without running it; generated code only ever runs in an episode process, after
that process has locked itself down (sandbox.child). Template ops (trusted input: the parent's):

  template {path} -> {}    templates/K.db from the rows in templates/K.json, in the data folder

An episode process gets [its channel, the template database] and keeps its database as `db` in its
own folder (mcp_servers.episode_db). It says it is ready, with the layers it applied, then serves
sandbox.protocol frames on its channel (request ids, sizes checked by the parent):

  call  {tool, arguments, timeout} -> {result, tool_s} or {error}   one runtime-owned transaction
  reset {}                         -> {}                            back to the template
  dump  {}                         -> {state}
"""

from __future__ import annotations

import json
import os
import sqlite3
import sys
import time
import types

from sqlalchemy import create_engine
from sqlmodel import Session

from mcp_servers.episode_db import EpisodeDB, direct_savepoints
from sandbox import generated, timeout
from sandbox.database import SwapPool
from sandbox.protocol import read_request, write_reply
from sandbox.template import Service as TemplateService


class Tools:
    """An episode's tools, each defined (its generated module run, confined) on its first call: an
    episode pays in memory only for the tools it uses, and all of them share one namespace of
    safe builtins instead of a copy each."""

    def __init__(self, code: dict, where: str) -> None:
        self.code, self.where, self.defined = code, where, {}
        self.builtins = generated.safe_builtins(where)

    def get(self, name: str, seconds: float):
        fn = self.defined.get(name)
        if fn is None and name in self.code:
            with timeout.deadline(seconds):
                namespace = generated.run(self.code[name], f"tools.{name}", {"__builtins__": self.builtins},
                                          self.where)
            fn = self.defined[name] = namespace[name]
        return fn


class Episode:
    def __init__(self, channel: int, db: EpisodeDB, tools: Tools, max_result_bytes: int, memory_mb: int):
        self.inp, self.out = os.fdopen(channel, "rb"), os.fdopen(os.dup(channel), "wb")
        self.db, self.tools = db, tools
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

    def call(self, tool: str, arguments: dict, seconds: float) -> dict | bytes:
        """One tool call in one transaction the runtime owns: committed after a clean return with
        a JSON result under the size limit, rolled back otherwise. A result comes back as the
        reply's encoded body (encoded once); an error as a message."""
        try:
            fn = self.tools.get(tool, seconds)
        except BaseException as failure:  # the tool's module-level code raised (or ran past the time)
            return {"error": {"type": type(failure).__name__, "message": f"tool {tool!r} does not load: "
                              f"{str(failure)[:2000]}", "traceback": generated.tool_traceback(failure)}}
        if fn is None:
            return {"error": {"type": "UnknownTool", "message": f"tool {tool!r} is not defined"}}
        db = self.db
        transaction, session = db.session()
        db.conn.execute("BEGIN IMMEDIATE")
        error = body = None
        end = time.monotonic() + seconds
        try:
            db.in_tool = True
            started = time.perf_counter()
            try:
                with timeout.deadline(seconds, db.conn) as end:
                    result = fn(session, **arguments)
                    session.flush()
            finally:
                spent = time.perf_counter() - started
                db.in_tool = False
            encoded = json.dumps(result)  # encoded once, for the size limit and the reply; ASCII
            size = len(encoded)
            # the tool's own time goes back too: what a call costs beyond it is the runtime's
            body = f'{{"result": {encoded}, "tool_s": {spent:.7f}}}'
            if size > self.max_result_bytes:
                error = {"type": "ResultTooLarge", "message": f"the tool's result is {size:,} bytes; "
                                                              f"the limit is {self.max_result_bytes:,}"}
        except BaseException as failure:  # generated code may raise anything
            if isinstance(failure, MemoryError):
                error = {"type": "MemoryLimit", "message": f"the tool ran out of memory (limit {self.memory_mb} MB)"}
            elif timeout.interrupted(failure, end):  # the alarm, or the progress handler through SQLite's callbacks
                error = {"type": "Timeout", "message": f"the tool ran longer than {seconds:g} s"}
            else:
                error = {"type": type(failure).__name__, "message": str(failure)[:2000],
                         "traceback": generated.tool_traceback(failure)}
        try:
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


class Service(TemplateService):
    """The template: argv is the pool's data folder (init.json: the DB layer's and the tools' sources)."""

    def __init__(self, args: list[str], policy) -> None:
        super().__init__(args, policy)
        self.data_dir = args[0]
        with open(os.path.join(self.data_dir, "init.json")) as source:
            init = json.load(source)
        module = types.ModuleType("db")
        module.__file__ = "db.py"
        sys.modules["db"] = module
        exec(compile(init["db_source"], "db.py", "exec"), module.__dict__)
        self.db = module
        self.code = {name: compile(source, f"<tool {name}>", "exec") for name, source in init["tools"].items()}
        self.pool = SwapPool()
        self.engine = create_engine("sqlite://", pool=self.pool)
        direct_savepoints(self.engine.dialect)
        self._warm_up()
        self.ops = {"template": self.template}
        timeout.install()

    def child(self, message: dict, fds: list[int], layers: list[str]) -> None:
        """In the episode's process, confined: open its database, serve (each tool defined on its first call)."""
        channel, template_fd = fds
        db = EpisodeDB(self.db, self.engine, self.pool, template_fd, message.get("now"), self.policy)
        tools = Tools(self.code, self.where)
        episode = Episode(channel, db, tools, message["max_result_bytes"], self.policy.memory_mb)
        episode.send(0, {"ready": True, "layers": layers})
        episode.serve()

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
        generated.tool_traceback(ValueError("warm"))
        self.pool.current = None
        self.pool.dispose()
        conn.close()

    def template(self, message: dict, _fds: list[int]) -> dict:
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

