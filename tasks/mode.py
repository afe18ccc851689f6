"""Whether a task can be done from its request alone, or needs the user's answers (a pure check).

Every argument of the reference solution must come from somewhere the agent can reach:
- the instruction says it (its text holds the value);
- it is a choice the tool's schema offers (an enum or a boolean), picked by what the request means;
- the agent can find it with the domain's tools: an output of an earlier call of the reference
  solution whose own arguments are reachable (an id a search or a create returned), or a field
  of an initial-state record that the instruction identifies: another of its values is in the
  instruction and a read tool of the record's table returns the field and takes that value (a
  parameter of the column's name) or takes nothing and shows it (a lister the agent reads it in);
- the user profile holds it: the agent must ask the user, so the task is conversational.
A task with an argument of the last kind is `conversational`; otherwise `single_turn`. Arguments
reachable in none of these ways are reported as unfounded (the instruction leaves them out).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any, Literal

from pydantic import BaseModel

Mode = Literal["single_turn", "conversational"]


def _leaves(value: Any) -> Iterable[Any]:
    if isinstance(value, dict):
        for item in value.values():
            yield from _leaves(item)
    elif isinstance(value, list):
        for item in value:
            yield from _leaves(item)
    elif value is not None:
        yield value


def _forms(value: Any) -> list[str]:
    """How a value may be written in text: as is, and a whole number also with thousands commas."""
    if isinstance(value, bool):
        return [str(value).lower()]
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, int):
        return [str(value), f"{value:,}"]
    return [str(value).lower()]


def _in(value: Any, text: str) -> bool:
    return any(form and form in text for form in _forms(value))


class Finder(BaseModel):
    """What a read tool takes and returns, as far as finding a record goes."""

    tables: set[str]  # the tables it reads
    takes: set[str]  # its parameters
    needs: set[str]  # its required parameters
    returns: set[str]  # the names of its output fields, at any depth


def finders(tools: Iterable[Any], tool_tables: dict[str, list[str]]) -> list[Finder]:
    """The read tools (domains.spec.ToolSchema) as finders; `tool_tables`: tool -> the tables it uses."""
    def names(fields) -> Iterable[str]:
        for f in fields or []:
            yield f.name
            yield from names(f.fields)
    return [Finder(tables=set(tool_tables.get(t.name, [])), takes={p.name for p in t.parameters},
                   needs={p.name for p in t.parameters if p.required}, returns=set(names(t.output)))
            for t in tools if not t.mutates]


def _finds(finder: Finder, table: str, column: str, said: str) -> bool:
    """Whether `finder` returns `column` of `table`'s rows from the value of their column `said`."""
    return (table in finder.tables and column in finder.returns
            and (said in finder.takes and finder.needs <= {said} or not finder.needs and said in finder.returns))


def _identified(value: Any, state: dict, instruction: str, tools: Sequence[Finder]) -> bool:
    """A field of an initial-state record that another of its values, named in the instruction, identifies,
    and that a tool finds by that value."""
    for table, rows in state.items():
        for row in rows if isinstance(rows, list) else []:
            fields = row.items() if isinstance(row, dict) else []
            held = [c for c, f in fields if f == value]
            said = [c for c, f in fields
                    if f != value and isinstance(f, str) and len(f) >= 3 and f.lower() in instruction]
            if any(_finds(t, table, c, s) for t in tools for c in held for s in said):
                return True
    return False


def argument_sources(instruction: str, user_profile: Any, initial_state: dict, calls: list[dict],
                     results: list[Any], choices: dict[str, set[str]],
                     tools: Sequence[Finder] = ()) -> dict[str, list[str]]:
    """Where each argument of `calls` ([{"tool", "arguments"}], with `results` their outputs) comes
    from: {"user": [...], "unfounded": [...]} name the arguments (tool.parameter) that only the
    profile holds, and that nothing holds; the others are reachable without the user.
    `choices`: tool -> its parameters whose values the schema enumerates (enums, booleans); `tools`: the
    domain's read tools (finders()), without which no record of the initial state is found."""
    said = instruction.lower()
    profile = json.dumps(user_profile, ensure_ascii=False).lower() if user_profile else ""
    learned: list[Any] = []  # outputs of earlier calls
    out: dict[str, list[str]] = {"user": [], "unfounded": []}
    for call, result in zip(calls, [*results, *[None] * (len(calls) - len(results))]):
        tool = call["tool"]
        for name, value in (call.get("arguments") or {}).items():
            where = f"{tool}.{name}"
            values = list(_leaves(value))
            if name in choices.get(tool, set()) or all(
                    _in(v, said) or v in learned or _identified(v, initial_state, said, tools) for v in values):
                continue
            out["user" if all(_in(v, said) or v in learned or _in(v, profile) for v in values) else "unfounded"].append(
                where)
        learned.extend(_leaves(result))
    return out


def task_mode(sources: dict[str, list[str]]) -> Mode:
    return "conversational" if sources["user"] else "single_turn"
