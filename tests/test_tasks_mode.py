"""Which tasks need the user's answers (tasks/mode.py), and the bundled tasks' marks."""

from __future__ import annotations

import json
from pathlib import Path

from domains.spec import DomainSpec
from domains.task_model import Task
from tasks.mode import argument_sources, finders, task_mode

ROOT = Path(__file__).resolve().parent.parent
PROFILE = {"name": "Jennifer Walker", "email": "jennifer.walker@example.com"}
STATE = {"job_application": [{"application_id": "APP-0001", "company_name": "Allen Inc", "job_title": "Sales rep",
                              "email": "jennifer.walker@example.com"}]}
CHOICES = {"upload_resume": {"resume_format"}}
SPEC = DomainSpec.model_validate_json((ROOT / "domains" / "job_seeking" / "spec.json").read_text())
TOOLS = finders(SPEC.tools, SPEC.tool_tables)  # job_seeking's read tools
WITHOUT_FINDER = finders([t for t in SPEC.tools if t.name != "find_user_profiles"], SPEC.tool_tables)
CREATE = {"tool": "create_job_application", "arguments": {
    "applicant_name": "Jennifer Walker", "company_name": "Lumen", "job_title": "Data Engineer",
    "email": "jennifer.walker@example.com"}}
UPLOAD = {"tool": "upload_resume", "arguments": {"application_id": "APP-0007", "resume_content": "Ten years of SQL.",
                                                 "resume_format": "pdf"}}
CREATED = [{"application_id": "APP-0007", "status": "draft"}, {"ok": True}]


def sources(instruction: str, calls=(CREATE, UPLOAD), results=CREATED, profile=PROFILE, state=STATE, tools=TOOLS):
    return argument_sources(instruction, profile, state, list(calls), list(results), CHOICES, tools)


def test_an_email_only_the_profile_holds_makes_the_task_conversational():
    found = sources("I am Jennifer Walker: apply to Lumen for Data Engineer with my resume 'Ten years of SQL.'")
    assert found == {"user": ["create_job_application.email"], "unfounded": []}
    assert task_mode(found) == "conversational"


def test_a_request_that_names_everything_is_single_turn():
    # the created id comes from the create call's output, the format is the schema's choice
    found = sources("I am Jennifer Walker (jennifer.walker@example.com): apply to Lumen for Data Engineer with my "
                    "resume 'Ten years of SQL.'")
    assert found == {"user": [], "unfounded": []} and task_mode(found) == "single_turn"


def test_a_record_the_request_identifies_is_found_with_the_tools_and_a_missing_value_is_unfounded():
    withdraw = {"tool": "withdraw_application", "arguments": {"application_id": "APP-0001", "reason": "took another"}}
    found = sources("Withdraw my Allen Inc application.", [withdraw], [{"ok": True}])
    assert found == {"user": [], "unfounded": ["withdraw_application.reason"]} and task_mode(found) == "single_turn"
    # without a tool that reads applications, the record the request names cannot be found
    found = sources("Withdraw my Allen Inc application.", [withdraw], [{"ok": True}], tools=[])
    assert found["unfounded"] == ["withdraw_application.application_id", "withdraw_application.reason"]


MAYA = {"profile_id": "PRO-0004", "full_name": "Maya Chen", "email": "maya.chen@example.com", "salary_currency": "USD",
        "created_at": "2025-01-05T10:00:00"}
HEADLINE = {"tool": "update_user_profile", "arguments": {"profile_id": "PRO-0004", "headline": "Staff Engineer"}}


def test_a_profile_id_the_users_email_finds_is_single_turn_with_the_finder_and_unfounded_without():
    said = "My profile is under maya.chen@example.com: set its headline to Staff Engineer."
    state = {"user_profile": [MAYA]}
    found = sources(said, [HEADLINE], [{"ok": True}], profile={"name": "Maya Chen"}, state=state)
    assert found == {"user": [], "unfounded": []} and task_mode(found) == "single_turn"
    # get_user_profile takes only the id and nothing lists profiles: the user does not know PRO-0004
    found = sources(said, [HEADLINE], [{"ok": True}], profile={"name": "Maya Chen"}, state=state,
                    tools=WITHOUT_FINDER)
    assert found == {"user": [], "unfounded": ["update_user_profile.profile_id"]}
    # the name finds it too (full_name is a parameter of the finder)
    found = sources("I'm Maya Chen; set my profile headline to Staff Engineer.", [HEADLINE], [{"ok": True}],
                    profile={"name": "Maya Chen"}, state=state)
    assert task_mode(found) == "single_turn" and not found["unfounded"]


def test_the_users_own_email_is_found_by_their_name_when_their_profile_is_on_record():
    said = "I am Maya Chen: apply to Lumen for Data Engineer with my resume 'Ten years of SQL.'"
    maya = {"name": "Maya Chen", "email": "maya.chen@example.com"}
    create = {"tool": "create_job_application", "arguments": {**CREATE["arguments"], "applicant_name": "Maya Chen",
                                                               "email": "maya.chen@example.com"}}
    assert sources(said, [create, UPLOAD], profile=maya, state={"user_profile": [MAYA]}) == {"user": [],
                                                                                             "unfounded": []}
    # no profile on record: only the user can give the email
    found = sources(said, [create, UPLOAD], profile=maya, state={})
    assert found == {"user": ["create_job_application.email"], "unfounded": []}
    assert task_mode(found) == "conversational"


def test_every_bundled_task_is_marked_and_new_applications_without_an_email_are_conversational():
    tasks = [Task.model_validate_json(p.read_text()) for p in sorted((ROOT / "domains" / "job_seeking" / "tasks")
                                                                      .glob("task_*.json"))]
    assert tasks and all(t.mode in ("single_turn", "conversational") for t in tasks)
    for task in tasks:
        creates = [c for c in task.reference_solution if c.tool == "create_job_application"]
        email_unsaid = any(c.arguments["email"] not in task.instruction for c in creates)
        assert (task.mode == "conversational") == email_unsaid, task.id
    assert json.loads((ROOT / "domains" / "task.schema.json").read_text())["properties"]["mode"]
