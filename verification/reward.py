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
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import statistics
from collections import defaultdict
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass
from datetime import date, datetime, timezone
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal, get_args

import numpy as np
from pydantic import BaseModel, ConfigDict, Field
from scipy.optimize import linear_sum_assignment

from domains.db_layer import table_order
from domains.spec import Column, DBSchema, State
from llm import embeddings

FieldPolicy = Literal["exempt", "hard", "semantic"]
PairLabel = Literal["paraphrase", "unrelated", "related", "junk", "contradiction"]

SEMANTIC_PAIRS = Path(__file__).with_name("semantic_pairs.json")

# Calibrated on semantic_pairs.json (`calibrate()`), texts normalised as in `normalize_text`.
# all-MiniLM-L6-v2, cosine similarity (min / median / max), share accepted at 0.655:
#   paraphrase     (32 pairs)  0.288 / 0.776 / 0.946   78%
#   unrelated      (13 pairs)  0.038 / 0.103 / 0.226    0%
#   related        (10 pairs)  0.309 / 0.503 / 0.616    0%   same topic, different content
#   junk           (18 pairs)  0.000 / 0.111 / 0.648    0%   placeholders, bare keywords
#   contradiction  ( 5 pairs)  0.271 / 0.904 / 0.985   80%   not used for calibration
# The classes overlap between 0.29 and 0.65: terse paraphrases sharing no words score below
# keyword lists and same-topic notes. The most accurate threshold is 0.655 (0.904 on the 73
# calibration pairs; 0.877 at 0.6, 0.808 at 0.5); ties would go to the stricter value,
# because a false accept rewards a wrong answer while a false reject only withholds credit
# from wording far from the reference. Contradictions pass: polarity belongs in hard fields.
CALIBRATED_THRESHOLDS: dict[str, float] = {"all-MiniLM-L6-v2": 0.655}

# `*_at` datetime columns are runtime stamps (created_at, submitted_at) except these, which
# hold a time the task asks for and so are checked.
_PLANNED_TIME_PREFIXES = frozenset({
    "scheduled", "start", "starts", "end", "ends", "due", "expire", "expires", "remind",
    "deliver", "delivery", "depart", "departs", "departure", "arrive", "arrives", "arrival",
    "pickup", "dropoff", "appointment", "publish", "send", "check_in", "check_out", "event",
})
_STAMP_NAMES = frozenset({"timestamp", "last_modified", "last_updated"})


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class RewardSpec(_Model):
    """Per-table, per-column matching policies; columns not listed take the schema default."""

    fields: dict[str, dict[str, FieldPolicy]] = {}
    semantic_threshold: float | None = Field(
        None, ge=-1.0, le=1.0,
        description="cosine similarity a semantic field needs; None: the value calibrated for the embedding model",
    )


def _is_runtime_stamp(column: Column) -> bool:
    if column.type != "datetime":
        return False
    if column.name in _STAMP_NAMES:
        return True
    return column.name.endswith("_at") and column.name[:-3] not in _PLANNED_TIME_PREFIXES


def default_reward_spec(schema: DBSchema) -> RewardSpec:
    """Primary keys and runtime timestamps exempt, `text` columns semantic, everything else hard."""
    fields: dict[str, dict[str, FieldPolicy]] = {}
    for table in schema.tables:
        policies: dict[str, FieldPolicy] = {}
        for column in table.columns:
            if column.primary_key or _is_runtime_stamp(column):
                policies[column.name] = "exempt"
            elif column.type == "text":
                policies[column.name] = "semantic"
            else:
                policies[column.name] = "hard"
        fields[table.name] = policies
    return RewardSpec(fields=fields)


# ---------------------------------------------------------------------------------------
# Results


class FieldCheck(_Model):
    column: str
    policy: FieldPolicy
    passed: bool
    expected: Any = None
    actual: Any = None
    reason: str


CheckKind = Literal[
    "insert", "update", "delete", "unexpected_insert", "unexpected_update", "unexpected_delete",
]


class CheckItem(_Model):
    """One scored check: a ground-truth change, or a change the ground truth does not make."""

    kind: CheckKind
    table: str
    key: str | None = Field(description="the ground-truth row's key (the final row's for unexpected inserts)")
    final_key: str | None = None
    passed: bool
    summary: str
    fields: list[FieldCheck] = []


class RewardResult(_Model):
    reward: float
    passed: bool
    breakdown: list[CheckItem]
    untouched: dict[str, int] = Field(description="per table, rows that stayed unchanged as required")
    semantic_threshold: float | None = Field(None, description="the threshold used, when any text needed embeddings")

    def explain(self, limit: int = 40) -> str:
        """The verdict, failed checks first, then passed ones, at most `limit` checks."""
        done = sum(item.passed for item in self.breakdown)
        verdict = "PASS" if self.passed else "FAIL"
        lines = [f"reward {self.reward:.3f} ({done} of {len(self.breakdown)} checks passed): {verdict}"]
        ordered = sorted(self.breakdown, key=lambda item: item.passed)
        for item in ordered[:limit]:
            lines.append(f"  [{'ok' if item.passed else 'FAIL'}] {item.summary}")
            for check in item.fields:
                if item.kind == "insert" and check.passed and not check.reason.startswith("similarity"):
                    continue  # the summary says the rest matched
                mark = "ok" if check.passed else "FAIL"
                lines.append(
                    f"      {mark} {check.column} [{check.policy}]: expected {check.expected!r}, "
                    f"got {check.actual!r} ({check.reason})"
                )
        if len(ordered) > limit:
            lines.append(f"  ... {len(ordered) - limit} more checks")
        kept = [f"{table} {count}" for table, count in self.untouched.items() if count]
        if kept:
            lines.append("rows unchanged as required: " + ", ".join(kept))
        if self.semantic_threshold is not None:
            lines.append(f"semantic threshold: {self.semantic_threshold:.3f}")
        return "\n".join(lines)


# ---------------------------------------------------------------------------------------
# Value canonicalisation

_APOSTROPHES = re.compile(r"['\u2018\u2019`]")
_PUNCTUATION = re.compile(r"[^\w\s]|_")


@lru_cache(maxsize=65536)
def _normalize_str(text: str) -> str:
    text = _PUNCTUATION.sub(" ", _APOSTROPHES.sub("", text.casefold()))
    return " ".join(text.split())


def normalize_text(value: Any) -> str:
    """Casefolded, punctuation stripped, whitespace collapsed; None is the empty text."""
    if value is None:
        return ""
    if not isinstance(value, str):
        value = json.dumps(value, sort_keys=True) if isinstance(value, (list, dict)) else str(value)
    return _normalize_str(value)


def _as_number(value: Any) -> int | float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        number = value
    elif isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            return None
    else:
        return None
    if not math.isfinite(number):
        return None
    # 12 significant digits absorb float arithmetic noise (0.1 + 0.2) and keep business precision.
    number = float(f"{number:.12g}")
    return int(number) if number.is_integer() and abs(number) < 2**53 else number


def _as_date(value: Any) -> str | None:
    if isinstance(value, datetime):
        return value.date().isoformat()
    if isinstance(value, date):
        return value.isoformat()
    if not isinstance(value, str):
        return None
    text = value.strip()
    try:
        return date.fromisoformat(text).isoformat()
    except ValueError:
        pass
    try:
        return datetime.fromisoformat(text).date().isoformat()
    except ValueError:
        return None


def _as_datetime(value: Any) -> str | None:
    if isinstance(value, datetime):
        moment = value
    elif isinstance(value, date):
        moment = datetime(value.year, value.month, value.day)
    elif isinstance(value, str):
        try:
            moment = datetime.fromisoformat(value.strip())
        except ValueError:
            return None
    else:
        return None
    if moment.tzinfo is not None:
        moment = moment.astimezone(timezone.utc).replace(tzinfo=None)
    return moment.isoformat()


def _hard_value(kind: str, value: Any) -> Hashable:
    """A hashable form under which two values are equal exactly when a hard field matches."""
    if value is None:
        return None
    if isinstance(value, bool):
        return value if kind == "boolean" else ("bool", value)  # True == 1 in Python; not here
    parsed: Hashable = None
    if kind in ("integer", "number"):
        parsed = _as_number(value)
    elif kind == "date":
        parsed = _as_date(value)
    elif kind == "datetime":
        parsed = _as_datetime(value)
    if parsed is not None:
        return parsed
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, (list, dict)):
        return ("json", json.dumps(value, sort_keys=True))
    return value


# ---------------------------------------------------------------------------------------
# Semantic similarity

_VECTORS: dict[str, np.ndarray] = {}  # normalised text -> unit vector of the active model
_MAX_CACHED = 200_000


def _embed_missing(texts: Iterable[str]) -> None:
    missing = sorted({t for t in texts if t and t not in _VECTORS})
    if not missing:
        return
    if len(_VECTORS) + len(missing) > _MAX_CACHED:
        _VECTORS.clear()
    _VECTORS.update(zip(missing, embeddings.embed(missing)))


def _vectors(texts: list[str]) -> np.ndarray:
    _embed_missing(texts)
    return np.stack([_VECTORS[t] for t in texts])


def text_similarity(a: str, b: str) -> float:
    """Cosine similarity of two texts after normalisation."""
    na, nb = normalize_text(a), normalize_text(b)
    if na == nb:
        return 1.0
    if not na or not nb:
        return 0.0
    va, vb = _vectors([na, nb])
    return float(va @ vb)


class SemanticPair(_Model):
    label: PairLabel
    a: str
    b: str


class Calibration(_Model):
    model: str
    threshold: float
    accuracy: float = Field(description="on paraphrase vs unrelated/related/junk pairs")
    similarity: dict[str, tuple[float, float, float]] = Field(description="label -> (min, median, max)")
    accepted: dict[str, float] = Field(description="label -> share of pairs accepted at the threshold")


def load_semantic_pairs(path: Path = SEMANTIC_PAIRS) -> list[SemanticPair]:
    return [SemanticPair.model_validate(p) for p in json.loads(path.read_text())["pairs"]]


def threshold_accuracy(pairs: list[SemanticPair], similarities: list[float], threshold: float) -> float:
    """Share of calibration pairs (contradictions left out) classified right at `threshold`."""
    scored = [(s >= threshold) == (p.label == "paraphrase")
              for p, s in zip(pairs, similarities) if p.label != "contradiction"]
    return sum(scored) / len(scored)


def pair_similarities(pairs: list[SemanticPair]) -> list[float]:
    """Each pair's similarity as a semantic field sees it, embedding all texts in one batch."""
    _embed_missing(normalize_text(t) for p in pairs for t in (p.a, p.b))
    return [text_similarity(p.a, p.b) for p in pairs]


def calibrate(pairs: list[SemanticPair] | None = None) -> Calibration:
    """The most accurate threshold on labelled pairs for the active model; ties go to the stricter."""
    pairs = load_semantic_pairs() if pairs is None else pairs
    sims = pair_similarities(pairs)
    values = sorted({s for p, s in zip(pairs, sims) if p.label != "contradiction"})
    candidates = [(lo + hi) / 2 for lo, hi in zip(values, values[1:])] or values
    threshold = max(candidates, key=lambda t: (threshold_accuracy(pairs, sims, t), t))
    by_label: dict[str, list[float]] = defaultdict(list)
    for p, s in zip(pairs, sims):
        by_label[p.label].append(s)
    return Calibration(
        model=embeddings.model_name(),
        threshold=round(threshold, 4),
        accuracy=threshold_accuracy(pairs, sims, threshold),
        similarity={k: (min(v), statistics.median(v), max(v)) for k, v in by_label.items()},
        accepted={k: sum(s >= threshold for s in v) / len(v) for k, v in by_label.items()},
    )


@lru_cache(maxsize=None)
def _threshold_for(model: str) -> float:
    if model in CALIBRATED_THRESHOLDS:
        return CALIBRATED_THRESHOLDS[model]
    return calibrate().threshold  # another model: calibrate it on the same labelled pairs


def semantic_threshold() -> float:
    """The calibrated threshold of the active embedding model (loads the model)."""
    return _threshold_for(embeddings.model_name())


# ---------------------------------------------------------------------------------------
# Comparison


@dataclass(frozen=True)
class _Col:
    name: str
    kind: str
    policy: FieldPolicy
    ref: str | None  # the table whose primary key this foreign key holds


@dataclass
class _Plan:
    name: str
    pk: str
    columns: frozenset[str]
    checked: list[_Col]  # non-exempt columns, in schema order


_PENDING = ("pending",)  # a reference into a table not yet matched; verified afterwards
_IDFREE = ("new",)


def _plans(schema: DBSchema, spec: RewardSpec) -> dict[str, _Plan]:
    defaults = default_reward_spec(schema).fields
    for table, policies in spec.fields.items():
        if table not in defaults:
            raise ValueError(f"reward_spec names unknown table {table!r}")
        unknown = set(policies) - set(defaults[table])
        if unknown:
            raise ValueError(f"reward_spec names unknown columns of {table!r}: {sorted(unknown)}")
    pks = {t.name: t.primary_key.name for t in schema.tables}
    plans = {}
    for table in schema.tables:
        policies = {**defaults[table.name], **spec.fields.get(table.name, {})}
        checked = []
        for c in table.columns:
            if policies[c.name] == "exempt":
                continue
            ref = None
            if c.foreign_key:
                target, column = c.foreign_key.split(".", 1)
                ref = target if pks[target] == column else None
            checked.append(_Col(c.name, c.type, policies[c.name], ref))
        plans[table.name] = _Plan(table.name, pks[table.name], frozenset(c.name for c in table.columns), checked)
    return plans


def _index(state: State, label: str, plans: dict[str, _Plan]) -> dict[str, dict[Hashable, dict]]:
    if not isinstance(state, Mapping):
        raise ValueError(f"the {label} state must map table names to lists of rows")
    unknown = set(state) - set(plans)
    if unknown:
        raise ValueError(f"the {label} state has unknown tables {sorted(unknown)}; the schema has {sorted(plans)}")
    out = {}
    for name, plan in plans.items():
        rows = state.get(name) or []
        if not isinstance(rows, list):
            raise ValueError(f"the {label} state's {name!r} must be a list of rows")
        index: dict[Hashable, dict] = {}
        for n, row in enumerate(rows):
            if type(row) is not dict and not isinstance(row, Mapping):  # the exact check is the fast one
                raise ValueError(f"the {label} state's {name} row {n} is not an object")
            key = row.get(plan.pk)
            if key is None:
                raise ValueError(f"the {label} state's {name} row {n} has no primary key {plan.pk!r}")
            if not row.keys() <= plan.columns:
                extra = sorted(set(row) - plan.columns)
                raise ValueError(f"the {label} state's {name} row {key!r} has unknown columns {extra}")
            try:
                seen = key in index
            except TypeError:
                raise ValueError(f"the {label} state's {name} row {n} has an unhashable primary key {key!r}") from None
            if seen:
                raise ValueError(f"the {label} state has two {name} rows with key {key!r}")
            index[key] = row
        out[name] = index
    return out


def _preview(plan: _Plan, row: Mapping) -> str:
    shown = {c.name: row.get(c.name) for c in plan.checked}
    text = json.dumps(shown, default=str, ensure_ascii=False)
    return text if len(text) <= 160 else text[:157] + "..."


class _Check:
    """One column compared on one pair of rows."""

    __slots__ = ("col", "passed", "reason")

    def __init__(self, col: _Col, passed: bool, reason: str):
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
        self.plans = _plans(schema, spec)
        self.order = table_order(schema)
        self.init = _index(initial, "initial", self.plans)
        self.final = _index(final, "final", self.plans)
        self.gt = _index(expected, "expected", self.plans)
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

    def _value(self, col: _Col, row: Mapping | None, side: str) -> Hashable:
        """The comparable form of a cell; foreign keys to inserted rows go through the matching."""
        value = None if row is None else row.get(col.name)
        if col.policy == "semantic":
            return normalize_text(value)
        if col.ref is None or value is None:
            return _hard_value(col.kind, value)
        if not isinstance(value, Hashable):
            return ("json", json.dumps(value, sort_keys=True))
        if side == "final" and value in self.new_f_set[col.ref]:
            if col.ref not in self.resolved:
                return _PENDING
            target = self.mapping[col.ref].get(value)
            return ("new", target) if target is not None else ("unmatched", value)
        if side == "expected" and value in self.new_g_set[col.ref]:
            return ("new", value) if col.ref in self.resolved else _PENDING
        return ("key", value)

    def _idfree(self, col: _Col, row: Mapping, side: str) -> Hashable:
        """Like `_value`, with every reference to an inserted row made anonymous."""
        value = row.get(col.name)
        if col.ref is not None and col.policy != "semantic" and isinstance(value, Hashable):
            new = self.new_f_set if side == "final" else self.new_g_set
            if value in new[col.ref]:
                return _IDFREE
        return self._value(col, row, "initial")

    def _semantic(self, col: _Col, actual: str, expected: str) -> _Check:
        if actual == expected:
            return _Check(col, True, "equal after normalisation")
        if not expected:
            return _Check(col, False, "the ground truth leaves it empty")
        if not actual:
            return _Check(col, False, "missing text")
        a, b = _vectors([actual, expected])
        similarity = float(a @ b)
        threshold = self.threshold
        if similarity >= threshold:
            return _Check(col, True, f"similarity {similarity:.3f} >= {threshold:.3f}")
        return _Check(col, False, f"similarity {similarity:.3f} < {threshold:.3f}")

    def _compare(self, plan: _Plan, f: Mapping, g: Mapping, i: Mapping | None = None) -> list[_Check]:
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
    def _hard_reason(col: _Col, actual: Hashable) -> str:
        if col.ref is None:
            return "not equal"
        if isinstance(actual, tuple) and actual and actual[0] == "unmatched":
            return "references an inserted row with no ground-truth counterpart"
        return "references a different row"

    def _changed(self, plan: _Plan, before: Mapping, after: Mapping, side: str) -> list[_Col]:
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
        pending_cols: dict[str, list[_Col]] = {}
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
                                f"{_preview(plan, self.gt[table][gkey])}",
                    ))
            for fkey in self.new_f[table]:
                if fkey not in matched:
                    self.items.append(CheckItem(
                        kind="unexpected_insert", table=table, key=str(fkey), final_key=str(fkey), passed=False,
                        summary=f"unexpected insert into {table}: {fkey} {_preview(plan, self.final[table][fkey])}",
                    ))

    def _match_table(self, plan: _Plan, sig_f: dict, sig_g: dict) -> list[_Pair]:
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
        n, m, width = len(left_f), len(left_g), len(plan.checked)
        for j, col in enumerate(plan.checked):
            if col.policy == "semantic":
                texts = {fvec[k][j] for k in left_f} | {gvec[k][j] for k in left_g}
                if len(texts) > 1:
                    _embed_missing(texts)  # one batch for the table; the loop below hits the cache
        score = np.zeros((n, m), dtype=np.int64)
        for j, col in enumerate(plan.checked):
            fv = [fvec[k][j] for k in left_f]
            gv = [gvec[k][j] for k in left_g]
            codes: dict[Hashable, int] = {}
            fc = np.fromiter((codes.setdefault(v, len(codes)) for v in fv), dtype=np.int64, count=n)
            gc = np.fromiter((codes.setdefault(v, len(codes)) for v in gv), dtype=np.int64, count=m)
            equal = fc[:, None] == gc[None, :]
            if col.policy == "semantic" and len(codes) > 1:
                f_text, g_text = np.array([bool(v) for v in fv]), np.array([bool(v) for v in gv])
                if f_text.any() and g_text.any():
                    fi, gi = np.flatnonzero(f_text), np.flatnonzero(g_text)
                    sims = np.zeros((n, m), dtype=np.float32)
                    sims[np.ix_(fi, gi)] = _vectors([fv[i] for i in fi]) @ _vectors([gv[i] for i in gi]).T
                    equal |= (sims >= self.threshold) & f_text[:, None] & g_text[None, :]
            score += equal
        # Lexicographic objective: most fully matched rows first, then most matching columns.
        full = score == width
        objective = full * (width * min(n, m) + 1) + score
        rows_i, cols_j = linear_sum_assignment(objective, maximize=True)
        for i, j in zip(rows_i.tolist(), cols_j.tolist()):
            if score[i, j] == 0 and width:
                continue  # nothing in common: a missing row and an unexpected one, not a pair
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

    def _verify_pending(self, plan: _Plan, cols: list[_Col], fkey, gkey, checks: _Checks) -> _Checks:
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

    def _insert_item(self, plan: _Plan, fkey, gkey, checks: _Checks) -> CheckItem:
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
        _embed_missing(texts)  # every text the rows below compare by similarity, in one batch
        for plan, key, i, f, g in slow:
            self._existing_row(plan, key, i, f, g)

    def _existing_row(self, plan: _Plan, key, i: Mapping, f: Mapping | None, g: Mapping | None) -> None:
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
