"""Time the state-diff reward on job-seeking states of 100, 1,000 and 10,000 rows.

Each state is mostly rows the task leaves alone; the task updates about 1% of applications,
deletes 0.5% of feedback and inserts 1% new applications, each with an interview and its
feedback. The agent's state does the same work in another order (so its generated keys
differ), rewrites most notes with other casing and punctuation, and paraphrases two. The schema
and texts are the reward tests' own (tests/support/reward_cases.py).
"""

from __future__ import annotations

import copy
import random
import statistics
import time

from llm import embeddings
from tests.support.reward_cases import COMPANIES, NOTES, PARAPHRASES, SCHEMA
from verification.reward import compute_reward


def _key(prefix: str, n: int) -> str:
    return f"{prefix}-{n:05d}"


def _next(rows: list[dict], prefix: str) -> str:
    return _key(prefix, max(int(r["id"].rsplit("-", 1)[1]) for r in rows) + 1)


def build(size: int, seed: int = 0) -> tuple[dict, dict, dict, dict]:
    """(initial, agent's final, expected final, change counts) for a state of `size` rows."""
    rng = random.Random(seed)
    n_app, n_int = size // 2, size * 3 // 10
    n_fb = size - n_app - n_int
    initial = {
        "job_application": [
            {"id": _key("APP", i + 1), "company": rng.choice(COMPANIES), "status": "applied",
             "salary": rng.randrange(50, 150) * 1000, "applied_on": "2025-02-%02d" % rng.randint(1, 28),
             "notes": rng.choice(NOTES), "updated_at": "2025-02-28T08:00:00"}
            for i in range(n_app)
        ],
        "interview": [
            {"id": _key("INT", i + 1), "application_id": _key("APP", rng.randint(1, n_app)), "kind": "phone",
             "scheduled_at": "2025-03-%02dT10:00:00" % rng.randint(2, 28), "notes": rng.choice(NOTES)}
            for i in range(n_int)
        ],
        "feedback": [
            {"id": _key("FB", i + 1), "interview_id": _key("INT", rng.randint(1, n_int)),
             "rating": rng.randint(1, 5), "comments": rng.choice(NOTES)}
            for i in range(n_fb)
        ],
    }
    updates = rng.sample(range(n_app), max(1, n_app // 100))
    deletes = {r["id"] for r in rng.sample(initial["feedback"], max(1, n_fb // 200))}
    groups = [(rng.choice(COMPANIES), rng.choice(NOTES), rng.choice(NOTES), rng.randint(1, 5))
              for _ in range(max(1, n_app // 100))]

    def apply(state: dict, order: list[int], agent: bool) -> None:
        def text(note: str, i: int) -> str:
            if agent and i < 2 and note in PARAPHRASES:
                return PARAPHRASES[note]
            return note.upper() if agent and i % 2 else note  # equal after normalisation
        for i, row in enumerate(updates):
            state["job_application"][row].update(status="interviewing", notes=text(NOTES[i % len(NOTES)], i),
                                                 updated_at="2025-03-01T09:00:00")
        state["feedback"] = [r for r in state["feedback"] if r["id"] not in deletes]
        for i in order:
            company, app_note, int_note, rating = groups[i]
            app = _next(state["job_application"], "APP")
            state["job_application"].append({
                "id": app, "company": company, "status": "applied", "salary": 90000.0 if agent else 90000,
                "applied_on": "2025-03-01", "notes": text(app_note, i), "updated_at": "2025-03-01T09:00:00"})
            interview = _next(state["interview"], "INT")
            state["interview"].append({
                "id": interview, "application_id": app, "kind": "onsite",
                "scheduled_at": "2025-03-10T14:00:00", "notes": text(int_note, i)})
            state["feedback"].append({
                "id": _next(state["feedback"], "FB"), "interview_id": interview, "rating": rating,
                "comments": text(NOTES[rating % len(NOTES)], i)})

    expected, final = copy.deepcopy(initial), copy.deepcopy(initial)
    apply(expected, list(range(len(groups))), agent=False)
    apply(final, list(reversed(range(len(groups)))), agent=True)
    counts = {"updates": len(updates), "inserts": 3 * len(groups), "deletes": len(deletes)}
    return initial, final, expected, counts


def main(runs: int = 9) -> None:
    embeddings.embed(["warm up"])  # model load is not part of the reward's cost
    for size in (100, 1_000, 10_000):
        initial, final, expected, counts = build(size)
        start = time.perf_counter()
        result = compute_reward(SCHEMA, initial, final, expected)
        first = time.perf_counter() - start
        times = []
        for _ in range(runs):
            start = time.perf_counter()
            compute_reward(SCHEMA, initial, final, expected)
            times.append(time.perf_counter() - start)
        changes = ", ".join(f"{v} {k}" for k, v in counts.items())
        print(f"reward: {size:>6,} rows ({changes}): median {statistics.median(times) * 1e3:.2f} ms "
              f"over {runs} runs, first {first * 1e3:.1f} ms (embeds new texts); "
              f"reward {result.reward:.3f}, passed {result.passed}")


if __name__ == "__main__":
    main()
