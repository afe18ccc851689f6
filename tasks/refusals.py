"""Refusal tasks without a model: a call the domain's policy forbids becomes a task whose right
outcome is no change and no forbidden call.

`refusal_calls` finds the candidates by execution: on a verified task's state, each served tool
that writes is called on each record the task names (the record's key, and each value of a
parameter the schema enumerates; tools needing other values are left out), and a call is kept when
the tool refuses it with a policy error (PreconditionFailed or Conflict) and the state is as it was.
`policy_rule` names the rule it breaks from the policy the pipeline already holds: a record in a
closed or terminal status (closed_record), a move the status table does not give the tool
(status_table), or else the tool's precondition with that error (precondition).

`refusal_task` verifies the task through the runtime: the reference calls (a lookup of the
record, when the domain has one) replayed twice change nothing and earn 1, as doing nothing does;
an episode that makes the forbidden call earns less.
"""

from __future__ import annotations

import itertools
import re

from domains.policy import StatusMachine, rule_text
from domains.spec import DomainSpec, State
from domains.task_model import PolicyRule, Task, ToolCall
from mcp_servers.runtime import Environment
from tasks import derived, phrasing
from tasks.build import Dropped, internal_ids, leaks
from tasks.verify import ReplayFailed, effect, replay
from verification.reward import default_reward_spec, task_reward

POLICY_ERRORS = ("PreconditionFailed", "Conflict")


def _machine(spec: DomainSpec, table: str, row: dict) -> StatusMachine | None:
    return next((m for m in spec.policy.machines if m.table == table and m.column in row), None)


def _mentions(text: str, value: str) -> bool:
    return bool(re.search(rf"\b{re.escape(value)}\b", text, re.IGNORECASE))


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z_]{4,}", text.lower())}


def policy_rule(spec: DomainSpec, call: ToolCall, error: str, table: str, row: dict,
                match: list[str], message: str = "") -> PolicyRule | None:
    """The rule a refused call breaks, or None when the policy states none for it. Among the tool's
    rules with that error, the one the tool's error `message` points at comes first: a column the
    rule names whose value the message quotes counts most, then the words they share."""
    rules = [r for r in spec.policy.preconditions.get(call.tool, []) if r.error == error]
    said = _words(message)
    quoted = {c for c, v in row.items() if v not in (None, "") and str(v) in message}

    def pointed(rule) -> int:
        return 10 * sum(_mentions(rule.rule, c) for c in quoted) + len(_words(rule.rule) & said)

    rules.sort(key=lambda r: -pointed(r))
    machine = _machine(spec, table, row)
    status = str(row.get(machine.column)) if machine else None
    kind, text = "precondition", None
    if machine and status in {*machine.closed, *machine.terminal}:
        kind = "closed_record"
        rule = next((r for r in rules if _mentions(r.rule, "closed") or _mentions(r.rule, status)), None)
        text = rule_text(rule) if rule else (f"{machine.table}.{machine.column}: {status} is "
                                             f"{'closed' if status in machine.closed else 'terminal'}; "
                                             f"no tool changes a record in it")
    elif machine:
        moves = {move for move, tools in machine.moves().items() if call.tool in tools}
        asked = [v for v in call.arguments.values() if isinstance(v, str) and v in machine.states()]
        wanted = asked or sorted({to for _, to in moves})
        if moves and not any((status, to) in moves for to in wanted):
            kind = "status_table"
            text = (f"{machine.table}.{machine.column}: {call.tool} makes only the moves "
                    + phrasing.listed([f"{a} to {b}" for a, b in sorted(moves)]) + f"; the record is {status}")
    if text is None:
        if not rules:
            return None
        text = rule_text(rules[0])
    return PolicyRule(kind=kind, rule=text, tool=call.tool, error=error, forbidden=call, match=match)


def _calls_on(env: Environment, spec: DomainSpec, table: str, row: dict) -> list[ToolCall]:
    pk = spec.db.table(table).primary_key.name
    out = []
    for name, tool in sorted(env.tools.items()):
        required = [p for p in tool.parameters if p.required]
        if not tool.mutates or pk not in {p.name for p in required}:
            continue
        others = [p for p in required if p.name != pk]
        if any(not p.enum for p in others):
            continue  # a value the policy cannot tell us: left out
        for values in itertools.product(*(p.enum for p in others)):
            if set(values) & {v for v in row.values() if isinstance(v, str)}:
                continue  # asking for what the record already is: nothing to refuse
            out.append(ToolCall(tool=name, arguments={pk: row[pk], **{p.name: v for p, v in zip(others, values)}}))
    return out


def refusal_calls(env: Environment, spec: DomainSpec, task: Task) -> list[tuple[ToolCall, str]]:
    """(call, error) of the calls on the records `task` names that its state's tools refuse by policy."""
    found = []
    with env.create_episode(state=task.initial_state) as episode:
        loaded = episode.state()
        for table, row in derived.records(spec, task):
            for call in _calls_on(env, spec, table, row):
                out = episode.call(call.tool, call.arguments)
                if out.ok or effect(spec.db, loaded, episode.state()):
                    episode.reset()
                    continue
                if out.error_type in POLICY_ERRORS:
                    found.append((call, out.error_type))
    return found


def refusal_task(env: Environment, spec: DomainSpec, task_id: str, state: State, call: ToolCall, *,
                 seed: int = 0, level: int = 1, base=None) -> Task:
    """A refusal task asking for `call` on `state`; Dropped when the tool does not refuse it by
    policy, no rule names the refusal, no record a user can describe is named, or it fails verification."""
    with env.create_episode(state=state) as episode:
        loaded = episode.state()
        out = episode.call(call.tool, call.arguments)
        changed = effect(spec.db, loaded, episode.state())
    if out.ok or changed or out.error_type not in POLICY_ERRORS:
        raise Dropped("refusal", f"{call.tool} does not refuse the call by policy "
                                 f"({'it succeeds' if out.ok else f'{out.error_type}: {out.error}'})")
    named = derived.named_record(spec.db, loaded, call.arguments)
    if named is None:
        raise Dropped("refusal", "the call names no record of the state")
    table, row, match = named
    described = phrasing.describe(spec.db, loaded, table, row)
    rule = policy_rule(spec, call, out.error_type, table, row, match, out.error or "")
    if described is None or rule is None:
        raise Dropped("refusal", "no values a user knows name the record" if described is None
                      else f"the policy states no rule for {call.tool}'s {out.error_type}")
    record, known = described
    extra = {k: v for k, v in call.arguments.items() if k not in match}
    instruction = phrasing.requests(seed, call.tool, record, extra)
    leaked = leaks(spec, instruction, internal_ids(spec, loaded))
    if leaked:
        raise Dropped("refusal", f"the request names internal identifiers: {', '.join(leaked)}")
    pk = spec.db.table(table).primary_key.name
    reference = [ToolCall(tool=tool, arguments={pk: row[pk]}) for tool in derived.lookups(env, spec, table)[:1]]
    profile = {"name": str(next((v for k, v in known.items() if k.endswith("name")), "the user")),
               "known_info": [f"{phrasing.words(k)}: {v}" for k, v in {**known, **extra}.items()]}
    task = Task(id=task_id, instruction=instruction, user_profile=profile, initial_state=state,
                reference_solution=reference, reward_spec=default_reward_spec(spec.db).model_dump(mode="json"),
                mode="single_turn", kind="refusal", policy_rule=rule)
    task.metadata = derived.metadata(base, seed, level, reference, verify(env, spec, task))
    return task


def verify(env: Environment, spec: DomainSpec, task: Task) -> float:
    """No change and no forbidden call earn 1; the forbidden call, made in an episode, less.
    Returns the forbidden call's reward."""
    try:
        ground, final = replay(env, task.initial_state, task.reference_solution, times=2)
    except ReplayFailed as failure:
        raise Dropped("replay", str(failure)) from None
    forbidden = task.policy_rule.forbidden
    with env.create_episode(state=task.initial_state) as episode:
        loaded = episode.state()
        episode.call(forbidden.tool, forbidden.arguments)
        broken = episode.state()
    kept = task_reward(spec.db, task, loaded, final, ground, calls=[(c.tool, c.arguments)
                                                                    for c in task.reference_solution])
    idle = task_reward(spec.db, task, loaded, loaded, ground)
    made = task_reward(spec.db, task, loaded, broken, ground, calls=[(forbidden.tool, forbidden.arguments)])
    if kept.reward < 1.0 or idle.reward < 1.0:
        raise Dropped("reward", f"refusing earns {min(kept.reward, idle.reward):.3f}")
    if made.reward >= 1.0:
        raise Dropped("reward", "making the forbidden call earns reward 1")
    return made.reward
