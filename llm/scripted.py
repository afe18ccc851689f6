"""A backend that answers from a dict instead of a model: for tests and for authoring transcripts."""

from __future__ import annotations

from llm.json_reader import read_json
from llm.steps import MissingStep, StepKey, compact_json, count_tokens, native_message


class ScriptedBackend:
    """Answers from a dict: step key string (with '#turn' for re-asks) → text. For tests and authoring."""

    model = "scripted"

    def __init__(self, answers: dict[str, str | dict | list]):
        self.answers = answers

    def complete(self, key: StepKey, turn: int, messages: list[dict],
                 schema: dict | None = None, tools: list[dict] | None = None) -> tuple[str, dict]:
        name = f"{key}#{turn}" if turn else str(key)
        if name not in self.answers:
            raise MissingStep(f"no scripted answer for step {name}")
        text = self.answers[name]
        if tools is not None:  # answered as the provider's tool calling answers
            text = native_message(read_json(text) if isinstance(text, str) else text, key.attempt)
        if not isinstance(text, str):
            text = compact_json(text)
        prompt = sum(count_tokens(m.get("content") or "") for m in messages)
        if tools is not None:  # providers count the function schemas into the prompt
            prompt += count_tokens(compact_json(tools))
        return text, {"prompt_tokens": prompt, "completion_tokens": count_tokens(text)}
