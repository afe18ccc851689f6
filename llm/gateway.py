"""The LLM gateway: structured outputs over litellm, recorded and replayable.

Every exchange is addressed by a stable step key (stage, item, attempt) and, inside a step, a
turn number that counts re-asks after a response failed validation. With a model configured
the gateway calls it through litellm and appends each exchange to the domain's transcript;
with none it replays the transcript by key. The prompt is hashed so that a replayed step
whose prompt has since changed is reported, never served silently.
"""

from __future__ import annotations

import sys
import threading
from typing import Callable, TypeVar

from pydantic import BaseModel, ValidationError

from llm.answer_types import schema_text
from llm.json_reader import read_json
from llm.roles import model_for
from llm.steps import AnswerTruncated, Backend, LLMError, MissingStep, StepKey, native_message, prompt_hash, schema_arg
from llm.transcript import Transcript

T = TypeVar("T", bound=BaseModel)

class LLM:
    """Structured calls with validation re-asks and a concurrency limit; every exchange goes to the transcript."""

    def __init__(self, backend: Backend | None, transcript: Transcript, max_reasks: int = 2, concurrency: int = 4):
        self.backend, self.transcript, self.max_reasks = backend, transcript, max_reasks
        self._slots = threading.Semaphore(concurrency)
        self._lock = threading.Lock()
        self.changed_prompts: list[str] = []
        self.reasks: list[str] = []

    @property
    def replaying(self) -> bool:
        return self.backend is None

    def _exchange(self, key: StepKey, turn: int, messages: list[dict], schema: dict | None = None,
                  tools: list[dict] | None = None) -> str:
        name = f"{key}#{turn}" if turn else str(key)
        digest = prompt_hash(messages, tools)
        entry = self.transcript.get(name)
        if self.replaying:
            if entry is None:
                raise MissingStep(f"the transcript has no answer for step {name}")
            if entry.get("prompt_sha") != digest:
                with self._lock:
                    self.changed_prompts.append(name)
        elif entry is None or entry.get("prompt_sha") != digest:  # a resumed run pays for nothing twice
            truncated = None
            with self._slots:
                try:
                    extra = schema_arg(self.backend, schema) if tools is None else {"tools": tools}
                    text, usage = self.backend.complete(key, turn, messages, **extra)
                except AnswerTruncated as error:
                    truncated, text, usage = error, error.text, error.usage
            entry = {
                "key": name, "stage": key.stage, "item": key.item, "attempt": key.attempt, "turn": turn,
                "model": model_for(self.backend, key), "prompt_sha": digest, "response": text, "usage": usage,
            }
            if truncated:
                entry["finish_reason"] = "length"
            self.transcript.put(entry)
        if entry.get("finish_reason") == "length":
            raise AnswerTruncated(f"{name}: the answer was cut off at the model's output limit",
                                  entry["response"], entry["usage"])
        return entry["response"]

    def chat(self, key: StepKey, messages: list[dict], tools: list[dict]) -> dict:
        """One exchange in the provider's own tool calling: `messages` in chat format (assistant
        messages with tool_calls, tool messages with their results) and `tools` (function schemas)
        are sent as they are; the answer is the assistant message (`native_message`), recorded as
        such. No re-asks: a malformed call is the model's action, answered by the caller."""
        answer = read_json(self._exchange(key, 0, messages, tools=tools))
        if not isinstance(answer, dict):
            raise LLMError(f"{key}: the recorded answer is not an assistant message")
        return native_message(answer, key.attempt)

    def structured(self, key: StepKey, system: str, prompt: str, schema: type[T],
                   check: Callable[[T], object] | None = None, split: bool = False, show_type: bool = True) -> T:
        """Ask for a JSON object matching `schema`; a malformed, invalid, cut-off answer, or one that
        `check` refuses (cross-references: a ValueError), is re-asked with the error. With `split`,
        a cut-off answer raises AnswerTruncated instead: the caller asks for less per request.
        `show_type=False` where the system prompt itself gives every field and an example answer
        (the test format): the answer's type would say it twice. The provider gets it either way."""
        compact = "written compactly (no indentation, no space after , or :)"
        answer = (f"Answer with one JSON object of this type, {compact}:\n{schema_text(schema)}" if show_type
                  else f"Answer with one JSON object in the format above, {compact}.")
        messages = [
            {"role": "system", "content": f"{system}\n\n{answer}"},
            {"role": "user", "content": prompt},
        ]
        for turn in range(self.max_reasks + 1):
            try:
                text = self._exchange(key, turn, messages, schema.model_json_schema())
            except AnswerTruncated as error:
                if split:
                    raise
                text, problem = error.text, ("the answer was cut off at the output limit before it ended; "
                                             "give the same content more compactly (no comments, no repetition)")
            else:
                try:
                    answer = schema.model_validate(read_json(text))
                    if check is not None:
                        check(answer)
                    return answer
                except (ValueError, ValidationError) as error:  # JSONDecodeError is a ValueError
                    problem = str(error)[:2000]
            with self._lock:
                self.reasks.append(f"{key}#{turn}")
            print(f"[{key}] answer failed validation, re-asking: {problem.splitlines()[0]}", file=sys.stderr)
            messages = messages + [
                {"role": "assistant", "content": text},
                {"role": "user", "content": f"That answer was not valid:\n{problem}\n"
                                            "Reply again with the corrected JSON object only."},
            ]
        raise LLMError(f"{key}: no valid answer after {self.max_reasks + 1} tries")
