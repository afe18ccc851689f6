"""One episode's database inside its confined process: a file opened for WAL appends, with
transactions the runtime owns and the policy's SQLite authorizer.

The file lives in the episode's own folder (on the parent's tmpfs), in WAL mode with an exclusive
lock and no checkpoints: a commit appends the changed pages, so a write costs the same at any
database size, and committed state survives the process being killed (the parent starts a new
one on the same files).
"""

from __future__ import annotations

import os
import sqlite3

from sqlmodel import Session

from sandbox import database
from sandbox.database import SwapPool
from sandbox.policy import Policy

_SAVEPOINTS: dict[str, str] = {}  # SQLAlchemy's savepoint names -> this call's (cleared per call)


def direct_savepoints(dialect) -> None:
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


class EpisodeDB:
    """One episode's database file, opened for WAL appends with runtime-owned transactions."""

    def __init__(self, db_module, engine, pool: SwapPool, template_fd: int, now: str | None, policy: Policy):
        self.db, self.engine, self.pool, self.template_fd, self.now = db_module, engine, pool, template_fd, now
        self.policy = policy
        self.in_tool = False
        self.conn: sqlite3.Connection | None = None
        self.connection = None  # the engine's Connection, kept across calls (a checkout per call costs more)
        self.open()
        self.identity = self._identity()

    def open(self) -> None:
        conn = sqlite3.connect("db", isolation_level=None, check_same_thread=False)
        database.keep_main_file(conn)  # the main file keeps the template; the WAL holds the episode
        for pragma in ("locking_mode=EXCLUSIVE", "journal_mode=WAL", "synchronous=OFF", "wal_autocheckpoint=0",
                       "foreign_keys=ON", "cache_size=-2048"):
            conn.execute(f"PRAGMA {pragma}")
        conn.execute("SELECT count(*) FROM sqlite_schema").fetchone()
        database.guard(conn, self.policy, lambda: self.in_tool)
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

