"""The expansion gate's g(D) from an LLM oracle agent, through litellm, against a local
OpenAI-compatible endpoint that plays a scripted model: g(D) is the share of the oracle's k
attempts that ran a chain of D's tools, the gate answers from it, and a recorded run replays."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from starlette.requests import Request
from starlette.responses import JSONResponse

from domains.spec import DomainSpec
from graph.model import from_json
from llm import LLM, LiteLLMBackend, Transcript, native_message, schema_text
from mcp_servers.runtime import Environment
from tasks.build import Stage, build_task
from tasks.expand import restricted, structural_link
from tasks.oracle import LLMOracle, chain_in, oracle_for
from tasks.prompts import ChainProgram, Gate, InitialState, Instruction, Policies
from tests.support.model_endpoint import ModelEndpoint

ROOT = Path(__file__).resolve().parent.parent
DOMAIN = ROOT / "domains" / "job_seeking"
SPEC = DomainSpec.model_validate_json((DOMAIN / "spec.json").read_text())
GRAPH = from_json((DOMAIN / "graph.json").read_text())
MODEL = "openai/scripted-oracle"
K = 4

APP = {"application_id": "APP-0001", "applicant_name": "Ana Ruiz", "email": "ana@example.com", "job_title": "Data Engineer",
       "company_name": "Lumen", "status": "offer_received", "created_at": "2025-02-10T10:00:00"}
OFFER = {"offer_id": "OFR-0001", "application_id": "APP-0001", "base_salary": 120000.0, "salary_currency": "USD",
         "offer_status": "pending", "received_date": "2025-02-25", "response_deadline": "2025-03-10"}
INTERVIEW = {"interview_id": "INT-0001", "application_id": "APP-0001", "interview_type": "technical_interview",
             "interview_date": "2025-03-04T10:00:00", "interview_duration_minutes": 60,
             "interview_status": "scheduled", "created_at": "2025-02-20T10:00:00"}
STATE = {"job_application": [APP], "job_offer": [OFFER], "interview_schedule": [INTERVIEW]}
DECLINE = ('offer = [o for o in call("list_job_offers", offer_status="pending")["offers"] '
           'if o["company_name"] == "Lumen"][0]\n'
           'call("respond_to_offer", offer_id=offer["offer_id"], decision="decline")\n')
# What remains after the seed chain list_job_offers -> respond_to_offer holds a chain:
# list_upcoming_interviews -> get_interview_details.
D = {"add_interview_feedback", "apply_to_job_posting", "archive_old_applications",
     "calculate_application_success_rate", "calculate_interview_preparation_time", "cancel_interview",
     "close_job_posting", "complete_interview", "create_user_profile", "find_user_profiles",
     "generate_follow_up_reminder", "get_interview_details", "get_job_posting", "get_upcoming_deadlines",
     "get_user_profile", "list_applications_needing_follow_up", "list_upcoming_interviews",
     "match_job_postings_to_profile", "save_job_posting", "search_apps_by_keyword", "search_job_postings",
     "update_user_profile"}


def turn(tool: str | None = None, content: str = "", **arguments) -> dict:
    return {"content": content, "tool_calls": [{"name": tool, "arguments": arguments}] if tool else []}


def oracle_turn(attempt: int, conversation: list[dict], succeeding: set[int]) -> dict:
    """A succeeding attempt lists the upcoming interviews and opens the first one by the id it got
    back; a failing one guesses an id (odd attempts) or stops after one call (even attempts)."""
    results = [json.loads(m["content"]) for m in conversation if m["role"] == "tool" and m["content"].startswith("{")]
    done = sum(1 for m in conversation if m["role"] == "assistant")
    if attempt in succeeding:
        if done == 0:
            return turn("list_upcoming_interviews", days_ahead=14)
        if done == 1 and results and results[-1].get("interviews"):
            return turn("get_interview_details", interview_id=results[-1]["interviews"][0]["interview_id"])
        return turn(content="Chained list_upcoming_interviews -> get_interview_details.")
    if done == 0:
        return turn("get_interview_details", interview_id="INT-9999") if attempt % 2 else turn("get_upcoming_deadlines")
    return turn(content="I found no chain.")


def asks_for(system: str, schema) -> bool:
    """Whether a request's system prompt asks for an answer of `schema` (it ends with the schema)."""
    return system.endswith(schema_text(schema))


class ScriptedModel(ModelEndpoint):
    """Answers each request from what it asks (the answer schema named in the system prompt), as a
    model would: the task stage's steps from fixed answers, the gate with p = the g(D) it was
    told, the oracle agent (its requests carry the tools) by `oracle_turn`."""

    def __init__(self, succeeding: set[int]):
        super().__init__([])
        self.succeeding = succeeding

    async def complete(self, request: Request) -> JSONResponse:
        body = await request.json()
        self.requests.append(body)
        if "tools" in body:
            attempt = int(re.search(r"Attempt (\d+) of", body["messages"][1]["content"]).group(1)) - 1
            message = native_message(oracle_turn(attempt, body["messages"][1:], self.succeeding), len(self.requests))
        else:
            answer = self.answer(body["messages"][0]["content"], body["messages"][1]["content"])
            message = {"role": "assistant", "content": json.dumps(answer)}
        return JSONResponse({
            "id": f"chatcmpl-{len(self.requests)}", "object": "chat.completion", "created": 0, "model": body["model"],
            "choices": [{"index": 0, "finish_reason": "stop", "message": message}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}})

    def answer(self, system: str, prompt: str) -> dict:
        if asks_for(system, Gate):
            g = float(re.search(r"Feasibility g\(D\) = ([0-9.]+)", prompt).group(1))
            return {"p": g, "reason": "as feasible as the oracle found it"}
        if asks_for(system, ChainProgram):
            return {"goal": "decline the Lumen offer", "code": DECLINE}
        if asks_for(system, InitialState):
            return {"rows": STATE}
        if asks_for(system, Instruction):
            return {"draft": "Decline my pending offer from Lumen.", "instruction": "Please decline the Lumen offer.",
                    "user_profile": {"name": "Ana Ruiz", "known_info": ["Lumen", "Data Engineer"]}}
        if asks_for(system, Policies):
            return {"policies": {}}
        raise AssertionError(f"unexpected request: {system[:200]}")

    def oracle_requests(self) -> list[dict]:
        return [r for r in self.requests if "tools" in r]


@pytest.fixture(scope="module")
def env():
    with Environment(DOMAIN, workers=1) as environment:
        yield environment


@pytest.fixture(autouse=True)
def api_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-local")


def live(endpoint: ScriptedModel, path: Path) -> LLM:
    return LLM(LiteLLMBackend(MODEL, api_base=endpoint.url, backoff=0.01), Transcript(path), max_reasks=0)


def test_a_chain_is_two_different_tools_of_d_that_ran_with_an_output_feeding_an_input():
    listed = ("list_upcoming_interviews", {}, True, {"interviews": [{"interview_id": "INT-0001"}]})
    opened = ("get_interview_details", {"interview_id": "INT-0001"}, True, {"interview_id": "INT-0001"})
    assert chain_in([listed, opened], D) == ["list_upcoming_interviews", "get_interview_details"]
    assert len(chain_in([listed, ("get_interview_details", {"interview_id": "INT-0009"}, True, {})], D)) == 1
    assert len(chain_in([listed, (*opened[:2], False, None)], D)) == 1  # the second call failed
    assert len(chain_in([listed, opened], D - {"list_upcoming_interviews"})) == 1  # a tool outside D
    assert len(chain_in([listed, ("list_upcoming_interviews", {"interview_id": "INT-0001"}, True, {})], D)) == 1
    status = ("get_upcoming_deadlines", {}, True, {"status": "scheduled"})
    assert len(chain_in([status, ("list_upcoming_interviews", {"status": "scheduled"}, True, {})], D,
                        fixed={"scheduled"})) == 1  # an enum choice is no evidence of data flow


def attempts_asked(llm: LLM, item: str) -> set[int]:
    """The oracle attempts that reached the model, from the recorded step keys."""
    return {int(m.group(1)) for key in llm.transcript.entries if (m := re.fullmatch(rf"tasks/{item}@(\d+)/\d+", key))}


# With k = 4 the attempts run in batches [0], [1, 2], [3], and no batch starts after a success.
@pytest.mark.parametrize("succeeding, expected, asked", [
    (set(), 0.0, {0, 1, 2, 3}),  # no success: all k searched
    ({2}, 0.3333, {0, 1, 2}),  # 1 of the 3 attempts that ran; attempt 3 never asked
    ({0, 1, 2, 3}, 1.0, {0}),  # the first attempt found a chain: nothing more is asked
])
def test_g_is_the_share_of_the_oracle_attempts_that_ran_which_stop_after_a_success(env, tmp_path, succeeding,
                                                                                  expected, asked):
    with ScriptedModel(succeeding) as endpoint:
        llm = live(endpoint, tmp_path / "transcript.jsonl")
        oracle = oracle_for(llm, env, k=K)
        assert isinstance(oracle, LLMOracle) and oracle.source == MODEL
        assert oracle(GRAPH, D, 7, STATE, "t.oracle0") == expected
    assert attempts_asked(llm, "t.oracle0") == asked
    requested = endpoint.oracle_requests()
    assert len(requested) == len(llm.transcript.entries)  # every request is a recorded step
    briefs = {r["messages"][1]["content"] for r in requested}
    assert len(briefs) == len(asked)  # distinct searches, each pointed at its own sampled chain
    assert all({t["function"]["name"] for t in r["tools"]} == D for r in requested)  # the oracle sees D's tools only
    assert all(re.fullmatch(r"tasks/t\.oracle0@\d+/\d+", key) for key in llm.transcript.entries)


# Every tool here needs an interview id, and the tools that list or create interviews are outside.
NO_CHAIN = {"get_interview_details", "complete_interview", "cancel_interview", "add_interview_feedback"}


def test_where_no_chain_over_d_can_run_g_is_zero_without_a_model_request(env, tmp_path):
    assert structural_link(GRAPH, NO_CHAIN) is None
    assert structural_link(GRAPH, NO_CHAIN | {"list_upcoming_interviews"}) is not None
    with ScriptedModel({0, 1, 2, 3}) as endpoint:  # a model that would find a chain, were one there
        llm = live(endpoint, tmp_path / "transcript.jsonl")
        assert oracle_for(llm, env, k=K)(GRAPH, NO_CHAIN, 7, STATE, "t.oracle0") == 0.0
    assert endpoint.requests == [] and llm.transcript.entries == {}


def test_a_task_whose_remaining_tools_hold_no_chain_spends_no_oracle_request(env, tmp_path):
    # The domain as far as this graph knows it: the seed chain's two tools and NO_CHAIN.
    graph = restricted(GRAPH, NO_CHAIN | {"list_job_offers", "respond_to_offer"})
    with ScriptedModel({0, 1, 2, 3}) as endpoint:
        llm = live(endpoint, tmp_path / "transcript.jsonl")
        stage = Stage(SPEC, graph, llm, env, feasibility=oracle_for(llm, env, k=K), log=lambda _m: None)
        task = build_task(stage, "t", 0, 1)
    assert task.metadata.chain == ["list_job_offers", "respond_to_offer"]
    first = task.metadata.expansions[0]
    assert first.remaining_tools == len(NO_CHAIN) and first.feasibility == 0.0 and not first.joined
    assert endpoint.oracle_requests() == []
    assert not any(".oracle" in key for key in llm.transcript.entries)
    assert any("g(D) = 0.000" in r["messages"][1]["content"] for r in endpoint.requests)  # the gate was told


def test_the_gate_answers_from_the_oracles_g_and_a_recorded_run_replays_it(env, tmp_path):
    path = tmp_path / "transcript.jsonl"
    with ScriptedModel({1, 3}) as endpoint:
        llm = live(endpoint, path)
        stage = Stage(SPEC, GRAPH, llm, env, feasibility=oracle_for(llm, env, k=K), log=lambda _m: None)
        task = build_task(stage, "t", 0, 1)
    first = task.metadata.expansions[0]
    assert task.metadata.chain == ["list_job_offers", "respond_to_offer"]
    assert first.remaining_tools == len(D) and first.feasibility == 0.3333  # 1 of the 3 attempts that ran
    assert attempts_asked(llm, "t.oracle0") == {0, 1, 2}
    assert first.p == 0.333 and not first.joined  # the gate was told g(D) = 0.333 and answered from it
    assert any("g(D) = 0.333" in r["messages"][1]["content"] for r in endpoint.requests)
    assert task.metadata.feasibility_source == MODEL
    assert any(k.startswith("tasks/t.oracle0@") for k in llm.transcript.entries)
    llm.transcript.save()

    replay = LLM(None, Transcript(path), max_reasks=0)  # no model: the recorded oracle is replayed
    stage = Stage(SPEC, GRAPH, replay, env, feasibility=oracle_for(replay, env, k=K), log=lambda _m: None)
    again = build_task(stage, "t", 0, 1)
    assert again.model_dump() == task.model_dump() and not replay.changed_prompts


def test_without_a_model_or_a_recorded_oracle_g_is_the_executed_search(env, tmp_path):
    assert oracle_for(LLM(None, Transcript(tmp_path / "none.jsonl")), env) is None
    bundled = LLM(None, Transcript(DOMAIN / "tasks" / "transcript.jsonl"))
    assert oracle_for(bundled, env) is None
