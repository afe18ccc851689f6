"""The job-seeking world the state-diff reward is scored on, read by both tests/test_reward.py and
bench/reward.py: the schema (applications, their interviews, interview feedback) and the free
texts written into it, with paraphrases that must count as the same text."""

from __future__ import annotations

from domains.spec import Column, DBSchema, Table

SCHEMA = DBSchema(tables=[
    Table(name="job_application", id_prefix="APP", columns=[
        Column(name="id", type="string", primary_key=True),
        Column(name="company", type="string"),
        Column(name="role", type="string"),
        Column(name="status", type="string", choices=["applied", "interviewing", "offer", "rejected"]),
        Column(name="salary", type="number"),
        Column(name="applied_on", type="date"),
        Column(name="notes", type="text"),
        Column(name="created_at", type="datetime"),
        Column(name="updated_at", type="datetime"),
    ]),
    Table(name="interview", id_prefix="INT", columns=[
        Column(name="id", type="string", primary_key=True),
        Column(name="application_id", type="string", foreign_key="job_application.id"),
        Column(name="kind", type="string"),
        Column(name="scheduled_at", type="datetime"),
        Column(name="notes", type="text"),
        Column(name="created_at", type="datetime"),
    ]),
    Table(name="feedback", id_prefix="FB", columns=[
        Column(name="id", type="string", primary_key=True),
        Column(name="interview_id", type="string", foreign_key="interview.id"),
        Column(name="rating", type="integer"),
        Column(name="comments", type="text"),
        Column(name="created_at", type="datetime"),
    ]),
])

COMPANIES = ["Initech", "Umbrella", "Hooli", "Globex", "Vandelay", "Acme"]

FOLLOW_UP = "Follow up with the recruiter next week about the offer."
WAITING = "Waiting to hear back after the final round."
PHONE_NOTES = "Phone screen with the hiring manager, 30 minutes."
TECH_NOTES = "Technical round focused on SQL and data modelling."
NOTES = [
    FOLLOW_UP,
    "Interview went well, the team liked my system design answers.",
    "Salary expectations are above the budget for this role.",
    WAITING,
    PHONE_NOTES,
    TECH_NOTES,
]
# Other words, the same meaning: the reward's semantic fields must pass these.
PARAPHRASES = {
    FOLLOW_UP: "Contact the recruiter again next week regarding the offer.",
    TECH_NOTES: "The technical interview concentrated on SQL and data modeling.",
}
