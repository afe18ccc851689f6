"""`python -m domains.job_seeking.author_tasks [--n N] [--seed S] [--families F --instances M] [--answers A]
[--refusals R]`: record job_seeking's task transcript.

The bundled domains ship without a model, so their task-stage answers are authored: this
module stands in for the model, answering each real prompt of the stage (a scripted backend,
as pipeline.author does for the domain) the way a model would have: it picks one of the
scenarios below that best covers the prompt's seed chain, fills it with Faker values, and
answers the gate and reward-policy questions from the numbers in the prompt. A few first
answers are deliberately wrong (a misspelt lookup, a dangling foreign key, a leaked record id)
so that the recorded run shows the stage repairing them. Everything is recorded through the
gateway into domains/job_seeking/tasks/transcript.jsonl, which `make tasks` then replays.

Task families are answered with the hand-written families of domains/job_seeking/families.py, in
turn; a few first answers misspell a tool, so that the run shows a family repaired. With families
or derived tasks, the steps already recorded are answered as they were (their tasks keep their
bytes) and only the new ones are authored. As when the tasks were first recorded, g(D) comes from the executed search
and the distractors from no vocabulary.
"""

from __future__ import annotations

import argparse
import json
import re
import sys

from faker import Faker

from domains import registry
from domains.job_seeking.families import FAMILIES
from llm import LLM, StepKey, Transcript, count_tokens
from tasks.__main__ import DEFAULT_INSTANCES, DEFAULT_N, DEFAULT_SEED, run_stage

STAMP = "2025-02-10T10:00:00"


def _app(v: dict, status: str, **extra) -> dict:
    row = {"application_id": "APP-0001", "applicant_name": v["name"], "email": v["email"], "phone": v["phone"],
           "job_title": v["title"], "company_name": v["company"], "job_location": v["city"],
           "application_date": "2025-02-10", "status": status, "salary_currency": "USD", "created_at": STAMP,
           "resume_content": f"{v['name']}: {v['title']} with {v['years']} years of experience.",
           "resume_format": "pdf", "resume_uploaded_at": STAMP}
    row.update(extra)
    return row


def _find(v: dict, typo: bool = False) -> str:
    keyword = v["company"][:-1] + "x" if typo else v["company"]
    return (f'apps = call("search_apps_by_keyword", keyword={keyword!r})["applications"]\n'
            f'app = [a for a in apps if a["job_title"] == {v["title"]!r}][0]\n')


# Each scenario: level, tools, and (values, attempt) -> (code, core state, draft, instruction).
def priority(v, typo):
    code = _find(v, typo) + (f'call("set_application_priority", application_id=app["application_id"], '
                             f'priority_level={v["priority"]}, priority_reason={v["reason"]!r})\n')
    return (code, {"job_application": [_app(v, "submitted")]},
            f"Find my {v['title']} application at {v['company']} and set its priority to {v['priority']} "
            f"with the reason '{v['reason']}'.",
            f"Can you bump my {v['company']} application ({v['title']}) to priority {v['priority']}? "
            f"Reason: {v['reason']}.")


def note(v, typo):
    code = _find(v, typo) + (f'call("add_application_note", application_id=app["application_id"], '
                             f'note_content={v["note"]!r}, note_type="follow_up")\n')
    return (code, {"job_application": [_app(v, "under_review")]},
            f"Add a follow-up note '{v['note']}' to my {v['title']} application at {v['company']}.",
            f"Jot down a follow-up on the {v['company']} {v['title']} application: \"{v['note']}\"")


def deadline(v, typo):
    code = _find(v, typo) + (f'call("set_application_deadline", application_id=app["application_id"], '
                             f'deadline_date={v["deadline"]!r}, deadline_type="follow_up")\n')
    return (code, {"job_application": [_app(v, "submitted")]},
            f"Set a follow-up deadline of {v['deadline']} on my {v['title']} application at {v['company']}.",
            f"I need to follow up with {v['company']} about the {v['title']} role by {v['deadline']}, "
            "please put that deadline on it.")


def salary(v, typo):
    code = _find(v, typo) + (f'call("add_salary_expectation", application_id=app["application_id"], '
                             f'expected_salary_min={v["low"]}, expected_salary_max={v["high"]}, salary_currency="USD")\n')
    return (code, {"job_application": [_app(v, "submitted")]},
            f"Record a salary expectation of {v['low']} to {v['high']} USD on my {v['title']} application at {v['company']}.",
            f"For the {v['company']} {v['title']} job I'm aiming for {v['low']:,}-{v['high']:,} USD, can you note that?")


def apply_new(v, typo):
    code = (f'app = call("create_job_application", applicant_name={v["name"]!r}, email={v["email"]!r}, '
            f'job_title={v["title"]!r}, company_name={v["company"]!r}, job_location={v["city"]!r})\n'
            f'call("upload_resume", application_id=app["application_id"], resume_content={v["resume"]!r}, resume_format="pdf")\n'
            + ('' if typo else 'call("submit_application", application_id=app["application_id"])\n'))
    if typo:  # submitting before the resume is there
        code = code.replace('call("upload_resume"', 'call("submit_application", application_id=app["application_id"])\ncall("upload_resume"')
    return (code, {},
            f"Create an application for {v['title']} at {v['company']} in {v['city']} for {v['name']} ({v['email']}), "
            f"upload the resume text '{v['resume']}' as PDF, and submit it.",
            f"I want to apply to {v['company']} for the {v['title']} opening in {v['city']}. Use my resume "
            f"(\"{v['resume']}\", PDF) and send it off.")


def interview(v, typo):
    code = _find(v, typo) + (
        f'call("schedule_interview", application_id=app["application_id"], interview_type="technical_interview", '
        f'interview_date={v["when"]!r}, interviewer_name={v["interviewer"]!r}, interview_location="Video call")\n'
        f'call("add_application_stage", application_id=app["application_id"], stage_name="technical_interview")\n')
    return (code, {"job_application": [_app(v, "under_review")]},
            f"Schedule a technical interview for my {v['title']} application at {v['company']} on {v['when']} with "
            f"{v['interviewer']} by video call, and record that it reached the technical interview stage.",
            f"{v['company']} invited me to a technical interview for the {v['title']} role: {v['when']}, video call "
            f"with {v['interviewer']}. Put it in and move the application to that stage.")


def offer(v, typo):
    code = _find(v, typo) + (
        f'call("record_job_offer", application_id=app["application_id"], base_salary={v["high"]}, salary_currency="USD", '
        f'start_date={v["start"]!r}, response_deadline={v["deadline"]!r})\n'
        f'call("add_application_note", application_id=app["application_id"], note_content={v["note"]!r}, note_type="general")\n')
    return (code, {"job_application": [_app(v, "interviewing")]},
            f"Record an offer of {v['high']} USD for my {v['title']} application at {v['company']}, starting "
            f"{v['start']}, answer due {v['deadline']}, and add the note '{v['note']}'.",
            f"Great news, {v['company']} offered me the {v['title']} job at {v['high']:,} USD, starting {v['start']}; "
            f"I have to answer by {v['deadline']}. Log it, and add a note: {v['note']}")


def _interview_row(v, status="scheduled", when="2025-02-27T14:00:00"):
    return {"interview_id": "INT-0001", "application_id": "APP-0001", "interview_type": "behavioral_interview",
            "interview_date": when, "interviewer_name": v["interviewer"], "interview_location": "Video call",
            "interview_duration_minutes": 45, "interview_status": status, "created_at": STAMP}


def feedback(v, typo):
    code = _find(v, typo) + (
        'mine = call("get_application_interviews", application_id=app["application_id"], interview_status="scheduled")\n'
        'done = call("complete_interview", interview_id=mine["interviews"][0]["interview_id"])\n'
        f'call("add_interview_feedback", interview_id=done["interview_id"], feedback_content={v["feedback"]!r}, '
        f'performance_rating={v["rating"]})\n')
    return (code, {"job_application": [_app(v, "interviewing")], "interview_schedule": [_interview_row(v)]},
            f"Mark the scheduled behavioral interview of my {v['title']} application at {v['company']} as completed "
            f"and give it feedback '{v['feedback']}' rated {v['rating']}.",
            f"I had my behavioral interview with {v['company']} for the {v['title']} role. Mark it done; my "
            f"take: \"{v['feedback']}\" - I'd rate it {v['rating']} out of 5.")


def full_apply(v, typo):
    code, _, _, _ = apply_new(v, False)
    code += (f'call("upload_cover_letter", application_id=app["application_id"], cover_letter_content={v["letter"]!r})\n'
             f'call("set_application_priority", application_id=app["application_id"], priority_level={v["priority"]}, '
             f'priority_reason={v["reason"]!r})\n'
             f'call("set_application_deadline", application_id=app["application_id"], deadline_date={v["deadline"]!r}, '
             'deadline_type="follow_up")\n')
    code = code.replace('call("submit_application", application_id=app["application_id"])\n', '')
    code += 'call("submit_application", application_id=app["application_id"])\n'
    if typo:
        code = code.replace('priority_level=' + str(v["priority"]), 'priority_level=9')
    return (code, {},
            f"Create an application for {v['title']} at {v['company']} in {v['city']} for {v['name']} ({v['email']}), "
            f"upload the resume '{v['resume']}' (PDF) and the cover letter '{v['letter']}', set priority {v['priority']} "
            f"('{v['reason']}'), a follow-up deadline of {v['deadline']}, and submit.",
            f"Let's apply to {v['company']} for {v['title']} ({v['city']}). Resume: \"{v['resume']}\" as a PDF; cover "
            f"letter: \"{v['letter']}\". It's a priority {v['priority']} for me - {v['reason']}. I want to follow up "
            f"by {v['deadline']}. Submit it when everything's attached.")


def accept(v, typo):
    code = _find(v, typo) + (
        'got = call("get_application_offer", application_id=app["application_id"])\n'
        'call("respond_to_offer", offer_id=got["offer"]["offer_id"], decision="accept")\n'
        f'call("add_application_note", application_id=app["application_id"], note_content={v["note"]!r}, note_type="general")\n')
    state = {"job_application": [_app(v, "offer_received")],
             "job_offer": [{"offer_id": "OFR-0001", "application_id": "APP-0001", "base_salary": v["high"],
                            "salary_currency": "USD", "start_date": v["start"], "response_deadline": v["deadline"],
                            "offer_status": "pending", "received_date": "2025-02-25"}]}
    if typo:  # the offer points at an application the state does not have
        state["job_offer"][0]["application_id"] = "APP-0002"
    return (code, state,
            f"Accept the pending offer for my {v['title']} application at {v['company']} and add the note '{v['note']}'.",
            f"I've decided: I'm taking the {v['company']} offer for {v['title']}. Accept it and note \"{v['note']}\".")


def reschedule(v, typo):
    code = _find(v, typo) + (
        'mine = call("get_application_interviews", application_id=app["application_id"], interview_status="scheduled")\n'
        f'call("schedule_interview", application_id=app["application_id"], interview_type="behavioral_interview", '
        f'interview_date={v["when"]!r}, interviewer_name={v["interviewer"]!r}, interview_location="Video call")\n'
        'call("cancel_interview", interview_id=mine["interviews"][0]["interview_id"])\n'
        f'call("add_application_note", application_id=app["application_id"], note_content={v["note"]!r}, note_type="reminder")\n')
    return (code, {"job_application": [_app(v, "interviewing")],
                   "interview_schedule": [_interview_row(v, when="2025-03-05T10:00:00")]},
            f"Cancel the scheduled behavioral interview of my {v['title']} application at {v['company']}, schedule "
            f"a new behavioral interview on {v['when']} with {v['interviewer']} by video call, and add the reminder "
            f"note '{v['note']}'.",
            f"{v['company']} moved my behavioral interview for {v['title']}: drop the old slot and book "
            f"{v['when']} instead, still {v['interviewer']} over video. Remind me: \"{v['note']}\"")


def decline(v, typo):
    code = (f'offers = call("list_job_offers", offer_status="pending")["offers"]\n'
            f'mine = [o for o in offers if o["company_name"] == {(v["company"] + "x") if typo else v["company"]!r}][0]\n'
            f'call("add_application_note", application_id=mine["application_id"], note_content={v["note"]!r}, note_type="general")\n'
            f'call("set_application_priority", application_id=mine["application_id"], priority_level=1, '
            f'priority_reason="Offer declined")\n'
            'call("respond_to_offer", offer_id=mine["offer_id"], decision="decline")\n')
    state = {"job_application": [_app(v, "offer_received")],
             "job_offer": [{"offer_id": "OFR-0001", "application_id": "APP-0001", "base_salary": v["low"],
                            "salary_currency": "USD", "start_date": v["start"], "response_deadline": v["deadline"],
                            "offer_status": "pending", "received_date": "2025-02-25"}]}
    return (code, state,
            f"Decline the pending offer from {v['company']}, note '{v['note']}' on that application, and drop its "
            "priority to 1 with the reason 'Offer declined'.",
            f"I'm turning down {v['company']}'s offer. Decline it, write down \"{v['note']}\", and set that one to "
            "the lowest priority (reason: Offer declined).")


SCENARIOS = {1: [priority, note, deadline, salary], 2: [apply_new, interview, offer, feedback],
             3: [full_apply, accept, reschedule, decline]}
TOOLS = {priority: {"search_apps_by_keyword", "set_application_priority"},
         note: {"search_apps_by_keyword", "add_application_note"},
         deadline: {"search_apps_by_keyword", "set_application_deadline"},
         salary: {"search_apps_by_keyword", "add_salary_expectation"},
         apply_new: {"create_job_application", "upload_resume", "submit_application"},
         interview: {"search_apps_by_keyword", "schedule_interview", "add_application_stage"},
         offer: {"search_apps_by_keyword", "record_job_offer", "add_application_note"},
         feedback: {"search_apps_by_keyword", "get_application_interviews", "complete_interview", "add_interview_feedback"},
         full_apply: {"create_job_application", "upload_resume", "upload_cover_letter", "set_application_priority",
                      "set_application_deadline", "submit_application"},
         accept: {"search_apps_by_keyword", "get_application_offer", "respond_to_offer", "add_application_note"},
         reschedule: {"search_apps_by_keyword", "get_application_interviews", "cancel_interview", "schedule_interview",
                      "add_application_note"},
         decline: {"list_job_offers", "respond_to_offer", "add_application_note", "set_application_priority"}}


def values(n: int) -> dict:
    fake = Faker("en_US")
    fake.seed_instance(1000 + n)
    name = fake.name()
    low = 60_000 + 5_000 * fake.random_int(0, 14)
    return {"name": name, "email": ".".join(re.findall(r"[a-z]+", name.lower())) + "@example.com",
            "phone": fake.numerify("555-###-####"), "title": fake.job().split(",")[0][:60],
            "company": fake.company(), "city": fake.city(), "years": fake.random_int(2, 15),
            "priority": fake.random_int(2, 5), "reason": fake.sentence(nb_words=6).rstrip("."),
            "note": fake.sentence(nb_words=8), "feedback": fake.sentence(nb_words=10), "rating": fake.random_int(2, 5),
            "deadline": f"2025-03-{fake.random_int(10, 28):02d}", "start": f"2025-04-{fake.random_int(1, 28):02d}",
            "when": f"2025-03-{fake.random_int(3, 27):02d}T{fake.random_int(9, 16):02d}:30:00",
            "interviewer": fake.name(), "low": low, "high": low + 15_000,
            "resume": f"{name}, {fake.random_int(2, 15)} years: {fake.bs()}.", "letter": fake.paragraph(nb_sentences=2)}


class AuthorBackend:
    """Answers the task stage's prompts (see the module docstring)."""

    model = "authored"

    def __init__(self, recorded: dict[str, dict] | None = None):
        self.picked: dict[str, object] = {}
        self.used: dict[object, int] = {}
        self.recorded = recorded or {}  # steps kept from the transcript: answered as they were

    def complete(self, key: StepKey, turn: int, messages: list[dict]) -> tuple[str, dict]:
        kept = self.recorded.get(f"{key}#{turn}" if turn else str(key))
        if kept is not None:  # the same answer and usage, whatever the prompt has become since
            return kept["response"], kept["usage"]
        prompt = messages[-1]["content"] if turn == 0 else messages[1]["content"]
        task, _, step = key.item.partition(".")
        n = int(task.split("_")[1])
        answer = getattr(self, step.rstrip("0123456789"))(task, n, key.attempt, prompt)
        text = json.dumps(answer, indent=1)
        usage = {"prompt_tokens": sum(count_tokens(m["content"]) for m in messages), "completion_tokens": count_tokens(text)}
        return text, usage

    def _scenario(self, task: str, prompt: str):
        if task not in self.picked:
            level = int(re.search(r"Complexity level (\d)", prompt).group(1))
            seed = set(re.search(r"dependency graph: (.*)\n", prompt).group(1).split(" -> "))
            self.picked[task] = max(SCENARIOS[level], key=lambda s: (len(TOOLS[s] & seed) - self.used.get(s, 0),
                                                                        -SCENARIOS[level].index(s)))
            self.used[self.picked[task]] = self.used.get(self.picked[task], 0) + 1
        return self.picked[task]

    def chain(self, task, n, attempt, prompt):
        scenario = self._scenario(task, prompt)
        code, _, draft, _ = scenario(values(n), attempt == 0 and n % 7 == 3 and scenario is not accept)
        return {"goal": draft, "code": code}

    def state(self, task, n, attempt, prompt):
        scenario = self.picked[task]
        _, rows, _, _ = scenario(values(n), attempt == 0 and n % 7 == 3 and scenario is accept)
        return {"rows": rows}

    def gate(self, task, n, attempt, prompt):
        c = float(re.search(r"c\(H\) = ([\d.]+)", prompt).group(1))
        g = float(re.search(r"g\(D\) = ([\d.]+)", prompt).group(1))
        p = round(max(0.0, min(1.0, g * (1.0 - c) + 0.1)), 2)
        return {"p": p, "reason": f"complexity {c:.2f} leaves room and {g:.0%} of searches found a chain"
                if p >= 0.5 else f"complexity {c:.2f} is high enough or the remaining tools rarely chain ({g:.0%})"}

    def instruction(self, task, n, attempt, prompt):
        v = values(n)
        _, _, draft, said = self.picked[task](v, False)
        if attempt == 0 and n % 11 == 5:
            said += " (It's application APP-0001 in the tracker.)"
        profile = {"name": v["name"], "email": v["email"], "persona": f"{v['name']}, a job seeker who tracks "
                   f"applications in a personal tracker and prefers short answers",
                   "known_info": re.findall(r"'([^']+)'", draft) or [v["company"], v["title"]],
                   "unknown_info": "record ids; the user refers to applications by company and job title"}
        return {"draft": draft, "instruction": said, "user_profile": profile}

    def family(self, task, n, attempt, prompt):
        chosen = dict(FAMILIES[(n - 1) % len(FAMILIES)])
        if attempt == 0 and n % 9 == 4:  # a misspelt tool: the first instance fails and the family is repaired
            chosen["program"] = chosen["program"].replace('call("search_apps_by_keyword"', 'call("search_applications"')
        return chosen

    def reward(self, task, n, attempt, prompt):
        columns = re.search(r"these columns: (.*)\.$", prompt).group(1).split(", ")
        return {"policies": {c: "semantic" if c.endswith(("_reason", "_notes")) else "hard" for c in columns}}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m domains.job_seeking.author_tasks", description=__doc__)
    parser.add_argument("name", nargs="?", default="job_seeking", help="the folder under domains/ (default job_seeking)")
    parser.add_argument("--n", type=int, default=DEFAULT_N)
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--families", type=int, default=0)
    parser.add_argument("--instances", type=int, default=DEFAULT_INSTANCES)
    parser.add_argument("--answers", type=int, default=0)
    parser.add_argument("--refusals", type=int, default=0)
    args = parser.parse_args(argv)
    out = registry.folder(args.name)
    transcript = Transcript(out / "tasks" / "transcript.jsonl")
    recorded = dict(transcript.entries) if args.families or args.answers or args.refusals else {}
    transcript.clear()
    llm = LLM(AuthorBackend(recorded), transcript)
    try:
        summary = run_stage(out, llm, args.n, args.seed, answers=args.answers, refusals=args.refusals,
                            families=args.families, instances=args.instances, authored=True)
    finally:
        transcript.save()
    print(json.dumps(summary, indent=1), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
