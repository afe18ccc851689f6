"""What a domain's procedural tests can catch, read from the tests alone (no sandbox, no LLM).

- Unreachable rejections: rejection cases the server's argument validation refuses before the
  tool could run; they test the validator, not the tool.
- Tables written without bystanders: a table a tool's success cases change, none of them leaving
  a row of it untouched, so no case can notice the call changing rows it should not (a delete
  that takes every application's feedback, an update that hits every row of a status).
"""

from __future__ import annotations

from domains.spec import DomainSpec, ToolTest
from verification.mutation import unreachable_rejections


def _written(test: ToolTest) -> list[str]:
    return sorted(t for t, c in test.expect_changes.items() if c.inserted or c.updated or c.deleted)


def blind_tables(test: ToolTest, primary_keys: dict[str, str]) -> list[str]:
    """The tables a success case changes without leaving a row of them untouched."""
    blind = []
    for table in _written(test):
        change = test.expect_changes[table]
        touched = set(change.updated) | set(change.deleted)
        pk = primary_keys[table]
        if not any(row.get(pk) not in touched for row in test.initial_state.get(table, [])):
            blind.append(table)
    return blind


def blind_spots(spec: DomainSpec, tests: dict[str, list[ToolTest]]) -> dict:
    """report.json's `test_blind_spots`: counts, and the cases per tool behind them."""
    keys = {t.name: t.primary_key.name for t in spec.db.tables}
    unreachable, blind = {}, {}
    for tool, cases in sorted(tests.items()):
        names = unreachable_rejections(spec, tool, [case.model_dump(mode="json") for case in cases])
        if names:
            unreachable[tool] = names
        seen: dict[str, list[str]] = {}  # table -> the cases that change it and leave none of it untouched
        covered = set()  # tables some case changes with a bystander row left in place
        for case in cases:
            if case.kind != "success":
                continue
            without = blind_tables(case, keys)
            for table in without:
                seen.setdefault(table, []).append(case.name)
            covered |= set(_written(case)) - set(without)
        uncovered = {table: names for table, names in sorted(seen.items()) if table not in covered}
        if uncovered:
            blind[tool] = uncovered
    all_cases = [case for cases in tests.values() for case in cases]
    writes = [case for case in all_cases if case.kind == "success" and _written(case)]
    return {
        "cases": len(all_cases),
        "rejection_cases": sum(case.kind == "rejection" for case in all_cases),
        "unreachable_rejections": sum(len(names) for names in unreachable.values()),
        "success_cases_that_write": len(writes),
        "tables_written_without_bystanders": sum(len(tables) for tables in blind.values()),
        "tools": {tool: {"unreachable_rejections": unreachable.get(tool, []),
                         "tables_written_without_bystanders": blind.get(tool, {})}
                  for tool in sorted(set(unreachable) | set(blind))},
    }
