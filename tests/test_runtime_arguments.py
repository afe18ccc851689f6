"""Argument validation in the server process: JSON Schema shown to the agent, strict checks, clear errors."""

from __future__ import annotations

import pytest

from domains.spec import ToolSchema
from domains.tool_schemas import ArgumentError, ArgumentValidator, annotations, input_schema, openai_function

TOOL = ToolSchema.model_validate({
    "name": "schedule_interview", "description": "Schedule an interview.", "mutates": True, "destructive": False,
    "output": [{"name": "interview_id", "type": "string"}],
    "parameters": [
        {"name": "application_id", "type": "string", "description": "Application id"},
        {"name": "day", "type": "string", "description": "Interview day", "format": "YYYY-MM-DD"},
        {"name": "mode", "type": "string", "description": "How", "enum": ["phone", "video", "onsite"],
         "required": False, "default": "video"},
        {"name": "duration_hours", "type": "number", "description": "Length", "required": False},
        {"name": "panel", "type": "array", "items": "string", "description": "Interviewers", "required": False},
        {"name": "remote", "type": "boolean", "description": "Remote?", "required": False},
        {"name": "extra", "type": "object", "description": "Anything else", "required": False},
        {"name": "schema", "type": "string", "description": "A name pydantic models reserve", "required": False},
    ],
})


@pytest.fixture(scope="module")
def check():
    return ArgumentValidator(TOOL, max_string_chars=100, max_argument_bytes=2_000).validate


def test_schema_carries_types_descriptions_enums_defaults_and_formats():
    schema = input_schema(TOOL)
    props = schema["properties"]
    assert schema["required"] == ["application_id", "day"]
    assert props["day"] == {"type": "string", "description": "Interview day. Format: YYYY-MM-DD.", "format": "date"}
    assert props["mode"] == {"type": "string", "description": "How", "enum": ["phone", "video", "onsite"],
                             "default": "video"}
    assert props["panel"]["items"] == {"type": "string"}
    assert openai_function(TOOL)["function"]["parameters"] == schema


def test_annotations_follow_mutates_and_destructive():
    assert annotations(TOOL)["read_only_hint"] is False and annotations(TOOL)["destructive_hint"] is False
    reader = TOOL.model_copy(update={"mutates": False})
    assert annotations(reader)["read_only_hint"] is True and annotations(reader)["idempotent_hint"] is True
    deleter = TOOL.model_copy(update={"destructive": True})
    assert annotations(deleter)["destructive_hint"] is True


def test_valid_arguments_pass_and_numbers_accept_integers(check):
    given = {"application_id": "AP-1", "day": "2025-03-02", "mode": "phone", "duration_hours": 1, "panel": ["a"],
             "remote": False, "extra": {"note": "x"}, "schema": "s"}
    assert check(given) == {**given, "duration_hours": 1.0}
    assert check({"application_id": "AP-1", "day": "d", "mode": None}) == {"application_id": "AP-1", "day": "d"}


@pytest.mark.parametrize("arguments, message", [
    ({"day": "d"}, "missing required argument 'application_id' (string: Application id)"),
    ({"application_id": None, "day": "d"}, "argument 'application_id' must be a string, got null"),
    ({"application_id": "A", "day": "d", "mode": "fax"}, "argument 'mode' must be one of 'phone', 'video', 'onsite'; got 'fax'"),
    ({"application_id": "A", "day": "d", "duration_hours": "2"}, "argument 'duration_hours' must be a number, got a string"),
    ({"application_id": "A", "day": "d", "duration_hours": float("nan")}, "argument 'duration_hours' must be a finite number"),
    ({"application_id": "A", "day": "d", "remote": 1}, "argument 'remote' must be a boolean (true or false), got an integer"),
    ({"application_id": "A", "day": "d", "panel": "a"}, "argument 'panel' must be an array, got a string"),
    ({"application_id": "A", "day": "d", "panel": ["a", 2]}, "argument 'panel[1]' must be a string, got an integer"),
    ({"application_id": "A", "day": "d", "extra": [1]}, "argument 'extra' must be an object, got an array"),
    ({"application_id": "A" * 101, "day": "d"}, "argument 'application_id' is too long: 101 characters, the limit is 100"),
    ({"application_id": "A", "day": "d", "panel": ["x" * 101]}, "argument 'panel[0]' is too long"),
    ({"application_id": "A", "day": "d", "extra": {"blob": "x" * 5_000}}, "the arguments are 5,0"),
    ({"application_id": "A", "day": "d", "when": "now"}, "unknown argument 'when'"),
])
def test_bad_arguments_are_refused_with_the_reason(check, arguments, message):
    with pytest.raises(ArgumentError) as refused:
        check(arguments)
    assert str(refused.value).startswith("schedule_interview: ")
    assert message in str(refused.value)


def test_every_problem_is_reported_at_once(check):
    with pytest.raises(ArgumentError) as refused:
        check({"day": 3, "bogus": 1})
    text = str(refused.value)
    assert "missing required argument 'application_id'" in text
    assert "argument 'day' must be a string, got an integer" in text
    assert "unknown argument 'bogus'" in text
