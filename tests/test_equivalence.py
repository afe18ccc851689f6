"""Mutants proved equivalent without a model: what is proved, what is not, and that the proofs
hold on the bundled domain for calls drawn at random from what argument validation accepts."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from domains.spec import DomainSpec, ToolSchema
from domains.tool_schemas import ArgumentError, ArgumentValidator
from verification.equivalence import proved_equivalent
from verification.mutation import mutants
from verification.procedural import tool_sources
from verification.sandbox import Sandbox
from verification.verdict import signature

DOMAIN = Path(__file__).resolve().parent.parent / "domains" / "job_seeking"

TOOL = ToolSchema.model_validate({
    "name": "tag", "description": "Tag an item.", "mutates": True, "output": [{"name": "ok", "type": "boolean"}],
    "parameters": [
        {"name": "item_id", "type": "string", "description": "the item"},
        {"name": "color", "type": "string", "description": "a color", "enum": ["red", "blue"]},
        {"name": "label", "type": "string", "description": "free text"},
        {"name": "weight", "type": "integer", "description": "a weight", "required": False},
        {"name": "size", "type": "string", "description": "a size", "enum": ["s", "m"], "required": False},
    ]})

HEADER = "from db import Item, NotFound, InvalidInput, get_or_raise\nfrom sqlmodel import select\n\nCOLORS = ('red', 'blue')\n\n\n"


def _verdict(body: str, description: str, header: str = HEADER) -> str | None:
    code = header + "def tag(session, item_id: str, color: str, label: str, weight: int = None, size: str = None) -> dict:\n" + body
    found = [m for m in mutants(code) if m.description == description and m.line > header.count("\n")]
    assert len(found) == 1, [m.description for m in mutants(code)]
    return proved_equivalent(TOOL, code, found[0])


RAISE = "raise InvalidInput('no') removed"


@pytest.mark.parametrize("body", [
    "    if color not in COLORS:\n        raise InvalidInput('no')\n    return {'ok': True}\n",
    "    if color not in ('red', 'blue', 'green'):\n        raise InvalidInput('no')\n    return {'ok': True}\n",
    "    if not isinstance(label, str):\n        raise InvalidInput('no')\n    return {'ok': True}\n",
    "    if label is None:\n        raise InvalidInput('no')\n    return {'ok': True}\n",
    "    if weight is not None:\n        if isinstance(weight, bool) or not isinstance(weight, int):\n"
    "            raise InvalidInput('no')\n    return {'ok': True}\n",
    "    if size is None:\n        size = 's'\n    if size not in ('s', 'm'):\n        raise InvalidInput('no')\n    return {'ok': True}\n",
])
def test_a_raise_under_a_guard_argument_validation_decides_is_proved_equivalent(body):
    assert _verdict(body, RAISE)


@pytest.mark.parametrize("body", [
    # a string that is not an enum can be anything: the guard can hold
    "    if label not in ('a', 'b'):\n        raise InvalidInput('no')\n    return {'ok': True}\n",
    # one allowed value is missing from the guard's list
    "    if color not in ('red',):\n        raise InvalidInput('no')\n    return {'ok': True}\n",
    # an optional argument may be missing: None reaches the guard
    "    if size not in ('s', 'm'):\n        raise InvalidInput('no')\n    return {'ok': True}\n",
    # the None default is filled in only after the guard
    "    if size not in ('s', 'm'):\n        raise InvalidInput('no')\n    if size is None:\n        size = 's'\n"
    "    return {'ok': True}\n",
    # the list of allowed values is changed in place
    "    COLORS.append('green')\n    if color not in COLORS:\n        raise InvalidInput('no')\n    return {'ok': True}\n",
    # the parameter is rebound before the guard
    "    color = color.upper()\n    if color not in COLORS:\n        raise InvalidInput('no')\n    return {'ok': True}\n",
    # a guard on something other than the arguments
    "    item = get_or_raise(session, Item, item_id)\n    if item.color not in COLORS:\n        raise InvalidInput('no')\n"
    "    return {'ok': True}\n",
    # a check of a value, not of a type
    "    if not isinstance(label, str) or not label.strip():\n        raise InvalidInput('no')\n    return {'ok': True}\n",
    # a part Python evaluates first may raise or decide: what follows it does not settle the guard
    "    if label.strip() == 'x' and color not in COLORS:\n        raise InvalidInput('no')\n    return {'ok': True}\n",
])
def test_a_raise_a_valid_call_can_reach_is_not_proved(body):
    assert _verdict(body, RAISE) is None


def test_a_guard_changed_but_deciding_the_same_for_every_valid_call_is_proved():
    body = "    if color not in ('red', 'blue', 'green'):\n        raise InvalidInput('no')\n    return {'ok': True}\n"
    assert _verdict(body, "'green' dropped")
    assert _verdict(body, "'blue' dropped") is None
    assert _verdict(body, "not in → in") is None


LOADED = "session.add(item) removed"


@pytest.mark.parametrize("body", [
    "    item = get_or_raise(session, Item, item_id)\n    item.color = color\n    session.add(item)\n    session.flush()\n"
    "    return {'ok': True}\n",
    "    for item in session.exec(select(Item).where(Item.color == color)).all():\n        item.label = label\n"
    "        session.add(item)\n    session.flush()\n    return {'ok': True}\n",
    "    rows = session.exec(select(Item))\n    for item in rows:\n        item.label = label\n        session.add(item)\n"
    "    return {'ok': True}\n",
])
def test_adding_a_row_loaded_from_the_session_is_proved_a_no_op(body):
    assert _verdict(body, LOADED)


@pytest.mark.parametrize("body", [
    # a new row: adding it is the write
    "    item = Item(item_id=item_id, color=color)\n    session.add(item)\n    return {'ok': True}\n",
    # session.get may give None, and adding None raises
    "    item = session.get(Item, item_id)\n    session.add(item)\n    return {'ok': True}\n",
    # deleted, then added back
    "    item = get_or_raise(session, Item, item_id)\n    session.delete(item)\n    session.add(item)\n    return {'ok': True}\n",
    # a select of something that is not one of the db module's classes: not rows
    "    Label = Item.label\n    for item in session.exec(select(Label)):\n        session.add(item)\n    return {'ok': True}\n",
    # the session handed to a helper, which may delete or detach the row
    "    item = get_or_raise(session, Item, item_id)\n    _retire(session, item)\n    session.add(item)\n"
    "    return {'ok': True}\n",
    # bound to a loaded row on one path and a new one on another
    "    item = get_or_raise(session, Item, item_id)\n    if color == 'red':\n        item = Item(item_id='X', color=color)\n"
    "    session.add(item)\n    return {'ok': True}\n",
])
def test_adding_a_row_that_may_be_new_is_not_proved(body):
    assert _verdict(body, LOADED) is None


def test_nothing_is_proved_where_the_code_redefines_a_name_the_proof_relies_on():
    body = "    if color not in COLORS:\n        raise InvalidInput('no')\n    return {'ok': True}\n"
    assert _verdict(body, RAISE)
    for redefinition in ("def isinstance(value, kind):\n    return True\n\n\n",
                         "from db import Item as get_or_raise\n\n\n", "str = int\n\n\n"):
        assert _verdict(body, RAISE, HEADER + redefinition) is None, redefinition


# -- the proofs on the bundled domain, against random valid calls --------------------------------
def _value(param, rng: random.Random, columns: dict[str, list]):
    """Mostly values the sample state has in a column of the parameter's name, so that calls get past NotFound."""
    if param.enum:
        return rng.choice(param.enum + ["other"])
    seen = columns.get(param.name, [])
    if seen and rng.random() < 0.7:
        return rng.choice(seen)
    ids = columns.get("_ids", [])
    return {
        "string": lambda: rng.choice(ids + ["", "x" * 3, "2025-03-04", "2025-03-10T10:00:00", "UNKNOWN-1"]),
        "integer": lambda: rng.choice([-1, 0, 1, 5, 50, 400, True]),
        "number": lambda: rng.choice([-1.5, 0, 1, 99.5, 150000.0, "1"]),
        "boolean": lambda: rng.choice([True, False, 0]),
        "array": lambda: rng.choice([[], [rng.choice(ids or ["x"])], ["a", "b"], [1]]),
        "object": lambda: rng.choice([{}, {"k": "v"}]),
    }[param.type]()


@pytest.mark.slow
def test_every_mutant_proved_equivalent_in_job_seeking_behaves_like_the_code_on_random_valid_calls():
    spec = DomainSpec.model_validate_json((DOMAIN / "spec.json").read_text())
    state = json.loads((DOMAIN / "sample_state.json").read_text())
    columns: dict[str, list] = {}
    for rows in state.values():
        for row in rows:
            for column, value in row.items():
                if value is not None and value not in columns.setdefault(column, []):
                    columns[column].append(value)
    columns["_ids"] = sorted({v for k, vs in columns.items() if k.endswith("_id") for v in vs if isinstance(v, str)})
    rng = random.Random(7)
    proved = 0
    with Sandbox((DOMAIN / "db.py").read_text()) as box:
        for name, code in tool_sources(DOMAIN).items():
            tool = spec.tool(name)
            found = [m for m in mutants(code) if proved_equivalent(tool, code, m)]
            if not found:
                continue
            validator, calls = ArgumentValidator(tool), []
            while len(calls) < 40:
                arguments = {p.name: _value(p, rng, columns) for p in tool.parameters
                             if p.required or rng.random() < 0.6}
                try:
                    calls.append(validator.validate(arguments))  # only calls that reach the tool
                except ArgumentError:
                    continue
            tests = [{"name": f"call_{i}", "kind": "success", "arguments": a, "initial_state": state}
                     for i, a in enumerate(calls)]
            expected = [signature(r) for r in box.run_source(name, code, tests)]
            for mutant in found:
                proved += 1
                got = [signature(r) for r in box.run_source(name, mutant.source, tests)]
                assert got == expected, f"{name}: {mutant.description} differs from the code"
    assert proved >= 40


def test_a_fill_in_for_a_null_the_runtime_never_passes_is_proved_but_the_default_itself_is_not():
    code = (HEADER + "def tag(session, item_id: str, color: str, label: str, weight: int = 7, size: str = None) -> dict:\n"
            "    if weight is None:\n        weight = 7\n    return {'ok': weight}\n")
    changed = {m.line: m for m in mutants(code) if m.description == "7 → 8"}
    default, fill = changed[min(changed)], changed[max(changed)]
    assert proved_equivalent(TOOL, code, fill)  # a missing or null weight becomes the default 7, never None
    assert proved_equivalent(TOOL, code, default) is None
