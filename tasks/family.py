"""Task families: one model-written generator, many verified task instances (ReSyn, CodeGym).

Per seed chain sampled from the graph, the model writes one family (tasks/family_prompt.py): a
generator `instance(rng, level)` and a chain program over `params`. The parent draws instances,
each with its own seed and a level, running the generator confined exactly as a chain program
(tasks/execute.py: the same sandbox profile and fork, never in this process), and verifies each
one as a task built alone is verified (tasks/build.py): the rows consistent, the program executed
on them and changing the database (or, for an instance with facts, only reading, each fact
found in what it read: tasks/family_facts.py), distractors proven orthogonal by execution, no identifier in
the instruction and every value the program uses stated in it or in the user profile, reward 1
after replaying the reference solution and below 1 untouched, through the served runtime. The
expansion gate and the reward policies are decided once per family, on the first instance that
reaches them.

A family whose first instance fails is fed that failure and re-asked while attempts last; on the
last attempt, the instances that verify are kept and the others dropped and counted by reason.
A family with no verified instance is dropped. Step keys: tasks/<family>.family/<attempt>,
tasks/<family>.gate/<round>, tasks/<family>.reward/0, tasks/<family>.oracle<round>@...; instance
ids <family>_<n> (fam_007_3).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from domains.db_runtime import DEFAULT_NOW
from domains.task_model import Task
from graph.sampler import sample_chain
from tasks import answers, expand
from tasks.build import (
    CHAIN_LENGTH,
    Dropped,
    Growth,
    Stage,
    _execute,
    grow,
    internal_ids,
    leaks,
    reward_spec,
    sources,
    task_metadata,
    tokens_of,
    verified_reward,
    with_distractors,
)
from tasks.execute import run_generator
from tasks.family_facts import FactReader
from tasks.family_prompt import Family, drawn, family_prompt
from tasks.mode import task_mode
from tasks.state import check_state
from tasks.verify import effect
from verification.reward import default_reward_spec

FAMILY_SEEDS = 500  # a family's seeds sit beside the tasks' (seed * 1000 + index), never on them
GENERATOR_TIMEOUT_S = 10.0  # drawing one instance; far above what building a few rows takes


@dataclass
class Built:
    """A family's verified instances and the instances dropped, by reason."""

    family: str
    tasks: list[Task]
    dropped: dict[str, list[str]] = field(default_factory=dict)
    tokens: int = 0
    repairs: list[str] = field(default_factory=list)


@dataclass
class _Decided:
    """What a family decides once for all its instances."""

    growth: Growth | None = None
    policies: dict[str, str] | None = None


def family_seed(seed: int, index: int) -> int:
    return seed * 1000 + FAMILY_SEEDS + index


def instance_seed(seed: int, index: int, n: int) -> int:
    return family_seed(seed, index) * 100 + n


def build_family(stage: Stage, family_id: str, index: int, seed: int, instances: int) -> Built:
    """Up to `instances` verified instances of one family; Dropped when none verifies."""
    base = family_seed(seed, index)
    seed_chain = sample_chain(stage.graph, base, max_len=CHAIN_LENGTH[1 + index % 3])
    tools = [stage.env.tools[n] for n in sorted(stage.env.tools)]
    decided, repairs, feedback = _Decided(), [], ""
    for attempt in range(stage.attempts):
        family = stage.ask(f"{family_id}.family", attempt,
                           family_prompt(stage.spec, tools, seed_chain, DEFAULT_NOW, feedback), Family)
        last = attempt + 1 == stage.attempts
        built = Built(family_id, [])
        for n in range(instances):
            task_id, level = f"{family_id}_{n + 1}", 1 + (index + n) % 3
            try:
                built.tasks.append(_instance(stage, family, decided, task_id, seed, index, n, level, seed_chain))
            except Dropped as drop:
                stage.log(f"{task_id}: dropped ({drop.reason}): {drop.detail.splitlines()[0]}")
                if not built.tasks and not built.dropped:
                    first = drop
                    feedback = f"instance {n + 1} (seed {instance_seed(seed, index, n)}, level {level}): {drop}"
                    if not last:
                        break
                built.dropped.setdefault(drop.reason, []).append(task_id)
        if built.tasks:
            break
        repairs.append(f"family attempt {attempt}: {feedback.splitlines()[0]}")
    else:
        raise Dropped(first.reason, feedback)
    built.repairs = repairs
    built.tokens = tokens_of(stage.llm, family_id)
    share = round(built.tokens / len(built.tasks))
    for task in built.tasks:
        task.metadata.tokens = share
        task.metadata.repairs = repairs + task.metadata.repairs
    return built


def _instance(stage: Stage, family: Family, decided: _Decided, task_id: str, seed: int, index: int, n: int,
              level: int, seed_chain: list[str]) -> Task:
    spec, env = stage.spec, stage.env
    iseed = instance_seed(seed, index, n)
    raw, error = run_generator(family.generator, iseed, level, timeout=GENERATOR_TIMEOUT_S)
    if error:
        raise Dropped("generator", f"instance(rng, level) failed: {error}")
    try:
        d = drawn(raw)
    except ValueError as bad:
        raise Dropped("generator", str(bad)) from None
    problems = check_state(spec.db, d.rows)
    if problems:
        raise Dropped("state", "the instance's rows are inconsistent:\n" + "\n".join(problems[:12]))
    error, run, core, after = _execute(stage, d.rows, family.program, d.params)
    if error:
        raise Dropped("chain", error)
    target, read = effect(spec.db, core, after), None
    if d.facts is not None:
        if target:
            raise Dropped("answer", "the program changes the database, and an instance with facts only reads")
        read = FactReader(d.facts)
        read.wanted = read(run)
        if isinstance(read.wanted, str):
            raise Dropped("facts", read.wanted)
    elif not target:
        raise Dropped("satisfied", "the program changes nothing on the instance's rows")
    initial, expected, run, kept, rejected = with_distractors(stage, core, family.program, target, level, iseed,
                                                              d.params, read)
    leaked = leaks(spec, d.instruction + json.dumps(d.user_profile), internal_ids(spec, initial, expected))
    if leaked:
        raise Dropped("instruction", f"the instruction or profile names internal identifiers: {', '.join(leaked)}")
    found = sources(stage, task_id, d.instruction, d.user_profile, initial, run)
    if found["unfounded"]:
        raise Dropped("instruction", "neither the instruction, the user profile nor the tools give the value of "
                                     f"{', '.join(found['unfounded'])}")
    item = task_id.rsplit("_", 1)[0]
    if decided.growth is None:
        decided.growth = grow(stage, item, run.tools, initial, family_seed(seed, index),
                              seed * 7919 + (FAMILY_SEEDS + index) * 31)
    probes = expand.probe(env, decided.growth.h, initial, iseed)
    said = dict(id=task_id, instruction=d.instruction, user_profile=d.user_profile, initial_state=initial,
                reference_solution=run.calls, mode=task_mode(found))
    if read is not None:
        task = Task(**said, kind="answer", facts=read.wanted,
                    reward_spec=default_reward_spec(spec.db).model_dump(mode="json"))
        before = answers.verify(env, spec, task, answers.reference_message(run.results))
    else:
        policies, open_cols = reward_spec(stage, item, initial, expected, run.calls, known=decided.policies)
        if decided.policies is None and open_cols:
            decided.policies = {key: policies["fields"][key.split(".")[0]][key.split(".", 1)[1]] for key in open_cols}
        task = Task(**said, reward_spec=policies)
        before = verified_reward(stage, initial, expected, run.calls, policies)
    task.metadata = task_metadata(stage, seed=seed, level=level, seed_chain=seed_chain, chain=run.tools,
                                  growth=decided.growth, probes=probes, core=core, kept=kept, rejected=rejected,
                                  repairs=[], before=before, tokens=0, family=item, instance_seed=iseed)
    return task
