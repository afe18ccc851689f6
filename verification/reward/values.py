"""Cell values in the form they are compared in: text normalised for semantic fields, numbers,
dates and datetimes canonicalised for hard ones (0.1 + 0.2 equals 0.3, an offset datetime its
UTC time)."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Hashable
from datetime import date, datetime, timezone
from functools import lru_cache
from typing import Any

_APOSTROPHES = re.compile(r"['\u2018\u2019`]")
_PUNCTUATION = re.compile(r"[^\w\s]|_")


@lru_cache(maxsize=65536)
def _normalize_str(text: str) -> str:
    text = _PUNCTUATION.sub(" ", _APOSTROPHES.sub("", text.casefold()))
    return " ".join(text.split())


def normalize_text(value: Any) -> str:
    """Casefolded, punctuation stripped, whitespace collapsed; None is the empty text."""
    if value is None:
        return ""
    if not isinstance(value, str):
        value = json.dumps(value, sort_keys=True) if isinstance(value, (list, dict)) else str(value)
    return _normalize_str(value)


def _as_number(value: Any) -> int | float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        number = value
    elif isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            return None
    else:
        return None
    if not math.isfinite(number):
        return None
    # 12 significant digits absorb float arithmetic noise (0.1 + 0.2) and keep business precision.
    number = float(f"{number:.12g}")
    return int(number) if number.is_integer() and abs(number) < 2**53 else number


def _as_date(value: Any) -> str | None:
    if isinstance(value, datetime):
        return value.date().isoformat()
    if isinstance(value, date):
        return value.isoformat()
    if not isinstance(value, str):
        return None
    text = value.strip()
    try:
        return date.fromisoformat(text).isoformat()
    except ValueError:
        pass
    try:
        return datetime.fromisoformat(text).date().isoformat()
    except ValueError:
        return None


def _as_datetime(value: Any) -> str | None:
    if isinstance(value, datetime):
        moment = value
    elif isinstance(value, date):
        moment = datetime(value.year, value.month, value.day)
    elif isinstance(value, str):
        try:
            moment = datetime.fromisoformat(value.strip())
        except ValueError:
            return None
    else:
        return None
    if moment.tzinfo is not None:
        moment = moment.astimezone(timezone.utc).replace(tzinfo=None)
    return moment.isoformat()


def hard_value(kind: str, value: Any) -> Hashable:
    """A hashable form under which two values are equal exactly when a hard field matches."""
    if value is None:
        return None
    if isinstance(value, bool):
        return value if kind == "boolean" else ("bool", value)  # True == 1 in Python; not here
    parsed: Hashable = None
    if kind in ("integer", "number"):
        parsed = _as_number(value)
    elif kind == "date":
        parsed = _as_date(value)
    elif kind == "datetime":
        parsed = _as_datetime(value)
    if parsed is not None:
        return parsed
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, (list, dict)):
        return ("json", json.dumps(value, sort_keys=True))
    return value
