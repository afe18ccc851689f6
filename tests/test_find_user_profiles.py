"""job_seeking's find_user_profiles: the user's own profile found from what they say, so that a task
needing the profile id and naming the user's email is single-turn, and an agent solves it served."""

from __future__ import annotations

import json
import re

import pytest

from domains.spec import DomainSpec
from mcp_servers.runtime import Environment
from rollouts import AgentAction, NoopAgent, run_task
from rollouts import ToolCall as Call
from tasks.mode import argument_sources, finders, task_mode
from tests.support.rollouts_tasks import DOMAIN, write_domain

SPEC = DomainSpec.model_validate_json((DOMAIN / "spec.json").read_text())
SAMPLE = json.loads((DOMAIN / "sample_state.json").read_text())
MAYA = next(p for p in SAMPLE["user_profile"] if p["full_name"] == "Maya Chen")  # the sample state's own profile
HEADLINE = "Staff Backend Engineer"
TASK = {
    "instruction": f"My tracker profile is under {MAYA['email']}. Change its headline to '{HEADLINE}'.",
    "user_profile": {"name": "Maya Chen", "email": MAYA["email"]},
    "reference_solution": [
        {"tool": "find_user_profiles", "arguments": {"email": MAYA["email"]}},
        {"tool": "update_user_profile", "arguments": {"profile_id": MAYA["profile_id"], "headline": HEADLINE}}],
}


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    folder = write_domain(tmp_path_factory.mktemp("profiles"), {"profile_headline": TASK})
    with Environment(folder, workers=1) as served:
        yield served


class FindsThenUpdates:
    """Knows no record id: finds the profile by the email in the user's message, then updates the id it got."""

    name, needs_reference = "finds_then_updates", False

    async def act(self, view, messages):
        found = [json.loads(m["content"]) for m in messages if m["role"] == "tool"]
        if not found:
            said = " ".join(m["content"] for m in messages if m["role"] == "user")
            email = re.search(r"[\w.+-]+@[\w.-]+\w", said).group(0)
            return AgentAction(tool_calls=[Call(name="find_user_profiles", arguments={"email": email})]), {}
        if len(found) == 1:
            (profile,) = found[0]["profiles"]
            return AgentAction(tool_calls=[Call(name="update_user_profile", arguments={
                "profile_id": profile["profile_id"], "headline": HEADLINE})]), {}
        return AgentAction(content="Your headline is updated.", stop=True), {}


def test_the_tool_finds_a_profile_by_email_or_name_and_refuses_a_call_without_either(env):
    episode = env.create_episode("profile_headline")
    try:
        by_email = episode.call("find_user_profiles", {"email": MAYA["email"].upper()})
        assert by_email.ok and [p["profile_id"] for p in by_email.result["profiles"]] == [MAYA["profile_id"]]
        by_name = episode.call("find_user_profiles", {"full_name": "maya chen"})
        assert MAYA["profile_id"] in [p["profile_id"] for p in by_name.result["profiles"]]
        before = episode.state()
        for empty in ({}, {"email": None, "full_name": None}):
            refused = episode.call("find_user_profiles", empty)
            assert not refused.ok and refused.error_type == "InvalidInput"
            assert "email or full_name" in refused.error
        assert episode.call("find_user_profiles", {"email": "  "}).error_type == "InvalidInput"
        assert episode.state() == before
    finally:
        episode.close()


def test_a_task_needing_the_profile_id_that_names_the_email_is_single_turn_with_the_finder_only(env):
    calls, results = TASK["reference_solution"], [{"profiles": [MAYA]}, {"profile_id": MAYA["profile_id"]}]
    found = argument_sources(TASK["instruction"], TASK["user_profile"], SAMPLE, calls, results, {},
                             finders(env.tools.values(), SPEC.tool_tables))
    assert found == {"user": [], "unfounded": []} and task_mode(found) == "single_turn"
    # without the finder (the domain before it), the id comes from nowhere the user or the tools give
    without = [t for n, t in env.tools.items() if n != "find_user_profiles"]
    update = calls[1:]
    found = argument_sources(TASK["instruction"], TASK["user_profile"], SAMPLE, update, results[1:], {},
                             finders(without, SPEC.tool_tables))
    assert found["unfounded"] == ["update_user_profile.profile_id"]


def test_a_served_agent_finds_the_profile_and_solves_the_task(env):
    solved = run_task(env, "profile_headline", FindsThenUpdates())
    assert [c["function"]["name"] for m in solved.messages for c in m.get("tool_calls") or []] == [
        "find_user_profiles", "update_user_profile"]
    assert solved.reward == 1.0
    assert run_task(env, "profile_headline", NoopAgent()).reward < 1.0
