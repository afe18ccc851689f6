"""A small, consistent database state for a domain, assembled from its procedural tests.

Until a domain has tasks, its server starts from this state. The success tests' initial
states are merged in a fixed order (tools by name, tests as written); a row whose primary
key or a unique value is already taken is skipped, and rows whose foreign keys then point
nowhere are dropped, so the result loads into the domain's database as it is. Rows that break
an invariant of the domain's policy (a test's fixture may hold states the tools never make)
are dropped too, with the rows that then point nowhere, until the state keeps every invariant.
"""

from __future__ import annotations

import json
from pathlib import Path

from domains.db_layer import table_order
from domains.spec import DBSchema, DomainSpec, State, ToolTest


def _success_states(domain_dir: Path) -> list[State]:
    states = []
    for path in sorted((domain_dir / "tests").glob("*.json")):
        if path.stem == "integrity":
            continue
        for raw in json.loads(path.read_text()):
            test = ToolTest.model_validate(raw)
            if test.kind == "success" and test.initial_state:
                states.append(test.initial_state)
    return states


def merge_states(schema: DBSchema, states: list[State]) -> State:
    order = table_order(schema)
    rows: dict[str, dict[str, dict]] = {t: {} for t in order}
    taken: dict[tuple[str, str], set] = {}
    for state in states:
        for name in order:
            table = schema.table(name)
            pk = table.primary_key.name
            unique = [c.name for c in table.columns if c.unique and not c.primary_key]
            for row in state.get(name, []):
                key = row.get(pk)
                if key is None or key in rows[name]:
                    continue
                if any(row.get(c) is not None and row[c] in taken.get((name, c), ()) for c in unique):
                    continue
                rows[name][key] = row
                for c in unique:
                    if row.get(c) is not None:
                        taken.setdefault((name, c), set()).add(row[c])
    drop_dangling(schema, rows)
    return {t.name: [rows[t.name][k] for k in sorted(rows[t.name])] for t in schema.tables}


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


def keep_invariants(spec: DomainSpec, state: State) -> State:
    """`state` without the rows that break the policy's checkable invariants (and those that then
    point nowhere), dropped until none is broken."""
    from verification.invariants import check_invariants

    rows = {t.name: {r[t.primary_key.name]: r for r in state.get(t.name, [])} for t in spec.db.tables}
    while True:
        current = {t.name: list(rows[t.name].values()) for t in spec.db.tables}
        drop = {(v.table, key) for v in check_invariants(spec.policy, spec.db, current) for key in v.rows}
        drop = {(table, key) for table, key in drop if key in rows.get(table, {})}
        if not drop:
            return {t.name: [rows[t.name][k] for k in sorted(rows[t.name])] for t in spec.db.tables}
        for table, key in drop:
            del rows[table][key]
        drop_dangling(spec.db, rows)


def merged_sample_state(domain_dir: Path) -> State:
    """The success tests' states merged, before the policy's invariants are applied."""
    domain_dir = Path(domain_dir)
    spec = DomainSpec.model_validate_json((domain_dir / "spec.json").read_text())
    return merge_states(spec.db, _success_states(domain_dir))


def build_sample_state(domain_dir: Path) -> State:
    """The domain's sample state: deterministic, foreign-key consistent, keeping the policy's
    invariants, every table listed."""
    domain_dir = Path(domain_dir)
    spec = DomainSpec.model_validate_json((domain_dir / "spec.json").read_text())
    state = merged_sample_state(domain_dir)
    return state if spec.policy.empty() else keep_invariants(spec, state)
