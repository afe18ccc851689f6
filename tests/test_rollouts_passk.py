"""pass^k and pass@k (tau2-bench's convention) on hand-made reward tables."""

from __future__ import annotations

from itertools import combinations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rollouts.passk import curves, pass_at_k, pass_hat_k, task_pass_hat_k

TABLE = {  # task -> trial successes
    "mixed": [True, True, False, True],
    "always": [True, True, True, True],
    "never": [False, False, False, False],
}


def test_pass_hat_k_on_a_hand_made_table():
    # mixed: C(3,k)/C(4,k) = 3/4, 3/6, 1/4, 0; always: 1; never: 0
    assert pass_hat_k(TABLE, 1) == pytest.approx((0.75 + 1 + 0) / 3)
    assert pass_hat_k(TABLE, 2) == pytest.approx((0.5 + 1 + 0) / 3)
    assert pass_hat_k(TABLE, 3) == pytest.approx((0.25 + 1 + 0) / 3)
    assert pass_hat_k(TABLE, 4) == pytest.approx(1 / 3)


def test_pass_at_k_on_a_hand_made_table():
    # mixed: 1 - C(1,k)/C(4,k) = 3/4, then 1
    assert pass_at_k(TABLE, 1) == pytest.approx((0.75 + 1 + 0) / 3)
    assert pass_at_k(TABLE, 2) == pytest.approx(2 / 3)
    assert curves(TABLE)["pass@k"] == pytest.approx({1: 1.75 / 3, 2: 2 / 3, 3: 2 / 3, 4: 2 / 3})


def test_curves_stop_at_the_fewest_trials_and_bad_k_is_refused():
    assert list(curves({"a": [True, False, True], "b": [True, True]})["pass^k"]) == [1, 2]
    with pytest.raises(ValueError):
        pass_hat_k(TABLE, 5)
    with pytest.raises(ValueError):
        task_pass_hat_k(2, 3, 1)


@given(st.lists(st.booleans(), min_size=1, max_size=8), st.data())
def test_pass_hat_k_is_the_share_of_k_subsets_that_all_succeed(trials, data):
    k = data.draw(st.integers(1, len(trials)))
    subsets = list(combinations(trials, k))
    assert pass_hat_k({"t": trials}, k) == pytest.approx(sum(all(s) for s in subsets) / len(subsets))
    assert pass_at_k({"t": trials}, k) == pytest.approx(sum(any(s) for s in subsets) / len(subsets))
