"""The state-diff reward on hand-built job-seeking trajectories."""

from __future__ import annotations

import copy
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from llm import embeddings
from tests.support.reward_cases import PARAPHRASES, PHONE_NOTES, SCHEMA, TECH_NOTES, WAITING
from verification.reward import (
    CALIBRATED_THRESHOLDS,
    RewardSpec,
    compute_reward,
    default_reward_spec,
    load_semantic_pairs,
    pair_similarities,
    threshold_accuracy,
)

BEFORE = "2025-02-20T08:00:00"

# Every test loads the embedding model (the module fixture below).
pytestmark = pytest.mark.slow


def _app(n: int, company: str, status: str, salary: float, notes: str) -> dict:
    return {"id": f"APP-{n:04d}", "company": company, "role": "Backend Engineer", "status": status,
            "salary": salary, "applied_on": "2025-02-15", "notes": notes,
            "created_at": BEFORE, "updated_at": BEFORE}


INITIAL = {
    "job_application": [
        _app(1, "Initech", "interviewing", 90000, "Referred by a former colleague at Acme."),
        _app(2, "Umbrella", "applied", 80000, WAITING),
        _app(3, "Hooli", "applied", 95000, "Remote position, occasional travel to the Berlin office."),
        _app(4, "Vandelay", "applied", 70000, "Needs visa sponsorship."),
    ],
    "interview": [
        {"id": "INT-0001", "application_id": "APP-0001", "kind": "phone", "scheduled_at": "2025-02-25T10:00:00",
         "notes": PHONE_NOTES, "created_at": BEFORE},
        {"id": "INT-0002", "application_id": "APP-0002", "kind": "phone", "scheduled_at": "2025-02-26T11:00:00",
         "notes": "Asked to reschedule the interview to Thursday afternoon.", "created_at": BEFORE},
    ],
    "feedback": [
        {"id": "FB-0001", "interview_id": "INT-0001", "rating": 4,
         "comments": "Great communication skills and a clear presentation.", "created_at": BEFORE},
    ],
}


class World:
    """A stand-in for the tool layer: max+1 generated keys, the episode clock, plain writes."""

    def __init__(self, state: dict, now: str = "2025-03-01T09:00:00"):
        self.state = copy.deepcopy(state)
        self.now = now

    def create(self, table: str, **fields) -> str:
        spec = SCHEMA.table(table)
        rows = self.state.setdefault(table, [])
        used = [int(r["id"].rsplit("-", 1)[1]) for r in rows]
        key = f"{spec.id_prefix}-{max(used, default=0) + 1:04d}"
        row = {c.name: None for c in spec.columns} | fields | {"id": key, "created_at": self.now}
        if "updated_at" in row:
            row["updated_at"] = self.now
        rows.append(row)
        return key

    def update(self, table: str, key: str, **fields) -> None:
        row = next(r for r in self.state[table] if r["id"] == key)
        row.update(fields)
        if "updated_at" in row:
            row["updated_at"] = self.now

    def delete(self, table: str, key: str) -> None:
        self.state[table] = [r for r in self.state[table] if r["id"] != key]


FEEDBACK = "Candidate has strong Python skills but limited cloud experience."
APP_NOTES = "Applied through the company careers page."


def reference(w: World, withdraw: bool = True) -> None:
    """The task: move APP-0002 on with a technical interview and its feedback, apply to Globex
    with a phone screen, and withdraw (delete) the Vandelay application."""
    w.update("job_application", "APP-0002", status="interviewing")
    tech = w.create("interview", application_id="APP-0002", kind="technical",
                    scheduled_at="2025-03-05T10:00:00", notes=TECH_NOTES)
    w.create("feedback", interview_id=tech, rating=4, comments=FEEDBACK)
    app = w.create("job_application", company="Globex", role="Data Engineer", status="applied",
                   salary=85000, applied_on="2025-03-01", notes=APP_NOTES)
    w.create("interview", application_id=app, kind="phone", scheduled_at="2025-03-07T14:00:00", notes=PHONE_NOTES)
    if withdraw:
        w.delete("job_application", "APP-0004")
    else:
        w.update("job_application", "APP-0004", status="rejected")


def run(agent, now: str = "2025-03-01T09:00:00") -> dict:
    w = World(INITIAL, now)
    agent(w)
    return w.state


EXPECTED = run(reference)


def reordered(w: World, *, salary=85000, applied_on="2025-03-01", tech_notes=TECH_NOTES,
              feedback=FEEDBACK, rating=4, feedback_on=None, skip_feedback=False) -> None:
    """The same work in another order: the deleted key is recycled and the interviews swap IDs."""
    w.delete("job_application", "APP-0004")
    app = w.create("job_application", company="Globex", role="Data Engineer", status="applied",
                   salary=salary, applied_on=applied_on, notes=APP_NOTES)
    w.create("interview", application_id=app, kind="phone", scheduled_at="2025-03-07T14:00:00", notes=PHONE_NOTES)
    tech = w.create("interview", application_id="APP-0002", kind="technical",
                    scheduled_at="2025-03-05T10:00:00", notes=tech_notes)
    if not skip_feedback:
        w.create("feedback", interview_id=feedback_on or tech, rating=rating, comments=feedback)
    w.update("job_application", "APP-0002", status="interviewing")


def score(final: dict, expected: dict = EXPECTED, spec=None):
    return compute_reward(SCHEMA, INITIAL, final, expected, spec)


def failed(result) -> list[tuple[str, str]]:
    return [(item.kind, item.table) for item in result.breakdown if not item.passed]


@pytest.fixture(scope="module", autouse=True)
def model():
    """Load the embedding model once for the module."""
    embeddings.embed(["warm up"])


# -- correct solutions ---------------------------------------------------------------------


def test_reference_solution_passes():
    result = score(copy.deepcopy(EXPECTED))
    assert result.passed and result.reward == 1.0
    kinds = sorted(item.kind for item in result.breakdown)
    assert kinds == ["delete", "insert", "insert", "insert", "insert", "update"]
    assert result.untouched == {"job_application": 2, "interview": 2, "feedback": 1}


def test_other_order_and_other_ids_pass():
    final = run(reordered)
    assert {r["id"]: r["kind"] for r in final["interview"]}["INT-0003"] == "phone"  # IDs really differ
    assert {r["id"]: r["kind"] for r in EXPECTED["interview"]}["INT-0003"] == "technical"
    result = score(final)
    assert result.passed, result.explain()
    pairs = {(i.table, i.key, i.final_key) for i in result.breakdown if i.kind == "insert"}
    assert ("interview", "INT-0003", "INT-0004") in pairs
    assert ("job_application", "APP-0005", "APP-0004") in pairs  # a recycled key is a new row


def test_row_order_in_the_state_does_not_matter():
    final = {t: list(reversed(rows)) for t, rows in run(reordered).items()}
    assert score(final).passed


def test_paraphrased_free_text_passes():
    result = score(run(lambda w: reordered(
        w, tech_notes=PARAPHRASES[TECH_NOTES],
        feedback="Strong in Python; not much experience with cloud platforms.")))
    assert result.passed, result.explain()
    reasons = [f.reason for i in result.breakdown for f in i.fields if f.column in ("notes", "comments")]
    assert any(r.startswith("similarity") for r in reasons)


def test_formatting_differences_in_hard_fields_pass():
    result = score(run(lambda w: reordered(w, salary=85000.0, applied_on="2025-03-01T00:00:00",
                                           feedback="  " + FEEDBACK.upper() + "  ")))
    assert result.passed, result.explain()


def test_runtime_timestamps_are_exempt():
    assert score(run(reordered, now="2025-03-02T17:45:00")).passed


def test_text_normalisation_needs_no_embedding(monkeypatch):
    def refuse(texts):
        raise AssertionError(f"embedded {texts}")

    monkeypatch.setattr(embeddings, "embed", refuse)
    final = run(lambda w: reordered(w, tech_notes="technical round -- focused on sql AND data modelling"))
    item = next(i for i in score(final).breakdown if i.table == "interview" and i.key == "INT-0003")
    assert item.passed
    assert next(f for f in item.fields if f.column == "notes").reason == "equal after normalisation"


# -- wrong solutions -----------------------------------------------------------------------


def test_doing_nothing_scores_zero():
    result = score(copy.deepcopy(INITIAL))
    assert result.reward == 0.0 and not result.passed
    assert len(result.breakdown) == 6


def test_a_task_without_changes_passes_only_when_nothing_changes():
    assert score(copy.deepcopy(INITIAL), expected=INITIAL).reward == 1.0
    result = score(run(reordered), expected=INITIAL)
    assert result.reward == 0.0 and not result.passed


def test_missing_write_fails_with_partial_credit():
    result = score(run(lambda w: reordered(w, skip_feedback=True)))
    assert not result.passed
    assert failed(result) == [("insert", "feedback")]
    assert result.reward == pytest.approx(5 / 6)


def test_wrong_hard_values_fail():
    result = score(run(lambda w: reordered(w, salary=8500, rating=5)))
    assert not result.passed
    assert sorted(failed(result)) == [("insert", "feedback"), ("insert", "job_application")]
    item = next(i for i in result.breakdown if i.table == "job_application" and i.kind == "insert")
    wrong = [f for f in item.fields if not f.passed]
    assert [(f.column, f.expected, f.actual) for f in wrong] == [("salary", 85000, 8500)]


def test_wrong_date_fails():
    assert not score(run(lambda w: reordered(w, applied_on="2025-03-02"))).passed


def test_extra_insert_fails():
    def agent(w):
        reordered(w)
        w.create("feedback", interview_id="INT-0002", rating=3, comments="Follow up next week.")
    result = score(run(agent))
    assert failed(result) == [("unexpected_insert", "feedback")]
    assert result.reward == pytest.approx(6 / 7)


def test_extra_delete_fails():
    def agent(w):
        reordered(w)
        w.delete("feedback", "FB-0001")
    result = score(run(agent))
    assert failed(result) == [("unexpected_delete", "feedback")]


def test_changing_a_distractor_fails():
    def agent(w):
        reordered(w)
        w.update("job_application", "APP-0003", status="rejected")
    result = score(run(agent))
    assert failed(result) == [("unexpected_update", "job_application")]
    item = next(i for i in result.breakdown if not i.passed)
    assert [(f.column, f.expected, f.actual) for f in item.fields] == [("status", "applied", "rejected")]


def test_paraphrasing_a_distractor_is_not_a_change():
    def agent(w):
        reordered(w)
        w.update("job_application", "APP-0003", notes="Remote job with some trips to the Berlin office.")
    assert score(run(agent)).passed


def test_junk_in_a_semantic_field_fails():
    for junk in ("asdf", "test", "n/a", "Follow up next week."):
        result = score(run(lambda w: reordered(w, feedback=junk)))
        assert failed(result) == [("insert", "feedback")], junk


def test_empty_text_where_text_is_expected_fails():
    assert not score(run(lambda w: reordered(w, feedback=None))).passed


def test_feedback_on_the_wrong_interview_fails():
    result = score(run(lambda w: reordered(w, feedback_on="INT-0002")))
    assert failed(result) == [("insert", "feedback")]
    item = next(i for i in result.breakdown if not i.passed)
    assert [f.column for f in item.fields if not f.passed] == ["interview_id"]


def test_update_must_be_made_not_merely_similar():
    # The ground truth rewrites a note into something close to the old one; keeping the old
    # note must not pass for the update. Adding punctuation only is no change at all.
    def ref(w):
        w.update("job_application", "APP-0002", notes="Waiting to hear back after the final round; sent a reminder.")
        w.update("job_application", "APP-0003", notes="Remote position, occasional travel to the Berlin office!")

    expected = run(ref)
    nothing = score(copy.deepcopy(INITIAL), expected=expected)
    assert nothing.reward == 0.0 and [i.kind for i in nothing.breakdown] == ["update"]
    assert nothing.breakdown[0].fields[0].reason == "not updated: still the initial text"
    rewritten = run(lambda w: w.update("job_application", "APP-0002",
                                       notes="Sent a reminder; still waiting to hear back after the final round."))
    assert score(rewritten, expected=expected).passed


def test_updating_instead_of_deleting_fails():
    result = score(run(lambda w: reference(w, withdraw=False)))
    assert not result.passed
    assert ("unexpected_insert", "job_application") in failed(result) or ("delete", "job_application") in failed(result)


def test_explain_names_rows_fields_and_reasons():
    text = score(run(lambda w: reordered(w, salary=8500))).explain()
    assert text.startswith("reward 0.833 (5 of 6 checks passed): FAIL")
    assert "salary [hard]: expected 85000, got 8500 (not equal)" in text
    assert "rows unchanged as required: job_application 2, interview 2, feedback 1" in text


# -- spec and inputs -----------------------------------------------------------------------


def test_default_spec_policies():
    fields = default_reward_spec(SCHEMA).fields
    assert fields["job_application"] == {
        "id": "exempt", "company": "hard", "role": "hard", "status": "hard", "salary": "hard",
        "applied_on": "hard", "notes": "semantic", "created_at": "exempt", "updated_at": "exempt",
    }
    assert fields["interview"]["scheduled_at"] == "hard"  # a time the task asks for, not a stamp
    assert fields["interview"]["application_id"] == "hard"


def test_spec_round_trips_through_json():
    spec = default_reward_spec(SCHEMA)
    task = json.loads(json.dumps({"reward_spec": spec.model_dump(mode="json")}))
    assert RewardSpec.model_validate(task["reward_spec"]) == spec
    assert RewardSpec.model_validate_json(spec.model_dump_json()) == spec


def test_spec_overrides_apply():
    final = run(lambda w: reordered(w, salary=1))
    assert not score(final).passed
    assert score(final, spec={"fields": {"job_application": {"salary": "exempt"}}}).passed
    strict = {"fields": {"feedback": {"comments": "hard"}}}
    paraphrased = run(lambda w: reordered(w, feedback="Strong in Python; little cloud experience."))
    assert not score(paraphrased, spec=strict).passed


def test_explicit_threshold_is_used():
    final = run(lambda w: reordered(w, feedback="Strong in Python; not much experience with cloud platforms."))
    assert not score(final, spec={"semantic_threshold": 0.99}).passed
    assert score(final, spec={"semantic_threshold": 0.5}).semantic_threshold == 0.5


@pytest.mark.parametrize("bad, message", [
    ({"job_application": [], "offer": []}, "unknown tables"),
    ({"feedback": [{"rating": 3}]}, "no primary key 'id'"),
    ({"feedback": [{"id": "FB-0001", "stars": 3}]}, "unknown columns"),
    ({"feedback": [{"id": "FB-0001"}, {"id": "FB-0001"}]}, "two feedback rows"),
])
def test_bad_input_raises(bad, message):
    with pytest.raises(ValueError, match=message):
        score(bad)


def test_spec_naming_unknown_columns_raises():
    with pytest.raises(ValueError, match="unknown columns"):
        score(copy.deepcopy(EXPECTED), spec={"fields": {"feedback": {"stars": "hard"}}})


# -- semantic threshold ----------------------------------------------------------------------


def test_calibrated_threshold_separates_the_labelled_pairs():
    model = embeddings.model_name()
    if model not in CALIBRATED_THRESHOLDS:
        pytest.skip(f"no recorded threshold for {model}")
    threshold = CALIBRATED_THRESHOLDS[model]
    pairs = load_semantic_pairs()
    sims = pair_similarities(pairs)
    assert threshold_accuracy(pairs, sims, threshold) >= 0.9
    assert all(s < threshold for p, s in zip(pairs, sims) if p.label in ("junk", "unrelated"))
    assert len([p for p in pairs if p.label != "contradiction"]) >= 40


# -- properties ---------------------------------------------------------------------------

PHRASES = ["Follow up next week.", "Strong hire.", "Needs visa sponsorship."]
_interview = st.tuples(st.sampled_from(["phone", "onsite"]), st.sampled_from(PHRASES),
                       st.lists(st.integers(3, 5), max_size=2))
_application = st.tuples(st.sampled_from(["Acme", "Globex"]), st.sampled_from(PHRASES),
                         st.lists(_interview, max_size=2))


def _build(w: World, apps, interviews) -> None:
    def interview(app_key, kind, notes, ratings):
        key = w.create("interview", application_id=app_key, kind=kind,
                       scheduled_at="2025-03-04T09:00:00", notes=notes)
        for r in ratings:
            w.create("feedback", interview_id=key, rating=r, comments=PHRASES[r % 3])

    for company, notes, children in apps:
        key = w.create("job_application", company=company, role="Analyst", status="applied",
                       salary=60000, applied_on="2025-03-01", notes=notes)
        for child in children:
            interview(key, *child)
    for child in interviews:
        interview("APP-0001", *child)


def _mutate(state: dict, how: str, pick: int) -> None:
    new = {t: [r for r in rows if r["id"] not in {x["id"] for x in INITIAL[t]}] for t, rows in state.items()}
    if how == "rating" and new["feedback"]:
        new["feedback"][pick % len(new["feedback"])]["rating"] = 1
    elif how == "junk" and new["interview"]:
        new["interview"][pick % len(new["interview"])]["notes"] = "asdf"
    elif how == "drop" and new["feedback"]:
        victim = new["feedback"][pick % len(new["feedback"])]["id"]
        state["feedback"] = [r for r in state["feedback"] if r["id"] != victim]
    elif how == "move" and new["feedback"]:
        targets = [r["id"] for r in state["interview"]]
        row = new["feedback"][pick % len(new["feedback"])]
        row["interview_id"] = targets[(targets.index(row["interview_id"]) + 1) % len(targets)]
    elif how == "extra":
        state["feedback"].append({"id": "FB-0099", "interview_id": "INT-0001", "rating": 3,
                                  "comments": "Strong hire.", "created_at": BEFORE})


def _relabel(state: dict, data) -> dict:
    """Give the rows the agent inserted other generated keys, rewriting references to them."""
    renamed: dict[str, str] = {}
    for table, rows in state.items():
        old_keys = {r["id"] for r in INITIAL[table]}
        inserted = [r["id"] for r in rows if r["id"] not in old_keys]
        prefix = SCHEMA.table(table).id_prefix
        first = max(int(k.rsplit("-", 1)[1]) for k in old_keys) + 1
        numbers = data.draw(st.permutations(range(first, first + len(inserted) + 3)))
        renamed |= {k: f"{prefix}-{n:04d}" for k, n in zip(inserted, numbers)}
    out = {}
    for table, rows in state.items():
        fresh = []
        for row in rows:
            row = dict(row, id=renamed.get(row["id"], row["id"]))
            for ref in ("application_id", "interview_id"):
                if ref in row:
                    row[ref] = renamed.get(row[ref], row[ref])
            fresh.append(row)
        out[table] = data.draw(st.permutations(fresh))
    return out


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(apps=st.lists(_application, max_size=3), interviews=st.lists(_interview, max_size=2),
       how=st.sampled_from([None, "rating", "junk", "drop", "move", "extra"]), pick=st.integers(0, 20),
       data=st.data())
def test_renumbering_generated_ids_never_changes_the_verdict(apps, interviews, how, pick, data):
    expected = run(lambda w: _build(w, apps, interviews))
    final = copy.deepcopy(expected)
    if how:
        _mutate(final, how, pick)
    base = score(final, expected)
    other = score(_relabel(final, data), expected)
    assert (other.passed, other.reward) == (base.passed, base.reward)
    if how is None:
        assert base.passed, base.explain()
    elif how != "move" and final != expected:  # a move between look-alike interviews can be no change
        assert not base.passed, base.explain()


@settings(max_examples=60, deadline=None)
@given(apps=st.lists(_application, min_size=1, max_size=3), data=st.data())
def test_building_in_another_order_passes(apps, data):
    expected = run(lambda w: _build(w, apps, []))
    order = data.draw(st.permutations(range(len(apps))))
    final = run(lambda w: _build(w, [apps[i] for i in order], []))
    assert score(final, expected).passed
