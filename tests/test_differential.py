"""Argued equivalences checked by differential testing: a model (scripted) calls every surviving
mutant of a tool equivalent; the false claims are refuted by generated calls and become killing
cases, the true ones survive as argued, and the score is given with and without them."""

from __future__ import annotations

import pytest

from agents.case_format import encode, expand
from agents.mutation_agent import harden, summarise
from domains.db_layer import compile_db
from domains.report_page import markdown
from domains.spec import ToolTest
from llm import LLM, ScriptedBackend, Transcript
from tests.support.scripted_domain import ADD_BOOK, _tests, reading_list
from verification.differential import generated_calls
from verification.mutation import mutants
from verification.sandbox import Sandbox

pytestmark = pytest.mark.slow  # mutants and generated calls run in the sandbox

# A second, redundant emptiness check: its `len(title) < 1` can be moved to `< 0` or its raise
# removed without any call noticing (the check above already refuses ""), but `<= 1` or `< 2`
# refuse a one-letter title, and without the first raise a blank title " " gets through.
CODE = ADD_BOOK.replace("    if pages is not None",
                        '    if len(title) < 1:\n        raise InvalidInput("empty")\n    if pages is not None')
TRUE = {(7, "1 → 0"), (8, "raise InvalidInput('empty') removed")}  # (line, description)


@pytest.fixture(scope="module")
def hardened(tmp_path_factory):
    spec = reading_list()
    tool = spec.tool("add_book")
    fixture, cases = encode([ToolTest.model_validate(t) for t in _tests()["add_book"]], spec.db)
    numbered = list(enumerate(mutants(CODE), 1))
    # every mutant the cases leave alive is claimed equivalent; the first six are asked about at once
    survivors = [i for i, m in numbered if (m.line, m.description) in TRUE | {
        (7, "1 → 2"), (7, "< → <="), (9, "1 → 2"), (9, "< → <="), (6, "raise InvalidInput('title must not be empty') removed")}]
    claims = [{"mutant": i, "reason": "no valid call can tell"} for i in survivors]
    answers = {"mutants/add_book/0": {"equivalent": claims[:6]}, "mutants/add_book/1": {"equivalent": claims[6:]}}
    llm = LLM(ScriptedBackend(answers), Transcript(tmp_path_factory.mktemp("gate") / "transcript.jsonl"))
    with Sandbox(compile_db("reading_list", spec.db)) as box:
        after, record = harden(llm, box, spec, tool, CODE, fixture, cases, rounds=2)
        new = [c for c in after if c.name in record["refuted_equivalences"].values()]
        tests = [t.model_dump(mode="json") for t in expand(fixture, new, spec.db)]
        on_code = box.run_source("add_book", CODE, tests)
        by_number = dict(numbered)
        on_mutant = {number: box.run_source("add_book", by_number[int(number)].source,
                                            [t for t in tests if t["name"] == name])
                     for number, name in record["refuted_equivalences"].items()}
    return dict(numbered), record, on_code, on_mutant, survivors


def test_a_false_equivalence_claim_becomes_a_killing_case(hardened):
    numbered, record, on_code, on_mutant, _ = hardened
    refuted = {(numbered[int(n)].line, numbered[int(n)].description) for n in record["refuted_equivalences"]}
    assert refuted and not refuted & TRUE
    assert all(v["passed"] for v in on_code)  # the expected outcome is the verified code's
    assert all(not verdicts[0]["passed"] for verdicts in on_mutant.values())  # and the mutant fails it
    assert record["added_cases"] == []  # the model wrote no case: each came from a generated call
    argued = {(numbered[int(n)].line, numbered[int(n)].description) for n in record["equivalent"]}
    assert argued == TRUE  # every false claim was refuted, by its own case or by another's


def test_a_true_equivalence_claim_survives_as_argued(hardened):
    _, record, _, _, survivors = hardened
    assert len(record["equivalent"]) == 2 and record["proved_equivalent"] == []
    assert record["survived"] == []
    assert record["score"] == 1.0  # argued equivalences left out
    counted = record["mutants"]
    assert record["score_counting_argued"] == round(record["killed"] / counted, 4) < 1.0
    assert record["killed"] == counted - 2 and len(survivors) == 7


def test_the_report_gives_the_score_with_and_without_argued_equivalences(hardened):
    _, record, _, _, _ = hardened
    summary = summarise({"add_book": record})
    assert summary["argued_equivalent"] == 2 and summary["refuted_equivalences"] == len(record["refuted_equivalences"])
    assert summary["score"] == 1.0 and summary["score_counting_argued"] < 1.0
    spec = reading_list()
    report = {"tools": {"proposed": ["add_book"], "verified": ["add_book"], "dropped": []}, "mutation": summary}
    page = markdown(spec, report, {"add_book": 3}, None)
    assert f"{summary['score_counting_argued']:.3f} counting the 2 argued equivalences as survivors" in page
    assert f"{len(record['refuted_equivalences'])} argued equivalences refuted by differential testing" in page


def test_generated_calls_are_the_same_on_every_run_and_pass_argument_validation():
    spec = reading_list()
    tests = [t.model_dump(mode="json") for t in expand(*encode(
        [ToolTest.model_validate(t) for t in _tests()["add_book"]], spec.db), spec.db)]
    first = generated_calls(spec.tool("add_book"), spec.db, tests, CODE)
    assert first == generated_calls(spec.tool("add_book"), spec.db, tests, CODE)
    assert all(set(c["arguments"]) >= {"title", "author"} for c in first)
    assert any(c["initial_state"] != tests[0]["initial_state"] for c in first)  # variants of the states too
