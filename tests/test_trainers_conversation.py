"""The adapters' talk with the simulated user (trainers/conversation.py) against a served domain with
the user's routes and against one without them (`python -m mcp_servers`): there, single-turn
episodes and every task, with a warning, rather than a failed rollout."""

from __future__ import annotations

import json
import socket
import threading
import time

import pytest
import uvicorn

from mcp_servers.control_token import TOKEN_ENV
from mcp_servers.http_app import create_app
from rollouts.user_api import user_for, user_routes
from tests.support.rollouts_tasks import CONTROL_TOKEN
from tests.support.rollouts_tasks import CONVERSATIONAL as TASK
from trainers.conversation import connected, playable, tell_user


def serve(app):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.02)
    return server, thread, f"http://127.0.0.1:{port}"


@pytest.fixture(params=["with user", "without user"])
def server(request, conversational_env, tmp_path, monkeypatch):
    env = conversational_env
    monkeypatch.setenv(TOKEN_ENV, CONTROL_TOKEN)  # the adapters' client reads it
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps({f"user/{TASK}@0/1": {"message": "The Infrastructure one."},
                                   f"user/{TASK}@0/2": {"message": "###STOP###"}}))
    routes = user_routes(env, user_for(env, answers=answers)) if request.param == "with user" else []
    running, thread, url = serve(create_app(env, token=CONTROL_TOKEN, extra_routes=routes))
    yield request.param, url
    running.should_exit = True
    thread.join(10)


def test_the_user_answers_until_it_stops_or_a_server_without_one_ends_the_episode(server, recwarn):
    kind, url = server
    with connected(url) as control:
        episode = control.open(TASK)["episode_id"]
        first = tell_user(control, episode, "Which Figma role?")
        control.call(episode, "withdraw_application", {"application_id": "APP-0010"})
        if kind == "with user":
            assert (first.message, first.done, first.reward) == ("The Infrastructure one.", False, 0.0)
            last = tell_user(control, episode, "Withdrawn.")
            assert last.done and last.reward == 1.0 and last.message == "###STOP###"
            assert TASK not in playable(control, single_turn=True) and TASK in playable(control)
            assert not recwarn.list
        else:  # ended, unanswered, scored on the state it had then
            assert first.done and first.message == "" and first.reward < 1.0
            assert TASK in playable(control, single_turn=True)
            assert any("no simulated user" in str(w.message) for w in recwarn.list)
