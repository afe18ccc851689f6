"""What the user says in tasks built without a model: a record named by the values a person knows,
names of columns and tools in words, and a few phrasings picked by the task's seed.

Nothing here names an internal identifier: records are described by their identity columns
(names, titles, emails, codes), with more of their columns added until the description fits one
row of the state.
"""

from __future__ import annotations

import re
from typing import Any

from domains.spec import DBSchema, State, Table

# Columns a person knows a record by (the task stage's reward rules read the same names as identities).
IDENTITY = re.compile(r"(^|_)(name|email|phone|title|currency|code)$")


def words(name: str) -> str:
    """snake_case in words: job_application -> job application."""
    return name.replace("_", " ").strip()


def _is_key(table: Table, column: str) -> bool:
    col = next(c for c in table.columns if c.name == column)
    return bool(col.primary_key or col.foreign_key)


def _describable(table: Table, row: dict) -> list[str]:
    """The row's columns a user could name it by: identities first, then other short values."""
    usable = [c for c in table.columns if not _is_key(table, c.name) and row.get(c.name) not in (None, "")
              and not isinstance(row.get(c.name), bool) and c.type != "text" and not c.name.endswith("_at")
              and len(str(row.get(c.name))) <= 60]
    identities = [c.name for c in usable if IDENTITY.search(c.name)]
    return identities + [c.name for c in usable if c.name not in identities]


def describe(schema: DBSchema, state: State, table_name: str, row: dict) -> tuple[str, dict[str, Any]] | None:
    """'the job application with job title X and company name Y' and the values it uses, or None when
    no set of the row's describable columns tells it apart from every other row of its table."""
    table = schema.table(table_name)
    others = [r for r in state.get(table_name, []) if r is not row and r != row]
    used: dict[str, Any] = {}
    for column in _describable(table, row):
        used[column] = row[column]
        if not any(all(str(o.get(c)).casefold() == str(v).casefold() for c, v in used.items()) for o in others):
            parts = [f"{words(c)} {v}" for c, v in used.items()]
            said = parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
            return f"the {words(table_name)} with {said}", used
    return None


def listed(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


ASK = (
    "Could you look up {record} and tell me {what}?",
    "I need {what} for {record}.",
    "What is on file for {record}? I'd like to know {what}.",
)

REQUEST = (
    "Please {action} for {record}{extra}.",
    "Can you {action}? It's {record}{extra}.",
    "I want you to {action} on {record}{extra}.",
)


def asks(seed: int, record: str, labels: list[str]) -> str:
    """An answer task's request: the record and what the user wants to know about it."""
    return ASK[seed % len(ASK)].format(record=record, what=listed([f"the {label}" for label in labels]))


def requests(seed: int, tool: str, record: str, extra: dict[str, Any]) -> str:
    """A refusal task's request: the tool's action on the record, with the values the user chose."""
    said = "".join(f", {words(k)} {v}" for k, v in extra.items())
    return REQUEST[seed % len(REQUEST)].format(action=words(tool), record=record, extra=said)
