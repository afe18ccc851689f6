"""The reward's data: per-column matching policies (RewardSpec, with the schema's defaults) and
the result, check by check (RewardResult, CheckItem, FieldCheck)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from domains.spec import Column, DBSchema

FieldPolicy = Literal["exempt", "hard", "semantic"]

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


class FieldCheck(_Model):
    column: str
    policy: FieldPolicy
    passed: bool
    expected: Any = None
    actual: Any = None
    reason: str


CheckKind = Literal[
    "insert", "update", "delete", "unexpected_insert", "unexpected_update", "unexpected_delete",
    "fact", "forbidden_call",  # an answer task's facts in the final message; a refusal task's forbidden call
]


class CheckItem(_Model):
    """One scored check: a ground-truth change, or a change the ground truth does not make."""

    kind: CheckKind
    table: str = Field(description="the table of a row check; '' for a fact or a forbidden call")
    key: str | None = Field(description="the ground-truth row's key (the final row's for unexpected inserts); a "
                                        "fact's source; the forbidden tool")
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
