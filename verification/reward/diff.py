"""The comparison itself: the final state's changes against the ground truth's, row by row, into
the scored checks of a RewardResult (the rules are in this package's docstring)."""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from collections.abc import Hashable, Mapping
from typing import Any, get_args

from domains.db_layer import table_order
from domains.spec import DBSchema, State
from verification.reward.assignment import best_pairs
from verification.reward.models import CheckItem, CheckKind, FieldCheck, RewardResult, RewardSpec, default_reward_spec
from verification.reward.plan import IDFREE, PENDING, ColumnPlan, TablePlan, index_rows, preview, table_plans
from verification.reward.similarity import embed_missing, semantic_threshold, vectors
from verification.reward.values import hard_value, normalize_text


class _Check:
    """One column compared on one pair of rows."""

    __slots__ = ("col", "passed", "reason")

    def __init__(self, col: ColumnPlan, passed: bool, reason: str):
        self.col, self.passed, self.reason = col, passed, reason


def _equal_reason(value: Hashable) -> str:
    if isinstance(value, tuple) and value[:1] == ("new",):
        return "references the matching inserted row"
    return "equal"


# A matched (final key, ground-truth key) pair and its column checks; None: equal content.
_Checks = list[_Check] | None
_Pair = tuple[Hashable, Hashable, _Checks]

class _Comparison:
    def __init__(self, schema: DBSchema, initial: State, final: State, expected: State, spec: RewardSpec):
        self.plans = table_plans(schema, spec)
        self.order = table_order(schema)
        self.init = index_rows(initial, "initial", self.plans)
        self.final = index_rows(final, "final", self.plans)
        self.gt = index_rows(expected, "expected", self.plans)
        self._threshold = spec.semantic_threshold
        self.threshold_used: float | None = None
        self.mapping: dict[str, dict[Hashable, Hashable]] = {t: {} for t in self.plans}
        self.resolved: set[str] = set()
        self.new_f = {t: [k for k in self.final[t] if k not in self.init[t]] for t in self.plans}
        self.new_g = {t: [k for k in self.gt[t] if k not in self.init[t]] for t in self.plans}
        self.new_f_set = {t: set(keys) for t, keys in self.new_f.items()}
        self.new_g_set = {t: set(keys) for t, keys in self.new_g.items()}
        self.reborn_f, self.reborn_g = self._recycled_keys()
        for t in self.plans:
            self.new_f[t] += sorted(self.reborn_f[t], key=str)
            self.new_g[t] += sorted(self.reborn_g[t], key=str)
            self.new_f_set[t] |= self.reborn_f[t]
            self.new_g_set[t] |= self.reborn_g[t]
        self.items: list[CheckItem] = []
        self.untouched: dict[str, int] = {t: 0 for t in self.order}

    def _recycled_keys(self) -> tuple[dict[str, set], dict[str, set]]:
        """Initial keys that one side deleted while the other holds a changed row under them.

        Generated keys are max+1, so deleting the newest row and then inserting hands the
        insert the deleted key; inserting first does not. Such a row is a deletion plus an
        insert, whichever order made it.
        """
        reborn_f: dict[str, set] = {t: set() for t in self.plans}
        reborn_g: dict[str, set] = {t: set() for t in self.plans}
        for t, plan in self.plans.items():
            fin, gt = self.final[t], self.gt[t]
            for key, i in self.init[t].items():
                f, g = fin.get(key), gt.get(key)
                if g is None and f is not None and f != i and self._changed(plan, i, f, "final"):
                    reborn_f[t].add(key)
                elif f is None and g is not None and g != i and self._changed(plan, i, g, "expected"):
                    reborn_g[t].add(key)
        return reborn_f, reborn_g

    # -- values ----------------------------------------------------------------------

    @property
    def threshold(self) -> float:
        if self.threshold_used is None:
            self.threshold_used = self._threshold if self._threshold is not None else semantic_threshold()
        return self.threshold_used

    def _value(self, col: ColumnPlan, row: Mapping | None, side: str) -> Hashable:
        """The comparable form of a cell; foreign keys to inserted rows go through the matching."""
        value = None if row is None else row.get(col.name)
        if col.policy == "semantic":
            return normalize_text(value)
        if col.ref is None or value is None:
            return hard_value(col.kind, value)
        if not isinstance(value, Hashable):
            return ("json", json.dumps(value, sort_keys=True))
        if side == "final" and value in self.new_f_set[col.ref]:
            if col.ref not in self.resolved:
                return PENDING
            target = self.mapping[col.ref].get(value)
            return ("new", target) if target is not None else ("unmatched", value)
        if side == "expected" and value in self.new_g_set[col.ref]:
            return ("new", value) if col.ref in self.resolved else PENDING
        return ("key", value)

    def _idfree(self, col: ColumnPlan, row: Mapping, side: str) -> Hashable:
        """Like `_value`, with every reference to an inserted row made anonymous."""
        value = row.get(col.name)
        if col.ref is not None and col.policy != "semantic" and isinstance(value, Hashable):
            new = self.new_f_set if side == "final" else self.new_g_set
            if value in new[col.ref]:
                return IDFREE
        return self._value(col, row, "initial")

    def _semantic(self, col: ColumnPlan, actual: str, expected: str) -> _Check:
        if actual == expected:
            return _Check(col, True, "equal after normalisation")
        if not expected:
            return _Check(col, False, "the ground truth leaves it empty")
        if not actual:
            return _Check(col, False, "missing text")
        a, b = vectors([actual, expected])
        similarity = float(a @ b)
        threshold = self.threshold
        if similarity >= threshold:
            return _Check(col, True, f"similarity {similarity:.3f} >= {threshold:.3f}")
        return _Check(col, False, f"similarity {similarity:.3f} < {threshold:.3f}")

    def _compare(self, plan: TablePlan, f: Mapping, g: Mapping, i: Mapping | None = None) -> list[_Check]:
        checks = []
        for col in plan.checked:
            actual, expected = self._value(col, f, "final"), self._value(col, g, "expected")
            if col.policy == "semantic":
                check = self._semantic(col, actual, expected)
                if check.passed and i is not None and actual != expected:
                    before = self._value(col, i, "initial")
                    if before != expected and actual == before:
                        check = _Check(col, False, "not updated: still the initial text")
                checks.append(check)
            elif actual == expected:
                checks.append(_Check(col, True, _equal_reason(actual)))
            else:
                checks.append(_Check(col, False, self._hard_reason(col, actual)))
        return checks

    @staticmethod
    def _hard_reason(col: ColumnPlan, actual: Hashable) -> str:
        if col.ref is None:
            return "not equal"
        if isinstance(actual, tuple) and actual and actual[0] == "unmatched":
            return "references an inserted row with no ground-truth counterpart"
        return "references a different row"

    def _changed(self, plan: TablePlan, before: Mapping, after: Mapping, side: str) -> list[ColumnPlan]:
        """Checked columns whose value differs (normalised text, no embeddings)."""
        return [c for c in plan.checked
                if self._value(c, before, "initial") != self._value(c, after, side)]

    # -- inserted rows -----------------------------------------------------------------

    def _signatures(self, side: str) -> dict[str, dict[Hashable, str]]:
        """An ID-free fingerprint of each inserted row and the inserted rows that reference it.

        Two inserted rows with equal content but different children are told apart by it, so
        the exact-content fast path never pairs a parent with the wrong subtree.
        """
        rows = self.final if side == "final" else self.gt
        new = self.new_f if side == "final" else self.new_g
        new_set = self.new_f_set if side == "final" else self.new_g_set
        kids: dict[str, dict[Hashable, list]] = defaultdict(lambda: defaultdict(list))
        sigs: dict[str, dict[Hashable, str]] = {}
        done: set[str] = set()
        for table in reversed(self.order):
            plan = self.plans[table]
            table_sigs = {}
            for key in new[table]:
                row = rows[table][key]
                own = tuple(self._idfree(c, row, side) for c in plan.checked)
                below = sorted(kids[table].get(key, ()))
                table_sigs[key] = hashlib.sha1(repr((own, below)).encode()).hexdigest()[:20]
            sigs[table] = table_sigs
            done.add(table)
            for col in plan.checked:
                if col.ref is None or col.ref in done or col.policy == "semantic":
                    continue
                for key in new[table]:
                    value = rows[table][key].get(col.name)
                    if isinstance(value, Hashable) and value in new_set[col.ref]:
                        kids[col.ref][value].append((table, col.name, table_sigs[key]))
        return sigs

    def _match_inserts(self) -> None:
        sig_f, sig_g = self._signatures("final"), self._signatures("expected")
        pairs: dict[str, list[_Pair]] = {}
        pending_cols: dict[str, list[ColumnPlan]] = {}
        for table in self.order:
            plan = self.plans[table]
            pending_cols[table] = [c for c in plan.checked
                                   if c.ref is not None and c.policy != "semantic" and c.ref not in self.resolved]
            pairs[table] = self._match_table(plan, sig_f[table], sig_g[table])
            self.resolved.add(table)
        for table in self.order:
            plan = self.plans[table]
            matched = {f for f, _, _ in pairs[table]}
            for fkey, gkey, checks in pairs[table]:
                if pending_cols[table]:
                    checks = self._verify_pending(plan, pending_cols[table], fkey, gkey, checks)
                self.items.append(self._insert_item(plan, fkey, gkey, checks))
            paired_g = {g for _, g, _ in pairs[table]}
            for gkey in self.new_g[table]:
                if gkey not in paired_g:
                    self.items.append(CheckItem(
                        kind="insert", table=table, key=str(gkey), passed=False,
                        summary=f"insert {table}: no inserted row resembles expected {gkey} "
                                f"{preview(plan, self.gt[table][gkey])}",
                    ))
            for fkey in self.new_f[table]:
                if fkey not in matched:
                    self.items.append(CheckItem(
                        kind="unexpected_insert", table=table, key=str(fkey), final_key=str(fkey), passed=False,
                        summary=f"unexpected insert into {table}: {fkey} {preview(plan, self.final[table][fkey])}",
                    ))

    def _match_table(self, plan: TablePlan, sig_f: dict, sig_g: dict) -> list[_Pair]:
        table = plan.name
        fkeys, gkeys = self.new_f[table], self.new_g[table]
        if not fkeys or not gkeys:
            return []
        frows, grows = self.final[table], self.gt[table]
        fvec = {k: tuple(self._value(c, frows[k], "final") for c in plan.checked) for k in fkeys}
        gvec = {k: tuple(self._value(c, grows[k], "expected") for c in plan.checked) for k in gkeys}

        # Fast path: identical content (and identical inserted subtree) pairs directly.
        buckets: dict[tuple, list[Hashable]] = defaultdict(list)
        for k in sorted(gkeys, key=str, reverse=True):
            buckets[(gvec[k], sig_g[k])].append(k)
        result: list[_Pair] = []
        left_f = []
        for k in sorted(fkeys, key=str):
            bucket = buckets.get((fvec[k], sig_f[k]))
            if bucket:
                gk = bucket.pop()
                self.mapping[table][k] = gk
                result.append((k, gk, None))
            else:
                left_f.append(k)
        left_g = [k for bucket in buckets.values() for k in bucket]
        if not left_f or not left_g:
            return result

        # The rest: score every pair by matching columns and solve the assignment. Rows are
        # ordered by their ID-free content so that renumbering the agent's IDs cannot change it.
        def order_key(vec: tuple, sig: str) -> str:
            return repr((tuple(("unmatched",) if isinstance(v, tuple) and v[:1] == ("unmatched",) else v
                               for v in vec), sig))

        left_f.sort(key=lambda k: (order_key(fvec[k], sig_f[k]), str(k)))
        left_g.sort(key=lambda k: (order_key(gvec[k], sig_g[k]), str(k)))
        pairs = best_pairs([fvec[k] for k in left_f], [gvec[k] for k in left_g], plan.checked, lambda: self.threshold)
        for i, j in pairs:
            fk, gk = left_f[i], left_g[j]
            self.mapping[table][fk] = gk
            checks = []
            for c, col in enumerate(plan.checked):
                actual, expected = fvec[fk][c], gvec[gk][c]
                if col.policy == "semantic":
                    checks.append(self._semantic(col, actual, expected))
                elif actual == expected:
                    checks.append(_Check(col, True, _equal_reason(actual)))
                else:
                    checks.append(_Check(col, False, self._hard_reason(col, actual)))
            result.append((fk, gk, checks))
        return result

    def _verify_pending(self, plan: TablePlan, cols: list[ColumnPlan], fkey, gkey, checks: _Checks) -> _Checks:
        """Re-check references that were matched before their target table was."""
        f, g = self.final[plan.name][fkey], self.gt[plan.name][gkey]
        fixed = {}
        for col in cols:
            actual, expected = self._value(col, f, "final"), self._value(col, g, "expected")
            if actual != expected:
                fixed[col.name] = _Check(col, False, self._hard_reason(col, actual))
        if not fixed:
            return checks
        if checks is None:
            checks = [_Check(c, True, _equal_reason(self._value(c, f, "final"))) for c in plan.checked]
        return [fixed.get(c.col.name, c) for c in checks]

    def _insert_item(self, plan: TablePlan, fkey, gkey, checks: _Checks) -> CheckItem:
        f, g = self.final[plan.name][fkey], self.gt[plan.name][gkey]
        if checks is None:
            fields = [FieldCheck(column=c.name, policy=c.policy, passed=True, expected=g.get(c.name),
                                 actual=f.get(c.name),
                                 reason="equal after normalisation" if c.policy == "semantic"
                                 else _equal_reason(self._value(c, f, "final")))
                      for c in plan.checked]
            passed = True
        else:
            fields = self._field_checks(checks, f, g)
            passed = all(c.passed for c in checks)
        if passed:
            summary = f"insert {plan.name}: final {fkey} matches expected {gkey} on {len(plan.checked)} checked columns"
        else:
            wrong = ", ".join(c.col.name for c in checks if not c.passed)
            summary = f"insert {plan.name}: closest final row {fkey} to expected {gkey} differs on {wrong}"
        return CheckItem(kind="insert", table=plan.name, key=str(gkey), final_key=str(fkey),
                         passed=passed, summary=summary, fields=fields)

    @staticmethod
    def _field_checks(
        checks: list[_Check], f: Mapping | None, g: Mapping | None, only: set[str] | None = None,
    ) -> list[FieldCheck]:
        return [
            FieldCheck(column=c.col.name, policy=c.col.policy, passed=c.passed,
                       expected=None if g is None else g.get(c.col.name),
                       actual=None if f is None else f.get(c.col.name), reason=c.reason)
            for c in checks if only is None or c.col.name in only or not c.passed
        ]

    # -- rows of the initial state ---------------------------------------------------------

    def _compare_existing(self) -> None:
        slow = []
        texts: set[str] = set()
        for table in self.order:
            plan = self.plans[table]
            init, fin, gt = self.init[table], self.final[table], self.gt[table]
            reborn_f, reborn_g = self.reborn_f[table], self.reborn_g[table]
            semantic = [c for c in plan.checked if c.policy == "semantic"]
            for key, i in init.items():
                f = None if key in reborn_f else fin.get(key)
                g = None if key in reborn_g else gt.get(key)
                if f == i and g == i:
                    self.untouched[table] += 1
                    continue
                slow.append((plan, key, i, f, g))
                if f is not None and g is not None:
                    for col in semantic:
                        a, b = normalize_text(f.get(col.name)), normalize_text(g.get(col.name))
                        if a != b and a and b:
                            texts.update((a, b))
        embed_missing(texts)  # every text the rows below compare by similarity, in one batch
        for plan, key, i, f, g in slow:
            self._existing_row(plan, key, i, f, g)

    def _existing_row(self, plan: TablePlan, key, i: Mapping, f: Mapping | None, g: Mapping | None) -> None:
        table = plan.name
        if g is None:
            passed = f is None
            self.items.append(CheckItem(
                kind="delete", table=table, key=str(key), final_key=None if f is None else str(key), passed=passed,
                summary=f"delete {table} {key}: " + ("deleted as expected" if passed else "the row still exists"),
            ))
            return
        gt_changed = self._changed(plan, i, g, "expected")
        if f is None:
            if gt_changed:
                self.items.append(CheckItem(
                    kind="update", table=table, key=str(key), passed=False,
                    summary=f"update {table} {key}: the row was deleted instead of updated",
                ))
            else:
                self.items.append(CheckItem(
                    kind="unexpected_delete", table=table, key=str(key), passed=False,
                    summary=f"unexpected delete of {table} {key}: the row should be untouched",
                ))
            return
        checks = self._compare(plan, f, g, i)
        passed = all(c.passed for c in checks)
        if gt_changed:
            names = {c.name for c in gt_changed}
            if passed:
                summary = f"update {table} {key}: {', '.join(sorted(names))} updated as expected"
            else:
                wrong = ", ".join(c.col.name for c in checks if not c.passed)
                summary = f"update {table} {key}: wrong or missing values in {wrong}"
            self.items.append(CheckItem(
                kind="update", table=table, key=str(key), final_key=str(key), passed=passed, summary=summary,
                fields=self._field_checks(checks, f, g, names),
            ))
        elif passed:
            self.untouched[table] += 1
        else:
            wrong = ", ".join(c.col.name for c in checks if not c.passed)
            self.items.append(CheckItem(
                kind="unexpected_update", table=table, key=str(key), final_key=str(key), passed=False,
                summary=f"unexpected update of {table} {key}: {wrong} changed but should be untouched",
                fields=self._field_checks(checks, f, g, set()),
            ))

    def run(self) -> RewardResult:
        self._match_inserts()
        self._compare_existing()
        kinds = {k: n for n, k in enumerate(get_args(CheckKind))}
        rank = {t: n for n, t in enumerate(self.order)}
        self.items.sort(key=lambda it: (rank[it.table], kinds[it.kind], it.key or ""))
        done = sum(item.passed for item in self.items)
        total = len(self.items)
        return RewardResult(
            reward=done / total if total else 1.0,
            passed=done == total,
            breakdown=self.items,
            untouched=self.untouched,
            semantic_threshold=self.threshold_used,
        )


def compute_reward(
    schema: DBSchema,
    initial: State,
    final: State,
    expected: State,
    spec: RewardSpec | Mapping[str, Any] | None = None,
) -> RewardResult:
    """Score the final state against the expected (ground-truth) state, both reached from `initial`.

    A table missing from a state has no rows. Raises ValueError on unknown tables or columns,
    rows without a primary key, duplicate keys, and a spec naming what the schema lacks.
    """
    if spec is None:
        spec = default_reward_spec(schema)
    elif not isinstance(spec, RewardSpec):
        spec = RewardSpec.model_validate(spec)
    return _Comparison(schema, initial, final, expected, spec).run()
