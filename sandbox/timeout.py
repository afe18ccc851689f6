"""The one timeout for generated code: an interval timer raising Timeout in Python code, and
SQLite's progress handler interrupting a query that runs past the same deadline."""

from __future__ import annotations

import signal
import sqlite3
import time
from contextlib import contextmanager


class Timeout(BaseException):
    """Raised in generated code when its time is up; BaseException so `except Exception` cannot swallow it."""


def _on_alarm(_signum, _frame):
    raise Timeout()


def install() -> None:
    signal.signal(signal.SIGALRM, _on_alarm)


@contextmanager
def deadline(seconds: float, conn: sqlite3.Connection | None = None):
    """Run the block with `seconds` to finish; yields the monotonic deadline."""
    end = time.monotonic() + seconds
    if conn is not None:
        conn.set_progress_handler(lambda: int(time.monotonic() > end), 10_000)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield end
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        if conn is not None:
            conn.set_progress_handler(None, 0)


def interrupted(error: BaseException, end: float) -> bool:
    """Whether `error` is the deadline, seen through SQLite's callbacks or after it passed."""
    return isinstance(error, Timeout) or time.monotonic() > end or (
        "OperationalError" in type(error).__name__ and "interrupted" in str(error))
