"""Test agent: one tool schema → procedural tests, a shared fixture and a few cases per request.

Requests go on until the agent says the tool is covered (with success cases, and rejection
cases where the tool can refuse a call itself) or the request budget is spent. A request whose
answer is cut off at the output limit is asked again for half as many cases: the rest come in the
following requests.
"""

from __future__ import annotations

import json

from agents.answers import TestPage
from agents.case_format import TestCase, describe_state, expand, resolve_fixture
from agents.prompts import TESTS_SYSTEM
from agents.views import describe_tables, describe_tool
from domains.policy import prompt_section
from domains.spec import DomainSpec, State, ToolSchema
from llm import LLM, AnswerTruncated, LLMError, StepKey

PER_REQUEST = 32
# A page ends when it grows long, whatever its count: a real model's output limit (4,000 tokens in the
# real-model tests) must not cut it off, and fewer, fuller pages resend the schema and fixture less often.
PAGE_TOKENS = 3500
MAX_REQUESTS = 8


def state_tables(spec: DomainSpec, tool: str) -> list[str]:
    """The tables a state for `tool` fills: those it uses and references, and those the domain's
    invariants tie to them (an application in an offer state has its offer even for a tool that never
    reads offers), so that every test state can keep the invariants."""
    wanted = set(spec.tables_of(tool))
    ties = [i.check for i in spec.policy.invariants if i.check is not None and i.check.kind == "requires_related"]
    grown = True
    while grown:
        grown = False
        for check in ties:
            if check.table in wanted and check.related not in wanted:
                wanted |= set(spec.with_references(check.related))
                grown = True
    return [t.name for t in spec.db.tables if t.name in wanted]


def table_columns(spec: DomainSpec, tool: str) -> str:
    """The tables a state for `tool` fills, a line per column (shorter than their JSON)."""
    return describe_tables(spec.db, state_tables(spec, tool))


def kinds_needed(spec: DomainSpec, tool: ToolSchema) -> set[str]:
    """The kinds of case a tool's tests must hold: success, and rejection only where the tool itself
    can refuse a call (its schema declares an error, or the policy gives it a rule with one). Any other
    refusal is argument validation's, made before the tool runs: no case of the tool can reach it."""
    rules = spec.policy.preconditions.get(tool.name, [])
    return {"success", "rejection"} if tool.raises or any(r.error for r in rules) else {"success"}


def write_tests(llm: LLM, spec: DomainSpec, tool: ToolSchema) -> tuple[State, list[TestCase]]:
    # The test agent sees the contract, not the code: tests written from the code would only
    # confirm what the code already does.
    base = (f"Write procedural tests for the tool `{tool.name}`.\n\nTool schema:\n"
            f"{describe_tool(tool, preconditions=not spec.policy.preconditions.get(tool.name))}\n\n"
            "Tables a state for it needs (a row gives every column; nullable ones without a default may be "
            "left out when null):\n"
            f"{table_columns(spec, tool.name)}")
    policy = prompt_section(spec.policy, tool.name, spec.tool_tables.get(tool.name, []), tool.mutates)
    if policy:  # a domain with a policy: cases for its rules (rejections) and moves along its status table
        base += f"\n\n{policy}"
    needed = kinds_needed(spec, tool)
    if needed == {"success"}:
        base += ("\n\nThe tool declares no error: argument validation refuses every call it could not "
                 "serve before it runs, so its tests are success cases only.")
    fixture: State | None = None
    cases: list[TestCase] = []
    limit = PER_REQUEST
    for request in range(MAX_REQUESTS):
        size = (f"at most {limit} cases in this answer, fewer when they would make it longer than about "
                f"{PAGE_TOKENS} tokens (the rest come in the next answers)")
        if fixture is None:
            ask = f"Write the fixture and the first cases: {size}."
        else:
            written = "\n".join(f"- {c.name} ({c.kind}): {json.dumps(c.arguments, sort_keys=True)}" for c in cases)
            missing = sorted(needed - {c.kind for c in cases})
            ask = (f"The fixture (leave it out of this answer):\n{describe_state(fixture)}\n\nCases written so far:\n"
                   f"{written}\n\nWrite more cases, not repeating these: {size}"
                   + (f"; the tests still need a {' and a '.join(missing)} case." if missing else "."))

        def check(page: TestPage, first: bool = fixture is None, limit: int = limit) -> None:
            if first and page.fixture is None:
                raise ValueError("the first answer must give the fixture")
            if not first and page.fixture is not None:
                raise ValueError("the fixture is already written: give only the new cases")
            if len(page.cases) > limit:
                raise ValueError(f"at most {limit} cases in this answer; the rest come in the next one")
            repeated = sorted({c.name for c in page.cases} & {c.name for c in cases})
            if repeated:
                raise ValueError(f"case names already used: {repeated}")
            expand(page.fixture if first else fixture, page.cases, spec.db)

        try:
            page = llm.structured(StepKey("tests", tool.name, request), TESTS_SYSTEM, f"{base}\n\n{ask}", TestPage,
                                  check=check, split=limit > 1, show_type=False)
        except AnswerTruncated:
            limit //= 2  # the same work in smaller answers, not the same request again
            continue
        if fixture is None:
            fixture = resolve_fixture(page.fixture, spec.db)  # later prompts show its rows whole
        cases += page.cases
        if page.done and needed <= {c.kind for c in cases}:
            return fixture, cases
    raise LLMError(f"tests/{tool.name}: the tests were not complete after {MAX_REQUESTS} requests")
