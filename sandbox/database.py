"""SQLite inside a confined process: the one authorizer, hardened connections, a swappable pool.

Every connection generated code can reach refuses SQL that reaches outside its own database
(ATTACH, VACUUM INTO) and functions that load code or touch files, whoever registered them; where
the runtime owns the transaction (Policy.database == "persistent") PRAGMA and BEGIN/COMMIT are
refused too while generated code runs. The filesystem layers stop the same things again if a
tool lifts the authorizer.
"""

from __future__ import annotations

import ctypes
import sqlite3
from collections.abc import Callable

from sqlalchemy.pool import Pool

from sandbox.policy import RULES, SQLITE_ATTACH, SQLITE_FUNCTION, Policy

_DBCONFIG_NO_CKPT_ON_CLOSE, _DBCONFIG_DEFENSIVE = 1006, 1010
_sqlite = ctypes.CDLL(__import__("_sqlite3").__file__)


def authorizer(policy: Policy, in_generated_code: Callable[[], bool] = lambda: True):
    """The authorizer for `policy`; `in_generated_code` says whether generated code runs now."""
    denied, functions = RULES.sqlite_denied_actions, RULES.sqlite_denied_functions
    runtime = RULES.sqlite_runtime_actions if policy.runtime_owns_transactions else frozenset()

    def authorize(action, arg1, arg2, _db, _trigger):
        if action == SQLITE_ATTACH and arg1 == "x":  # how sqlite3_deserialize loads an image
            return sqlite3.SQLITE_OK
        if action in denied or (action == SQLITE_FUNCTION and (arg2 or "").lower() in functions):
            return sqlite3.SQLITE_DENY
        if action in runtime and in_generated_code():
            return sqlite3.SQLITE_DENY
        return sqlite3.SQLITE_OK

    return authorize


def db_config(conn: sqlite3.Connection, option: int) -> None:
    handle = ctypes.c_void_p.from_address(id(conn) + object.__basicsize__).value  # pysqlite_Connection.db
    _sqlite.sqlite3_db_config(ctypes.c_void_p(handle), ctypes.c_int(option), ctypes.c_int(1), ctypes.c_void_p(0))


def guard(conn: sqlite3.Connection, policy: Policy, in_generated_code: Callable[[], bool] = lambda: True) -> None:
    """Defensive mode (no writable schema, no corrupting writes) and the policy's authorizer."""
    db_config(conn, _DBCONFIG_DEFENSIVE)
    if "authorizer" not in policy.off:
        conn.set_authorizer(authorizer(policy, in_generated_code))


def keep_main_file(conn: sqlite3.Connection) -> None:
    """Closing never checkpoints: the main file keeps the template, the WAL holds what was written."""
    db_config(conn, _DBCONFIG_NO_CKPT_ON_CLOSE)


def memory(policy: Policy) -> sqlite3.Connection:
    """An in-memory database guarded by the policy (a scratch database)."""
    conn = sqlite3.connect(":memory:", check_same_thread=False)
    guard(conn, policy)
    return conn


class SwapPool(Pool):
    """An SQLAlchemy pool whose one connection is whichever `current` holds, so one engine (and its
    cache of compiled SQL, most of what a small ORM query costs) serves database after database:
    compiled once in a template, for every process forked from it."""

    def __init__(self) -> None:
        super().__init__(lambda: self.current, reset_on_return=None)  # the runtime ends transactions
        self.current: sqlite3.Connection | None = None
        self._records: dict[int, object] = {}

    def status(self) -> str:
        return "SwapPool"

    def _do_get(self):
        record = self._records.get(id(self.current))
        if record is None:
            self._records.clear()
            record = self._records[id(self.current)] = self._create_connection()
        return record

    def _do_return_conn(self, record) -> None:
        pass

    def dispose(self) -> None:
        self._records.clear()

    def recreate(self) -> SwapPool:
        return self
