"""An SQLAlchemy pool over one swappable sqlite3 connection.

Compiling SQL is most of what a small ORM query costs, and the compiled cache lives on the
engine: a worker that keeps one engine and swaps the connection under it compiles each
statement once per process (or once in a template, for every process forked from it).
"""

from __future__ import annotations

import sqlite3

from sqlalchemy.pool import Pool


class SwapPool(Pool):
    """The engine's one connection is whichever `current` holds, so one engine (and its cache of
    compiled SQL) serves database after database."""

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
