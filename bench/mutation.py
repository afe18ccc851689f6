"""Mutation score of job_seeking's procedural tests, per tool and overall: `python -m bench mutation`.

Every verified tool is mutated by verification.mutation's operators and its tests run against
each mutant in two sandboxes. Prints the overall score (and without the survivors proved
equivalent from the code and the schema), the score per operator and per tool,
the rejection cases argument validation refuses first, and the wall time.
"""

from __future__ import annotations

import time
from pathlib import Path

from verification.mutation import domain_mutation_report

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


if __name__ == "__main__":
    main()
