"""The LLM gateway: structured outputs over litellm, recorded and replayable.

Every exchange is addressed by a stable step key (stage, item, attempt) and, inside a step, a
turn number that counts re-asks after a response failed validation. With a model configured
the gateway calls it through litellm and appends each exchange to the domain's transcript;
with none it replays the transcript by key. The prompt is hashed so that a replayed step
whose prompt has since changed is reported, never served silently.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import os
import re
import sys
import threading
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Protocol, TypeVar

from pydantic import BaseModel, ValidationError

from agents.answer_types import schema_text
from agents.json_reader import read_json

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


class ToolsRefused(LLMError):
    """The provider refused a request's `tools` (a 400 naming them): the model cannot call functions."""


class AnswerTruncated(LLMError):
    """The model stopped at its output limit (finish_reason "length"): the answer is cut off."""

    def __init__(self, message: str, text: str, usage: dict):
        super().__init__(message)
        self.text, self.usage = text, usage


# HTTP statuses worth another try: timeouts, conflicts, rate limits and server errors. Any other
# 4xx is the request's fault and fails the same way every time.
_RETRYABLE = {408, 409, 429}
_NO_TEMPERATURE = re.compile(r"(^|/)(o\d|gpt-5)")  # reasoning models refuse a temperature


def _status(error: Exception) -> int | None:
    code = getattr(error, "status_code", None) or getattr(getattr(error, "response", None), "status_code", None)
    return int(code) if isinstance(code, int) else None


# How an answer's shape is asked for, most enforced first: a JSON-schema response format (strict
# where the schema has a strict form, then as given), a forced call of an `answer` tool, JSON mode,
# plain text. A 400 that names the way in use steps down one rung for the rest of the run.
LADDER = ("strict", "json_schema", "tool", "json", "text")
STRUCTURED_CHOICES = ("auto", "json_schema", "tool", "json", "text")
_REFUSAL_WORDS = {"strict": ("response_format", "json_schema", "schema", "strict"),
                  "json_schema": ("response_format", "json_schema", "schema"),
                  "tool": ("tool", "function"), "json": ("response_format", "json")}
# Keywords OpenAI's strict mode takes; others (defaults, length limits) are left to pydantic's check.
_STRICT_KEYWORDS = {"type", "properties", "required", "additionalProperties", "items", "anyOf", "enum", "const",
                    "$ref", "$defs", "description", "title", "pattern", "format", "multipleOf", "minimum",
                    "maximum", "exclusiveMinimum", "exclusiveMaximum", "minItems", "maxItems"}
_STRICT_FORMATS = {"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}


def strict_schema(schema: dict) -> dict | None:
    """`schema` as OpenAI's strict mode takes it (every property required, no others), or None
    where it has no strict form: free-form objects (dict fields), untyped values, allOf/oneOf.
    Properties with a default become required: the model states the value."""

    def node(s: dict) -> dict:
        if not any(k in s for k in ("type", "$ref", "anyOf", "enum", "const")) or \
                any(k in s for k in ("allOf", "oneOf", "not", "prefixItems", "patternProperties")):
            raise ValueError("no strict form")
        if "$ref" in s:
            return {"$ref": s["$ref"]}  # strict mode refuses keywords beside a $ref (a field's description)
        out = {k: v for k, v in s.items() if k in _STRICT_KEYWORDS}
        if "format" in out and out["format"] not in _STRICT_FORMATS:
            del out["format"]
        for key in ("properties", "$defs"):
            if key in s:
                out[key] = {name: node(sub) for name, sub in s[key].items()}
        if "items" in s:
            out["items"] = node(s["items"])
        if "anyOf" in s:
            out["anyOf"] = [node(sub) for sub in s["anyOf"]]
        if s.get("type") == "object" or "properties" in s:
            if s.get("additionalProperties", False) is not False or "properties" not in s:
                raise ValueError("no strict form")
            out["additionalProperties"], out["required"] = False, list(s["properties"])
        return out

    try:
        return node(schema)
    except (ValueError, AttributeError, TypeError):
        return None


def auto_structured(model: str) -> str:
    """The most enforced way litellm reports `model` takes (it reads its model map by name, so an
    unknown model, whatever its api_base, reports nothing and gets JSON mode as before)."""
    import litellm

    try:
        name, provider, _, _ = litellm.get_llm_provider(model=model)
    except Exception:  # an unprefixed unknown model: litellm.completion will say so
        return "json"
    if provider == "anthropic" or "claude" in name.lower():
        return "tool"  # Claude has no JSON mode; every Claude model takes a forced tool call
    if provider in ("ollama", "ollama_chat"):
        return "json_schema"  # litellm passes the schema as Ollama's `format`, which Ollama enforces
    if litellm.supports_response_schema(model=name, custom_llm_provider=provider):
        return "json_schema"
    try:
        supported = litellm.get_supported_openai_params(model=name, custom_llm_provider=provider) or []
    except Exception:
        supported = []
    if litellm.supports_function_calling(model=name, custom_llm_provider=provider) \
            and {"tools", "tool_choice"} <= set(supported):  # else drop_params would drop the tool silently
        return "tool"
    return "json"


class LiteLLMBackend:
    """Calls any litellm model string. One retry layer (the SDK's own retries are off): backoff on
    timeouts, 408/409/429 and 5xx, never on another 4xx; a per-request timeout and a deadline
    for the whole step. Each request asks for at most `max_tokens` and reports a cut-off answer.
    The answer's shape is asked for the most enforced way the model takes (see LADDER), chosen
    from litellm's model map or by `structured` / WORLDSMITH_STRUCTURED, and stepped down for good
    when the provider refuses it (as LM Studio refuses JSON mode); parameters a model does not
    take are dropped (litellm's drop_params)."""

    def __init__(self, model: str, api_base: str | None = None, retries: int = 4, timeout: float = 300,
                 max_tokens: int | None = None, step_deadline: float = 1800, backoff: float = 2.0,
                 structured: str | None = None):
        self.model, self.api_base, self.retries, self.timeout = model, api_base, retries, timeout
        self.max_tokens = max_tokens or int(os.environ.get("WORLDSMITH_MAX_TOKENS", "32768"))
        self.step_deadline, self.backoff = step_deadline, backoff
        choice = (structured or os.environ.get("WORLDSMITH_STRUCTURED") or "auto").strip().lower()
        if choice not in STRUCTURED_CHOICES:
            raise LLMError(f"WORLDSMITH_STRUCTURED={choice!r}: use one of {', '.join(STRUCTURED_CHOICES)}")
        if choice == "auto":
            choice = auto_structured(model)
        self.rung = LADDER.index("strict" if choice == "json_schema" else choice)
        self._rung_lock = threading.Lock()

    @property
    def structured(self) -> str:
        """The way answers are asked for now (a rung of LADDER)."""
        return LADDER[self.rung]

    def _shape(self, schema: dict | None) -> tuple[str, dict]:
        """The rung a request is sent at, and its parameters: without a schema, or without a strict
        form of it, the next rung that can be sent."""
        way = LADDER[self.rung]
        strict = strict_schema(schema) if schema is not None and way == "strict" else None
        if way == "strict" and strict is None:
            way = "json_schema"
        if way in ("json_schema", "tool") and schema is None:
            way = "json"
        if way in ("strict", "json_schema"):
            name = re.sub(r"[^A-Za-z0-9_-]", "_", str(schema.get("title") or "answer"))[:64]
            return way, {"response_format": {"type": "json_schema", "json_schema": {
                "name": name, "schema": strict if way == "strict" else schema, "strict": way == "strict"}}}
        if way == "tool":
            return way, {"tools": [{"type": "function", "function": {
                "name": "answer", "description": "Give the answer.", "parameters": schema}}],
                "tool_choice": {"type": "function", "function": {"name": "answer"}}}
        if way == "json":
            return way, {"response_format": {"type": "json_object"}}
        return way, {}

    def _refused(self, way: str, error: Exception) -> bool:
        """A 400 that names the way a request was asked: step below it for the rest of the run
        (unless another request already has) and say to send again; never below plain text."""
        words = _REFUSAL_WORDS.get(way, ())
        if _status(error) != 400 or not any(w in str(error).lower() for w in words):
            return False
        below = LADDER.index(way) + 1
        if way == "strict" and "invalid schema" not in str(error).lower():
            below += 1  # the format itself is refused, not the strict form of this schema
        with self._rung_lock:
            self.rung = max(self.rung, below)
        return True

    def _params(self, messages: list[dict], shape: dict | None = None) -> dict:
        params = {"model": self.model, "messages": messages, "api_base": self.api_base, "timeout": self.timeout,
                  "max_tokens": self.max_tokens, "drop_params": True, "num_retries": 0, "max_retries": 0}
        if not _NO_TEMPERATURE.search(self.model):
            params["temperature"] = 0
        params.update(shape or {})
        if self.model.startswith(("ollama/", "ollama_chat/")):  # Ollama's default context cuts long prompts
            prompt = sum(count_tokens(m.get("content") or "") for m in messages)
            params["num_ctx"] = 1 << max(12, (prompt + self.max_tokens).bit_length())
        return params

    def complete(self, key: StepKey, turn: int, messages: list[dict],
                 schema: dict | None = None, tools: list[dict] | None = None) -> tuple[str, dict]:
        """With `tools`, the provider's own tool calling: they are sent as they are, no answer shape is
        asked for, and the text returned is the assistant message (`native_message`) as JSON."""
        import litellm

        litellm.suppress_debug_info = True  # no "Give Feedback / Get Help" banner on stdout per failed request
        delay, deadline = self.backoff, time.monotonic() + self.step_deadline
        attempt = 0
        while True:
            way, shape = ("native", {"tools": tools}) if tools is not None else self._shape(schema)
            try:
                response = litellm.completion(**self._params(messages, shape))
            except Exception as error:  # network, rate limit, provider errors
                status = _status(error)
                if self._refused(way, error):  # send again one rung down
                    continue
                if way == "native" and status == 400 and any(w in str(error).lower() for w in ("tool", "function")):
                    raise ToolsRefused(f"{key}: {self.model} refused the tools: {str(error)[:500]}") from error
                # a missing or refused key fails the same way every time (litellm reports some as 500s)
                unauthorised = "Authentication" in type(error).__name__ or "credentials" in str(error).lower()
                retryable = not unauthorised and (status is None or status in _RETRYABLE or status >= 500)
                attempt += 1
                if not retryable or attempt > self.retries or time.monotonic() + delay > deadline:
                    why = f"HTTP {status}" if status else type(error).__name__
                    raise LLMError(f"{key}: {self.model} failed ({why}) after {attempt} "
                                   f"request{'s' if attempt > 1 else ''}: {str(error)[:500]}") from error
                time.sleep(delay)
                delay *= 2
                continue
            choice = response.choices[0]
            message = choice.message
            text = message.content or getattr(message, "refusal", None) or ""
            calls = getattr(message, "tool_calls", None) or []
            if way == "native":
                text = compact_json(native_message({"content": message.content, "tool_calls": [
                    {"id": c.id, "type": "function",
                     "function": {"name": c.function.name, "arguments": c.function.arguments or ""}}
                    for c in calls]}, key.attempt))
            elif calls and (way == "tool" or not text.strip()):  # the answer came as a tool call's arguments
                call = next((c for c in calls if c.function.name == "answer"), calls[0])
                text = call.function.arguments or ""
            usage = getattr(response, "usage", None)
            counted = {"prompt_tokens": int(getattr(usage, "prompt_tokens", 0) or 0),
                       "completion_tokens": int(getattr(usage, "completion_tokens", 0) or 0)}
            if getattr(choice, "finish_reason", None) == "length":
                raise AnswerTruncated(f"{key}: the answer was cut off at the {self.max_tokens}-token output limit",
                                      text, counted)
            return text, counted


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
            text = native_message(parse_json(text) if isinstance(text, str) else text, key.attempt)
        if not isinstance(text, str):
            text = compact_json(text)
        prompt = sum(count_tokens(m.get("content") or "") for m in messages)
        if tools is not None:  # providers count the function schemas into the prompt
            prompt += count_tokens(compact_json(tools))
        return text, {"prompt_tokens": prompt, "completion_tokens": count_tokens(text)}


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


class Transcript:
    """domains/<name>/transcript.jsonl: one JSON object per exchange, in a stable order."""

    def __init__(self, path: Path):
        self.path = path
        self.entries: dict[str, dict] = {}
        if path.exists():
            lines = [line for line in path.read_text().splitlines() if line.strip()]
            for number, line in enumerate(lines, 1):
                try:
                    entry = json.loads(line)
                except json.JSONDecodeError:
                    if number < len(lines):
                        raise LLMError(f"{path}: line {number} is not JSON; the transcript is damaged") from None
                    # a run killed while appending leaves its last line cut short: drop it (later lines are
                    # appended after it), and that exchange is asked again
                    print(f"worldsmith: {path}: the last line was cut short (a killed run); its exchange is "
                          f"asked again", file=sys.stderr)
                    path.write_text("".join(f"{kept}\n" for kept in lines[:-1]))
                    continue
                self.entries[entry["key"]] = entry
        self._lock = threading.Lock()

    def get(self, name: str) -> dict | None:
        return self.entries.get(name)

    def put(self, entry: dict) -> None:
        """Record an exchange and append it to the file at once, so a killed run loses at most the
        request in flight (a later line for a key replaces an earlier one when read back)."""
        with self._lock:
            self.entries[entry["key"]] = entry
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with open(self.path, "a") as f:
                f.write(json.dumps(entry, sort_keys=True) + "\n")
                f.flush()
                try:
                    os.fsync(f.fileno())
                except OSError:  # not a regular file (e.g. /dev/null)
                    pass

    def clear(self) -> None:
        """Start a new recording: forget every entry, on disk too."""
        with self._lock:
            self.entries.clear()
            if self.path.exists():
                self.path.write_text("")

    def tokens(self) -> dict:
        """Prompt and completion tokens per stage and in total (the same on replay as when recorded)."""
        stages: dict[str, dict[str, int]] = defaultdict(lambda: {"prompt": 0, "completion": 0})
        for entry in self.entries.values():
            stages[entry["stage"]]["prompt"] += entry["usage"]["prompt_tokens"]
            stages[entry["stage"]]["completion"] += entry["usage"]["completion_tokens"]
        ordered = {s: stages[s] for s in sorted(stages, key=lambda s: STAGE_ORDER.get(s, 99))}
        total = {k: sum(v[k] for v in ordered.values()) for k in ("prompt", "completion")}
        total["total"] = total["prompt"] + total["completion"]
        models: dict[str, set] = defaultdict(set)
        for entry in self.entries.values():
            models[entry["stage"]].add(entry.get("model") or "")
        if len(set().union(*models.values())) > 1:  # a model per role: which answered each stage
            return {"stages": ordered, "total": total, "models": {s: sorted(models[s]) for s in ordered}}
        return {"stages": ordered, "total": total}

    def save(self) -> None:
        def order(name: str):
            stage, item, rest = name.split("/", 2)
            attempt, _, turn = rest.partition("#")
            return (STAGE_ORDER.get(stage, 99), item, int(attempt), int(turn or 0))

        lines = [json.dumps(self.entries[k], sort_keys=True) for k in sorted(self.entries, key=order)]
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_text("\n".join(lines) + ("\n" if lines else ""))


STAGE_ORDER = {"schema": 0, "database": 1, "policy": 2, "code": 3, "tests": 4, "debug": 5, "mutants": 6, "graph": 7,
               "tasks": 8}


parse_json = read_json  # the tolerant reader (agents/json_reader.py)


def _schema_arg(backend: Backend, schema: dict | None) -> dict:
    """{"schema": schema} for a backend whose `complete` takes it; older backends get nothing."""
    try:
        params = inspect.signature(backend.complete).parameters
    except (TypeError, ValueError):
        return {}
    takes = "schema" in params or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    return {"schema": schema} if takes and schema is not None else {}


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
                    extra = _schema_arg(self.backend, schema) if tools is None else {"tools": tools}
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
        answer = parse_json(self._exchange(key, 0, messages, tools=tools))
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
                    answer = schema.model_validate(parse_json(text))
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
                {"role": "user", "content": f"That answer was not valid:\n{problem}\nReply again with the corrected JSON object only."},
            ]
        raise LLMError(f"{key}: no valid answer after {self.max_reasks + 1} tries")


def _seconds(name: str, default: float) -> float:
    value = os.environ.get(name) or str(default)
    try:
        seconds = float(value)
    except ValueError:
        seconds = -1.0
    if not seconds > 0:
        raise LLMError(f"{name}={value!r}: give a number of seconds above 0")
    return seconds


def _litellm_backend(model: str) -> LiteLLMBackend:
    return LiteLLMBackend(model, api_base=os.environ.get("API_BASE") or None,
                          timeout=_seconds("WORLDSMITH_TIMEOUT", 300), backoff=_seconds("WORLDSMITH_BACKOFF", 2.0))


# The model roles (ScaleEnv 5.1 gives each its own model): <ROLE>_MODEL overrides MODEL for the
# steps of these stages; the task stage's oracle steps (tasks/<task>.oracle<n>@...) are the oracle's.
ROLES = {"schema": ("schema", "database", "policy", "graph"), "code": ("code", "debug"),
         "test": ("tests", "mutants"), "task": ("tasks",), "oracle": (), "agent": ("agent",), "user": ("user",)}


def role_of(key: StepKey) -> str | None:
    if key.stage == "tasks" and ".oracle" in key.item:
        return "oracle"
    return next((role for role, stages in ROLES.items() if key.stage in stages), None)


def role_models(environ: dict | None = None) -> dict[str, str]:
    """The roles given their own model: SCHEMA_MODEL, CODE_MODEL, TEST_MODEL, TASK_MODEL,
    ORACLE_MODEL, AGENT_MODEL, USER_MODEL."""
    environ = os.environ if environ is None else environ
    return {role: environ[f"{role.upper()}_MODEL"] for role in ROLES if environ.get(f"{role.upper()}_MODEL")}


class RoleBackend:
    """MODEL's backend, with another for each role given its own model (`roles`: role -> model)."""

    def __init__(self, default: Backend, roles: dict[str, Backend]):
        self.default, self.roles = default, roles
        self.model = default.model

    def backend(self, key: StepKey) -> Backend:
        return self.roles.get(role_of(key) or "", self.default)

    def complete(self, key: StepKey, turn: int, messages: list[dict], **options) -> tuple[str, dict]:
        backend = self.backend(key)
        return backend.complete(key, turn, messages, **(options if "tools" in options else
                                                         _schema_arg(backend, options.get("schema"))))


def model_for(backend: Backend, key: StepKey) -> str:
    """The model that answers `key` (recorded with each exchange)."""
    return backend.backend(key).model if isinstance(backend, RoleBackend) else backend.model


def backend_for(model: str | None, roles: dict[str, str] | None = None) -> Backend | None:
    """The backend for a `MODEL` setting; None means replay. `roles` (default: `role_models()`, from
    the environment) give roles their own models. WORLDSMITH_TIMEOUT sets the per-request timeout
    (seconds, default 300), WORLDSMITH_BACKOFF the first retry's wait (seconds, default 2, doubled
    after each retry)."""
    if not model:
        return None
    roles = role_models() if roles is None else roles
    default = _litellm_backend(model)
    if not any(m != model for m in roles.values()):
        return default
    return RoleBackend(default, {role: _litellm_backend(m) for role, m in roles.items() if m != model})
