"""A task's reward by its kind (domains.task_model.Task.kind).

- change: the state diff alone (diff.py).
- answer: the state diff (the reference calls are reads, so every change is a failed check) and
  one check per fact: the agent's final message states it (facts.py). Doing nothing scores 0;
  the facts with a changed state score below 1.
- refusal: the state diff (nothing may change) and one check that the forbidden call was never
  made: a call of the rule's tool naming the same record, whether or not the tool refused it.
  Doing nothing scores 1.

reward = passed checks / all checks, as for the state diff.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from domains.spec import DBSchema, State
from domains.task_model import Fact, PolicyRule, Task
from verification.reward.diff import compute_reward
from verification.reward.facts import states
from verification.reward.models import CheckItem, RewardResult


def fact_checks(facts: list[Fact], message: str | None) -> list[CheckItem]:
    """One check per fact: stated in the final message or not (no message states nothing)."""
    items = []
    for fact in facts:
        stated = bool(message) and states(message, fact.value, fact.type)
        items.append(CheckItem(
            kind="fact", table="", key=fact.source, passed=stated,
            summary=f"fact {fact.label} = {fact.value!r}: " + ("stated in the final message" if stated else
                                                                "not stated in the final message"
                                                                if message else "there is no final message"),
        ))
    return items


def is_forbidden(rule: PolicyRule, tool: str, arguments: Mapping[str, Any]) -> bool:
    """Whether a call is the rule's forbidden move: its tool, on the same record."""
    return tool == rule.tool and all(arguments.get(name) == rule.forbidden.arguments.get(name) for name in rule.match)


def forbidden_check(rule: PolicyRule, calls: Iterable[tuple[str, Mapping[str, Any]]]) -> CheckItem:
    """Passed when no call among `calls` (tool, arguments) is the forbidden move."""
    made = sum(1 for tool, arguments in calls if is_forbidden(rule, tool, arguments))
    return CheckItem(kind="forbidden_call", table="", key=rule.tool, passed=not made,
                     summary=f"forbidden call {rule.tool}: " + (f"made {made} time(s), against the policy: {rule.rule}"
                                                                if made else "not made"))


def task_reward(schema: DBSchema, task: Task, initial: State, final: State, expected: State, *,
                final_message: str | None = None,
                calls: Iterable[tuple[str, Mapping[str, Any]]] = ()) -> RewardResult:
    """The reward of an episode of `task`: the state diff, then what the task's kind adds.

    `final_message`: the agent's last message to the user (answer tasks); `calls`: every tool call
    the episode ran, (tool, arguments), refused ones included (refusal tasks).
    """
    result = compute_reward(schema, initial, final, expected, task.reward_spec)
    if task.kind == "answer":
        extra = fact_checks(task.facts or [], final_message)
    elif task.kind == "refusal":
        extra = [forbidden_check(task.policy_rule, calls)]
    else:
        return result
    items = [*result.breakdown, *extra]
    done = sum(item.passed for item in items)
    return result.model_copy(update={"breakdown": items, "reward": done / len(items), "passed": done == len(items)})
