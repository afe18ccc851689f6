"""Rule-based state-diff reward: an episode's final DB state against the ground-truth state.

The ground truth is the state the reference solution leaves when run on the same initial
state. Each column has a policy (`RewardSpec`): exempt (ignored), hard (exact, with numbers
compared as numbers and dates as dates) or semantic (descriptive text: equal after
normalisation, otherwise embedding cosine similarity at or above a calibrated threshold).

What is checked is the change, not only the end state:

* rows of the initial state are matched by primary key; every row the ground truth inserts,
  updates or deletes is one required check;
* inserted rows get generated keys, so they are matched by content on their checked columns,
  table by table in foreign-key order; a foreign key that points at an inserted row is
  compared through the final→ground-truth key mapping built so far;
* every change the final state makes that the ground truth does not (an extra insert, a
  changed or deleted row that should be untouched) is one failed check.

reward = passed checks / all checks, and `passed` only when every check passes. Changes are
the only positive checks, so doing nothing on a task that requires changes scores 0; a task
that requires no change scores 1 when nothing changed.

    models.py      RewardSpec (per-column policies) and RewardResult (the checks)
    values.py      values canonicalised for comparison
    similarity.py  embedding similarity of texts and its calibrated threshold
    plan.py        a schema as the comparison reads it; states indexed by primary key
    assignment.py  inserted rows paired across the two states
    diff.py        the comparison: compute_reward
    facts.py       whether a final message states a fact (numbers, dates, names; no judge)
    kinds.py       a task's reward by its kind (change, answer, refusal): task_reward
"""

from verification.reward.diff import compute_reward
from verification.reward.kinds import fact_checks, forbidden_check, is_forbidden, task_reward
from verification.reward.models import CheckItem, FieldCheck, FieldPolicy, RewardResult, RewardSpec, default_reward_spec
from verification.reward.similarity import (
    CALIBRATED_THRESHOLDS,
    Calibration,
    SemanticPair,
    calibrate,
    load_semantic_pairs,
    pair_similarities,
    semantic_threshold,
    text_similarity,
    threshold_accuracy,
)
from verification.reward.values import normalize_text

__all__ = [
    "CALIBRATED_THRESHOLDS", "Calibration", "CheckItem", "FieldCheck", "FieldPolicy", "RewardResult", "RewardSpec",
    "SemanticPair", "calibrate", "compute_reward", "default_reward_spec", "fact_checks", "forbidden_check",
    "is_forbidden", "load_semantic_pairs", "normalize_text",
    "pair_similarities", "semantic_threshold", "task_reward", "text_similarity", "threshold_accuracy",
]
