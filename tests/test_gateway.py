"""The gateway against a local endpoint that answers as real models and providers do: what can
be recovered is, without a re-ask where the reader can; what cannot fails with a clear error
after the right number of requests; every exchange is on disk as it completes, and a rerun
asks only for what is missing."""

from __future__ import annotations

import json

import litellm
import pytest
from pydantic import BaseModel, Field
from starlette.responses import JSONResponse

from agents.database_agent import design_database
from domains.spec import ToolSchema
from llm import LLM, LiteLLMBackend, LLMError, ScriptedBackend, StepKey, Transcript, strict_schema
from tests.support.model_endpoint import ModelEndpoint, asked


class Answer(BaseModel):
    name: str
    count: int


GOOD = '{"name": "a\\tb", "count": 2}'


class Named(BaseModel):
    name: str = Field(pattern=r"^[a-z][a-z0-9_]{0,63}$")
    count: int = 0


class Loose(BaseModel):
    """A dict field: no strict form."""
    counts: dict[str, int]


# A model litellm's map says takes function calling and no response schema (the map is read by
# name, so a local model is described there the documented way: register_model).
TOOL_ONLY = "openai/worldsmith-tool-only"
litellm.register_model({TOOL_ONLY: {"litellm_provider": "openai", "mode": "chat", "supports_function_calling": True,
                                    "supports_response_schema": False}})


@pytest.fixture(autouse=True)
def api_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-local")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-local")
    monkeypatch.delenv("WORLDSMITH_STRUCTURED", raising=False)


def ask(replies: list[dict], tmp_path, model: str = "openai/test-model", answer: type[BaseModel] = Answer,
        asks: int = 1, **backend) -> tuple[Answer, ModelEndpoint, LLM]:
    with ModelEndpoint(replies) as endpoint:
        base = endpoint.root if model.startswith("anthropic/") else endpoint.url  # litellm adds /v1/messages
        llm = LLM(LiteLLMBackend(model, api_base=base, backoff=0.01, **backend),
                  Transcript(tmp_path / "transcript.jsonl"))
        try:
            for n in range(asks):
                result = llm.structured(StepKey("schema", f"n{n}" if n else "-"), "system", "prompt", answer)
            return result, endpoint, llm
        except LLMError as error:
            error.endpoint = endpoint
            raise


@pytest.mark.parametrize("content", [
    "Here is the JSON you asked for:\n" + GOOD + "\nLet me know if you need more.",
    "The user wants a name and a count. I will answer.</think>\n" + GOOD,
    "<think>count = 2? {\"draft\": true}</think>" + GOOD,
    "```json\n" + GOOD + "\n```",
    '{"name": "a\tb", "count": 2,}',  # a literal tab inside a string, a trailing comma
])
def test_recoverable_answers_are_read_without_a_reask(content, tmp_path):
    answer, endpoint, llm = ask([{"content": content}], tmp_path)
    assert answer == Answer(name="a\tb", count=2)
    assert len(endpoint.requests) == 1 and llm.reasks == []
    request = endpoint.requests[0]
    assert request["max_tokens"] > 0 and request["temperature"] == 0


def test_an_answer_delivered_as_a_tool_call_is_read(tmp_path):
    answer, endpoint, _ = ask([{"tool_args": GOOD}], tmp_path)
    assert answer.count == 2 and len(endpoint.requests) == 1


def test_a_provider_refusing_json_mode_gets_plain_requests(tmp_path):
    answer, endpoint, _ = ask([{"content": GOOD, "unless_json_mode": True}], tmp_path)
    assert answer.count == 2
    assert "response_format" in endpoint.requests[0] and "response_format" not in endpoint.requests[-1]
    assert len(endpoint.requests) == 2


def test_a_model_litellm_knows_takes_a_json_schema_gets_the_strict_answer_schema(tmp_path):
    answer, endpoint, llm = ask([{"content": '{"name": "a_b", "count": 2}'}], tmp_path, model="openai/gpt-4o-mini",
                                answer=Named)
    assert answer == Named(name="a_b", count=2) and len(endpoint.requests) == 1
    form = endpoint.requests[0]["response_format"]
    assert form["type"] == "json_schema" and form["json_schema"]["name"] == "Named" and form["json_schema"]["strict"]
    schema = form["json_schema"]["schema"]
    assert schema == strict_schema(Named.model_json_schema())
    assert schema["properties"]["name"]["pattern"] == r"^[a-z][a-z0-9_]{0,63}$"  # names are enforced too
    assert schema["required"] == ["name", "count"] and schema["additionalProperties"] is False
    assert "default" not in schema["properties"]["count"]
    assert "tools" not in endpoint.requests[0]


def test_a_schema_with_no_strict_form_is_sent_as_given_not_strict(tmp_path):
    answer, endpoint, _ = ask([{"content": '{"counts": {"a": 1}}'}], tmp_path, model="openai/gpt-4o-mini",
                              answer=Loose)
    assert answer.counts == {"a": 1}
    form = endpoint.requests[0]["response_format"]["json_schema"]
    assert form["strict"] is False and form["schema"] == Loose.model_json_schema()


def test_a_model_with_only_function_calling_gets_a_forced_tool_call_and_its_arguments_are_read(tmp_path):
    answer, endpoint, llm = ask([{"content": GOOD}], tmp_path, model=TOOL_ONLY)
    assert answer == Answer(name="a\tb", count=2) and len(endpoint.requests) == 1
    request = endpoint.requests[0]
    assert request["tools"] == [{"type": "function", "function": {
        "name": "answer", "description": "Give the answer.", "parameters": Answer.model_json_schema()}}]
    assert request["tool_choice"] == {"type": "function", "function": {"name": "answer"}}
    assert "response_format" not in request and llm.backend.structured == "tool"


def test_refusals_step_down_one_level_each_and_stay_down_for_the_run(tmp_path):
    answer, endpoint, llm = ask([{"content": GOOD, "refuse": ["json_schema", "tools", "json_object"]}], tmp_path,
                                model="openai/gpt-4o-mini", asks=2)
    assert answer.count == 2
    # an unsupported format skips the non-strict form of the same format; then tool, JSON mode, text
    assert [asked(r) for r in endpoint.requests] == ["json_schema", "tool", "json", "text", "text"]
    assert llm.backend.structured == "text" and llm.reasks == []


def test_a_refused_strict_schema_is_sent_again_not_strict(tmp_path):
    class StrictRefused(ModelEndpoint):
        def _next(self, body):
            if (body.get("response_format") or {}).get("json_schema", {}).get("strict"):
                self.requests.append(body)
                return {}, JSONResponse({"error": {"message": "Invalid schema for response_format 'Answer': In "
                                                   "context=(), 'minLength' is not permitted.",
                                                   "type": "invalid_request_error"}}, status_code=400)
            return super()._next(body)

    with StrictRefused([{"content": GOOD}]) as endpoint:
        llm = LLM(LiteLLMBackend("openai/gpt-4o-mini", api_base=endpoint.url), Transcript(tmp_path / "t.jsonl"))
        assert llm.structured(StepKey("schema"), "system", "prompt", Answer).count == 2
    forms = [r["response_format"]["json_schema"]["strict"] for r in endpoint.requests]
    assert forms == [True, False] and llm.backend.structured == "json_schema"


@pytest.mark.parametrize("model", ["anthropic/claude-sonnet-4-5", "openai/claude-sonnet-4-5"])
def test_claude_gets_a_forced_tool_call(model, tmp_path):
    """Claude has no JSON mode: through Anthropic's Messages API, or an OpenAI-compatible proxy."""
    answer, endpoint, llm = ask([{"content": GOOD}], tmp_path, model=model)
    assert answer == Answer(name="a\tb", count=2) and len(endpoint.requests) == 1
    request = endpoint.requests[0]
    assert asked(request) == "tool" and "response_format" not in request
    if model.startswith("anthropic/"):  # litellm's translation to the Messages API
        assert request["tool_choice"] == {"type": "tool", "name": "answer"}
        assert request["tools"][0]["name"] == "answer"
        assert request["tools"][0]["input_schema"]["properties"] == Answer.model_json_schema()["properties"]


@pytest.mark.parametrize("choice, form", [("json", "json"), ("text", "text"), ("tool", "tool"),
                                          ("json_schema", "json_schema")])
def test_worldsmith_structured_overrides_the_choice(choice, form, tmp_path, monkeypatch):
    monkeypatch.setenv("WORLDSMITH_STRUCTURED", choice)
    answer, endpoint, _ = ask([{"content": GOOD}], tmp_path)  # a model litellm knows nothing about
    assert answer.count == 2 and asked(endpoint.requests[0]) == form


def test_an_unknown_model_gets_json_mode_and_a_bad_override_is_refused(monkeypatch):
    assert LiteLLMBackend("openai/test-model").structured == "json"
    monkeypatch.setenv("WORLDSMITH_STRUCTURED", "xml")
    with pytest.raises(LLMError, match="WORLDSMITH_STRUCTURED='xml'"):
        LiteLLMBackend("openai/test-model")


def test_the_answer_schema_reaches_backends_that_take_it_and_older_ones_still_work(tmp_path):
    seen = []

    class Taking(ScriptedBackend):
        def complete(self, key, turn, messages, schema=None):
            seen.append(schema)
            return super().complete(key, turn, messages)

    class Older(ScriptedBackend):
        def complete(self, key, turn, messages):
            return super().complete(key, turn, messages)

    for backend in (Taking({"schema/-/0": GOOD}), Older({"schema/-/0": GOOD})):
        assert LLM(backend, Transcript(tmp_path / f"{type(backend).__name__}.jsonl")).structured(
            StepKey("schema"), "system", "prompt", Answer).count == 2
    assert seen == [Answer.model_json_schema()]


def test_rate_limits_are_retried_then_answered(tmp_path):
    answer, endpoint, _ = ask([{"status": 429}, {"status": 503}, {"content": GOOD}], tmp_path)
    assert answer.count == 2 and len(endpoint.requests) == 3


def test_a_server_error_that_never_clears_fails_clearly_after_the_retry_budget(tmp_path):
    with pytest.raises(LLMError, match=r"HTTP 500\) after 3 requests") as failed:
        ask([{"status": 500}], tmp_path, retries=2)
    assert len(failed.value.endpoint.requests) == 3  # one retry layer: no SDK retries under it


@pytest.mark.parametrize("status", [400, 401, 404])
def test_a_client_error_is_not_retried(status, tmp_path):
    with pytest.raises(LLMError, match=f"HTTP {status}") as failed:
        ask([{"status": status}], tmp_path)
    assert len(failed.value.endpoint.requests) == 1


def test_a_cut_off_answer_is_reasked_for_a_compact_one(tmp_path):
    answer, endpoint, llm = ask([{"content": '{"name": "a very long', "finish_reason": "length"},
                                 {"content": GOOD}], tmp_path)
    assert answer.count == 2 and llm.reasks == ["schema/-/0#0"]
    assert "cut off" in endpoint.requests[1]["messages"][-1]["content"]


def test_prose_instead_of_json_is_reasked_with_the_reason(tmp_path):
    answer, endpoint, llm = ask([{"content": "# Answer\n- name: a\n- count: 2"}, {"content": GOOD}], tmp_path)
    assert answer.count == 2 and "no JSON object" in endpoint.requests[1]["messages"][-1]["content"]


def test_a_missing_key_is_not_retried(tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY")
    with pytest.raises(LLMError, match="after 1 request"):
        ask([{"content": GOOD}], tmp_path)


def test_every_exchange_is_on_disk_as_it_completes_and_a_rerun_asks_only_for_what_is_missing(tmp_path):
    path = tmp_path / "transcript.jsonl"
    with ModelEndpoint([{"content": GOOD}]) as endpoint:
        llm = LLM(LiteLLMBackend("openai/test-model", api_base=endpoint.url), Transcript(path))
        llm.structured(StepKey("schema", "one"), "system", "prompt one", Answer)
        assert [json.loads(line)["key"] for line in path.read_text().splitlines()] == ["schema/one/0"]
        # a new run over the same transcript (as after a kill): the recorded step is not asked again
        again = LLM(LiteLLMBackend("openai/test-model", api_base=endpoint.url), Transcript(path))
        again.structured(StepKey("schema", "one"), "system", "prompt one", Answer)
        again.structured(StepKey("schema", "two"), "system", "prompt two", Answer)
    assert len(endpoint.requests) == 2


def test_a_misspelt_foreign_key_is_reasked_not_raised(tmp_path):
    tools = [ToolSchema(name="add_note", description="Add a note", output=[], mutates=True)]
    table = {"name": "note", "id_prefix": "NOTE", "columns": [
        {"name": "note_id", "type": "string", "primary_key": True, "nullable": False},
        {"name": "item_id", "type": "string", "foreign_key": "itme.item_id"}]}
    item = {"name": "item", "id_prefix": "IT", "columns": [
        {"name": "item_id", "type": "string", "primary_key": True, "nullable": False}]}
    fixed = json.loads(json.dumps(table))
    fixed["columns"][1]["foreign_key"] = "item.item_id"
    answers = {"database/-/0": {"tables": [table, item], "tool_tables": {"add_note": ["note"]}},
               "database/-/0#1": {"tables": [fixed, item], "tool_tables": {"add_note": ["note"]}}}
    llm = LLM(ScriptedBackend(answers), Transcript(tmp_path / "t.jsonl"))
    schema, mapping = design_database(llm, "demo", tools)
    assert llm.reasks == ["database/-/0#0"] and mapping == {"add_note": ["note"]}
    assert {t.name for t in schema.tables} == {"note", "item"}


class FailingFor(ScriptedBackend):
    """Scripted answers, except that the model never answers for the steps of one tool."""

    def __init__(self, answers, tool: str):
        super().__init__(answers)
        self.tool = tool

    def complete(self, key, turn, messages):
        if key.item == self.tool:
            raise LLMError(f"{key}: openai/test-model failed (HTTP 500) after 5 requests: upstream unavailable")
        return super().complete(key, turn, messages)


def test_a_tool_the_model_never_answered_for_is_reported_apart_and_the_run_exits_non_zero(tmp_path):
    from agents.build import Run
    from pipeline.run import build_domain
    from tests.support.scripted_domain import answers

    llm = LLM(FailingFor(answers(), "get_book"), Transcript(tmp_path / "transcript.jsonl"))
    code = build_domain(Run("reading_list", tmp_path, llm, test_timeout=0.5), with_graph=False)
    tools = json.loads((tmp_path / "report.json").read_text())["tools"]
    assert code == 3
    assert tools["dropped_model_failed"] == ["get_book"] and "get_book" in tools["dropped"]
    assert "get_book" not in tools["verified"] and tools["verified"]
