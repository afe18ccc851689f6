"""Mutation score of job_seeking's procedural tests, per tool and overall: `python -m bench mutation`.

Every verified tool is mutated by verification.mutation's operators and its tests run against
each mutant in two sandboxes. Prints the overall score (and without the survivors proved
equivalent from the code and the schema), the score per operator and per tool,
the rejection cases argument validation refuses first, and the wall time; then the score with
verification.mutation's REVIEWER_OPERATORS added (dropped normalising calls, dropped query
conditions, changed defaults), before the gate's added cases and after them; then the pipeline
gate's score from the domain's report.json, with the argued equivalences left out and with them
counted as survivors.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from verification.mutation import OPERATORS, REVIEWER_OPERATORS, domain_mutation_report

DOMAIN = Path(__file__).resolve().parent.parent / "domains" / "job_seeking"


def main() -> None:
    started = time.perf_counter()
    report = domain_mutation_report(DOMAIN, workers=2, progress=False)
    seconds = time.perf_counter() - started
    print(f"job_seeking: mutation score {report['score']:.3f} ({report['killed']} of {report['mutants']} mutants "
          f"killed, {len(report['tools'])} tools, {seconds:.0f}s with 2 sandboxes); "
          f"{report['unreachable_rejections']} rejection cases never reach their tool")
    if report["score_without_proved"] is not None:
        print(f"  without the {report['proved_equivalent']} survivors proved equivalent (verification.equivalence): "
              f"{report['score_without_proved']:.3f}")
    for op, row in report["by_operator"].items():
        print(f"  {op:17s} {row['killed']:4d}/{row['mutants']:<4d} {row['score']:.3f}")
    for tool, row in sorted(report["tools"].items(), key=lambda kv: (kv[1]["score"] or 0, kv[0])):
        print(f"  {tool:34s} {row['killed']:3d}/{row['mutants']:<3d} {row['score']:.3f}")
    # the operators a reviewer would add, which the gate never saw: before and after the gate's cases
    every = OPERATORS + REVIEWER_OPERATORS
    for label, before in (("before the gate", True), ("after the gate", False)):
        wider = domain_mutation_report(DOMAIN, workers=2, progress=False, operators=every, before_gate=before)
        print(f"with the reviewer's operators too, {label}: {wider['score']:.3f} ({wider['killed']} of "
              f"{wider['mutants']} mutants killed)")
        for op in REVIEWER_OPERATORS:
            row = wider["by_operator"].get(op)
            if row:
                print(f"  {op:17s} {row['killed']:4d}/{row['mutants']:<4d} {row['score']:.3f}")
    gate = json.loads((DOMAIN / "report.json").read_text()).get("mutation", {})
    if "score_counting_argued" in gate:
        print(f"after the gate (report.json): {gate['score']:.3f} without the {gate['equivalent']} equivalent mutants "
              f"({gate['proved_equivalent']} proved, {gate['argued_equivalent']} argued); "
              f"{gate['score_counting_argued']:.3f} counting the argued ones as survivors; "
              f"{gate['refuted_equivalences']} argued equivalences refuted by differential testing")


if __name__ == "__main__":
    main()
