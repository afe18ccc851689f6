"""The LLM gateway: structured outputs over litellm, recorded and replayable.

Every exchange is addressed by a stable step key (stage, item, attempt) and, inside a step, a
turn number that counts re-asks after a response failed validation. With a model configured
the gateway calls it through litellm and appends each exchange to the domain's transcript;
with none it replays the transcript by key. The prompt is hashed so that a replayed step
whose prompt has since changed is reported, never served silently.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
import threading
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, TypeVar

from pydantic import BaseModel, ValidationError

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

T = TypeVar("T", bound=BaseModel)

IDENT_HELP = "use a snake_case identifier: a lowercase letter, then lowercase letters, digits or underscores"


def valid_name(name: str) -> bool:
    """Domain names become folder names: plain identifiers only, so nothing escapes domains/."""
    return bool(re.fullmatch(r"[a-z][a-z0-9_]{0,63}", name or ""))


class LLMError(RuntimeError):
    """The model could not give a valid answer for a step."""


class MissingStep(LLMError):
    """Replay has no recorded answer for a step."""


@dataclass(frozen=True)
class StepKey:
    stage: str
    item: str = "-"
    attempt: int = 0

    def __str__(self) -> str:
        return f"{self.stage}/{self.item}/{self.attempt}"


class Backend(Protocol):
    model: str

    def complete(self, key: StepKey, turn: int, messages: list[dict]) -> tuple[str, dict]:
        """Return the assistant text and usage {prompt_tokens, completion_tokens}."""


def count_tokens(text: str) -> int:
    """Offline token count (litellm's bundled cl100k tokenizer)."""
    from litellm import token_counter

    return token_counter(model="gpt-4", text=text)


def prompt_hash(messages: list[dict]) -> str:
    return hashlib.sha256(json.dumps(messages, sort_keys=True).encode()).hexdigest()[:16]


class LiteLLMBackend:
    """Calls any litellm model string, with retries and exponential backoff."""

    def __init__(self, model: str, api_base: str | None = None, retries: int = 4, timeout: float = 300):
        self.model, self.api_base, self.retries, self.timeout = model, api_base, retries, timeout

    def complete(self, key: StepKey, turn: int, messages: list[dict]) -> tuple[str, dict]:
        import litellm

        delay = 2.0
        for attempt in range(self.retries + 1):
            try:
                response = litellm.completion(
                    model=self.model, messages=messages, api_base=self.api_base,
                    temperature=0, timeout=self.timeout, response_format={"type": "json_object"},
                )
                text = response.choices[0].message.content or ""
                usage = getattr(response, "usage", None)
                return text, {
                    "prompt_tokens": int(getattr(usage, "prompt_tokens", 0) or 0),
                    "completion_tokens": int(getattr(usage, "completion_tokens", 0) or 0),
                }
            except Exception as error:  # network, rate limit, provider errors
                if attempt == self.retries:
                    raise LLMError(f"{key}: {self.model} failed after {attempt + 1} tries: {error}") from error
                time.sleep(delay)
                delay *= 2
        raise AssertionError("unreachable")


class ScriptedBackend:
    """Answers from a dict: step key string (with '#turn' for re-asks) → text. For tests and authoring."""

    model = "scripted"

    def __init__(self, answers: dict[str, str | dict | list]):
        self.answers = answers

    def complete(self, key: StepKey, turn: int, messages: list[dict]) -> tuple[str, dict]:
        name = f"{key}#{turn}" if turn else str(key)
        if name not in self.answers:
            raise MissingStep(f"no scripted answer for step {name}")
        text = self.answers[name]
        if not isinstance(text, str):
            text = json.dumps(text, indent=1)
        prompt = sum(count_tokens(m["content"]) for m in messages)
        return text, {"prompt_tokens": prompt, "completion_tokens": count_tokens(text)}


class Transcript:
    """domains/<name>/transcript.jsonl: one JSON object per exchange, in a stable order."""

    def __init__(self, path: Path):
        self.path = path
        self.entries: dict[str, dict] = {}
        if path.exists():
            for line in path.read_text().splitlines():
                if line.strip():
                    entry = json.loads(line)
                    self.entries[entry["key"]] = entry
        self._lock = threading.Lock()

    def get(self, name: str) -> dict | None:
        return self.entries.get(name)

    def put(self, entry: dict) -> None:
        with self._lock:
            self.entries[entry["key"]] = entry

    def tokens(self) -> dict:
        """Prompt and completion tokens per stage and in total (the same on replay as when recorded)."""
        stages: dict[str, dict[str, int]] = defaultdict(lambda: {"prompt": 0, "completion": 0})
        for entry in self.entries.values():
            stages[entry["stage"]]["prompt"] += entry["usage"]["prompt_tokens"]
            stages[entry["stage"]]["completion"] += entry["usage"]["completion_tokens"]
        ordered = {s: stages[s] for s in sorted(stages, key=lambda s: STAGE_ORDER.get(s, 99))}
        total = {k: sum(v[k] for v in ordered.values()) for k in ("prompt", "completion")}
        total["total"] = total["prompt"] + total["completion"]
        return {"stages": ordered, "total": total}

    def save(self) -> None:
        def order(name: str):
            stage, item, rest = name.split("/", 2)
            attempt, _, turn = rest.partition("#")
            return (STAGE_ORDER.get(stage, 99), item, int(attempt), int(turn or 0))

        lines = [json.dumps(self.entries[k], sort_keys=True) for k in sorted(self.entries, key=order)]
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_text("\n".join(lines) + ("\n" if lines else ""))


STAGE_ORDER = {"schema": 0, "database": 1, "code": 2, "tests": 3, "debug": 4, "graph": 5, "tasks": 6}


def parse_json(text: str) -> object:
    """The JSON object in a model's answer, tolerating a ``` fence around it."""
    fenced = re.search(r"```(?:json)?\s*(.*?)```", text, re.S)
    return json.loads(fenced.group(1) if fenced else text)


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

    def _exchange(self, key: StepKey, turn: int, messages: list[dict]) -> str:
        name = f"{key}#{turn}" if turn else str(key)
        digest = prompt_hash(messages)
        if self.replaying:
            entry = self.transcript.get(name)
            if entry is None:
                raise MissingStep(f"the transcript has no answer for step {name}")
            if entry.get("prompt_sha") != digest:
                with self._lock:
                    self.changed_prompts.append(name)
        else:
            with self._slots:
                text, usage = self.backend.complete(key, turn, messages)
            entry = {
                "key": name, "stage": key.stage, "item": key.item, "attempt": key.attempt, "turn": turn,
                "model": self.backend.model, "prompt_sha": digest, "response": text, "usage": usage,
            }
            self.transcript.put(entry)
        return entry["response"]

    def structured(self, key: StepKey, system: str, prompt: str, schema: type[T]) -> T:
        """Ask for a JSON object matching `schema`; on malformed or invalid output, re-ask with the error."""
        messages = [
            {"role": "system", "content": system + "\n\nAnswer with one JSON object matching this JSON schema:\n"
             + json.dumps(schema.model_json_schema(), sort_keys=True)},
            {"role": "user", "content": prompt},
        ]
        for turn in range(self.max_reasks + 1):
            text = self._exchange(key, turn, messages)
            try:
                return schema.model_validate(parse_json(text))
            except (ValueError, ValidationError) as error:  # JSONDecodeError is a ValueError
                problem = str(error)[:2000]
                with self._lock:
                    self.reasks.append(f"{key}#{turn}")
                print(f"[{key}] answer failed validation, re-asking: {problem.splitlines()[0]}", file=sys.stderr)
                messages = messages + [
                    {"role": "assistant", "content": text},
                    {"role": "user", "content": f"That answer was not valid:\n{problem}\nReply again with the corrected JSON object only."},
                ]
        raise LLMError(f"{key}: no valid answer after {self.max_reasks + 1} tries")


def backend_for(model: str | None) -> Backend | None:
    """The backend for a `MODEL` setting; None means replay."""
    if not model:
        return None
    return LiteLLMBackend(model, api_base=os.environ.get("API_BASE") or None)
