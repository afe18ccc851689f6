"""Mutation testing: the operators, and verdicts on a small domain whose tests miss a boundary."""

from __future__ import annotations

import ast
import copy
import json

import pytest

from agents.build import assemble_tools
from domains.db_layer import compile_db
from domains.spec import DBSchema, DomainSpec
from tests.support.scripted_domain import ADD_BOOK, DATABASE, MARK_READ, TOOLS, _tests
from verification.mutation import OPERATORS, mutants, mutation_report, summarise

SOURCE = '''STATUSES = ("open", "closed", "archived")


def close(session, item, days: int = 7) -> dict:
    if item.status not in STATUSES:
        raise ValueError("bad status")
    if days < 1 or item.age >= 30:
        item.status = "closed"
    session.add(item)
    return {"ok": True, "days": days}
'''


def test_every_operator_makes_its_mutants_and_each_changes_one_place():
    found = mutants(SOURCE)
    by_operator = {op: [m.description for m in found if m.operator == op] for op in OPERATORS}
    assert by_operator["flip_comparison"] == ["not in → in", "< → >=", ">= → <"]
    assert by_operator["move_boundary"] == ["< → <=", ">= → >"]
    assert sorted(by_operator["change_constant"]) == ["1 → 0", "1 → 2", "30 → 29", "30 → 31", "7 → 6", "7 → 8",
                                                      "True → False"]
    assert len(by_operator["negate_condition"]) == 2
    assert by_operator["remove_raise"] == ["raise ValueError('bad status') removed"]
    assert sorted(by_operator["remove_write"]) == ["item.status = 'closed' removed", "session.add(item) removed"]
    assert sorted(by_operator["drop_value"]) == ["'archived' dropped", "'closed' dropped", "'open' dropped"]
    original = ast.dump(ast.parse(SOURCE))
    for m in found:
        assert ast.dump(ast.parse(m.source)) != original
    assert [m.line for m in found] == sorted(m.line for m in found)
    assert next(m for m in found if m.operator == "remove_raise").line == 6


def _domain(tmp_path, add_book_tests):
    tools = [copy.deepcopy(t) for t in TOOLS if t["name"] in ("add_book", "mark_read")]
    db = {k: v for k, v in DATABASE.items() if k != "tool_tables"}
    spec = DomainSpec(name="reading", description="A reading list.", tools=tools, db=db,
                      tool_tables={t["name"]: ["book"] for t in tools})
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "spec.json").write_text(spec.model_dump_json())
    (tmp_path / "db.py").write_text(compile_db("reading", DBSchema.model_validate(db)))
    (tmp_path / "tools.py").write_text(assemble_tools("reading", {"add_book": ADD_BOOK, "mark_read": MARK_READ}))
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "add_book.json").write_text(json.dumps(add_book_tests))
    (tmp_path / "tests" / "mark_read.json").write_text(json.dumps(_tests()["mark_read"]))
    return tmp_path


def _boundary(report, domain):
    """The mutant that moves `pages < 1` to `pages <= 1`, found by its line in tools.py."""
    lines = (domain / "tools.py").read_text().splitlines()
    line = next(i for i, text in enumerate(lines, 1) if "pages < 1" in text)
    return next(m for m in report.mutants if m.operator == "move_boundary" and m.line == line)


@pytest.fixture
def tests_of_add_book():
    cases = _tests()["add_book"]
    # Never reaches the tool: argument validation refuses a string for an integer first.
    cases.append({"name": "pages_as_text", "kind": "rejection", "arguments": {"title": "A", "author": "X",
                  "pages": "many"}, "expect_error": "InvalidInput"})
    return cases


def test_a_missed_boundary_survives_until_a_case_pins_it(tmp_path, tests_of_add_book):
    domain = _domain(tmp_path / "a", tests_of_add_book)
    report = mutation_report(domain, "add_book")
    assert report.unreachable_rejections == ["pages_as_text"]
    assert report.tests == 3  # the unreachable case does not count as a test of the tool
    survivor = _boundary(report, domain)
    assert survivor.status == "survived" and survivor.description == "< → <="
    assert 0 < report.score < 1 and report.killed + report.survived + sum(
        m.status == "invalid" for m in report.mutants) == len(report.mutants)
    removed = next(m for m in report.mutants if m.operator == "remove_write" and "session.add" in m.description)
    assert removed.status == "killed" and removed.killed_by == "adds"

    one_page = copy.deepcopy(tests_of_add_book[0])
    one_page["name"], one_page["arguments"]["pages"] = "one_page", 1
    one_page["expect_changes"]["book"]["inserted"][0]["pages"] = 1
    domain = _domain(tmp_path / "b", tests_of_add_book + [one_page])
    again = mutation_report(domain, "add_book")
    assert _boundary(again, domain).status == "killed" and _boundary(again, domain).killed_by == "one_page"
    assert again.score > report.score


def test_domain_summary_counts_per_tool_and_operator(tmp_path, tests_of_add_book):
    domain = _domain(tmp_path, tests_of_add_book)
    reports = [mutation_report(domain, t, workers=2) for t in ("add_book", "mark_read")]
    summary = summarise(reports)
    assert set(summary["tools"]) == {"add_book", "mark_read"}
    assert summary["mutants"] == sum(r.killed + r.survived for r in reports)
    assert summary["unreachable_rejections"] == 1
    assert sum(o["mutants"] for o in summary["by_operator"].values()) == summary["mutants"]
    assert summary["tools"]["add_book"]["survivors"]  # named, with where they are


def test_blind_spots_are_unreachable_rejections_and_tables_written_without_bystanders():
    from pathlib import Path

    from domains.spec import ToolTest
    from verification.blind_spots import blind_spots

    domain = Path(__file__).resolve().parent.parent / "domains" / "job_seeking"
    spec = DomainSpec.model_validate_json((domain / "spec.json").read_text())
    app = {"application_id": "APP-0001", "applicant_name": "Ana", "email": "a@example.com", "job_title": "Analyst",
           "company_name": "Orbit", "status": "draft", "created_at": "2025-02-10T10:00:00"}
    note = {"note_id": "NOTE-0001", "application_id": "APP-0001", "note_content": "call back", "note_type": "general",
            "created_at": "2025-02-11T10:00:00"}
    other = {**note, "note_id": "NOTE-0002"}

    def delete(name, notes):
        return ToolTest.model_validate({
            "name": name, "kind": "success", "initial_state": {"job_application": [app], "application_note": notes},
            "arguments": {"application_id": "APP-0001"}, "expect_return": None,
            "expect_changes": {"application_note": {"deleted": ["NOTE-0001"]}}})

    unreachable = ToolTest.model_validate({"name": "bad_type", "kind": "rejection", "initial_state": {},
                                           "arguments": {"application_id": "APP-0001", "note_content": "x",
                                                         "note_type": "not_a_type"},
                                           "expect_error": "InvalidInput"})
    report = blind_spots(spec, {"add_application_note": [unreachable],
                                 "delete_job_application": [delete("only_its_own_rows", [note]),
                                                            delete("with_a_bystander", [note, other])]})
    assert report["unreachable_rejections"] == 1
    assert report["tools"]["add_application_note"]["unreachable_rejections"] == ["bad_type"]
    assert report["tables_written_without_bystanders"] == 0  # the second case has a bystander note
    assert report["success_cases_that_write"] == 2
    blind = blind_spots(spec, {"delete_job_application": [delete("only_its_own_rows", [note])]})
    assert blind["tools"]["delete_job_application"]["tables_written_without_bystanders"] == {
        "application_note": ["only_its_own_rows"]}


def test_a_mutants_tests_stop_at_its_first_failure_with_the_verdicts_a_full_run_gives(tmp_path, tests_of_add_book):
    from verification.mutation import Mutant, reference, run_mutant
    from verification.procedural import tool_sources
    from verification.sandbox import Sandbox

    domain = _domain(tmp_path, tests_of_add_book)
    source = tool_sources(domain)["add_book"]
    tests = [t for t in tests_of_add_book if t["name"] != "pages_as_text"]
    with Sandbox((domain / "db.py").read_text()) as box:
        signatures = reference(box.run_source("add_book", source, tests))
        assert set(signatures) == {t["name"] for t in tests}  # the verified code passes them all
        for mutant in mutants(source):
            full = box.run_source("add_book", mutant.source, tests)
            stop = [signatures[t["name"]] for t in tests]
            short = box.run_source("add_book", mutant.source, tests, stop)
            if isinstance(full, str):
                assert short == full
                continue
            failed = [i for i, v in enumerate(full) if not v["passed"]]
            assert short == (full[:failed[0] + 1] if failed else full)
            alone, fast = Mutant(**mutant.model_dump()), Mutant(**mutant.model_dump())
            run_mutant(box, "add_book", alone, tests)
            run_mutant(box, "add_book", fast, tests, signatures)
            assert (fast.status, fast.killed_by) == (alone.status, alone.killed_by)
        # a worker told to stop at once on a passing test is not believed: every test runs again
        assert box.run_source("add_book", source, tests, ["0" * 64] * len(tests)) == box.run_source(
            "add_book", source, tests)


REVIEWED = '''def find(session, name: str, kind: str = "any", score: float = 0.0) -> dict:
    rows = session.exec(select(Item).where(Item.name == name.strip().lower(), Item.score >= round(score))).all()
    return {"ids": [r.item_id for r in rows], "kind": kind}
'''


def test_the_reviewers_operators_make_their_mutants_only_when_asked():
    from verification.mutation import REVIEWER_OPERATORS
    found = mutants(REVIEWED, operators=REVIEWER_OPERATORS)
    sources = {m.description: m.source for m in found}
    assert sorted(sources) == sorted([".strip() dropped", ".lower() dropped", "round(...) dropped",
                                      "condition `Item.name == name.strip().lower()` dropped",
                                      "condition `Item.score >= round(score)` dropped", "default 'any' → ''"])
    assert "== name.lower()," in sources[".strip() dropped"] and "== name.strip()," in sources[".lower() dropped"]
    assert ".where(Item.score >= round(score))" in sources["condition `Item.name == name.strip().lower()` dropped"]
    assert "Item.score >= score" in sources["round(...) dropped"] and "kind: str=''" in sources["default 'any' → ''"]
    assert not {m.operator for m in mutants(REVIEWED)} & set(REVIEWER_OPERATORS)  # the gate's set is unchanged
