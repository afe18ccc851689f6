"""The compact procedural-test format the test agent answers in.

A tool's tests share one fixture (a DB state); each case states only how its initial state
differs from the fixture, in the same shape as an expected state change (rows inserted,
columns updated per primary key, keys deleted). Expanded, every case is a full `ToolTest`,
which is what the sandbox runs and `tests/<tool>.json` stores. A model writes a state once
per tool instead of once per case, which keeps each answer short.
"""

from __future__ import annotations

import copy
import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from domains.spec import Changes, DBSchema, ErrorName, State, TableChanges, ToolTest


class TestCase(BaseModel):
    """One case: the fixture's differences, one call and the expected outcome."""

    model_config = ConfigDict(extra="forbid")
    __test__ = False  # not a pytest class

    name: str = Field(pattern=r"^[a-z][a-z0-9_]{0,63}$")
    kind: Literal["success", "rejection"]
    setup: Changes = Field({}, description="how this case's initial state differs from the fixture")
    arguments: dict[str, Any] = {}
    expect_return: Any = None
    expect_changes: Changes = Field({}, description="success cases: the exact state change of the call")
    expect_error: ErrorName | None = None
    now: str | None = Field(None, description="the episode clock, when not the default 2025-03-01T09:00:00")


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
    tests = []
    for case in cases:
        fields = case.model_dump(exclude={"setup", "now"}, exclude_defaults=True)
        if case.now:
            fields["now"] = case.now
        try:
            state = apply_changes(fixture, case.setup, pks)
            for table, rows in state.items():
                for row in rows:
                    for column in nullable[table]:
                        row.setdefault(column, None)
            tests.append(ToolTest.model_validate({**fields, "initial_state": state}))
        except ValueError as error:
            raise ValueError(f"case {case.name!r}: {error}") from None
    return tests


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
