"""What every part of the gateway speaks: step keys, the backend protocol, its errors, and the
prompt hash and offline token count recorded with each exchange."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Protocol


class LLMError(RuntimeError):
    """The model could not give a valid answer for a step."""


class MissingStep(LLMError):
    """Replay has no recorded answer for a step."""


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
        answer's JSON schema, for backends that can make the provider enforce it."""


def count_tokens(text: str) -> int:
    """Offline token count (litellm's bundled cl100k tokenizer)."""
    from litellm import token_counter

    return token_counter(model="gpt-4", text=text)


def prompt_hash(messages: list[dict]) -> str:
    return hashlib.sha256(json.dumps(messages, sort_keys=True).encode()).hexdigest()[:16]


def compact_json(value: object) -> str:
    """JSON as the prompts ask answers to be written: no indentation, no space after , or :."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
