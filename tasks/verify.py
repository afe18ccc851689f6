"""Execution checks on a task: the effect of a chain, distractor orthogonality, and the reward both ways."""

from __future__ import annotations

import json
from collections import Counter

from domains.spec import DBSchema, State
from domains.task_model import ToolCall
from mcp_servers.runtime import Environment
from verification.reward import RewardSpec, compute_reward


class ReplayFailed(RuntimeError):
    """A reference solution that does not execute on its initial state."""


def replay(env: Environment, state: State, calls: list[ToolCall], times: int = 1) -> list[State]:
    """The state `calls` leave when run in order on an episode of `state`, `times` times over."""
    finals = []
    with env.create_episode(state=state) as episode:
        for _ in range(times):
            episode.reset()
            for step, call in enumerate(calls, 1):
                out = episode.call(call.tool, call.arguments)
                if not out.ok:
                    raise ReplayFailed(f"step {step} ({call.tool}) failed: {out.error_type}: {out.error}")
            finals.append(episode.state())
    return finals


def effect(schema: DBSchema, before: State, after: State, ignore: set[tuple[str, str]] = frozenset()) -> dict:
    """What a run changed, comparable across runs whose generated keys differ.

    Updated and deleted rows are named by primary key; inserted rows are compared by content,
    without their generated key and with references to other inserted rows blanked.
    """
    out: dict = {}
    inserted_keys = {t.name: {r[t.primary_key.name] for r in after.get(t.name, [])} -
                     {r[t.primary_key.name] for r in before.get(t.name, [])} for t in schema.tables}
    for table in schema.tables:
        pk = table.primary_key.name
        old = {r[pk]: r for r in before.get(table.name, [])}
        new = {r[pk]: r for r in after.get(table.name, [])}
        refs = {c.name: c.foreign_key.split(".")[0] for c in table.columns if c.foreign_key}
        updated = {k: {c: new[k][c] for c in new[k] if new[k][c] != old[k].get(c) and (table.name, c) not in ignore}
                   for k in old if k in new and new[k] != old[k]}
        inserted = Counter(json.dumps({c: ("<new>" if c in refs and v in inserted_keys[refs[c]] else v)
                                       for c, v in row.items() if c != pk and (table.name, c) not in ignore},
                                      sort_keys=True)
                           for k, row in new.items() if k not in old)
        changes = {"updated": {k: v for k, v in updated.items() if v}, "deleted": sorted(set(old) - set(new)),
                   "inserted": dict(sorted(inserted.items()))}
        if any(changes.values()):
            out[table.name] = changes
    return out


def reward(schema: DBSchema, initial: State, final: State, expected: State, spec: RewardSpec | dict) -> float:
    return compute_reward(schema, initial, final, expected, spec).reward
