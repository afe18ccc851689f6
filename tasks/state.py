"""Initial states: entity-consistency checks, and distractor rows generated from the schema.

Distractors are made without a model request of their own: the domain's vocabulary (tasks.vocabulary,
asked once per domain) gives realistic values and ranges per column, Faker (pinned, seeded per
task) fills the rest from each column's type, name, enum, bounds and length, look-alikes take the
name of one of the task's own rows, and foreign keys point only at other distractor rows, so a
distractor never edits the rows the task is about. Whether they change the task's outcome is
decided by execution elsewhere (tasks.verify); here they are made schema-valid and, where the
domain has a policy, kept to its invariants (`keep_invariants`).
"""

from __future__ import annotations

import math
import random
import re
from datetime import date, datetime, timedelta

from faker import Faker

from domains.db_layer import table_order
from domains.policy import Policy
from domains.spec import Column, DBSchema, State, Table
from tasks.vocabulary import Vocabulary, text_columns
from verification.invariants import keep_invariants

# Distractor root rows (rows of tables with no foreign key) per complexity level.
DENSITY = {1: 3, 2: 6, 3: 10}
# Of those, the groups whose root row looks like one of the task's own (its names and titles,
# another date, amount or status), as tau2's tasks use them: none at level 1.
LOOKALIKES = {1: 0, 2: 2, 3: 4}
_NAMED = re.compile(r"(^|_)(name|title)$")


def check_state(schema: DBSchema, state: State) -> list[str]:
    """Entity-consistency problems: unknown tables or columns, missing or repeated keys, required
    columns left empty, values outside enums or bounds, repeated unique values, dangling foreign keys."""
    problems: list[str] = []
    tables = {t.name: t for t in schema.tables}
    for name in state:
        if name not in tables:
            problems.append(f"unknown table {name!r}")
    values: dict[tuple[str, str], list] = {}
    for table in schema.tables:
        cols = {c.name: c for c in table.columns}
        for i, row in enumerate(state.get(table.name, [])):
            where = f"{table.name}[{i}]"
            for key in row:
                if key not in cols:
                    problems.append(f"{where}: unknown column {key!r}")
            for col in table.columns:
                value = row.get(col.name)
                values.setdefault((table.name, col.name), []).append(value)
                problems += _column_problems(where, col, value)
    for table in schema.tables:
        for col in table.columns:
            seen = [v for v in values.get((table.name, col.name), []) if v is not None]
            if (col.primary_key or col.unique) and len(seen) != len(set(map(str, seen))):
                problems.append(f"{table.name}.{col.name}: repeated values {sorted({str(v) for v in seen if seen.count(v) > 1})}")
            if col.foreign_key:
                target_table, target_col = col.foreign_key.split(".", 1)
                known = set(values.get((target_table, target_col), []))
                for v in seen:
                    if v not in known:
                        problems.append(f"{table.name}.{col.name} = {v!r} does not resolve: no {target_table} "
                                        f"row has {target_col} {v!r}")
    return problems


def _column_problems(where: str, col: Column, value) -> list[str]:
    if value is None:
        needed = col.primary_key or (not col.nullable and col.default is None)
        return [f"{where}: {col.name} is required"] if needed else []
    if col.choices and value not in col.choices:
        return [f"{where}: {col.name} = {value!r} is not one of {col.choices}"]
    if col.type in ("integer", "number") and isinstance(value, (int, float)):
        if (col.minimum is not None and value < col.minimum) or (col.maximum is not None and value > col.maximum):
            return [f"{where}: {col.name} = {value!r} is outside [{col.minimum}, {col.maximum}]"]
    if col.max_length and isinstance(value, str) and len(value) > col.max_length:
        return [f"{where}: {col.name} is longer than {col.max_length} characters"]
    return []


def merge(*states: State) -> State:
    out: State = {}
    for state in states:
        for table, rows in state.items():
            out.setdefault(table, []).extend(rows)
    return out


def _next_numbers(table: Table, state: State) -> int:
    pk = table.primary_key.name
    numbers = [int(m.group(1)) for row in state.get(table.name, [])
               if (m := re.fullmatch(rf"{re.escape(table.id_prefix)}-(\d+)", str(row.get(pk, ""))))]
    return max(numbers, default=0) + 1


class _Values:
    """Column values from the domain's vocabulary where it has one, else from Faker and the column's
    constraints, around the task's clock."""

    def __init__(self, seed: int, today: date, vocabulary: Vocabulary | None = None):
        self.rng = random.Random(seed)
        self.fake = Faker("en_US")
        self.fake.seed_instance(seed)
        self.today = today
        self.vocabulary = vocabulary
        self.taken: dict[str, set] = {}  # table.column -> values a unique column already holds

    def value(self, table: str, col: Column):
        if col.nullable and not col.choices and self.rng.random() < 0.25:
            return None
        if col.choices:
            return self.rng.choice(col.choices)
        if self.vocabulary is not None and (known := self._realistic(f"{table}.{col.name}", col)) is not None:
            return known
        low = col.minimum if col.minimum is not None else 0
        if col.type == "integer":
            high = col.maximum if col.maximum is not None else low + 100
            return self.rng.randint(int(low), int(min(high, low + 120)))
        if col.type == "number":
            high = col.maximum if col.maximum is not None else 250_000
            return float(round(self.rng.uniform(max(low, high / 5), high), -2))
        if col.type == "boolean":
            return self.rng.random() < 0.5
        if col.type == "date":
            return (self.today + timedelta(days=self.rng.randint(-90, 45))).isoformat()
        if col.type == "datetime":
            day = datetime.combine(self.today, datetime.min.time()) + timedelta(days=self.rng.randint(-90, 30))
            return (day + timedelta(hours=self.rng.randint(8, 17))).isoformat()
        if col.type == "text":
            return self.fake.paragraph(nb_sentences=2)
        return self._string(col)[: col.max_length or None]

    def _realistic(self, key: str, col: Column):
        given = self.vocabulary.texts.get(key)
        if given is not None and given.provider:
            return str(getattr(self.fake, given.provider)())[: col.max_length or None]
        if given is not None and given.values:
            if not col.unique:
                return self.rng.choice(given.values)
            # a handful of values cannot fill a unique column: each once, then Faker's
            free = [v for v in given.values if v not in self.taken.setdefault(key, set())]
            if free:
                self.taken[key].add(choice := self.rng.choice(free))
                return choice
        if (pair := self.vocabulary.ranges.get(key)) is not None:
            low, high = pair
            if col.type == "integer":
                return self.rng.randint(math.ceil(low), max(math.ceil(low), math.floor(high)))
            return round(self.rng.uniform(low, high), 2)
        return None

    def _string(self, col: Column) -> str:
        name = col.name
        for hint, make in (("email", self.fake.email), ("phone", self.fake.phone_number),
                           ("company", self.fake.company), ("title", self.fake.job), ("location", self.fake.city),
                           ("name", self.fake.name), ("person", self.fake.name), ("source", self.fake.domain_word)):
            if hint in name:
                return make()
        return self.fake.word()


def distractors(schema: DBSchema, core: State, level: int, seed: int, today: date,
                policy: Policy | None = None, vocabulary: Vocabulary | None = None) -> list[State]:
    """Groups of schema-valid rows (one root row and its children each), `DENSITY[level]` groups,
    each kept to the policy's invariants together with the core state. With the domain's
    vocabulary, values read like real records and the first `LOOKALIKES[level]` rounds copy the
    names and titles of one of the task's own rows.

    Keys continue after the core state's, so generated keys never collide; each group is a unit
    that is kept or rejected as a whole.
    """
    values = _Values(seed, today, vocabulary)
    values.taken = {f"{t.name}.{c.name}": {r.get(c.name) for r in core.get(t.name, [])}
                    for t in schema.tables for c in t.columns if c.unique}
    tables = {t.name: t for t in schema.tables}
    order = table_order(schema)
    numbers = {t.name: _next_numbers(t, core) for t in schema.tables}
    roots = [n for n in order if not any(c.foreign_key for c in tables[n].columns)]
    groups: list[State] = []
    for round_ in range(DENSITY[level]):
        for root in roots:
            group: State = {}
            for name in order:
                table = tables[name]
                refs = [c for c in table.columns if c.foreign_key]
                if name == root:
                    count = 1
                elif refs and all(c.foreign_key.split(".")[0] in group for c in refs):
                    count = values.rng.randint(0, 2)
                else:
                    continue
                for _ in range(count):
                    row = _row(table, refs, group, values, numbers)
                    if row is not None:
                        if vocabulary is not None and round_ < LOOKALIKES[level] and core.get(name):
                            _look_like(table, row, values.rng.choice(core[name]))
                        group.setdefault(name, []).append(row)
            if policy is not None:
                group = keep_invariants(policy, schema, group, core=core, reset=True, rounds=20) or {}
            if group:
                groups.append(group)
    return groups


def _row(table: Table, refs: list[Column], group: State, values: _Values, numbers: dict[str, int]) -> dict | None:
    row: dict = {}
    for col in table.columns:
        if col.primary_key:
            row[col.name] = f"{table.id_prefix}-{numbers[table.name]:04d}"
        elif col.foreign_key:
            target_table, target_col = col.foreign_key.split(".", 1)
            taken = {r[col.name] for r in group.get(table.name, [])} if col.unique else set()
            options = [r[target_col] for r in group[target_table] if r[target_col] not in taken]
            if not options:
                return None
            row[col.name] = values.rng.choice(options)
        else:
            row[col.name] = values.value(table.name, col)
            if row[col.name] is None and not col.nullable:
                row[col.name] = col.default
    _order_pairs(row)
    numbers[table.name] += 1
    return row


def _look_like(table: Table, row: dict, original: dict) -> None:
    """The row takes the original's name or title and keeps its own key, dates, numbers, statuses
    and other text: the same name on another date, the same product in another size."""
    for col in text_columns(table):
        if col.type == "string" and not col.unique and _NAMED.search(col.name) and original.get(col.name):
            row[col.name] = original[col.name]
            return


def lookalikes(schema: DBSchema, core: State, groups: list[State]) -> list[tuple[str, dict]]:
    """(table, row) of the groups' rows that share a name or title with a row of the task's own."""
    found = []
    for table in schema.tables:
        names = [c.name for c in text_columns(table) if c.type == "string" and _NAMED.search(c.name)]
        own = {(n, r[n]) for r in core.get(table.name, []) for n in names if r.get(n)}
        found += [(table.name, r) for group in groups for r in group.get(table.name, [])
                  if any((n, r.get(n)) in own for n in names)]
    return found


def lookalike_rows(schema: DBSchema, core: State, groups: list[State]) -> int:
    return len(lookalikes(schema, core, groups))


def _order_pairs(row: dict) -> None:
    """A `*_min` never above its `*_max` (the usual invariant on a range)."""
    for key in list(row):
        if key.endswith("_min"):
            other = key[:-4] + "_max"
            lo, hi = row.get(key), row.get(other)
            if isinstance(lo, (int, float)) and isinstance(hi, (int, float)) and lo > hi:
                row[key], row[other] = hi, lo
