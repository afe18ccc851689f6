"""Mutation gate: a verified tool's tests must notice when its code is wrong.

The tool's code is mutated (verification.mutation's AST operators, one change per mutant) and
its tests run against every mutant in the sandbox. Survivors that verification.equivalence proves
equivalent from the code and the schema are recorded as such; the others go back to the test
agent, a few per request: write a case that fails on the change, or argue that the change
is equivalent. A new case joins the tests only if it passes on the real code. An argued
equivalence is first put to differential testing (verification.differential): when a generated
call tells the mutant from the code, the call becomes a killing case expecting the code's own
outcome, with no model request; otherwise the claim is recorded as argued, with its reason, and
the mutant is left out of the score (report.json gives the score with argued mutants counted as
survivors too). Rejection cases that argument validation refuses before the tool runs are
flagged and do not count.
"""

from __future__ import annotations

import ast
import difflib

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agents.case_format import TestCase, describe_state, diff_states, expand, primary_keys, resolve_fixture
from agents.prompts import MUTATION_SYSTEM
from domains.db_runtime import DEFAULT_NOW
from domains.spec import DomainSpec, State, ToolSchema
from llm import LLM, StepKey
from sandbox.guard import parse
from verification.differential import distinguishing_call, generated_calls, reference_outcomes
from verification.equivalence import proved_equivalent
from verification.mutation import Mutant, mutants, reference, run_mutant, unreachable_rejections
from verification.sandbox import Sandbox

PER_REQUEST = 6


class Equivalent(BaseModel):
    model_config = ConfigDict(extra="forbid")
    mutant: int = Field(description="the mutant's number")
    reason: str = Field(description="why no input can tell the change from the code")


class MutantAnswer(BaseModel):
    """Test agent, mutation round: killing cases (against the fixture) and argued equivalences."""

    model_config = ConfigDict(extra="forbid")
    cases: list[TestCase] = []
    equivalent: list[Equivalent] = []


def _diff(original: str, mutant: Mutant) -> str:
    lines = difflib.unified_diff(original.splitlines(), mutant.source.splitlines(), lineterm="", n=0)
    return "\n".join(line for line in lines if line[:1] in "+-" and not line.startswith(("+++", "---")))


def harden(llm: LLM, box: Sandbox, spec: DomainSpec, tool: ToolSchema, code: str, fixture: State,
           cases: list[TestCase], rounds: int = 2, verified: list[dict] | None = None) -> tuple[list[TestCase], dict]:
    """The tool's cases after the gate, and what report.json keeps of it. `verified`: the code's
    verdicts on its cases, when the caller has them (else the cases are run once more)."""
    def runnable(current: list[TestCase]) -> list[dict]:
        tests = [t.model_dump(mode="json") for t in expand(fixture, current, spec.db)]
        skip = set(unreachable_rejections(spec, tool.name, tests))
        return [t for t in tests if t["name"] not in skip]

    found = mutants(code)
    tests = runnable(cases)
    signatures = reference(verified if verified is not None else box.run_source(tool.name, code, tests))
    for mutant in found:
        run_mutant(box, tool.name, mutant, tests, signatures)
    first_score, killed_before = _score(found, {}), sum(m.status == "killed" for m in found)
    # survivors proved equivalent from the code and the schema are not asked about
    proved = {i: why for i, m in enumerate(found, 1)
              if m.status == "survived" and (why := proved_equivalent(tool, code, m))}
    equivalent: dict[int, str] = dict(proved)
    added, refused, refuting = [], [], {}
    differential = _Differential(box, spec, tool, code, fixture, found, runnable(cases))
    normal = ast.unparse(parse(code))
    for round_ in range(rounds):
        open_ = [i for i, m in enumerate(found, 1) if m.status == "survived" and i not in equivalent][:PER_REQUEST]
        if not open_:
            break
        listing = "\n\n".join(f"mutant {i} ({found[i - 1].operator}: {found[i - 1].description}):\n"
                              f"{_diff(normal, found[i - 1])}" for i in open_)
        # The verified code is the reference here, not the schema: a case must pass on the code and
        # fail on the change. Earlier cases are named only, for names not to clash.
        prompt = (f"The tool `{tool.name}`'s code:\n{normal}\n\nFixture:\n{describe_state(fixture)}\n\n"
                  f"Case names used so far: {', '.join(c.name for c in cases)}\n\n"
                  f"These changes to the code pass every case:\n\n{listing}")
        names = {c.name for c in cases}

        def fits(answer: MutantAnswer, names: set[str] = names, asked: list[int] = open_) -> None:
            clash = sorted(names & {c.name for c in answer.cases})
            if clash:
                raise ValueError(f"case names already used: {clash}")
            unknown = sorted({e.mutant for e in answer.equivalent} - set(asked))
            if unknown:
                raise ValueError(f"mutants {unknown} were not asked about (asked: {asked})")
            expand(fixture, answer.cases, spec.db)

        answer = llm.structured(StepKey("mutants", tool.name, round_), MUTATION_SYSTEM, prompt, MutantAnswer,
                                check=fits, show_type=False)
        # the parent decides: a new case counts only if the real code passes it
        results = box.run_source(tool.name, code, [t.model_dump(mode="json")
                                                  for t in expand(fixture, answer.cases, spec.db)])
        if isinstance(results, str):
            raise RuntimeError(f"tool {tool.name} no longer loads in the sandbox: {results}")
        signatures.update(reference(results))
        for case, result in zip(answer.cases, results):
            (added if result["passed"] else refused).append(case.name)
            if result["passed"]:
                cases = cases + [case]
        new = [t for t in runnable(cases) if t["name"] in set(added)]
        for mutant in found:
            if mutant.status == "survived" and new:
                run_mutant(box, tool.name, mutant, new, signatures)
        for claim in answer.equivalent:
            if found[claim.mutant - 1].status != "survived":
                continue  # a case of this answer killed it
            case = differential.refute(claim.mutant, cases)
            if case is None:
                equivalent[claim.mutant] = claim.reason
            else:
                cases = cases + [case]
                refuting[str(claim.mutant)] = case.name
                killing = [t for t in runnable(cases) if t["name"] == case.name]
                for mutant in found:  # it may kill other survivors too
                    if mutant.status == "survived":
                        run_mutant(box, tool.name, mutant, killing)
        if not answer.cases and not answer.equivalent:
            break  # nothing to add: the same question again would get the same answer
    for i in list(equivalent):  # a mutant a case killed after all is not equivalent
        if found[i - 1].status != "survived":
            del equivalent[i]
    record = {
        "mutants": sum(m.status in ("killed", "survived") for m in found),
        "killed": sum(m.status == "killed" for m in found),
        "invalid": sum(m.status == "invalid" for m in found),
        "equivalent": {str(i): f"{found[i - 1].operator}: {found[i - 1].description}: {why}"
                       for i, why in sorted(equivalent.items())},
        # without a model (verification.equivalence); a test that passes a null the runtime would drop may kill one
        "proved_equivalent": sorted(str(i) for i in proved if i in equivalent),
        "survived": [f"{m.operator}: {m.description}" for i, m in enumerate(found, 1)
                     if m.status == "survived" and i not in equivalent],
        "score_before": first_score,  # over every mutant, before the gate and its equivalences
        "killed_before": killed_before,
        "score": _score(found, equivalent),
        # argued equivalences counted as survivors: the score if none of them is believed
        "score_counting_argued": _score(found, {i: why for i, why in equivalent.items() if i in proved}),
        # argued equivalences a generated call refuted: the mutant's number -> the killing case that joined the tests
        "refuted_equivalences": refuting,
        "added_cases": added,
        "refused_cases": refused,  # they failed on the real code
        "unreachable_rejections": unreachable_rejections(
            spec, tool.name, [t.model_dump(mode="json") for t in expand(fixture, cases, spec.db)]),
    }
    return cases, record


class _Differential:
    """Differential testing of argued equivalences for one tool: the generated calls and the
    verified code's outcomes on them are made once, at the first claim."""

    def __init__(self, box: Sandbox, spec: DomainSpec, tool: ToolSchema, code: str, fixture: State,
                 found: list[Mutant], tests: list[dict]):
        self.box, self.spec, self.tool, self.code, self.found, self.tests = box, spec, tool, code, found, tests
        self.fixture = resolve_fixture(fixture, spec.db)
        self.calls: list[dict] | None = None
        self.reference: list[dict] | None = None

    def refute(self, number: int, cases: list[TestCase]) -> TestCase | None:
        """A case that passes on the code and kills mutant `number` (which it marks killed), from
        the first generated call that tells them apart; None when none does."""
        if self.calls is None:
            self.calls = generated_calls(self.tool, self.spec.db, self.tests, self.code)
            self.reference = reference_outcomes(self.box, self.tool.name, self.code, self.calls) or []
        mutant = self.found[number - 1]
        told = distinguishing_call(self.box, self.tool.name, mutant.source, self.calls, self.reference)
        if told is None:
            return None
        call, verdict = told
        names, name = {c.name for c in cases}, f"refutes_mutant_{number}"
        while name in names:
            name += "_"
        fields = {"name": name, "arguments": call["arguments"],
                  "setup": diff_states(self.fixture, call["initial_state"], primary_keys(self.spec.db))}
        if call["now"] != DEFAULT_NOW:
            fields["now"] = call["now"]
        error = verdict.get("error")
        fields.update({"kind": "rejection", "expect_error": error["type"]} if error else
                      {"kind": "success", "expect_return": verdict["returned"], "expect_changes": verdict["changes"]})
        try:
            case = TestCase.model_validate(fields)
            test = expand(self.fixture, [case], self.spec.db)[0].model_dump(mode="json")
        except (ValidationError, ValueError):
            return None
        # the parent's own check, as for a model's case: passes on the code, fails on the mutant
        passed = self.box.run_source(self.tool.name, self.code, [test])
        if isinstance(passed, str) or not passed[0]["passed"]:
            return None
        run_mutant(self.box, self.tool.name, mutant, [test])
        return case if mutant.status == "killed" else None


def _score(found: list[Mutant], equivalent: dict[int, str]) -> float | None:
    counted = [m for i, m in enumerate(found, 1) if m.status in ("killed", "survived") and i not in equivalent]
    return round(sum(m.status == "killed" for m in counted) / len(counted), 4) if counted else None


def summarise(records: dict[str, dict]) -> dict:
    """The domain's mutation score over non-equivalent mutants, and each tool's."""
    killed = sum(r["killed"] for r in records.values())
    counted = sum(r["mutants"] - len(r["equivalent"]) for r in records.values())
    proved = sum(len(r.get("proved_equivalent", [])) for r in records.values())
    counting_argued = sum(r["mutants"] for r in records.values()) - proved  # argued equivalences as survivors
    return {"score": round(killed / counted, 4) if counted else None, "mutants": counted, "killed": killed,
            "equivalent": sum(len(r["equivalent"]) for r in records.values()),
            "proved_equivalent": proved,
            "argued_equivalent": sum(len(r["equivalent"]) for r in records.values()) - proved,
            "score_counting_argued": round(killed / counting_argued, 4) if counting_argued else None,
            "refuted_equivalences": sum(len(r.get("refuted_equivalences", {})) for r in records.values()),
            "tools": dict(sorted(records.items()))}
