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

# Programs: each company of params, its application with params' title, then the family's call.
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
''', "program": '''apps = call("search_apps_by_keyword", keyword=params["company"])["applications"]
app = [a for a in apps if a["job_title"] == params["title"]][0]
call("get_application_details", application_id=app["application_id"])
'''}

FAMILIES = [PRIORITY, NOTE, DEADLINE, STATUS]
