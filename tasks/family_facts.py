"""The facts of a family's answer instances, found in what the program read.

An answer family's generator says what the user asks to hear ({label: value}); its program only
reads. A fact counts only where an executed output of the program holds its value (a field, or a
list's length), so that what the agent must report is what the tools return, not what the
generator believes; its source is that place (`<step>.<tool>: <path>`, as tasks/answers.py writes
it). Distractors must leave every fact where it was (`FactReader` is the orthogonality check's
`read`).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from domains.task_model import Fact
from tasks.answers import fact_type
from tasks.execute import ChainRun


def _places(value: Any, path: str = "") -> Iterator[tuple[str, Any]]:
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _places(item, f"{path}.{key}" if path else str(key))
    elif isinstance(value, list):
        yield f"len({path})", len(value)
        for i, item in enumerate(value):
            yield from _places(item, f"{path}[{i}]")
    elif value is not None and not isinstance(value, bool):
        yield path, value


def _same(given: Any, held: Any) -> bool:
    if isinstance(given, (int, float)) and isinstance(held, (int, float)):
        return float(given) == float(held)
    return isinstance(given, str) and isinstance(held, str) and given.strip().casefold() == held.strip().casefold()


def located(facts: dict[str, Any], run: ChainRun) -> list[Fact] | str:
    """Each fact at the first place an output of `run` holds its value; a problem when one is nowhere."""
    out = []
    for label, value in facts.items():
        place = next(((step, call.tool, path, held) for step, (call, result) in enumerate(zip(run.calls, run.results), 1)
                      for path, held in _places(result) if _same(value, held)), None)
        if place is None:
            return f"the fact {label!r} = {value!r} is in no output of the program's calls"
        step, tool, path, held = place
        out.append(Fact(label=label, value=held, type=fact_type(held), source=f"{step}.{tool}: {path}"))
    return out


@dataclass
class FactReader:
    """The facts a run finds; `wanted`: those found on the instance's own rows."""

    facts: dict[str, Any]
    wanted: object = None

    def __call__(self, run: ChainRun) -> object:
        return located(self.facts, run)
