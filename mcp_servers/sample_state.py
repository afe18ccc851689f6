"""A small, consistent database state for a domain, assembled from its procedural tests.

Until a domain has tasks, its server starts from this state. The success tests' initial
states are merged in a fixed order (tools by name, tests as written); a row whose primary
key or a unique value is already taken is skipped, and rows whose foreign keys then point
nowhere are dropped, so the result loads into the domain's database as it is. Rows that break
an invariant of the domain's policy (a test's fixture may hold states the tools never make)
are dropped too, with the rows that then point nowhere, until the state keeps every invariant.
A test that fills a table with more than BULK rows wrote look-alike filler to test a limit or a
count ("Company 6" to "Company 26"); those rows are not a sample of the domain and stay out.
"""

from __future__ import annotations

import json
from pathlib import Path

from domains.db_layer import table_order
from domains.spec import DBSchema, DomainSpec, State, ToolTest
from verification.invariants import drop_dangling, keep_invariants

BULK = 12


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
            if len(state.get(name, [])) > BULK:
                continue
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
    if spec.policy.empty():
        return state
    kept = keep_invariants(spec.policy, spec.db, state)
    return {t.name: sorted(kept.get(t.name, []), key=lambda r: r[t.primary_key.name]) for t in spec.db.tables}
