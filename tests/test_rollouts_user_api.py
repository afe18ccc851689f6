"""The simulated user's route beside the control API (rollouts/user_api.py): the conversation a
trainer's agent has with the user of an episode, scripted here, and nothing else in its replies."""

from __future__ import annotations

import json

import pytest
from starlette.testclient import TestClient

from mcp_servers.control_token import bearer
from mcp_servers.http_app import create_app
from rollouts.user_api import user_for, user_routes
from tests.support.rollouts_tasks import CONTROL_TOKEN
from tests.support.rollouts_tasks import CONVERSATIONAL as TASK


@pytest.fixture(scope="module")
def env(conversational_env):
    return conversational_env


def client(env, user) -> TestClient:
    return TestClient(create_app(env, token=CONTROL_TOKEN, extra_routes=user_routes(env, user)),
                      headers=bearer(CONTROL_TOKEN))


def test_the_scripted_user_answers_until_it_stops_and_never_says_more(env, tmp_path):
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps({f"user/{TASK}@0/1": {"message": "It is the Infrastructure one."},
                                   f"user/{TASK}@0/2": {"message": "###STOP###"}}))
    with client(env, user_for(env, answers=answers)) as http:
        episode = http.post("/episodes", json={"task_id": TASK}).json()["episode_id"]
        first = http.post(f"/episodes/{episode}/user", json={"message": "Which Figma role?"})
        assert first.status_code == 200
        assert first.json() == {"message": "It is the Infrastructure one.", "stop": False, "turns": 1}
        assert http.post(f"/episodes/{episode}/user", json={"message": "Withdrawn."}).json() == {
            "message": "###STOP###", "stop": True, "turns": 2}
        after = http.post(f"/episodes/{episode}/user", json={"message": "Anything else?"})
        assert after.status_code == 409 and "ended" in after.json()["error"]
        # a new episode of the same task starts a new conversation
        again = http.post("/episodes", json={"task_id": TASK}).json()["episode_id"]
        assert http.post(f"/episodes/{again}/user", json={"message": "Which role?"}).json()["turns"] == 1


def test_without_a_user_model_the_user_stops_at_the_first_message(env):
    with client(env, user_for(env)) as http:
        episode = http.post("/episodes", json={"task_id": TASK}).json()["episode_id"]
        assert http.post(f"/episodes/{episode}/user", json={"message": "Done."}).json()["stop"] is True


def test_the_task_modes_say_which_tasks_need_the_user(env):
    with client(env, user_for(env)) as http:
        modes = http.get("/tasks/modes").json()["modes"]
    assert modes == {task: "conversational" if task == TASK else None for task in env.task_ids()}


def test_bad_requests_get_clear_errors(env, tmp_path):
    with client(env, user_for(env)) as http:
        assert http.post("/episodes/nope/user", json={"message": "hi"}).status_code == 404
        sample = http.post("/episodes", json={}).json()["episode_id"]  # no task: nobody to talk to
        assert http.post(f"/episodes/{sample}/user", json={"message": "hi"}).status_code == 404
        episode = http.post("/episodes", json={"task_id": TASK}).json()["episode_id"]
        bad = http.post(f"/episodes/{episode}/user", json={"text": "hi"})
        assert bad.status_code == 400 and "message" in bad.json()["error"]
    missing = tmp_path / "empty.json"
    missing.write_text("{}")
    with client(env, user_for(env, answers=missing)) as http:  # the user's model fails: a 502 that says so
        episode = http.post("/episodes", json={"task_id": TASK}).json()["episode_id"]
        failed = http.post(f"/episodes/{episode}/user", json={"message": "hi"})
        assert failed.status_code == 502 and "no scripted answer" in failed.json()["error"]
