"""Model backends: any litellm model string, with one retry layer and the ladder of ways to ask
for an answer's shape (response format, forced tool call, JSON mode, plain text)."""

from __future__ import annotations

import os
import re
import threading
import time

from llm.steps import AnswerTruncated, LLMError, StepKey, ToolsRefused, compact_json, count_tokens, native_message

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

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


def _seconds(name: str, default: float) -> float:
    value = os.environ.get(name) or str(default)
    try:
        seconds = float(value)
    except ValueError:
        seconds = -1.0
    if not seconds > 0:
        raise LLMError(f"{name}={value!r}: give a number of seconds above 0")
    return seconds


def litellm_backend(model: str) -> LiteLLMBackend:
    """The backend for a model string. WORLDSMITH_TIMEOUT sets the per-request timeout (seconds,
    default 300), WORLDSMITH_BACKOFF the first retry's wait (seconds, default 2, doubled after
    each retry)."""
    return LiteLLMBackend(model, api_base=os.environ.get("API_BASE") or None,
                          timeout=_seconds("WORLDSMITH_TIMEOUT", 300), backoff=_seconds("WORLDSMITH_BACKOFF", 2.0))
