"""What every part of the gateway speaks: step keys, the backend protocol and how a schema is
passed to it, its errors, the assistant message of native tool calling, and the prompt hash and
offline token count recorded with each exchange."""

from __future__ import annotations

import hashlib
import inspect
import json
from dataclasses import dataclass
from typing import Protocol


class LLMError(RuntimeError):
    """The model could not give a valid answer for a step."""


class MissingStep(LLMError):
    """Replay has no recorded answer for a step."""


class ToolsRefused(LLMError):
    """The provider refused a request's `tools` (a 400 naming them): the model cannot call functions."""


class AnswerTruncated(LLMError):
    """The model stopped at its output limit (finish_reason "length"): the answer is cut off."""

    def __init__(self, message: str, text: str, usage: dict):
        super().__init__(message)
        self.text, self.usage = text, usage


@dataclass(frozen=True)
class StepKey:
    stage: str
    item: str = "-"
    attempt: int = 0

    def __str__(self) -> str:
        return f"{self.stage}/{self.item}/{self.attempt}"

    @classmethod
    def batch(cls, stage: str, names: list[str]) -> StepKey:
        """The step of a request about several items, named by the first and the last (or the only one)."""
        return cls(stage, names[0] if len(names) == 1 else f"{names[0]}..{names[-1]}")


class Backend(Protocol):
    model: str

    def complete(self, key: StepKey, turn: int, messages: list[dict],
                 schema: dict | None = None) -> tuple[str, dict]:
        """Return the assistant text and usage {prompt_tokens, completion_tokens}. `schema` is the
        answer's JSON schema, for backends that can make the provider enforce it. A backend that
        also takes `tools` (function schemas, sent natively) answers with the assistant message
        as JSON (see `native_message`)."""


def count_tokens(text: str) -> int:
    """Offline token count (litellm's bundled cl100k tokenizer)."""
    from litellm import token_counter

    return token_counter(model="gpt-4", text=text)


def prompt_hash(messages: list[dict], tools: list[dict] | None = None) -> str:
    """A request's fingerprint: its messages, and its tools when they are sent natively."""
    asked = messages if tools is None else [*messages, {"tools": tools}]
    return hashlib.sha256(json.dumps(asked, sort_keys=True).encode()).hexdigest()[:16]


def schema_arg(backend: Backend, schema: dict | None) -> dict:
    """{"schema": schema} for a backend whose `complete` takes it; older backends get nothing."""
    try:
        params = inspect.signature(backend.complete).parameters
    except (TypeError, ValueError):
        return {}
    takes = "schema" in params or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    return {"schema": schema} if takes and schema is not None else {}


def native_message(answer: dict, turn: int = 0) -> dict:
    """An answer as the assistant message of the provider's tool calling (OpenAI's chat format):
    {"role": "assistant", "content"?, "tool_calls"?: [{"id", "type": "function", "function":
    {"name", "arguments": JSON text}}]}. Calls written {"name", "arguments": {...}} (scripted
    answers, recordings of the JSON-object mode) get ids call_<turn + 1>_<i>."""
    calls = []
    for i, call in enumerate(answer.get("tool_calls") or []):
        if "function" not in call:
            arguments = call.get("arguments") or {}
            call = {"id": f"call_{turn + 1}_{i}", "type": "function", "function": {
                "name": call.get("name", ""),
                "arguments": arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)}}
        calls.append(call)
    message: dict = {"role": "assistant"}
    if answer.get("content") or not calls:  # no null content beside calls: litellm sends none
        message["content"] = answer.get("content") or ""
    if calls:
        message["tool_calls"] = calls
    return message


def compact_json(value: object) -> str:
    """JSON as the prompts ask answers to be written: no indentation, no space after , or :."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
