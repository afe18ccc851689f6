"""Policy agent: tool schemas and the database → the domain's policy (one request, `policy/-/0`).

Asked after the database, since status tables and invariants name tables and columns, and
before any code, since the code and test prompts show each tool its rules. The answer's names
are checked inside the re-ask loop (domains.policy.cross_references): a slip is re-asked with
the error. Also here: what the pipeline reports about the policy (report.json's `policy`).
"""

from __future__ import annotations

from collections import Counter

from agents.case_format import apply_changes, primary_keys
from agents.prompts import POLICY_SYSTEM
from agents.views import describe_tables
from domains.db_runtime import CLOCK_READ, CLOCK_SOURCE, DEFAULT_NOW
from domains.policy import Policy, cross_references
from domains.spec import DomainSpec, State, ToolTest
from llm import LLM, StepKey
from verification.invariants import check_invariants, status_moves


def _tool_line(spec: DomainSpec, name: str) -> str:
    tool = spec.tool(name)
    tables = ", ".join(spec.tool_tables.get(name, [])) or "no table"
    line = f"- {name} ({'writes' if tool.mutates else 'reads'} {tables}): {tool.description.strip()}"
    if tool.preconditions:
        line += " | pre: " + "; ".join(p.strip().rstrip(".") for p in tool.preconditions)
    if tool.raises:
        line += " | raises: " + "; ".join(f"{r.error} when {r.when.strip().rstrip('.')}" for r in tool.raises)
    return line


def policy_prompt(spec: DomainSpec) -> str:
    keyword = spec.name.replace("_", " ")
    return (f"Domain: {keyword}. {spec.description.strip()}\n\n"
            "Tools (name, what it writes or reads: description | schema pre-conditions | errors):\n"
            + "\n".join(_tool_line(spec, t.name) for t in spec.tools)
            + "\n\nTables (a line per column):\n" + describe_tables(spec.db, [t.name for t in spec.db.tables])
            + "\n\nState the domain's policy.")


def state_policy(llm: LLM, spec: DomainSpec) -> Policy:
    return llm.structured(StepKey("policy"), POLICY_SYSTEM, policy_prompt(spec), Policy,
                          check=lambda answer: cross_references(answer, spec.tools, spec.db, spec.tool_tables))


def _violated(violations: list, policy: Policy) -> Counter:
    return Counter(f"{v.invariant}: {policy.invariants[v.invariant].statement}" for v in violations)


def policy_report(spec: DomainSpec, tests: dict[str, list[ToolTest]], sample: State,
                  merged: State | None = None) -> dict:
    """report.json's `policy`: its size, and which states break its checkable invariants: the sample
    state (and the merged test states it was made from, before the rows breaking an invariant were
    dropped), the verified tests' initial states, and the states their success cases leave (new
    violations only); how the success cases move status columns against the transition tables."""
    policy, pks = spec.policy, primary_keys(spec.db)
    rules = sum(len(r) for r in policy.preconditions.values())
    sample_violations = check_invariants(policy, spec.db, sample)
    merged = sample if merged is None else merged
    merged_violations = check_invariants(policy, spec.db, merged)
    dropped = {t: sorted({r[pk] for r in rows} - {r[pk] for r in sample.get(t, [])})
               for t, pk in pks.items() if (rows := merged.get(t, []))}
    checked = violating = calls = 0
    initial: Counter = Counter()
    introduced: Counter = Counter()
    introduced_by: dict[str, list[str]] = {}
    moves = outside = unlisted = 0
    outside_examples: dict[str, int] = Counter()
    unlisted_examples: dict[str, int] = Counter()
    for tool, cases in sorted(tests.items()):
        for test in cases:
            before = check_invariants(policy, spec.db, test.initial_state)
            checked += 1
            violating += bool(before)
            initial += _violated(before, policy)
            if test.kind != "success":
                continue
            calls += 1
            after_state = apply_changes(test.initial_state, test.expect_changes, pks)
            new = sorted(set(check_invariants(policy, spec.db, after_state)) - set(before))
            if new:
                introduced += _violated(new, policy)
                introduced_by.setdefault(tool, []).append(test.name)
            for move in status_moves(policy, spec.db, tool, test.initial_state, after_state):
                moves += 1
                what = f"{tool}: {move.table}.{move.column} {move.before or '(new row)'} -> {move.after}"
                if not move.allowed:
                    outside += 1
                    outside_examples[what] += 1
                elif not move.listed:
                    unlisted += 1
                    unlisted_examples[what] += 1
    return {
        "machines": len(policy.machines),
        "transitions": sum(len(m.moves()) for m in policy.machines),
        "preconditions": rules,
        "tools_with_preconditions": sum(1 for r in policy.preconditions.values() if r),
        "invariants": len(policy.invariants),
        "checkable_invariants": sum(1 for i in policy.invariants if i.check is not None),
        "clock": {"source": CLOCK_SOURCE, "read_with": CLOCK_READ, "default": DEFAULT_NOW, "tools": policy.clock.tools},
        "sample_state": {"violations": len(sample_violations),
                         "by_invariant": dict(sorted(_violated(sample_violations, policy).items())),
                         "first": [v.as_dict() for v in sample_violations[:10]],
                         "merged_violations": len(merged_violations),
                         "merged_by_invariant": dict(sorted(_violated(merged_violations, policy).items())),
                         "rows_dropped": {t: keys for t, keys in sorted(dropped.items()) if keys}},
        "test_states": {"checked": checked, "violating": violating, "by_invariant": dict(sorted(initial.items()))},
        "success_calls": {"checked": calls, "leaving_new_violations": sum(len(v) for v in introduced_by.values()),
                          "by_invariant": dict(sorted(introduced.items())),
                          "by_tool": {t: sorted(n) for t, n in sorted(introduced_by.items())}},
        "status_moves": {"checked": moves, "outside_table": outside, "by_a_tool_not_listed": unlisted,
                         "outside_examples": dict(sorted(outside_examples.items())),
                         "unlisted_examples": dict(sorted(unlisted_examples.items()))},
    }
