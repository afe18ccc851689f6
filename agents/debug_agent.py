"""Debug agent: failing procedural tests → a fix to the tool code or to the failing cases."""

from __future__ import annotations

import json

from agents.answers import DebugFix
from agents.case_format import TestCase, describe_state, expand
from agents.prompts import DEBUG_SYSTEM
from agents.views import describe_tables, describe_tool
from domains.spec import DomainSpec, State, ToolSchema
from llm import LLM, StepKey


def apply_fix(fix: DebugFix, fixture: State, cases: list[TestCase]) -> tuple[State, list[TestCase]]:
    """The tests after a 'tests' fix: corrected cases replace those of the same name, new ones are added."""
    fixture = fix.fixture or fixture
    by_name = {c.name: c for c in fix.cases or []}
    patched = [by_name.pop(c.name, c) for c in cases] + list(by_name.values())
    return fixture, patched


def propose_fix(llm: LLM, spec: DomainSpec, tool: ToolSchema, code: str, fixture: State,
                cases: list[TestCase], failing: set[str], report: str, attempt: int) -> DebugFix:
    """A fix for the `failing` cases (all of them when the code was refused). Only those are shown
    whole: the passing ones are named, so that a fix knows them without paying for them."""
    tables = describe_tables(spec.db, spec.tables_of(tool.name), classes=True)
    passing = [c.name for c in cases if c.name not in failing]
    prompt = (
        f"Tool schema:\n{describe_tool(tool)}\n\n"
        f"The db module's classes of its tables, a line per column:\n{tables}\n\n"
        f"Code:\n{code}\n\nFixture:\n{describe_state(fixture)}\n\nThe failing cases, one per line:\n"
        + "\n".join(json.dumps(c.model_dump(exclude_defaults=True), ensure_ascii=False)
                    for c in cases if c.name in failing)
        + (f"\n\nThe cases that pass: {', '.join(passing)}" if passing else "")
        + f"\n\nFailures:\n{report}"
    )

    def fits(answer: DebugFix) -> None:
        if answer.fix == "tests":
            expand(*apply_fix(answer, fixture, cases), spec.db)

    return llm.structured(StepKey("debug", tool.name, attempt), DEBUG_SYSTEM, prompt, DebugFix, check=fits,
                          show_type=False)
