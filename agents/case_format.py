"""The compact procedural-test format the test agent answers in.

A tool's tests share one fixture (a DB state); each case states only how its initial state
differs from the fixture, in the same shape as an expected state change (rows inserted,
columns updated per primary key, keys deleted). A row of the fixture, or one a setup inserts,
may copy a row of the same table written before it (`{"like": <its primary key>, ...the
columns that differ}`), so a long row is written once, not once per row or per case. Expanded,
every case is a full `ToolTest`, which is what the sandbox runs and `tests/<tool>.json` stores. A model writes a state once
per tool instead of once per case, which keeps each answer short.
"""

from __future__ import annotations

import copy
import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from domains.db_runtime import DEFAULT_NOW, ErrorName
from domains.spec import Changes, DBSchema, State, TableChanges, ToolTest


# Named TestCase because the answer's type is shown to the model under this name: renaming the
# class would change every recorded prompt.
class TestCase(BaseModel):
    """One case: the fixture's differences, one call and the expected outcome."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=r"^[a-z][a-z0-9_]{0,63}$")
    kind: Literal["success", "rejection"]
    setup: Changes = Field({}, description="how this case's initial state differs from the fixture")
    arguments: dict[str, Any] = {}
    expect_return: Any = None
    expect_changes: Changes = Field({}, description="success cases: the exact state change of the call")
    expect_error: ErrorName | None = None
    now: str | None = Field(None, description=f"the episode clock, when not the default {DEFAULT_NOW}")


def primary_keys(schema: DBSchema) -> dict[str, str]:
    return {t.name: t.primary_key.name for t in schema.tables}


def _nullable(schema: DBSchema) -> dict[str, list[str]]:
    """Columns a row may leave out when they are null: nullable, no default, not the key."""
    return {t.name: [c.name for c in t.columns if c.nullable and c.default is None and not c.primary_key]
            for t in schema.tables}


def apply_changes(state: State, changes: Changes, pks: dict[str, str]) -> State:
    """`state` with `changes` applied: deleted rows removed, updated columns set, inserted rows appended."""
    out = copy.deepcopy(state)
    for table, change in changes.items():
        if table not in pks:
            raise ValueError(f"setup names an unknown table {table!r}")
        pk = pks[table]
        rows = out.setdefault(table, [])
        known = {row.get(pk) for row in rows}
        for key in change.deleted:
            if key not in known:
                raise ValueError(f"setup deletes {table} row {key!r}, which the fixture does not have")
        for key in change.updated:
            if key not in known:
                raise ValueError(f"setup updates {table} row {key!r}, which the fixture does not have")
        rows[:] = [{**row, **change.updated.get(row.get(pk), {})} for row in rows if row.get(pk) not in change.deleted]
        for row in change.inserted:
            if row.get(pk) in known and row.get(pk) not in change.deleted:
                raise ValueError(f"setup inserts {table} row {row.get(pk)!r}, which the fixture already has")
            rows.append(dict(row))
        if not rows:
            del out[table]
    return out


LIKE = "like"  # in a setup's inserted row: the primary key of the row it copies


def resolve_like(fixture: State, setup: Changes, schema: DBSchema, part: str = "setup") -> Changes:
    """`setup` with every inserted row that names `like` replaced by the row of that key (same
    table) of the fixture or inserted before it in this setup, its own columns overriding the
    copied ones. `part` names the setup (or the fixture) in errors."""
    pks = primary_keys(schema)
    columns = {t.name: {c.name for c in t.columns} for t in schema.tables}
    out: Changes = {}
    for table, change in setup.items():
        if table not in pks or LIKE in columns[table] or not any(LIKE in row for row in change.inserted):
            out[table] = change
            continue
        pk = pks[table]
        own = {row[pk]: row for row in fixture.get(table, []) if isinstance(row.get(pk), str)}
        rows = []
        for row in change.inserted:
            if LIKE not in row:
                rows.append(row)
                if isinstance(row.get(pk), str):
                    own[row[pk]] = row
                continue
            key = row[LIKE]
            if not isinstance(key, str):
                raise ValueError(f"{part} inserts a {table} row with `like` {key!r}: `like` takes the primary key "
                                 f"(a string) of the fixture row to copy")
            if key not in own:
                have = ", ".join(repr(k) for k in own) or "none"
                problem = (f"setup inserts a {table} row like {key!r}, but neither the fixture nor this setup before "
                           f"it has a {table} row {key!r} (their {table} keys: {have})" if part == "setup" else
                           f"{part} has a {table} row like {key!r}, but no {table} row {key!r} before it (the "
                           f"{table} keys before it: {have})")
                raise ValueError(f"{problem}; `like` names the primary key of a row of the same table written "
                                 f"before it")
            copied = {**own[key], **{c: v for c, v in row.items() if c != LIKE}}
            if copied.get(pk) == key and key not in change.deleted:
                raise ValueError(f"{part} inserts a {table} row like {key!r} without its own {pk}: give the new "
                                 f"row's {pk} beside `like`")
            rows.append(copied)
            if isinstance(copied.get(pk), str):
                own[copied[pk]] = copied  # a later row may copy this one
        out[table] = change.model_copy(update={"inserted": rows})
    return out


def resolve_fixture(fixture: State, schema: DBSchema) -> State:
    """`fixture` with every row that names `like` replaced by the copied row: the fixture read as
    one setup that inserts all its rows into an empty state."""
    inserted = {table: TableChanges(inserted=rows) for table, rows in fixture.items()}
    return {table: change.inserted for table, change in resolve_like({}, inserted, schema, "the fixture").items()}


def diff_states(before: State, after: State, pks: dict[str, str]) -> Changes:
    """The changes that turn `before` into `after` (inverse of apply_changes, up to row order
    and null columns left out)."""
    changes: Changes = {}
    for table in sorted(set(before) | set(after)):
        pk = pks[table]
        old = {row[pk]: row for row in before.get(table, [])}
        new = {row[pk]: row for row in after.get(table, [])}
        change = TableChanges(
            inserted=[row for key, row in new.items() if key not in old],
            # a column a row leaves out is null
            updated={key: {c: row.get(c) for c in sorted(set(row) | set(old[key])) if old[key].get(c) != row.get(c)}
                     for key, row in new.items() if key in old and any(
                         old[key].get(c) != row.get(c) for c in set(row) | set(old[key]))},
            deleted=[key for key in old if key not in new],
        )
        if change.inserted or change.updated or change.deleted:
            changes[table] = change
    return changes


def expand(fixture: State, cases: list[TestCase], schema: DBSchema) -> list[ToolTest]:
    """Full ToolTests (null columns left out of a state's rows filled in); a case that does not
    fit the fixture or the test rules raises ValueError."""
    pks, nullable = primary_keys(schema), _nullable(schema)
    fixture = resolve_fixture(fixture, schema)
    tests = []
    for case in cases:
        fields = case.model_dump(exclude={"setup", "now"}, exclude_defaults=True)
        if case.now:
            fields["now"] = case.now
        try:
            for table, change in case.expect_changes.items():
                if any(LIKE in row for row in change.inserted) and LIKE not in _columns(schema, table):
                    raise ValueError(f"expect_changes inserts a {table} row with `like`: `like` copies rows "
                                     f"in the fixture and setups only; give the full inserted row")
            state = apply_changes(fixture, resolve_like(fixture, case.setup, schema), pks)
            for table, rows in state.items():
                for row in rows:
                    for column in nullable[table]:
                        row.setdefault(column, None)
            tests.append(ToolTest.model_validate({**fields, "initial_state": state}))
        except ValueError as error:
            raise ValueError(f"case {case.name!r}: {error}") from None
    return tests


def describe_state(state: State) -> str:
    """A state for a prompt: per table its columns once, then a row per line as a JSON array of
    values in that order (null where a row leaves a column out), shorter than rows as objects."""
    lines = []
    for table, rows in state.items():
        columns: list[str] = []
        for row in rows:
            columns += [c for c in row if c not in columns]
        lines.append(f"{table}, one row per line, values in the order [{', '.join(columns)}]:")
        lines += [json.dumps([row.get(c) for c in columns], ensure_ascii=False) for row in rows]
    return "\n".join(lines)


def _columns(schema: DBSchema, table: str) -> set[str]:
    return next(({c.name for c in t.columns} for t in schema.tables if t.name == table), set())


def _size(value: object) -> int:
    return len(json.dumps(value, separators=(",", ":"), default=str))


def encode(tests: list[ToolTest], schema: DBSchema, max_fixture: int = 6000) -> tuple[State, list[TestCase]]:
    """Tests in the compact format: of the cases' own states (and their union, and no state at
    all), the fixture that makes the whole shortest while itself staying under `max_fixture`
    characters, so that no single answer has to carry a large state. Null columns that may be
    left out are."""
    pks, nullable = primary_keys(schema), _nullable(schema)
    states = [{table: [{c: v for c, v in row.items() if v is not None or c not in nullable[table]} for row in rows]
               for table, rows in t.initial_state.items()} for t in tests]
    union: State = {}
    for state in states:
        for table, rows in state.items():
            have = {r[pks[table]] for r in union.get(table, [])}
            union.setdefault(table, []).extend(r for r in rows if r[pks[table]] not in have)
    best = None
    for fixture in [{}] + states + [union]:
        if _size(fixture) > max_fixture:
            continue
        cases = [_case(t, state, fixture, pks) for t, state in zip(tests, states)]
        size = _size(fixture) + sum(_size(c.model_dump(exclude_defaults=True)) for c in cases)
        if best is None or size < best[0]:
            best = (size, fixture, cases)
    return best[1], best[2]


def _case(test: ToolTest, state: State, fixture: State, pks: dict[str, str]) -> TestCase:
    fields = test.model_dump(exclude={"initial_state", "now"}, exclude_defaults=True)
    if test.now != ToolTest.model_fields["now"].default:
        fields["now"] = test.now
    return TestCase.model_validate({**fields, "setup": diff_states(fixture, state, pks)})
