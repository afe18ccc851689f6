"""A model per role: MODEL answers every step unless its role (SCHEMA_MODEL, CODE_MODEL, ...) has
its own; each exchange in the transcript, and the token report, name the model that answered."""

from __future__ import annotations

from pydantic import BaseModel

from llm import LLM, LiteLLMBackend, RoleBackend, StepKey, Transcript, backend_for, model_for, role_models
from tests.support.model_endpoint import ModelEndpoint


class Answer(BaseModel):
    value: int


def test_roles_come_from_the_environment_and_only_differing_ones_get_a_backend():
    environ = {"MODEL": "openai/main", "CODE_MODEL": "openai/coder", "USER_MODEL": "", "ORACLE_MODEL": "openai/main"}
    assert role_models(environ) == {"code": "openai/coder", "oracle": "openai/main"}
    assert isinstance(backend_for("openai/main", {}), LiteLLMBackend)
    assert isinstance(backend_for("openai/main", {"oracle": "openai/main"}), LiteLLMBackend)
    assert backend_for(None, {"code": "openai/coder"}) is None  # no MODEL: replay, whatever the roles say


def test_each_step_goes_to_its_roles_model_and_the_transcript_says_which(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-local")
    with ModelEndpoint([{"content": '{"value": 1}'}]) as endpoint:
        monkeypatch.setenv("API_BASE", endpoint.url)
        backend = backend_for("openai/main", {"code": "openai/coder", "oracle": "openai/oracle", "agent": "openai/agent"})
        assert isinstance(backend, RoleBackend)
        llm = LLM(backend, Transcript(tmp_path / "t.jsonl"))
        for key in (StepKey("schema", "s"), StepKey("code", "c"), StepKey("debug", "d"), StepKey("tasks", "t.chain"),
                    StepKey("tasks", "t.oracle0@1", 2)):
            assert llm.structured(key, "system", "prompt", Answer).value == 1
    assert [r["model"] for r in endpoint.requests] == ["main", "coder", "coder", "main", "oracle"]
    assert {k: e["model"] for k, e in llm.transcript.entries.items()} == {
        "schema/s/0": "openai/main", "code/c/0": "openai/coder", "debug/d/0": "openai/coder",
        "tasks/t.chain/0": "openai/main", "tasks/t.oracle0@1/2": "openai/oracle"}
    assert model_for(backend, StepKey("agent")) == "openai/agent" and model_for(backend, StepKey("user")) == "openai/main"
    assert llm.transcript.tokens()["models"] == {"schema": ["openai/main"], "code": ["openai/coder"],
                                                 "debug": ["openai/coder"], "tasks": ["openai/main", "openai/oracle"]}
