"""pass^k and pass@k from per-task trial outcomes (pure functions).

Convention (tau2-bench's): a task with c successful trials out of n contributes
pass^k = C(c, k) / C(n, k), the probability that k trials drawn without replacement from its n
all succeed; pass@k = 1 - C(n - c, k) / C(n, k), the probability that at least one of them does.
Both are averaged over tasks. A trial succeeds when its reward is full (1.0, the reward's
`passed`); partial credit counts as failure.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from math import comb

CONVENTION = ("pass^k = mean over tasks of C(c, k) / C(n, k) and pass@k = mean over tasks of "
              "1 - C(n - c, k) / C(n, k), with n trials and c full-reward successes per task "
              "(tau2-bench's convention; k <= n)")


def task_pass_hat_k(n: int, c: int, k: int) -> float:
    """One task's pass^k: all of k trials out of its n succeed."""
    _check(n, c, k)
    return comb(c, k) / comb(n, k)


def task_pass_at_k(n: int, c: int, k: int) -> float:
    """One task's pass@k: at least one of k trials out of its n succeeds."""
    _check(n, c, k)
    return 1.0 - comb(n - c, k) / comb(n, k)


def _check(n: int, c: int, k: int) -> None:
    if not 0 <= c <= n:
        raise ValueError(f"successes c={c} must lie between 0 and the trials n={n}")
    if not 1 <= k <= n:
        raise ValueError(f"k={k} must lie between 1 and the trials n={n}")


def pass_hat_k(successes: Mapping[str, Sequence[bool]], k: int) -> float:
    """pass^k averaged over tasks; every task needs at least k trials."""
    return _mean(task_pass_hat_k(len(s), sum(s), k) for s in successes.values())


def pass_at_k(successes: Mapping[str, Sequence[bool]], k: int) -> float:
    """pass@k averaged over tasks; every task needs at least k trials."""
    return _mean(task_pass_at_k(len(s), sum(s), k) for s in successes.values())


def curves(successes: Mapping[str, Sequence[bool]]) -> dict[str, dict[int, float]]:
    """pass^k and pass@k for k = 1 … the fewest trials any task has."""
    if not successes:
        return {"pass^k": {}, "pass@k": {}}
    most = min(len(s) for s in successes.values())
    ks = range(1, most + 1)
    return {"pass^k": {k: pass_hat_k(successes, k) for k in ks}, "pass@k": {k: pass_at_k(successes, k) for k in ks}}


def _mean(values) -> float:
    values = list(values)
    if not values:
        raise ValueError("no tasks")
    return sum(values) / len(values)
