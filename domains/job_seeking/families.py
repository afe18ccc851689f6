"""Task families for job_seeking, written by hand as a model would answer the family prompt.

Each is what `tasks/family_prompt.py` asks for: a generator `instance(rng, level)` and a program
over `params`. The benchmark of a family run (`python -m bench families`) answers the task
stage's family requests with them; they share the value lists below, which a model would write
into each generator.
"""

from __future__ import annotations

VALUES = '''
FIRST = ["Ana", "Tomas", "Mei", "Kwame", "Sofia", "Ravi", "Lena", "Omar", "Grace", "Diego"]
LAST = ["Ruiz", "Becker", "Lin", "Mensah", "Rossi", "Iyer", "Novak", "Haddad", "Okafor", "Silva"]
COMPANIES = ["Lumen Analytics", "Orbit Labs", "Quill Health", "Nimbus Freight", "Vela Robotics", "Tessellate",
             "Harbor Bank", "Cinder Games", "Bright Ledger", "Northwind Energy"]
TITLES = ["Data Engineer", "Product Designer", "Backend Developer", "QA Analyst", "UX Researcher",
          "Site Reliability Engineer", "Marketing Manager", "Financial Analyst"]

def person(rng):
    name = f"{rng.choice(FIRST)} {rng.choice(LAST)}"
    return name, name.lower().replace(" ", ".") + "@example.com"

def applications(rng, name, email, companies, title, status):
    return [{"application_id": f"APP-{i + 1:04d}", "applicant_name": name, "email": email, "job_title": title,
             "company_name": company, "status": status, "application_date": "2025-02-10",
             "created_at": "2025-02-10T10:00:00"} for i, company in enumerate(companies)]
'''

# Programs: the application at params' company (or each of params' companies) with params' title,
# then the family's calls.
ONE = '''apps = call("search_apps_by_keyword", keyword=params["company"])["applications"]
app = [a for a in apps if a["job_title"] == params["title"]][0]
'''
EACH = '''for company in params["companies"]:
    apps = call("search_apps_by_keyword", keyword=company)["applications"]
    app = [a for a in apps if a["job_title"] == params["title"]][0]
'''

PRIORITY = {"goal": "give some of one's applications a priority, with a reason", "generator": VALUES + '''
REASONS = ["the recruiter said they are hiring fast", "it is my first choice", "a former colleague referred me",
           "the team builds exactly what I want to work on", "the salary range is the best I have seen"]

def instance(rng, level):
    name, email = person(rng)
    companies, title = rng.sample(COMPANIES, level), rng.choice(TITLES)
    priority, reason = rng.randint(1, 5), rng.choice(REASONS)
    where = " and ".join(companies)
    return {"rows": {"job_application": applications(rng, name, email, companies, title, "submitted")},
            "params": {"companies": companies, "title": title, "priority": priority, "reason": reason},
            "instruction": rng.choice([
                f"Please set my {title} applications at {where} to priority {priority}; reason: {reason}.",
                f"Bump {where} ({title}) to priority {priority} for me, because {reason}.",
                f"I'm {name}. My {title} application at {where} should be priority {priority} ({reason})."]),
            "user_profile": {"name": name, "persona": "a job seeker who keeps answers short",
                             "known_info": [email, title, *companies], "unknown_info": ["application ids"]}}
''', "program": EACH + '''    call("set_application_priority", application_id=app["application_id"],
         priority_level=params["priority"], priority_reason=params["reason"])
'''}

NOTE = {"goal": "keep a note on some of one's applications", "generator": VALUES + '''
NOTES = ["Recruiter asked for two references by Friday", "Hiring manager prefers a call after 3pm",
         "Sent a thank-you email to the panel", "Portfolio link requested for the next round",
         "They mentioned a relocation package", "Team uses Go and Postgres; brush up before the onsite"]

def instance(rng, level):
    name, email = person(rng)
    companies, title = rng.sample(COMPANIES, level), rng.choice(TITLES)
    note, kind = rng.choice(NOTES), rng.choice(["general", "follow_up", "research"])
    where = " and ".join(companies)
    return {"rows": {"job_application": applications(rng, name, email, companies, title, "under_review")},
            "params": {"companies": companies, "title": title, "note": note, "kind": kind},
            "instruction": rng.choice([
                f"Add a {kind.replace('_', ' ')} note to my {title} applications at {where}: \\"{note}\\".",
                f"Note this down on {where} ({title}), as {kind}: {note}.",
                f"For my {title} application at {where}, please record a {kind} note saying: {note}"]),
            "user_profile": {"name": name, "persona": "an organised job seeker",
                             "known_info": [email, title, note, *companies], "unknown_info": ["application ids"]}}
''', "program": EACH + '''    call("add_application_note", application_id=app["application_id"], note_content=params["note"],
         note_type=params["kind"])
'''}

DEADLINE = {"goal": "put a deadline on some of one's applications", "generator": VALUES + '''
def instance(rng, level):
    name, email = person(rng)
    companies, title = rng.sample(COMPANIES, level), rng.choice(TITLES)
    day, kind = f"2025-03-{rng.randint(5, 28):02d}", rng.choice(["follow_up", "response", "application"])
    where = " and ".join(companies)
    return {"rows": {"job_application": applications(rng, name, email, companies, title, "submitted")},
            "params": {"companies": companies, "title": title, "day": day, "kind": kind},
            "instruction": rng.choice([
                f"Set a {kind.replace('_', ' ')} deadline of {day} on my {title} applications at {where}.",
                f"I need a {kind} deadline on {day} for {where} ({title}).",
                f"Can you put {day} as the {kind.replace('_', ' ')} deadline for the {title} role at {where}?"]),
            "user_profile": {"name": name, "persona": "a job seeker juggling several processes",
                             "known_info": [email, title, day, *companies], "unknown_info": ["application ids"]}}
''', "program": EACH + '''    call("set_application_deadline", application_id=app["application_id"], deadline_date=params["day"],
         deadline_type=params["kind"])
'''}

STATUS = {"goal": "ask where an application stands", "generator": VALUES + '''
def instance(rng, level):
    name, email = person(rng)
    companies, title = rng.sample(COMPANIES, 1 + level), rng.choice(TITLES)
    rows = applications(rng, name, email, companies, title, "submitted")
    for row in rows:
        row["status"] = rng.choice(["submitted", "under_review", "interviewing"])
        row["priority_level"] = rng.randint(1, 5)
    asked = rows[0]
    company = asked["company_name"]
    return {"rows": {"job_application": rows}, "params": {"company": company, "title": title},
            "instruction": rng.choice([
                f"Where does my {title} application at {company} stand, and what priority did I give it?",
                f"Quick check on {company} ({title}): what's its status and my priority for it?",
                f"I'm {name}. Can you tell me the status and priority of my {title} application with {company}?"]),
            "user_profile": {"name": name, "persona": "a job seeker checking in", "known_info": [email, title, company],
                             "unknown_info": ["status", "priority"]},
            "facts": {"status": asked["status"], "priority": asked["priority_level"]}}
''', "program": ONE + '''call("get_application_details", application_id=app["application_id"])
'''}

INTERVIEW = {"goal": "put an interview the employer set up in the tracker", "generator": VALUES + '''
KINDS = ["phone_screening", "technical_interview", "behavioral_interview", "onsite_interview", "final_interview"]
PLACES = ["Video call", "Phone", "Head office, 4th floor", "Downtown office", "Zoom link from the recruiter"]

def instance(rng, level):
    name, email = person(rng)
    company, title = rng.choice(COMPANIES), rng.choice(TITLES)
    kind, place = rng.choice(KINDS), rng.choice(PLACES)
    when = f"2025-03-{rng.randint(4, 27):02d}T{rng.randint(9, 16):02d}:30"
    interviewer = f"{rng.choice(FIRST)} {rng.choice(LAST)}"
    stage = kind if level >= 2 else None  # a higher level also records the hiring stage
    words = kind.replace("_", " ")
    then = f" and mark that it reached the {words} stage" if stage else ""
    return {"rows": {"job_application": applications(rng, name, email, [company], title, "under_review")},
            "params": {"company": company, "title": title, "kind": kind, "when": when, "interviewer": interviewer,
                       "place": place, "stage": stage},
            "instruction": rng.choice([
                f"{company} set up a {words} for my {title} application: {when} with {interviewer}, {place}. "
                f"Please add it{then}.",
                f"Schedule my {words} with {interviewer} at {company} ({title}) for {when}, location: {place}{then}."]),
            "user_profile": {"name": name, "persona": "a job seeker who just got an invitation",
                             "known_info": [email, company, title, when, interviewer, place],
                             "unknown_info": ["application ids"]}}
''', "program": ONE + '''call("schedule_interview", application_id=app["application_id"], interview_type=params["kind"],
     interview_date=params["when"], interviewer_name=params["interviewer"], interview_location=params["place"])
if params["stage"]:
    call("add_application_stage", application_id=app["application_id"], stage_name=params["stage"])
'''}

WITHDRAW = {"goal": "withdraw some of one's applications", "generator": VALUES + '''
def instance(rng, level):
    name, email = person(rng)
    companies, title = rng.sample(COMPANIES, level), rng.choice(TITLES)
    where = " and ".join(companies)
    return {"rows": {"job_application": applications(rng, name, email, companies, title, rng.choice(
                ["submitted", "under_review"]))},
            "params": {"companies": companies, "title": title},
            "instruction": rng.choice([
                f"I accepted another job, please withdraw my {title} applications at {where}.",
                f"Pull my {title} application at {where}; I'm no longer interested.",
                f"Withdraw {where} ({title}) for me, please."]),
            "user_profile": {"name": name, "persona": "a job seeker who has settled elsewhere",
                             "known_info": [email, title, *companies], "unknown_info": ["application ids"]}}
''', "program": EACH + '''    call("withdraw_application", application_id=app["application_id"])
'''}

OFFER = {"goal": "ask what an offer holds", "generator": VALUES + '''
def instance(rng, level):
    name, email = person(rng)
    companies, title = rng.sample(COMPANIES, level), rng.choice(TITLES)
    rows = applications(rng, name, email, companies, title, "offer_received")
    offers = [{"offer_id": f"OFR-{i + 1:04d}", "application_id": row["application_id"], "offer_status": "pending",
               "received_date": "2025-02-24", "base_salary": float(rng.randrange(70000, 160000, 2500)),
               "salary_currency": "USD", "start_date": f"2025-04-{rng.randint(1, 28):02d}",
               "response_deadline": f"2025-03-{rng.randint(8, 20):02d}"} for i, row in enumerate(rows)]
    company, offer = companies[0], offers[0]
    return {"rows": {"job_application": rows, "job_offer": offers}, "params": {"company": company, "title": title},
            "instruction": rng.choice([
                f"What base salary did {company} offer me for the {title} job, and when would I start?",
                f"Remind me of the {company} offer ({title}): the salary and the start date?",
                f"I'm {name}. For the {title} offer from {company}, what's the pay and the start date?"]),
            "user_profile": {"name": name, "persona": "a job seeker weighing offers", "known_info": [email, company, title],
                             "unknown_info": ["base salary", "start date"]},
            "facts": {"base salary": offer["base_salary"], "start date": offer["start_date"]}}
''', "program": ONE + '''call("get_application_offer", application_id=app["application_id"])
'''}

NEXT_INTERVIEW = {"goal": "ask when and with whom an interview is", "generator": VALUES + '''
def instance(rng, level):
    name, email = person(rng)
    company, title = rng.choice(COMPANIES), rng.choice(TITLES)
    rows = applications(rng, name, email, [company], title, "interviewing")
    interviews = [{"interview_id": f"INT-{i + 1:04d}", "application_id": "APP-0001", "interview_type": kind,
                   "interview_date": f"2025-03-{rng.randint(4 + 8 * i, 10 + 8 * i):02d}T{rng.randint(9, 16):02d}:00:00",
                   "interviewer_name": f"{rng.choice(FIRST)} {rng.choice(LAST)}", "interview_location": "Video call",
                   "interview_status": "scheduled", "created_at": "2025-02-20T09:00:00"}
                  for i, kind in enumerate(["phone_screening", "technical_interview", "final_interview"][:level])]
    first = interviews[0]
    return {"rows": {"job_application": rows, "interview_schedule": interviews},
            "params": {"company": company, "title": title},
            "instruction": rng.choice([
                f"When is my first interview for the {title} role at {company}, and who is it with?",
                f"Who am I meeting first at {company} for {title}, and on what date?"]),
            "user_profile": {"name": name, "persona": "a nervous candidate", "known_info": [email, company, title],
                             "unknown_info": ["interview date", "interviewer"]},
            "facts": {"interviewer": first["interviewer_name"], "interview date": first["interview_date"]}}
''', "program": ONE + '''call("get_application_interviews", application_id=app["application_id"])
'''}

FAMILIES = [PRIORITY, NOTE, STATUS, DEADLINE, INTERVIEW, OFFER, WITHDRAW, NEXT_INTERVIEW]
