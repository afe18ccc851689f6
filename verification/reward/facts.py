"""Whether an agent's final message states a fact: rule-based, no judge.

Numbers are found however they are written (85200, 85,200, $85,200.00, 85200.0, 4.5%) and
compared as numbers; dates in ISO form (2025-03-14), as written out (March 14, 2025; 14 March
2025; Mar 14 2025) or as 03/14/2025 are compared as dates, and a datetime also needs its time
(14:30, 2:30 pm); names and other text must appear as a whole run of words after normalisation
(case, punctuation, underscores: "under_review" is stated by "Under review").
"""

from __future__ import annotations

import calendar
import re
from datetime import date, datetime

from verification.reward.values import _as_number, normalize_text

# Not the parts of a date or a time (2025-03-14, 03/14, 14:30): those are read as dates and times.
_NUMBER = re.compile(r"(?<![\w.\-/:])[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?![\w/:]|-\d)")
_ISO_DATE = re.compile(r"\b(\d{4})-(\d{1,2})-(\d{1,2})")
_SLASH_DATE = re.compile(r"\b(\d{1,2})/(\d{1,2})/(\d{4})\b")
_MONTHS = {name.lower(): n for n, name in enumerate(calendar.month_name) if name}
_MONTHS |= {name.lower(): n for n, name in enumerate(calendar.month_abbr) if name}
_MONTH = "|".join(sorted(_MONTHS, key=len, reverse=True))
_MONTH_FIRST = re.compile(rf"\b({_MONTH})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+(\d{{4}})\b", re.IGNORECASE)
_DAY_FIRST = re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?({_MONTH})\.?,?\s+(\d{{4}})\b", re.IGNORECASE)
_TIME = re.compile(r"(?<![\d:])(\d{1,2}):(\d{2})(?::\d{2})?\s*([ap]\.?m\.?)?", re.IGNORECASE)
_HOUR_ONLY = re.compile(r"\b(\d{1,2})\s*([ap]\.?m\.?)", re.IGNORECASE)


def numbers_in(text: str) -> set[int | float]:
    """Every number the text writes, thousands separators and currency signs aside."""
    found = set()
    for match in _NUMBER.finditer(text):
        number = _as_number(match.group(0).replace(",", ""))
        if number is not None:
            found.add(number)
    return found


def _day(year: int, month: int, day: int) -> str | None:
    try:
        return date(year, month, day).isoformat()
    except ValueError:
        return None


def dates_in(text: str) -> set[str]:
    """Every calendar date the text writes, as YYYY-MM-DD (03/04/2025 is read both ways)."""
    found = {_day(int(y), int(m), int(d)) for y, m, d in _ISO_DATE.findall(text)}
    found |= {_day(int(y), _MONTHS[m.lower()], int(d)) for m, d, y in _MONTH_FIRST.findall(text)}
    found |= {_day(int(y), _MONTHS[m.lower()], int(d)) for d, m, y in _DAY_FIRST.findall(text)}
    for a, b, y in _SLASH_DATE.findall(text):
        found |= {_day(int(y), int(a), int(b)), _day(int(y), int(b), int(a))}
    return found - {None}


def times_in(text: str) -> set[str]:
    """Every clock time the text writes, as HH:MM on a 24-hour clock."""
    found = set()
    for hour, minute, half in _TIME.findall(text):
        found.add(_clock(int(hour), int(minute), half))
    for hour, half in _HOUR_ONLY.findall(text):
        found.add(_clock(int(hour), 0, half))
    return found - {None}


def _clock(hour: int, minute: int, half: str) -> str | None:
    half = half.lower().replace(".", "")
    if half == "pm" and hour < 12:
        hour += 12
    elif half == "am" and hour == 12:
        hour = 0
    return f"{hour:02d}:{minute:02d}" if hour < 24 and minute < 60 else None


def states(message: str, value: str | int | float, kind: str) -> bool:
    """Whether `message` states `value`, compared as a `kind` (number, date, datetime, text)."""
    if kind == "number":
        number = _as_number(value)
        return number is not None and any(abs(number - seen) <= 1e-9 * max(1.0, abs(number))
                                          for seen in numbers_in(message))
    if kind in ("date", "datetime"):
        try:
            moment = datetime.fromisoformat(str(value).strip())
        except ValueError:
            return states(message, value, "text")
        if moment.date().isoformat() not in dates_in(message):
            return False
        return kind == "date" or moment.strftime("%H:%M") in times_in(message)
    wanted = normalize_text(value)
    return bool(wanted) and f" {wanted} " in f" {normalize_text(message)} "
