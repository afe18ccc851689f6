"""Answer tasks without a model: a verified chain of reads becomes a task whose user asks for
information and whose reward checks the facts in the agent's final message.

`answer_task` runs the chain on an episode of the state, call by call: every call must succeed
and leave the database as it was (a read, proven by execution, not by the tool's declaration).
The facts are values of the executed outputs (one per call, picked by the seed among the
scalars a user could ask for: no identifiers, no runtime stamps, no long text, nothing the
request itself says; a list's length counts as one). The request names the record the chain
reads by the values a person knows (tasks/phrasing.py), never by its key. The task is verified
through the runtime as a change task is: the reference calls replayed twice leave the state
unchanged, a final message holding what they returned earns 1, and no message earns less.

`answer_chains` proposes the chains: for each record a verified task's reference solution names,
the served reads that take that record by its key, one to three of them by level.
"""

from __future__ import annotations

import json
import random
import re
from typing import Any

from domains.spec import DomainSpec, State
from domains.task_model import Fact, Task, ToolCall
from mcp_servers.runtime import Environment
from tasks import derived, phrasing
from tasks.build import Dropped, internal_ids, leaks
from tasks.verify import ReplayFailed, effect, replay
from verification.reward import default_reward_spec, task_reward

_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_DATETIME = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?$")
MAX_TEXT = 60  # longer text is a description, not a fact a user asks to hear back


def fact_type(value: Any) -> str:
    if isinstance(value, (int, float)):
        return "number"
    if _DATETIME.match(value):
        return "datetime"
    return "date" if _DATE.match(value) else "text"


def candidates(output: Any, ids: set[str], path: str = "") -> list[tuple[str, str, Any]]:
    """(label, path, value) of an output's values a user could ask for."""
    found = []
    items = output.items() if isinstance(output, dict) else []
    for key, value in items:
        where = f"{path}.{key}" if path else key
        if isinstance(value, dict):
            found += candidates(value, ids, where)
        elif isinstance(value, list):
            if value and all(isinstance(v, dict) for v in value):
                found.append((f"number of {phrasing.words(key)}", f"len({where})", len(value)))
        elif (value is not None and not isinstance(value, bool) and not key.endswith(("_id", "_at", "id"))
              and str(value) not in ids and len(str(value)) <= MAX_TEXT and str(value).strip()):
            found.append((phrasing.words(key), where, value))
    return found


def reference_message(outputs: list[Any]) -> str:
    """A final message holding what the reads returned, as the reference agent writes it."""
    return "Here is what I found: " + " ".join(json.dumps(o, ensure_ascii=False) for o in outputs)


def _reads(env: Environment, spec: DomainSpec, state: State, calls: list[ToolCall]) -> tuple[State, list[Any]]:
    """The state as loaded and each call's output; Dropped unless every call succeeds and changes nothing."""
    with env.create_episode(state=state) as episode:
        loaded = episode.state()
        outputs = []
        for step, call in enumerate(calls, 1):
            out = episode.call(call.tool, call.arguments)
            if not out.ok:
                raise Dropped("answer", f"step {step} ({call.tool}) failed: {out.error_type}: {out.error}")
            if effect(spec.db, loaded, episode.state()):
                raise Dropped("answer", f"step {step} ({call.tool}) changes the database: not a read")
            outputs.append(out.result)
    return loaded, outputs


def answer_task(env: Environment, spec: DomainSpec, task_id: str, state: State, calls: list[ToolCall], *,
                seed: int = 0, level: int = 1, base=None) -> Task:
    """An answer task over `calls` (reads) on `state`; `base`: the metadata of the verified task whose
    state it reuses. Raises Dropped when the chain is no read, names no record a user can describe,
    gives nothing to ask for, or fails verification."""
    if not calls:
        raise Dropped("answer", "no calls")
    loaded, outputs = _reads(env, spec, state, calls)
    named = next((found for call in calls if (found := derived.named_record(spec.db, loaded, call.arguments))), None)
    if named is None:
        raise Dropped("answer", "the chain names no record of the state")
    table, row, _ = named
    described = phrasing.describe(spec.db, loaded, table, row)
    if described is None:
        raise Dropped("answer", f"no values a user knows tell this {table} row from the others")
    record, known = described
    ids = internal_ids(spec, loaded)
    said = {phrasing.words(str(v)).casefold() for v in known.values()}
    rng = random.Random(seed)
    facts, labels = [], []
    for step, (call, output) in enumerate(zip(calls, outputs), 1):
        chosen = {str(f.value) for f in facts}  # a value already asked for (a count and a list's length) once
        options = [c for c in candidates(output, ids) if phrasing.words(str(c[2])).casefold() not in said
                   and c[0] not in labels and str(c[2]) not in chosen]
        if not options:
            continue
        label, where, value = rng.choice(options)
        labels.append(label)
        facts.append(Fact(label=label, value=value, type=fact_type(value), source=f"{step}.{call.tool}: {where}"))
    if not facts:
        raise Dropped("answer", "the outputs hold nothing a user would ask for")
    instruction = phrasing.asks(seed, record, labels)
    leaked = leaks(spec, instruction, ids)
    if leaked:
        raise Dropped("answer", f"the request names internal identifiers: {', '.join(leaked)}")
    profile = {"name": str(next((v for k, v in known.items() if k.endswith("name")), "the user")),
               "known_info": [f"{phrasing.words(k)}: {v}" for k, v in known.items()],
               "unknown_info": labels}
    task = Task(id=task_id, instruction=instruction, user_profile=profile, initial_state=state,
                reference_solution=calls, reward_spec=default_reward_spec(spec.db).model_dump(mode="json"),
                mode="single_turn", kind="answer", facts=facts)
    before = verify(env, spec, task, reference_message(outputs))
    task.metadata = derived.metadata(base, seed, level, calls, before)
    return task


def verify(env: Environment, spec: DomainSpec, task: Task, message: str) -> float:
    """Replays the reference calls twice through the runtime: the state unchanged, `message` earning
    1 and no message less. Returns the reward without a message."""
    try:
        ground, final = replay(env, task.initial_state, task.reference_solution, times=2)
    except ReplayFailed as failure:
        raise Dropped("replay", str(failure)) from None
    with env.create_episode(state=task.initial_state) as episode:
        loaded = episode.state()
    after = task_reward(spec.db, task, loaded, final, ground, final_message=message)
    before = task_reward(spec.db, task, loaded, loaded, ground, final_message="")
    if after.reward < 1.0:
        raise Dropped("reward", f"the reference answer earns {after.reward:.3f}")
    if before.reward >= 1.0:
        raise Dropped("satisfied", "an episode with no answer already earns reward 1")
    return before.reward


def answer_chains(env: Environment, spec: DomainSpec, task: Task) -> list[list[ToolCall]]:
    """Chains of reads over the records `task` names: 1 to 3 reads of one record, by the task's level."""
    level = task.metadata.complexity_level if task.metadata else 1
    chains = []
    for table, row in derived.records(spec, task):
        pk = spec.db.table(table).primary_key.name
        reads = derived.lookups(env, spec, table)
        if reads:
            chains.append([ToolCall(tool=tool, arguments={pk: row[pk]}) for tool in reads[:level]])
    return chains
