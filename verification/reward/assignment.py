"""The inserted rows' matcher: which inserted row of the final state stands for which row the
ground truth inserts, when generated keys cannot say (an assignment problem over column matches)."""

from __future__ import annotations

from collections.abc import Callable, Hashable

import numpy as np
from scipy.optimize import linear_sum_assignment

from verification.reward.plan import ColumnPlan
from verification.reward.similarity import embed_missing, vectors


def best_pairs(f_rows: list[tuple], g_rows: list[tuple], columns: list[ColumnPlan],
               threshold: Callable[[], float]) -> list[tuple[int, int]]:
    """Final rows paired with expected rows, as (index, index): the assignment that fully matches
    the most rows, then matches the most columns. A row is a tuple of comparable values, one per
    column; a semantic column matches at or above `threshold()` (asked only when needed). Pairs
    with no column in common are left out: a missing row and an unexpected one, not a pair."""
    n, m, width = len(f_rows), len(g_rows), len(columns)
    for j, col in enumerate(columns):
        if col.policy == "semantic":
            texts = {row[j] for row in f_rows} | {row[j] for row in g_rows}
            if len(texts) > 1:
                embed_missing(texts)  # one batch for the table; the loop below hits the cache
    score = np.zeros((n, m), dtype=np.int64)
    for j, col in enumerate(columns):
        fv = [row[j] for row in f_rows]
        gv = [row[j] for row in g_rows]
        codes: dict[Hashable, int] = {}
        fc = np.fromiter((codes.setdefault(v, len(codes)) for v in fv), dtype=np.int64, count=n)
        gc = np.fromiter((codes.setdefault(v, len(codes)) for v in gv), dtype=np.int64, count=m)
        equal = fc[:, None] == gc[None, :]
        if col.policy == "semantic" and len(codes) > 1:
            f_text, g_text = np.array([bool(v) for v in fv]), np.array([bool(v) for v in gv])
            if f_text.any() and g_text.any():
                fi, gi = np.flatnonzero(f_text), np.flatnonzero(g_text)
                sims = np.zeros((n, m), dtype=np.float32)
                sims[np.ix_(fi, gi)] = vectors([fv[i] for i in fi]) @ vectors([gv[i] for i in gi]).T
                equal |= (sims >= threshold()) & f_text[:, None] & g_text[None, :]
        score += equal
    # Lexicographic objective: most fully matched rows first, then most matching columns.
    full = score == width
    objective = full * (width * min(n, m) + 1) + score
    rows_i, cols_j = linear_sum_assignment(objective, maximize=True)
    return [(i, j) for i, j in zip(rows_i.tolist(), cols_j.tolist()) if score[i, j] or not width]
