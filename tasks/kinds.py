"""Answer and refusal tasks derived, without a model, from the change tasks a run verified.

Each verified task lends its initial state (task rows and distractors) and the records its
reference solution names: reads of those records become answer tasks (tasks/answers.py), calls
the tools refuse by policy become refusal tasks (tasks/refusals.py). Tasks are taken round-robin
over the verified tasks, so the kinds spread over levels and records; a candidate that does not
verify is dropped and counted under its reason, like a change task.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from domains.spec import DomainSpec
from domains.task_model import Task
from mcp_servers.runtime import Environment
from tasks.answers import answer_chains, answer_task
from tasks.build import Dropped
from tasks.refusals import refusal_calls, refusal_task


def _round_robin(verified: list[Task], candidates: Callable[[Task], list]) -> Iterator:
    """The first candidate of each task, then the second of each, ...; a task's candidates are found
    (by execution) when first needed, so that a run wanting few derived tasks of many verified ones
    stops early."""
    groups = []
    for task in verified:
        groups.append(candidates(task))
        yield from groups[-1][:1]
    for i in range(1, max((len(g) for g in groups), default=0)):
        yield from (g[i] for g in groups if i < len(g))


def derive(env: Environment, spec: DomainSpec, verified: list[Task], answers: int, refusals: int, seed: int,
           dropped: dict[str, list[str]], log: Callable[[str], None]) -> list[Task]:
    """Up to `answers` answer tasks (answer_001, ...) and `refusals` refusal tasks (refusal_001, ...)."""
    out: list[Task] = []
    plans = [
        ("answer", answers, lambda t: [(t, chain) for chain in answer_chains(env, spec, t)],
         lambda tid, t, chain, n: answer_task(env, spec, tid, t.initial_state, chain, seed=seed * 1000 + n,
                                              level=t.metadata.complexity_level, base=t.metadata)),
        ("refusal", refusals, lambda t: [(t, call) for call, _ in refusal_calls(env, spec, t)],
         lambda tid, t, call, n: refusal_task(env, spec, tid, t.initial_state, call, seed=seed * 1000 + n,
                                              level=t.metadata.complexity_level, base=t.metadata)),
    ]
    for kind, wanted, candidates, build in plans:
        if not wanted:
            continue
        made = 0
        for n, (task, candidate) in enumerate(_round_robin(verified, candidates)):
            if made >= wanted:
                break
            task_id = f"{kind}_{made + 1:03d}"
            try:
                built = build(task_id, task, candidate, n)
            except Dropped as drop:
                dropped.setdefault(f"{kind}:{drop.reason}", []).append(f"{task.id}#{n}")
                log(f"{kind} from {task.id}: dropped ({drop.reason}): {drop.detail.splitlines()[0]}")
                continue
            made += 1
            out.append(built)
            log(f"{task_id}: verified from {task.id}, level {built.metadata.complexity_level}: {built.instruction}")
    return out
