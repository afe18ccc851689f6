"""The LLM gateway every stage shares: structured answers from any litellm model, recorded to a
transcript and replayed from it by step key; and the sentence embeddings (llm.embeddings).

    steps.py        step keys, the backend protocol, errors, the native assistant message,
                    prompt hash, token count
    backends.py     litellm backend: retries, the ladder of structured-output ways, native tool calls
    roles.py        a model per role (<ROLE>_MODEL), and backend_for
    scripted.py     a backend answering from a dict (tests, authoring)
    transcript.py   the transcript store
    gateway.py      LLM: validated structured calls, re-asks, record or replay
    answer_types.py answer schemas as prompts show them
    json_reader.py  the tolerant reader of a model's JSON
    embeddings.py   the sentence-transformers model loader
"""

from llm.answer_types import schema_text
from llm.backends import LiteLLMBackend, strict_schema
from llm.gateway import LLM
from llm.roles import RoleBackend, backend_for, model_for, role_models
from llm.scripted import ScriptedBackend
from llm.steps import (
    AnswerTruncated,
    Backend,
    LLMError,
    MissingStep,
    StepKey,
    ToolsRefused,
    compact_json,
    count_tokens,
    native_message,
    prompt_hash,
)
from llm.transcript import STAGE_ORDER, Transcript

__all__ = [
    "LLM", "STAGE_ORDER", "AnswerTruncated", "Backend", "LLMError", "LiteLLMBackend", "MissingStep", "RoleBackend",
    "ScriptedBackend", "StepKey", "ToolsRefused", "Transcript", "backend_for", "compact_json", "count_tokens",
    "model_for", "native_message", "prompt_hash", "role_models", "schema_text", "strict_schema",
]
