"""Compile a DB schema into the domain's SQLModel module (db.py) and its integrity tests.

No LLM is involved: the same schema always gives the same bytes. The module carries a small
runtime the tool code relies on (domains/db_runtime.py): the declared exceptions, the episode
clock, deterministic ID generation and state load/dump helpers.
"""

from __future__ import annotations

import json
from graphlib import CycleError, TopologicalSorter

from domains.db_runtime import RUNTIME
from domains.spec import DBSchema, Table

_PY_TYPE = {
    "string": "str", "text": "str", "integer": "int", "number": "float",
    "boolean": "bool", "date": "date", "datetime": "NaiveDatetime",
}

def table_order(schema: DBSchema) -> list[str]:
    """Referenced tables first, ties in declaration order; with a foreign-key cycle, declaration order."""
    declared = [t.name for t in schema.tables]
    deps = {t.name: {c.foreign_key.split(".")[0] for c in t.columns
                     if c.foreign_key and c.foreign_key.split(".")[0] != t.name} for t in schema.tables}
    sorter = TopologicalSorter(deps)
    try:
        sorter.prepare()
    except CycleError:
        return declared
    order: list[str] = []
    while sorter.is_active():
        ready = sorted(sorter.get_ready(), key=declared.index)
        order.extend(ready)
        sorter.done(*ready)
    return order


def class_name(table: str) -> str:
    return "".join(part.capitalize() for part in table.split("_"))


def _column_code(table: Table, col) -> str:
    py = _PY_TYPE[col.type]
    optional = col.nullable and not col.primary_key
    annotation = f"Optional[{py}]" if optional else py
    args: list[str] = []
    if col.primary_key:
        args.append("primary_key=True")
    if col.default is not None:
        args.append(f"default={col.default!r}")
    elif optional:
        args.append("default=None")
    if col.foreign_key:
        args.append(f"foreign_key={col.foreign_key!r}")
    if col.unique:
        args.append("unique=True")
    if col.max_length:
        args.append(f"max_length={col.max_length}")
    if not optional and not col.primary_key:
        args.append("nullable=False")
    if col.description:
        args.append(f"description={col.description!r}")
    return f"    {col.name}: {annotation} = Field({', '.join(args)})"


def _checks(table: Table) -> list[str]:
    checks = []
    for col in table.columns:
        name = f'"{col.name}"'  # quoted: a column may be named for an SQL keyword (a guest's `group`)
        if col.choices:
            allowed = ", ".join("'" + v.replace("'", "''") + "'" for v in col.choices)
            checks.append(f"{name} IS NULL OR {name} IN ({allowed})")
        if col.minimum is not None:
            checks.append(f"{name} IS NULL OR {name} >= {col.minimum:g}")
        if col.maximum is not None:
            checks.append(f"{name} IS NULL OR {name} <= {col.maximum:g}")
        if col.max_length and col.type in ("string", "text"):
            checks.append(f"{name} IS NULL OR length({name}) <= {col.max_length}")
    return checks


def compile_db(domain: str, schema: DBSchema) -> str:
    """The source of db.py for `schema`."""
    order = table_order(schema)
    lines = [
        f'"""{domain} DB layer, compiled from spec.json by worldsmith. Do not edit: recompile."""',
        "",
        "from __future__ import annotations",
        "",
        "from datetime import date, datetime",
        "from typing import Optional",
        "",
        "from pydantic import NaiveDatetime",
        "from sqlalchemy import CheckConstraint, event",
        "from sqlalchemy.engine import Engine",
        "from sqlalchemy.orm import registry",
        "from sqlmodel import Field, Session, SQLModel, select",
        "",
        "",
        "class Base(SQLModel, registry=registry()):",
        '    """Own registry: two domains (or two loads of one) never share table metadata."""',
        "",
    ]
    for table in schema.tables:
        lines += ["", f"class {class_name(table.name)}(Base, table=True):"]
        if table.description:
            lines.append(f"    {table.description!r}")
        lines.append(f"    __tablename__ = {table.name!r}")
        checks = _checks(table)
        if checks:
            lines.append("    __table_args__ = (")
            lines += [f"        CheckConstraint({c!r}, name={f'ck_{table.name}_{i}'!r})," for i, c in enumerate(checks)]
            lines.append("    )")
        lines += [_column_code(table, c) for c in table.columns]
        lines.append("")
    lines += [
        "",
        "MODELS: dict[str, type[Base]] = {" + ", ".join(f"{t.name!r}: {class_name(t.name)}" for t in schema.tables) + "}",
        f"TABLE_ORDER: list[str] = {order!r}",
        "PRIMARY_KEY: dict[str, str] = {" + ", ".join(f"{t.name!r}: {t.primary_key.name!r}" for t in schema.tables) + "}",
        "ID_PREFIX: dict[str, str] = {" + ", ".join(f"{t.name!r}: {t.id_prefix!r}" for t in schema.tables) + "}",
        "COLUMNS: dict[str, list[str]] = {" + ", ".join(f"{t.name!r}: {[c.name for c in t.columns]!r}" for t in schema.tables) + "}",
        "COLUMN_TYPES: dict[str, dict[str, str]] = {"
        + ", ".join(f"{t.name!r}: {({c.name: c.type for c in t.columns})!r}" for t in schema.tables)
        + "}",
        "",
        "",
        "@event.listens_for(Engine, 'connect')",
        "def _foreign_keys_on(dbapi_connection, _record) -> None:",
        '    dbapi_connection.execute("PRAGMA foreign_keys=ON")',
        "",
    ]
    return "\n".join(lines) + RUNTIME


def sample_row(table: Table, index: int = 1, refs: dict[str, str] | None = None) -> dict:
    """A valid row for `table` built from column types; `refs` gives foreign key values."""
    refs = refs or {}
    row: dict = {}
    for col in table.columns:
        if col.primary_key:
            row[col.name] = f"{table.id_prefix}-{index:04d}"
        elif col.foreign_key:
            row[col.name] = refs.get(col.foreign_key.split(".")[0])
        elif col.choices:
            row[col.name] = col.choices[0]
        elif col.type in ("integer", "number"):
            lo = col.minimum if col.minimum is not None else 1
            row[col.name] = int(lo) if col.type == "integer" else float(lo)
        elif col.type == "boolean":
            row[col.name] = False
        elif col.type == "date":
            row[col.name] = "2025-01-15"
        elif col.type == "datetime":
            row[col.name] = "2025-01-15T10:00:00"
        else:
            row[col.name] = f"{col.name} {index}"[: col.max_length or 100]
    return row


def integrity_cases(schema: DBSchema) -> list[dict]:
    """Data for the generated integrity tests: a valid row per table, and rows that must be refused."""
    order = table_order(schema)
    valid: dict[str, dict] = {}
    for name in order:
        table = schema.table(name)
        refs = {t: valid[t][schema.table(t).primary_key.name] for t in valid}
        valid[name] = sample_row(table, 1, refs)
    cases = []
    for name in order:
        table = schema.table(name)
        base = {t: [valid[t]] for t in order[: order.index(name) + 1]}
        cases.append({"table": name, "kind": "valid", "state": base})
        for col in table.columns:
            bad = dict(valid[name])
            if col.primary_key:
                continue
            if not col.nullable and col.default is None:
                cases.append({"table": name, "kind": f"not_null:{col.name}", "state": _with(base, name, {**bad, col.name: None})})
            if col.foreign_key:
                cases.append({"table": name, "kind": f"foreign_key:{col.name}", "state": _with(base, name, {**bad, col.name: "MISSING-9999"})})
            if col.choices:
                cases.append({"table": name, "kind": f"choice:{col.name}", "state": _with(base, name, {**bad, col.name: "__not_a_choice__"})})
            if col.minimum is not None:
                cases.append({"table": name, "kind": f"minimum:{col.name}", "state": _with(base, name, {**bad, col.name: col.minimum - 1})})
            if col.maximum is not None:
                cases.append({"table": name, "kind": f"maximum:{col.name}", "state": _with(base, name, {**bad, col.name: col.maximum + 1})})
        cases.append({"table": name, "kind": "duplicate_primary_key", "state": _with(base, name, valid[name], append=True)})
    return cases


def _with(base: dict, table: str, row: dict, append: bool = False) -> dict:
    state = {t: list(rows) for t, rows in base.items()}
    state[table] = state[table] + [row] if append else state[table][:-1] + [row]
    return state


def integrity_json(schema: DBSchema) -> str:
    return json.dumps(integrity_cases(schema), indent=1, sort_keys=True) + "\n"
