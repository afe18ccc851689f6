"""Drift across the tool set: where the tools' schemas and the database they were given disagree.

Each schema batch is written by a separate request, and the database after all of them; what one
answer calls a column or a status value another may not know. Checked here, by names only:
- a postcondition that sets a column (`column = ...`) no table of the tool has;
- a status value a postcondition gives a column (`column 'value'`, `column = 'value'`) outside that
  column's allowed values;
- a parameter named for a column with allowed values (`status`, `new_status`, `status_filter`)
  whose enum holds a value the column does not allow.
Each conflict is a sentence a model can act on.
"""

from __future__ import annotations

import re

from domains.spec import DBSchema, ToolSchema

_ANY = {"all", "any"}  # a filter's "no filter" value, not a status
_SET = re.compile(r"\b([a-z][a-z0-9]*(?:_[a-z0-9]+)*)\s*=(?!=)")
_VALUE = re.compile(r"\b([a-z][a-z0-9]*(?:_[a-z0-9]+)*)\s*(?:=|is|to)?\s*'([^']+)'")


def drift_conflicts(tools: list[ToolSchema], db: DBSchema, tool_tables: dict[str, list[str]]) -> list[str]:
    """Every conflict between the tools' postconditions and parameters and the database, in the
    tools' order."""
    known = {t.name for t in db.tables}
    out = []
    for tool in tools:
        tables = [db.table(t) for t in tool_tables.get(tool.name, []) if t in known]
        columns = {c.name for table in tables for c in table.columns}
        # a name several of the tool's tables share (`status` of a wedding and of its tasks) allows
        # what any of them allows: which one a postcondition or a filter means is not known by name
        choices: dict[str, list[str]] = {}
        for column in (c for table in tables for c in table.columns if c.choices):
            choices[column.name] = list(dict.fromkeys([*choices.get(column.name, []), *column.choices]))
        params = {p.name for p in tool.parameters}
        for post in tool.postconditions:
            for name in dict.fromkeys(_SET.findall(post)):
                if tool.mutates and name not in columns and name not in params:
                    out.append(f"{tool.name}: a postcondition sets {name!r}, which no table of the tool has "
                               f"({', '.join(t.name for t in tables) or 'it has no table'}): {post!r}")
            for name, value in _VALUE.findall(post):
                if name in choices and value not in choices[name]:
                    out.append(f"{tool.name}: a postcondition gives {name} the value {value!r}, which the column "
                               f"does not allow (its values: {', '.join(choices[name])})")
        for p in tool.parameters:
            column = _column_of(p.name, choices)
            if column and p.enum:
                extra = [v for v in p.enum if v not in choices[column] and v not in _ANY]
                if extra:
                    out.append(f"{tool.name}: parameter {p.name} allows {', '.join(map(repr, extra))}, which "
                               f"{column} does not (its values: {', '.join(choices[column])})")
    return out


def _column_of(param: str, choices: dict[str, list[str]]) -> str | None:
    """The column with allowed values a parameter is named for, if any."""
    for name in (param, param.removeprefix("new_"), param.removesuffix("_filter")):
        if name in choices:
            return name
    return None
