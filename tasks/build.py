"""The task stage: seed chains from the tool graph grown into verified tasks (ScaleEnv 4.2).

Per task: (1) the model writes the seed chain as a program, run in confinement against the
runtime; (2) it writes the initial state, checked for entity consistency and by executing the
program on it, failures fed back; (3) Faker distractors, each group kept only when the program's
effect is the same with it; (4) K(C1), the gated expansion rounds and the top-up to 20 tools,
every subgraph tool probed on the state; (5) instruction and user profile from the executed
calls, refused when they leak an identifier; (6) reward spec by rules, the model only for
columns the rules leave open; (7) reward 1 after replaying the reference solution and below 1
on the untouched state. What fails is repaired while attempts last, otherwise dropped and counted.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol

import networkx as nx

from domains.db_runtime import DEFAULT_NOW
from domains.spec import DomainSpec, State
from domains.task_model import Expansion, Task, TaskMetadata, ToolCall
from graph.sampler import sample_chain, validate_chain
from llm import LLM, StepKey
from mcp_servers.runtime import Environment, EpisodeError
from tasks import expand
from tasks.execute import ChainRun, run_chain
from tasks.mode import argument_sources, finders, task_mode
from tasks.prompts import (
    SYSTEM,
    ChainProgram,
    Gate,
    InitialState,
    Instruction,
    Policies,
    chain_prompt,
    gate_prompt,
    instruction_prompt,
    policies_prompt,
    state_prompt,
)
from tasks.state import check_state, distractors, lookalikes, merge
from tasks.verify import ReplayFailed, effect, replay, reward
from tasks.vocabulary import Vocabulary
from verification.reward import default_reward_spec

CHAIN_LENGTH = {1: 3, 2: 5, 3: 7}
TAU = 0.5
MAX_ROUNDS = 2
# Free-form string columns: the rules cannot tell a name that must match from a description.
_WORD = re.compile(r"[a-z]+(?:[_ ][a-z]+)*")
_IDENTITY = re.compile(r"(^|_)(name|email|phone|title|currency|code)$")


class Read(Protocol):
    """What a program's run must keep finding when distractors join its state (an answer family's
    facts): `wanted`, what it found without them."""

    wanted: object

    def __call__(self, run: ChainRun) -> object: ...


class Dropped(Exception):
    """A task that could not be verified; `reason` is the counted category."""

    def __init__(self, reason: str, detail: str):
        super().__init__(f"{reason}: {detail}")
        self.reason, self.detail = reason, detail


@dataclass
class Stage:
    """What a task build needs: the domain, its graph, the gateway, the runtime and g(D)."""

    spec: DomainSpec
    graph: nx.DiGraph
    llm: LLM
    env: Environment
    # g(D): tasks.oracle.LLMOracle when a model is configured (its `source` goes to the metadata);
    # None: expand.executed_feasibility
    feasibility: expand.Feasibility | None = None
    attempts: int = 3
    log: Callable[[str], None] = print
    vocabulary: Vocabulary | None = None  # realistic distractor values (tasks.vocabulary), when recorded
    verified: set[str] = field(default_factory=set)

    def ask(self, item: str, attempt: int, prompt: str, schema):
        return self.llm.structured(StepKey("tasks", item, attempt), SYSTEM.format(domain=self.spec.name), prompt, schema)


def internal_ids(spec: DomainSpec, *states: State) -> set[str]:
    """Values a user cannot know: primary keys, and anything in a table's generated-id format. A key
    that is a plain word (a mail folder's `inbox`, `trash`) is a name the user may say."""
    found = set()
    for state in states:
        for table in spec.db.tables:
            pk = table.primary_key.name
            found |= {str(r[pk]) for r in state.get(table.name, []) if r.get(pk) and not _WORD.fullmatch(str(r[pk]))}
    return found


def leaks(spec: DomainSpec, text: str, ids: set[str]) -> list[str]:
    """The identifiers in `text`, each as a whole token (`EM-1` is not in `EM-12` nor a word in a word)."""
    shapes = "|".join(re.escape(t.id_prefix) for t in spec.db.tables)
    found = {i for i in ids if re.search(rf"(?<![\w-]){re.escape(i)}(?![\w-])", text)}
    return sorted(found | set(re.findall(rf"\b(?:{shapes})-\d+\b", text)))


def reward_spec(stage: Stage, item: str, before: State, after: State, calls,
                known: dict[str, str] | None = None) -> tuple[dict, list[str]]:
    """Rules first (default_reward_spec: keys and runtime stamps exempt, text semantic, the rest hard);
    free-form string columns the solution writes are left open by the rules and put to the model,
    unless `known` answers them already (a family asks once for all its instances; a column it
    did not answer is hard)."""
    spec = default_reward_spec(stage.spec.db).model_dump(mode="json")
    written = {(t, c) for t, ch in effect(stage.spec.db, before, after).items()
               for c in {c for cols in ch["updated"].values() for c in cols}
               | {c for row in ch["inserted"] for c, v in json.loads(row).items() if v is not None}}
    open_cols = sorted(f"{t.name}.{c.name}" for t in stage.spec.db.tables for c in t.columns
                       if (t.name, c.name) in written and c.type == "string" and not c.choices
                       and not c.foreign_key and not c.primary_key and not _IDENTITY.search(c.name))
    if open_cols:
        answer = known if known is not None else stage.ask(f"{item}.reward", 0, policies_prompt(open_cols, calls),
                                                           Policies).policies
        for key in open_cols:
            table, column = key.split(".", 1)
            spec["fields"][table][column] = answer.get(key, "hard")
    return spec, open_cols


@dataclass
class Growth:
    """What the expansion made of a chain on a state (ScaleEnv 4.2.2): the subgraph H, the chains
    that joined it, the gate rounds and the auxiliary chains."""

    h: set[str]
    chains: list[list[str]]
    rounds: list[Expansion]
    aux: list[list[str]]
    p: float
    feasibility: float


def grow(stage: Stage, item: str, chain: list[str], initial: State, seed: int, aux_seed: int) -> Growth:
    """K(C1), the gated chain expansion (gate steps `<item>.gate`, oracle `<item>.oracle<n>`), then
    auxiliary chains up to MIN_TOOLS tools."""
    g, env = stage.graph, stage.env
    h = expand.closure(g, chain)
    chains, rounds, aux = [chain], [], []
    p = feasibility = 0.0
    for n in range(MAX_ROUNDS):
        remaining = set(expand.model.tools(g)) - h
        if not remaining:
            break
        oracle_item = f"{item}.oracle{n}"  # the oracle's step keys sit beside the task's own
        feasibility = (stage.feasibility(g, remaining, seed, initial, oracle_item) if stage.feasibility
                       else expand.executed_feasibility(env, g, remaining, seed, initial))
        c = expand.complexity(g, h)
        p = stage.ask(f"{item}.gate", n, gate_prompt(len(remaining), c, feasibility, sorted(h)), Gate).p
        proposal = expand.auxiliary_chain(g, remaining, seed + n)
        joined = p >= TAU and bool(proposal)
        rounds.append(Expansion(remaining_tools=len(remaining), complexity=c, feasibility=feasibility, p=p, tau=TAU,
                                chain=proposal, joined=joined))
        if not joined:
            break
        chains.append(proposal)
        h |= expand.closure(g, proposal)
    for n in range(10):
        remaining = set(expand.model.tools(g)) - h
        if len(h) >= expand.MIN_TOOLS or not remaining:
            break
        extra = expand.auxiliary_chain(g, remaining, aux_seed + n) or sorted(remaining)[:1]
        aux.append(extra)
        h |= expand.closure(g, extra)
    return Growth(h, chains, rounds, aux, p, feasibility)


def with_distractors(stage: Stage, core: State, code: str, target: dict, level: int, seed: int,
                     params: dict | None = None, read: Read | None = None) -> tuple[State, State, ChainRun, list[State], int]:
    """The initial state (core rows and the distractor groups that leave the program's effect
    `target`, and what `read` finds in its run the same), the state the program leaves on it, the
    run, the groups kept and how many were rejected."""
    spec = stage.spec
    groups = distractors(spec.db, core, level, seed, datetime.fromisoformat(DEFAULT_NOW).date(), spec.policy,
                         stage.vocabulary)
    kept, rejected = _orthogonal(stage, core, code, target, groups, params, read)
    if not kept:
        raise Dropped("distractors", "no distractor group leaves the outcome unchanged")
    initial = merge(core, *kept)
    problems = check_state(spec.db, initial)
    if problems:
        raise Dropped("distractors", problems[0])
    error, run, initial, expected = _execute(stage, initial, code, params)
    if error or effect(spec.db, initial, expected) != target or (read and read(run) != read.wanted):
        raise Dropped("distractors", error or "the distractors change the outcome together")
    return initial, expected, run, kept, rejected


def verified_reward(stage: Stage, initial: State, expected: State, calls: list[ToolCall], policies: dict) -> float:
    """Reward 1 after replaying `calls` twice through the runtime and below 1 on the untouched state
    (else Dropped); the reward before."""
    try:
        ground, final = replay(stage.env, initial, calls, times=2)
    except ReplayFailed as failure:
        raise Dropped("replay", str(failure)) from None
    before = reward(stage.spec.db, initial, initial, ground, policies)
    after = reward(stage.spec.db, initial, final, ground, policies)
    if before >= 1.0:
        raise Dropped("satisfied", "the untouched initial state already earns reward 1")
    if after < 1.0:
        raise Dropped("reward", f"replaying the reference solution earns {after:.3f}")
    return before


def tokens_of(llm: LLM, item: str) -> int:
    """Tokens (prompt + completion) of every exchange whose step item starts with `item.`."""
    return sum(e["usage"]["prompt_tokens"] + e["usage"]["completion_tokens"]
               for k, e in llm.transcript.entries.items() if k.startswith(f"tasks/{item}."))


def sources(stage: Stage, item: str, instruction: str, profile, initial: State, run: ChainRun) -> dict:
    """Where each argument of the run comes from (tasks/mode.py); the unfounded ones are logged."""
    choices = {t: {p.name for p in stage.env.tools[t].parameters if p.enum or p.type == "boolean"} for t in stage.env.tools}
    found = argument_sources(instruction, profile, initial, [c.model_dump() for c in run.calls], run.results, choices,
                             finders(stage.env.tools.values(), stage.spec.tool_tables))
    if found["unfounded"]:
        stage.log(f"{item}: arguments neither the request, the tools nor the user give: "
                  f"{', '.join(found['unfounded'])}")
    return found


def task_metadata(stage: Stage, *, seed: int, level: int, seed_chain: list[str], chain: list[str], growth: Growth,
                  probes: dict, core: State, kept: list[State], rejected: int, repairs: list[str], before: float,
                  tokens: int, **extra) -> TaskMetadata:
    g = growth
    return TaskMetadata(
        seed=seed, complexity_level=level, seed_chain=seed_chain, chain=chain, chains=g.chains,
        subgraph_nodes=sorted(g.h), subgraph_edges=expand.edges_within(stage.graph, g.h),
        complexity=expand.complexity(stage.graph, g.h), feasibility=g.feasibility,
        feasibility_source=getattr(stage.feasibility, "source", None) if g.rounds else None,
        p=g.p, expansions=g.rounds, auxiliary_chains=g.aux, probes=probes,
        distractor_rows=sum(len(rows) for grp in kept for rows in grp.values()), distractors_rejected=rejected,
        lookalike_rows=len(lookalikes(stage.spec.db, core, kept)) if stage.vocabulary else None,
        repairs=repairs, reward_before=round(before, 4), tokens=tokens, **extra)


def build_task(stage: Stage, task_id: str, index: int, seed: int) -> Task:
    spec, g, env = stage.spec, stage.graph, stage.env
    level = 1 + index % 3
    seed_chain = sample_chain(g, seed * 1000 + index, max_len=CHAIN_LENGTH[level])
    tools = [env.tools[n] for n in sorted(env.tools)]
    repairs: list[str] = []

    # 1-2: the seed chain as a program, and the initial state it runs on; failures are fed back.
    feedback = ""
    for attempt in range(stage.attempts):
        program = stage.ask(f"{task_id}.chain", attempt, chain_prompt(spec, tools, seed_chain, level, feedback), ChainProgram)
        core = stage.ask(f"{task_id}.state", attempt, state_prompt(spec, program, DEFAULT_NOW, feedback), InitialState).rows
        problems = check_state(spec.db, core)
        if problems:
            feedback = "the initial state is inconsistent:\n" + "\n".join(problems[:12])
        else:
            feedback, run, core, after = _execute(stage, core, program.code)
        if not feedback:
            break
        repairs.append(f"attempt {attempt}: {feedback.splitlines()[0]}")
        stage.log(f"{task_id}: {feedback.splitlines()[0]}")
    else:
        raise Dropped("chain", feedback)
    target = effect(spec.db, core, after)
    if not target:
        raise Dropped("satisfied", "the goal changes nothing: the initial state already satisfies it")

    # 3: distractors, each group kept only if the program's effect stays the same with it.
    initial, expected, run, kept, rejected = with_distractors(stage, core, program.code, target, level,
                                                              seed * 1000 + index)

    # 4: K(C1), gated chain expansion, top-up to MIN_TOOLS, probes.
    growth = grow(stage, task_id, run.tools, initial, seed * 1000 + index, seed * 7919 + index * 31)
    probes = expand.probe(env, growth.h, initial, seed * 1000 + index)

    # 5: instruction and user profile, from the executed calls only; no identifier may leak.
    ids = internal_ids(spec, initial, expected)
    feedback = ""
    for attempt in range(stage.attempts):
        prompt = instruction_prompt(run.calls, run.results, feedback, lookalikes(spec.db, core, kept))
        said = stage.ask(f"{task_id}.instruction", attempt, prompt, Instruction)
        leaked = leaks(spec, said.instruction + json.dumps(said.user_profile), ids)
        if not leaked:
            break
        feedback = f"it names internal identifiers the user cannot know: {', '.join(leaked)}"
        repairs.append(f"instruction attempt {attempt}: {feedback}")
    else:
        raise Dropped("instruction", feedback)

    # 6-7: reward spec, then the reward both ways through the runtime.
    policies, _ = reward_spec(stage, task_id, initial, expected, run.calls)
    before = verified_reward(stage, initial, expected, run.calls, policies)
    metadata = task_metadata(stage, seed=seed, level=level, seed_chain=seed_chain, chain=run.tools, growth=growth,
                             probes=probes, core=core, kept=kept, rejected=rejected, repairs=repairs, before=before,
                             tokens=tokens_of(stage.llm, task_id))
    found = sources(stage, task_id, said.instruction, said.user_profile, initial, run)
    return Task(id=task_id, instruction=said.instruction, user_profile=said.user_profile, initial_state=initial,
                reference_solution=run.calls, reward_spec=policies, mode=task_mode(found), metadata=metadata)


def _execute(stage: Stage, state: State, code: str, params: dict | None = None) -> tuple[str, ChainRun | None, State, State]:
    """Run the program on an episode of `state`: (problem or '', run, state as loaded, final state).

    The state as loaded has every column, defaults filled in: effects are measured from it."""
    try:
        episode = stage.env.create_episode(state=state)
    except EpisodeError as error:
        return f"the initial state does not load: {error}", None, state, {}
    try:
        loaded = episode.state()
        run = run_chain(episode, code, params=params)
        if run.error:
            return f"the program failed after {len(run.calls)} successful calls: {run.error}", run, loaded, {}
        problems = validate_chain(stage.graph, run.tools)
        if problems:
            return "the chain is not sound on the tool graph:\n" + "\n".join(problems), run, loaded, {}
        return "", run, loaded, episode.state()
    finally:
        episode.close()


def _orthogonal(stage: Stage, core: State, code: str, target: dict, groups: list[State],
                params: dict | None = None, read: Read | None = None) -> tuple[list[State], int]:
    """The distractor groups with which the program still has exactly `target` as its effect (and,
    with `read`, finds what it found without them)."""
    def same(extra: list[State]) -> bool:
        state = merge(core, *extra)
        if check_state(stage.spec.db, state):
            return False
        error, run, loaded, after = _execute(stage, state, code, params)
        return not error and effect(stage.spec.db, loaded, after) == target and (not read or read(run) == read.wanted)

    if same(groups):
        return groups, 0
    kept = [grp for grp in groups if same([grp])]
    return kept, len(groups) - len(kept)
