"""How a schema is compared: per table its primary key and checked columns (with their policy and
the table a foreign key points at), and the states indexed by primary key, refused with a clear
error when they do not fit the schema."""

from __future__ import annotations

import json
from collections.abc import Hashable, Mapping
from dataclasses import dataclass

from domains.spec import DBSchema, State
from verification.reward.models import FieldPolicy, RewardSpec, default_reward_spec


@dataclass(frozen=True)
class ColumnPlan:
    name: str
    kind: str
    policy: FieldPolicy
    ref: str | None  # the table whose primary key this foreign key holds


@dataclass
class TablePlan:
    name: str
    pk: str
    columns: frozenset[str]
    checked: list[ColumnPlan]  # non-exempt columns, in schema order


PENDING = ("pending",)  # a reference into a table not yet matched; verified afterwards
IDFREE = ("new",)


def table_plans(schema: DBSchema, spec: RewardSpec) -> dict[str, TablePlan]:
    defaults = default_reward_spec(schema).fields
    for table, policies in spec.fields.items():
        if table not in defaults:
            raise ValueError(f"reward_spec names unknown table {table!r}")
        unknown = set(policies) - set(defaults[table])
        if unknown:
            raise ValueError(f"reward_spec names unknown columns of {table!r}: {sorted(unknown)}")
    pks = {t.name: t.primary_key.name for t in schema.tables}
    plans = {}
    for table in schema.tables:
        policies = {**defaults[table.name], **spec.fields.get(table.name, {})}
        checked = []
        for c in table.columns:
            if policies[c.name] == "exempt":
                continue
            ref = None
            if c.foreign_key:
                target, column = c.foreign_key.split(".", 1)
                ref = target if pks[target] == column else None
            checked.append(ColumnPlan(c.name, c.type, policies[c.name], ref))
        plans[table.name] = TablePlan(table.name, pks[table.name], frozenset(c.name for c in table.columns), checked)
    return plans


def index_rows(state: State, label: str, plans: dict[str, TablePlan]) -> dict[str, dict[Hashable, dict]]:
    if not isinstance(state, Mapping):
        raise ValueError(f"the {label} state must map table names to lists of rows")
    unknown = set(state) - set(plans)
    if unknown:
        raise ValueError(f"the {label} state has unknown tables {sorted(unknown)}; the schema has {sorted(plans)}")
    out = {}
    for name, plan in plans.items():
        rows = state.get(name) or []
        if not isinstance(rows, list):
            raise ValueError(f"the {label} state's {name!r} must be a list of rows")
        index: dict[Hashable, dict] = {}
        for n, row in enumerate(rows):
            if type(row) is not dict and not isinstance(row, Mapping):  # the exact check is the fast one
                raise ValueError(f"the {label} state's {name} row {n} is not an object")
            key = row.get(plan.pk)
            if key is None:
                raise ValueError(f"the {label} state's {name} row {n} has no primary key {plan.pk!r}")
            if not row.keys() <= plan.columns:
                extra = sorted(set(row) - plan.columns)
                raise ValueError(f"the {label} state's {name} row {key!r} has unknown columns {extra}")
            try:
                seen = key in index
            except TypeError:
                raise ValueError(f"the {label} state's {name} row {n} has an unhashable primary key {key!r}") from None
            if seen:
                raise ValueError(f"the {label} state has two {name} rows with key {key!r}")
            index[key] = row
        out[name] = index
    return out


def preview(plan: TablePlan, row: Mapping) -> str:
    shown = {c.name: row.get(c.name) for c in plan.checked}
    text = json.dumps(shown, default=str, ensure_ascii=False)
    return text if len(text) <= 160 else text[:157] + "..."
