"""The LLM agent through a provider's own tool calling, against a local OpenAI-compatible endpoint:
the request carries the tools and the conversation as chat messages (assistant tool_calls, tool
results), trajectories.jsonl holds exactly what the model was sent and answered, and a model that
cannot call functions gets the JSON-object mode."""

from __future__ import annotations

import json

import litellm
import pytest

from rollouts.evaluate import EvalConfig, evaluate
from tests.support.model_endpoint import ModelEndpoint
from tests.support.rollouts_tasks import write_domain

OPENING = {"content": json.dumps({"message": "Please withdraw my Figma infrastructure application."})}
STOPPING = {"content": json.dumps({"message": "###STOP###"})}
WITHDRAW = {"name": "withdraw_application", "arguments": {"application_id": "APP-0010"}}


@pytest.fixture(scope="module")
def domain(tmp_path_factory):
    return write_domain(tmp_path_factory.mktemp("native") / "domains")


@pytest.fixture(autouse=True)
def api_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-local")


def run(domain, tmp_path, monkeypatch, model: str, replies: list[dict], **config):
    with ModelEndpoint(replies) as endpoint:
        monkeypatch.setenv("API_BASE", endpoint.url)
        run_dir, summary = evaluate(EvalConfig(domain=str(domain), model=model, k=1, concurrency=1,
                                               tasks=["withdraw_figma_infra"], runs_dir=tmp_path / "runs",
                                               workers=1, **config))
    (trajectory,) = [json.loads(line) for line in (run_dir / "trajectories.jsonl").read_text().splitlines()]
    agent = [r for r in endpoint.requests if not r["messages"][0]["content"].startswith("You are playing a user")]
    return trajectory, summary, agent


def test_the_agent_sends_tools_and_chat_messages_and_the_trajectory_is_what_it_sent(domain, tmp_path, monkeypatch):
    replies = [OPENING,
               {"tool_calls": [{"name": "withdraw_application", "arguments": "{not json"}]},  # a malformed call
               {"tool_calls": [WITHDRAW]},
               {"content": "Done: the Figma application is withdrawn."},
               STOPPING]
    trajectory, summary, agent = run(domain, tmp_path, monkeypatch, "openai/local-model", replies)
    assert summary["average_reward"] == 1.0 and trajectory["termination"] == "user_stop"
    assert len(agent) == 3
    for request in agent:
        assert request["tools"] == trajectory["tools"] and len(request["tools"]) > 5
        assert "response_format" not in request and "tool_choice" not in request
    # the malformed call was answered as a tool error, in the model's own call id
    bad_call, bad_result = agent[1]["messages"][-2:]
    assert bad_call["tool_calls"][0]["function"]["arguments"] == "{not json"
    assert bad_result["role"] == "tool" and bad_result["tool_call_id"] == bad_call["tool_calls"][0]["id"]
    assert "InvalidArguments" in bad_result["content"]
    call, result = agent[2]["messages"][-2:]
    assert call["role"] == "assistant" and call["tool_calls"][0]["function"]["name"] == "withdraw_application"
    assert result["role"] == "tool" and result["tool_call_id"] == call["tool_calls"][0]["id"]
    assert json.loads(result["content"])["status"] == "withdrawn"
    # each request is the trajectory so far; the trajectory adds the model's answer and the user's stop
    for request in agent:
        assert trajectory["messages"][:len(request["messages"])] == request["messages"]
    assert trajectory["messages"][len(agent[-1]["messages"]):] == [
        {"role": "assistant", "content": "Done: the Figma application is withdrawn."},
        {"role": "user", "content": "###STOP###"}]
    assert trajectory["messages"][0]["role"] == "system" and "Policy" in trajectory["messages"][0]["content"]


JSON_TURNS = [OPENING, {"content": json.dumps({"content": "", "tool_calls": [WITHDRAW]})},
              {"content": json.dumps({"content": "Done.", "tool_calls": []})}, STOPPING]


def assert_json_mode(agent: list[dict], trajectory: dict) -> None:
    assert len(agent) == 2 and trajectory["tool_calls"] == 1
    for request in agent:
        assert "tools" not in request and request["response_format"] == {"type": "json_object"}
        assert [m["role"] for m in request["messages"]] == ["system", "user"]
        assert "withdraw_application" in request["messages"][0]["content"]  # the tools, as text


def test_a_model_litellm_says_cannot_call_functions_gets_the_json_object_mode(domain, tmp_path, monkeypatch):
    model = "openai/no-tools-model"
    monkeypatch.setitem(litellm.model_cost, model, {"supports_function_calling": False, "litellm_provider": "openai",
                                                    "mode": "chat"})
    trajectory, summary, agent = run(domain, tmp_path, monkeypatch, model, JSON_TURNS)
    assert summary["average_reward"] == 1.0
    assert_json_mode(agent, trajectory)


def test_a_provider_that_refuses_the_tools_switches_the_agent_to_the_json_object_mode(domain, tmp_path, monkeypatch):
    replies = [OPENING, {"refuse": ["tools"]}, *JSON_TURNS[1:]]
    trajectory, summary, agent = run(domain, tmp_path, monkeypatch, "openai/local-model", replies)
    assert summary["average_reward"] == 1.0 and trajectory["error"] is None
    assert "tools" in agent[0] and "response_format" not in agent[0]  # refused with a 400
    assert_json_mode(agent[1:], trajectory)


def test_json_mode_when_told(domain, tmp_path, monkeypatch):
    trajectory, summary, agent = run(domain, tmp_path, monkeypatch, "openai/local-model", JSON_TURNS,
                                     tool_calling="json")
    assert summary["average_reward"] == 1.0
    assert_json_mode(agent, trajectory)
