"""Differential testing of a surviving mutant against the verified code, on generated calls.

A model may argue that a surviving mutant is equivalent to the code; before that claim is
believed, both run in the sandbox on calls generated from the tool's JSON Schema
(domains.tool_schemas.parameter_schema: types, enums, bounds, formats) over the states of the
tool's own tests and small variants of them (a row copied under a new key, a column changed).
Argument values come from what the states and the code hold (keys, constants and their
neighbours, padded and differently-cased strings) as well as from the schema's types, drawn
with `hypothesis` under a fixed seed and a bounded number of calls, so the same tool gives the
same calls on every run. The first call whose outcome (error type, return value, state change)
differs between the code and the mutant refutes the claim; its outcome under the verified code
is what a killing case expects. Only the code's contract outcomes (a return, or a declared
error) qualify. Generated code runs only in the sandbox; the outcomes are compared here.
"""

from __future__ import annotations

import ast
import copy
import json
import threading
from datetime import date, datetime, timedelta
from typing import get_args

from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st

from domains.db_runtime import DEFAULT_NOW, ErrorName
from domains.spec import DBSchema, State, ToolSchema
from domains.tool_schemas import ArgumentError, ArgumentValidator, parameter_schema
from sandbox.guard import parse
from verification.sandbox import Sandbox
from verification.verdict import signature

CALLS = 160  # generated calls per tool: bounded, so replay stays fast and byte-stable
SEED = 20_250_301
_ERRORS = set(get_args(ErrorName))
_LOCK = threading.Lock()  # hypothesis's engine is driven by one thread at a time here
_DAY = date.fromisoformat(DEFAULT_NOW[:10])


# -- values ------------------------------------------------------------------------------------
def _pools(states: list[State], code: str) -> dict[str, list]:
    """Values worth trying, by JSON type: those of the states and the code's constants, with
    their neighbours (numbers ± 1; strings padded, upper- and lower-cased)."""
    strings, numbers = set(), set()
    for state in states:
        for rows in state.values():
            for row in rows:
                for value in row.values():
                    if isinstance(value, str):
                        strings.add(value)
                    elif isinstance(value, (int, float)) and not isinstance(value, bool):
                        numbers.add(value)
    for node in ast.walk(parse(code)):  # one thread at a time (sandbox.guard.parse)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and len(node.value) <= 40:
            strings.add(node.value)
        elif isinstance(node, ast.Constant) and type(node.value) in (int, float):
            numbers.add(node.value)
    variants = {v for s in strings for v in (f" {s} ", s.upper(), s.lower()) if v}
    near = {n + d for n in numbers for d in (-1, 0, 1)} | {0, 1, -1}
    return {"string": sorted(strings | variants | {"", " "}),
            "integer": sorted(int(n) for n in near if abs(n) < 1e12),
            "number": sorted(float(n) for n in near if abs(n) < 1e12)}


def _dates() -> st.SearchStrategy[date]:
    return st.dates(_DAY - timedelta(days=400), _DAY + timedelta(days=400))


def _value(prop: dict, raw_format: str | None, pools: dict[str, list]) -> st.SearchStrategy:
    """Values of one JSON Schema property."""
    kind = prop["type"]
    if "enum" in prop:
        return st.sampled_from(prop["enum"])
    if kind == "string":
        known = st.sampled_from(pools["string"])
        if prop.get("format") == "date" or raw_format == "YYYY-MM-DD":
            return st.one_of(_dates().map(date.isoformat), known)
        if raw_format and "T" in raw_format:
            times = st.builds(lambda d, h: datetime.combine(d, datetime.min.time()) + timedelta(hours=h),
                              _dates(), st.integers(0, 23))
            return st.one_of(times.map(lambda t: t.isoformat(timespec="seconds")), known)
        if prop.get("format") == "email":
            return st.one_of(st.sampled_from(["a@b.co", " A@B.CO ", "x@example.com"]), known)
        return st.one_of(known, st.sampled_from(["", " ", "a", "A", " a "]), st.text("aAbZ -_.@1", max_size=8))
    if kind in ("integer", "number"):
        low, high = prop.get("minimum"), prop.get("maximum")
        pool = [n for n in pools[kind] if (low is None or n >= low) and (high is None or n <= high)]
        wide = (st.integers(low, high) if kind == "integer" else
                st.floats(low, high, allow_nan=False, allow_infinity=False, width=32))
        return st.one_of(st.sampled_from(pool), wide) if pool else wide
    if kind == "boolean":
        return st.booleans()
    if kind == "array":
        return st.lists(_value({"type": prop.get("items", {}).get("type", "string")}, None, pools), max_size=3)
    return st.dictionaries(st.sampled_from(["a", "b"]), st.sampled_from(pools["string"] or [""]), max_size=2)


def arguments(tool: ToolSchema, pools: dict[str, list]) -> st.SearchStrategy[dict]:
    """Argument objects of a tool: every required parameter, each optional one given or left out
    (sometimes at its schema default)."""
    parts = {}
    for param in tool.parameters:
        prop = parameter_schema(param)
        value = _value(prop, param.format, pools)
        if "default" in prop:
            value = st.one_of(st.just(prop["default"]), value)
        parts[param.name] = value if param.required else st.one_of(st.just(_LEFT_OUT), value)
    return st.fixed_dictionaries(parts).map(lambda d: {k: v for k, v in d.items() if v is not _LEFT_OUT})


_LEFT_OUT = object()


# -- states ------------------------------------------------------------------------------------
def _variant(draw, state: State, schema: DBSchema, pools: dict[str, list]) -> State:
    """The state, or a variant: a row copied under a new key, or one column of a row changed,
    to a value another row has there or a neighbour of its own."""
    tables = {t.name: t for t in schema.tables if state.get(t.name)}
    how = draw(st.sampled_from(["same", "copy", "change"])) if tables else "same"
    if how == "same":
        return state
    state = copy.deepcopy(state)
    table = tables[draw(st.sampled_from(sorted(tables)))]
    rows = state[table.name]
    row = rows[draw(st.integers(0, len(rows) - 1))]
    pk = table.primary_key.name
    columns = [c for c in table.columns if not c.primary_key and not c.foreign_key]
    if how == "copy":
        row = {**row, pk: f"{table.id_prefix}-{9000 + len(rows)}"}
        rows.append(row)
    if not columns:
        return state
    column = columns[draw(st.integers(0, len(columns) - 1))]
    seen = sorted({json.dumps(r.get(column.name)) for r in rows})
    old = row.get(column.name)
    near = ([f" {old} ", old.upper(), old.lower()] if isinstance(old, str) else
            [old - 1, old + 1] if isinstance(old, (int, float)) and not isinstance(old, bool) else
            [not old] if isinstance(old, bool) else [])
    choices = [json.loads(s) for s in seen] + near + list(column.choices or [])
    row[column.name] = draw(st.sampled_from(choices)) if choices else old
    return state


def generated_calls(tool: ToolSchema, schema: DBSchema, tests: list[dict], code: str,
                    count: int = CALLS, seed_: int = SEED) -> list[dict]:
    """Up to `count` distinct calls (procedural-test inputs of kind "success", no expectations)
    that pass argument validation, over the tests' states and their variants. Deterministic."""
    starts = {json.dumps([t.get("initial_state", {}), t.get("now", DEFAULT_NOW)], sort_keys=True): None
              for t in tests}
    starts = [json.loads(k) for k in starts] or [[{}, DEFAULT_NOW]]
    pools = _pools([s for s, _ in starts], code)
    validator = ArgumentValidator(tool)

    @st.composite
    def call(draw):
        state, now = starts[draw(st.integers(0, len(starts) - 1))]
        return {"initial_state": _variant(draw, state, schema, pools), "now": now,
                "arguments": draw(arguments(tool, pools))}

    drawn: list[dict] = []

    @seed(seed_)
    @settings(max_examples=count, database=None, deadline=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck), derandomize=False, print_blob=False)
    @given(call())
    def collect(one: dict) -> None:
        drawn.append(one)

    with _LOCK:
        collect()
    calls, seen = [], set()
    for one in drawn:
        try:
            one["arguments"] = validator.validate(one["arguments"])
            key = json.dumps(one, sort_keys=True)
        except (ArgumentError, TypeError, ValueError):
            continue
        if key not in seen:
            seen.add(key)
            calls.append({"name": f"generated_{len(calls) + 1}", "kind": "success", **one})
    return calls


# -- running -----------------------------------------------------------------------------------
def contract_outcome(verdict: dict) -> bool:
    """A verdict a procedural test can expect: a return, or a declared error (not a crash)."""
    if "changes" not in verdict:
        return False
    error = verdict.get("error")
    return error is None or error.get("type") in _ERRORS


def reference_outcomes(box: Sandbox, tool: str, code: str, calls: list[dict]) -> list[dict] | None:
    """The verified code's verdicts on the calls (None when it does not load)."""
    verdicts = box.run_source(tool, code, calls)
    return None if isinstance(verdicts, str) else verdicts


def distinguishing_call(box: Sandbox, tool: str, mutant_source: str, calls: list[dict],
                        reference: list[dict]) -> tuple[dict, dict] | None:
    """The first call (and the code's verdict on it) whose outcome under the mutant differs from
    the verified code's contract outcome, or None when every call agrees."""
    marks = [signature(v) if contract_outcome(v) else None for v in reference]
    verdicts = box.run_source(tool, mutant_source, calls, marks)
    if isinstance(verdicts, str):
        return None  # the mutant does not load: not this question
    for call, code_verdict, mark, verdict in zip(calls, reference, marks, verdicts):
        if mark is not None and (not contract_outcome(verdict) or signature(verdict) != mark):
            return call, code_verdict
    return None
