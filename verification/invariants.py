"""A domain policy's checkable invariants and status transitions, checked on database states.

Pure functions over a State (table -> rows of JSON values) and the policy: no database, no
generated code. `check_invariants` returns every violation of the policy's checkable invariants
in a state; `status_moves` lists how a call changed status columns and which of those moves the
policy's transition tables do not allow.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import asdict, dataclass

from domains.policy import Check, Policy
from domains.spec import DBSchema, State


@dataclass(frozen=True, order=True)
class Violation:
    invariant: int  # index into policy.invariants
    table: str
    key: str  # the primary key of the offending row, or the group for at_most
    problem: str
    rows: tuple[str, ...] = ()  # the primary keys of the rows to drop to end it (at_most: those beyond max)

    def as_dict(self) -> dict:
        return asdict(self)


def _selected(rows: list[dict], where: dict[str, list]) -> list[dict]:
    return [r for r in rows if all(r.get(column) in values for column, values in where.items())]


def _pk(db: DBSchema, table: str) -> str:
    try:
        return db.table(table).primary_key.name
    except KeyError:
        return ""


def _check(index: int, c: Check, db: DBSchema, state: State) -> list[Violation]:
    pk = _pk(db, c.table)
    rows = _selected(state.get(c.table, []), c.where)
    out: list[Violation] = []
    if c.kind == "allowed_values":
        values = c.values
        column = next((col for t in db.tables if t.name == c.table for col in t.columns if col.name == c.column), None)
        if values is None:
            values = column.choices if column is not None and column.choices else None
        if values is None:
            return []
        for row in rows:
            value = row.get(c.column)
            if value is None and (column is None or column.nullable):
                continue
            if value not in values:
                out.append(Violation(index, c.table, str(row.get(pk)), f"{c.column} is {value!r}, not one of {values}",
                                     (str(row.get(pk)),)))
    elif c.kind == "at_most":
        groups: dict[tuple, list[str]] = defaultdict(list)
        for row in rows:
            key = tuple(row.get(column) for column in c.group_by)
            if None not in key:
                groups[key].append(str(row.get(pk)))
        for key, members in sorted(groups.items(), key=lambda item: str(item[0])):
            if len(members) > c.max:
                group = ", ".join(f"{col}={v!r}" for col, v in zip(c.group_by, key)) or "the whole table"
                members = sorted(members)
                out.append(Violation(index, c.table, group,
                                     f"{len(members)} rows ({', '.join(members)}), at most {c.max}",
                                     tuple(members[c.max:])))
    elif c.kind == "requires_related":
        related = _selected(state.get(c.related, []), c.related_where)
        index_on = {tuple(r.get(theirs) for theirs in c.on.values()) for r in related}
        for row in rows:
            if tuple(row.get(mine) for mine in c.on) not in index_on:
                link = ", ".join(f"{c.related}.{theirs} = {row.get(mine)!r}" for mine, theirs in c.on.items())
                which = " with " + ", ".join(f"{k} in {v}" for k, v in c.related_where.items()) if c.related_where else ""
                out.append(Violation(index, c.table, str(row.get(pk)), f"no {c.related} row{which} where {link}",
                                     (str(row.get(pk)),)))
    elif c.kind == "not_null":
        for row in rows:
            empty = [column for column in c.columns if row.get(column) is None]
            if empty:
                out.append(Violation(index, c.table, str(row.get(pk)), f"{', '.join(empty)} is null",
                                     (str(row.get(pk)),)))
    return out


def check_invariants(policy: Policy, db: DBSchema, state: State) -> list[Violation]:
    """Every violation of the policy's checkable invariants in `state`, in a stable order."""
    out: list[Violation] = []
    for index, invariant in enumerate(policy.invariants):
        if invariant.check is not None:
            out += _check(index, invariant.check, db, state)
    return sorted(out)


@dataclass(frozen=True)
class StatusMove:
    table: str
    column: str
    key: str
    before: str | None  # None: the row was inserted
    after: str
    allowed: bool  # the transition table allows the move (an insert: the value is an initial one)
    listed: bool  # the table names this tool for the move (True when it names no tool)


def status_moves(policy: Policy, db: DBSchema, tool: str, before: State, after: State) -> list[StatusMove]:
    """How a call of `tool` that turned `before` into `after` moved the policy's status columns."""
    out = []
    for m in policy.machines:
        pk = _pk(db, m.table)
        old = {r.get(pk): r for r in before.get(m.table, [])}
        moves = m.moves()
        for row in after.get(m.table, []):
            key, value = row.get(pk), row.get(m.column)
            if key in old and old[key].get(m.column) == value:
                continue
            if key not in old:
                out.append(StatusMove(m.table, m.column, str(key), None, value, value in m.initial, True))
                continue
            previous = old[key].get(m.column)
            tools = moves.get((previous, value))
            out.append(StatusMove(m.table, m.column, str(key), previous, value, tools is not None,
                                  tools is not None and (not tools or tool in tools)))
    return out


def drop_dangling(schema: DBSchema, rows: dict[str, dict[str, dict]]) -> None:
    """Remove rows whose foreign keys point at missing rows, until none do (a drop can cascade)."""
    changed = True
    while changed:
        changed = False
        for table in schema.tables:
            refs = [(c.name, *c.foreign_key.split(".", 1)) for c in table.columns if c.foreign_key]
            for key, row in list(rows[table.name].items()):
                for column, target, target_column in refs:
                    value = row.get(column)
                    if value is None:
                        continue
                    present = (value in rows[target] if schema.table(target).primary_key.name == target_column
                               else any(r.get(target_column) == value for r in rows[target].values()))
                    if not present:
                        del rows[table.name][key]
                        changed = True
                        break


def keep_invariants(policy: Policy, schema: DBSchema, state: State, core: State | None = None,
                    reset: bool = False, rounds: int | None = None) -> State | None:
    """`state` changed so that, beside `core` (kept as it is), it breaks none of the policy's
    checkable invariants on its own rows: an offending row is dropped, with the rows that then point
    nowhere; with `reset`, a row selected by its status goes back to its lifecycle's initial status
    instead, where that ends the violation. Tables left empty are left out. None when `rounds`
    rounds (each resets or drops rows) do not end every violation."""
    rows = {t.name: {r[t.primary_key.name]: dict(r) for r in state.get(t.name, [])} for t in schema.tables}
    initial = {(m.table, m.column): m.initial[0] for m in policy.machines} if reset else {}
    done = 0
    while rounds is None or done < rounds:
        done += 1
        current = {table: list(found.values()) for table, found in rows.items() if found}
        seen: State = {}
        for part in (core or {}, current):
            for table, found in part.items():
                seen.setdefault(table, []).extend(found)
        broken = [(v, key) for v in check_invariants(policy, schema, seen)
                  for key in rows[v.table] if str(key) in v.rows]
        if not broken:
            return current
        for v, key in broken:
            row = rows[v.table].get(key)
            if row is None:
                continue
            where = policy.invariants[v.invariant].check.where
            column = next((c for c, values in where.items() if (v.table, c) in initial
                           and initial[(v.table, c)] not in values), None)
            if column:
                row[column] = initial[(v.table, column)]
            else:
                del rows[v.table][key]
        drop_dangling(schema, rows)
    return None
